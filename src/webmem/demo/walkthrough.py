"""The demo: a scripted agent searches the packaged shop twice in real Chromium.

The first run explores and is recorded; the second run, with a reworded goal, starts with
the context memory gives it (reference trajectory, session history, app knowledge, known
selectors), then follows the same steps and finishes.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent.browser import element_identity, launch_chromium
from ..core.errors import BrowserUnavailable
from ..core.models import RunManifest, Step
from ..core.pack import ContextPack
from ..memory import Memory
from ..run import Run
from .server import serve_site

FIRST_GOAL = "Search for smart watch reviews"
SECOND_GOAL = "Find reviews for a smart watch"
_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class ScriptedStep:
    action: str
    role: str
    name: str
    selector: str
    expected_effect: str
    value: str | None = None
    expect_url: str | None = None
    expect_hidden: bool = False


SEARCH_FOR_REVIEWS = (
    ScriptedStep("fill", "textbox", "Search products", "#search-box", "the search box holds the query",
                 value="smart watch"),
    ScriptedStep("click", "button", "Search", "#search-btn", "the results page opens", expect_url="results.html"),
    ScriptedStep("click", "link", "Pulse Smart Watch", 'a[href="product.html?id=pulse"]', "the product page opens",
                 expect_url="product.html"),
    ScriptedStep("click", "button", "Read all 12 reviews", "#all-reviews", "every review is listed",
                 expect_hidden=True),
)


@dataclass(frozen=True)
class DemoReport:
    memory_dir: Path
    site_url: str
    first_run: RunManifest
    first_steps: list[Step]
    second_run: RunManifest
    second_context: ContextPack
    seconds: float


PLAYWRIGHT_HINT = ("the demo needs Playwright: pip install 'webmem[browser]' (then apt-get install -y chromium, "
                   "or playwright install chromium)")


def run_demo(memory_dir: Path, *, headless: bool = True) -> DemoReport:
    """Run both runs against the local shop; raises BrowserUnavailable when there is no browser."""
    started = time.perf_counter()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        raise BrowserUnavailable(PLAYWRIGHT_HINT) from exc
    with Memory.open(memory_dir) as mem, serve_site() as site_url, sync_playwright() as playwright:
        browser = launch_chromium(playwright, headless=headless)
        try:
            page = browser.new_page()
            page.set_default_timeout(_TIMEOUT_MS)

            first = mem.start_run(goal=FIRST_GOAL, start_url=site_url)
            _perform(page, first, site_url)
            first_manifest = first.finish(
                success=True,
                outcome="Opened the Pulse Smart Watch page and listed all 12 reviews",
                final_url=page.url,
                facts=[{"type": "timing", "key": "search-results", "value": "results render at once after Search"}],
            )
            first_steps = mem.runs.steps(first.id)

            second = mem.start_run(goal=SECOND_GOAL, start_url=site_url)
            context = second.context(url=site_url)
            _perform(page, second, site_url)
            second_manifest = second.finish(
                success=True, outcome="Followed the reference run to all 12 reviews", final_url=page.url
            )
        finally:
            browser.close()
    return DemoReport(
        memory_dir=mem.directory.resolve(),
        site_url=site_url,
        first_run=first_manifest,
        first_steps=first_steps,
        second_run=second_manifest,
        second_context=context,
        seconds=time.perf_counter() - started,
    )


def _perform(page: Any, run: Run, site_url: str) -> None:
    page.goto(site_url)
    for scripted in SEARCH_FOR_REVIEWS:
        url = page.url
        snapshot = page.locator("body").aria_snapshot()
        began = time.perf_counter()
        target = page.get_by_role(scripted.role, name=scripted.name, exact=True)
        if scripted.action == "fill":
            target.fill(scripted.value or "")
            verified = target.input_value() == scripted.value
        else:
            target.click()
            verified = _effect_seen(page, target, scripted)
        run.record_step(
            action=scripted.action,
            target=element_identity(scripted.role, scripted.name),
            selector=scripted.selector,
            value=scripted.value,
            url=url,
            ok=True,
            verified=verified,
            expected_effect=scripted.expected_effect,
            snapshot_hash=hashlib.sha256(snapshot.encode("utf-8")).hexdigest()[:16],
            duration_ms=(time.perf_counter() - began) * 1000,
        )


def _effect_seen(page: Any, target: Any, scripted: ScriptedStep) -> bool:
    if scripted.expect_url:
        page.wait_for_url(f"**/{scripted.expect_url}*")
        return scripted.expect_url in page.url
    if scripted.expect_hidden:
        target.wait_for(state="hidden")
        return not target.is_visible()
    return True
