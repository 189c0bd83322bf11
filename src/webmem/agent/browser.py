"""Locating and launching a Chromium browser for webmem, via Playwright.

webmem prefers a system Chromium (for example Debian's ``chromium`` package)
and falls back to the browser Playwright downloads with
``playwright install chromium``.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from ..core.errors import BrowserUnavailable
from ..trajectories.evidence import element_identity  # noqa: F401 - kept importable from here

__all__ = [
    "CHROMIUM_ARGS",
    "find_chromium",
    "launch_chromium",
    "element_identity",
]

#: Flags passed to every Chromium that webmem launches.
CHROMIUM_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

_SYSTEM_CHROMIUM = "/usr/bin/chromium"
_CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")

_HOW_TO_GET_ONE = (
    "Install one with `apt-get install -y chromium` (Debian/Ubuntu), "
    "or with `pip install playwright && playwright install chromium`."
)


def find_chromium() -> str | None:
    """Return the path of a system Chromium or Chrome, or None.

    Looks at ``/usr/bin/chromium`` first, then for ``chromium``,
    ``chromium-browser`` and ``google-chrome`` on PATH. None means no system
    browser was found and Playwright should use the one it downloaded.
    """
    if os.path.isfile(_SYSTEM_CHROMIUM) and os.access(_SYSTEM_CHROMIUM, os.X_OK):
        return _SYSTEM_CHROMIUM
    for name in _CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def launch_chromium(playwright: Any, *, headless: bool = True) -> Any:
    """Launch Chromium with ``playwright`` (a started sync Playwright object).

    Uses the browser found by :func:`find_chromium`, or Playwright's own when
    there is none, and returns the Playwright ``Browser``. Raises
    :class:`~webmem.errors.BrowserUnavailable` when Playwright is not
    installed or no browser can be launched.
    """
    try:
        from playwright.sync_api import Error as PlaywrightError
    except ImportError as exc:
        raise BrowserUnavailable(
            "webmem needs Playwright and a Chromium browser to drive web pages, "
            "but the `playwright` package is not installed. Install it with "
            "`pip install playwright`, then get a browser: "
            "`apt-get install -y chromium` (Debian/Ubuntu) or "
            "`playwright install chromium`."
        ) from exc

    executable = find_chromium()
    options: dict[str, Any] = {"headless": headless, "args": list(CHROMIUM_ARGS)}
    if executable is not None:
        options["executable_path"] = executable
    try:
        return playwright.chromium.launch(**options)
    except PlaywrightError as exc:
        where = (
            f"the system browser at {executable}"
            if executable is not None
            else "Playwright's own Chromium (no system Chromium or Chrome was found)"
        )
        detail = _first_line(str(exc))
        raise BrowserUnavailable(
            f"webmem could not launch {where}. {_HOW_TO_GET_ONE} "
            f"Playwright said: {detail}"
        ) from exc




def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line
    return text.strip() or "(no message)"
