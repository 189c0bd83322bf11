"""Shared fixtures: every test gets its own memory directory on a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import webmem


@pytest.fixture(autouse=True)
def _isolated_memory_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point WEBMEM_DIR at a temporary directory so no test touches the working directory."""
    directory = tmp_path / "env-memory"
    monkeypatch.setenv("WEBMEM_DIR", str(directory))
    return directory


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def events() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def mem(memory_dir: Path, events: list[dict[str, Any]]) -> Iterator[webmem.Memory]:
    memory = webmem.Memory.open(memory_dir, on_event=events.append)
    yield memory
    memory.close()


SHOP = "https://www.example-shop.com/"


@pytest.fixture(scope="session")
def site_url() -> Iterator[str]:
    """The packaged demo shop, served on 127.0.0.1."""
    from webmem.demo.server import serve_site

    with serve_site() as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One real headless Chromium for the whole session; no browser is a failure, not a skip."""
    from playwright.sync_api import sync_playwright

    from webmem.browser import launch_chromium

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    yield tab
    context.close()
