"""End to end in real headless Chromium: a run learns from a real Playwright error, the next run on
another origin hitting the same error gets the learned tip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Error as PlaywrightError

import webmem
from webmem.core.urls import domain_of, site_of
from webmem.demo.server import serve_site

OVERLAY_SITE = Path(__file__).parent / "sites" / "overlay"
CLICK_TIMEOUT_MS = 1000


def click_continue(page: Any, run: webmem.Run) -> str | None:
    """Click the covered button the way an agent would; returns the error, recorded with the step."""
    url = page.url
    try:
        page.get_by_role("button", name="Continue").click(timeout=CLICK_TIMEOUT_MS)
    except PlaywrightError as exc:
        error = str(exc)
        run.on_error("click", error)
        run.record_step(action="click", target='button "Continue"', selector="#go", url=url, ok=False, error=error)
        return error
    run.record_step(action="click", target='button "Continue"', selector="#go", url=url, ok=True, verified=True)
    return None


def test_a_lesson_learned_on_one_origin_helps_on_another(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(OVERLAY_SITE) as first_origin, serve_site(OVERLAY_SITE) as second_origin:
        assert domain_of(first_origin) != domain_of(second_origin)

        run1 = mem.start_run(goal="Continue past the newsletter", start_url=first_origin)
        page.goto(first_origin)
        error = click_continue(page, run1)
        assert error is not None and "intercepts pointer events" in error
        page.keyboard.press("Escape")
        run1.record_step(action="press", target="page", value="Escape", url=page.url, ok=True)
        assert click_continue(page, run1) is None
        assert page.get_by_text("Done").is_visible()
        run1.finish(success=True, outcome="Dismissed the overlay and continued")

        learned = [lesson for lesson in mem.lessons.list() if lesson.source == "learned"]
        assert len(learned) == 1
        lesson = learned[0]
        assert lesson.lesson == (
            "When click on button \"Continue\" fails with 'Locator.click: Timeout 1000ms exceeded.', "
            "try press Escape instead."
        )
        assert (lesson.failed_command, lesson.error_pattern) == ("click", "intercepts pointer events")
        # about its site: any port of the one local address is that site, so the second origin is too
        assert lesson.domain == site_of(domain_of(first_origin)) == site_of(domain_of(second_origin))
        assert lesson.triggered_domains == [domain_of(first_origin)]
        assert lesson.learned_from == [run1.id]

        run2 = mem.start_run(goal="Get past the popup", start_url=second_origin)
        page.goto(second_origin)
        run2.context(url=second_origin)
        assert click_continue(page, run2) is not None
        text = str(run2.context(url=page.url))
        assert text.startswith("Last action failed: click\nLocator.click: Timeout 1000ms exceeded.")
        tips = text.split("Tips from previous experience:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert f"- {lesson.lesson}" in tips
        recalled = mem.lessons.get(lesson.id)
        # recalled on entering its site (a tip for this site) and again on the error
        assert "Tips for this site:\n- " + lesson.lesson in str(run2.context(url=page.url))
        assert recalled.use_count == 3 and recalled.recalled_in == [run2.id]
        assert recalled.triggered_domains == [domain_of(first_origin), domain_of(second_origin)]

        page.keyboard.press("Escape")
        run2.record_step(action="press", target="page", value="Escape", url=page.url, ok=True)
        assert mem.lessons.get(lesson.id).helpful_count == 1
        assert click_continue(page, run2) is None
        run2.finish(success=True, outcome="Followed the tip")
    mem.close()


def test_a_secret_in_an_error_never_reaches_the_context(open_memory: Any) -> None:
    mem = open_memory(secrets={"api_token": "tok-123456"})
    run = mem.start_run(goal="Call the API", start_url="https://api.example/")
    run.on_error("goto", "net::ERR_FAILED at https://api.example/?key=tok-123456")
    text = str(run.context())
    assert "Last action failed: goto" in text
    assert "tok-123456" not in text and "{api_token}" in text
    mem.close()
