"""The viewer at / in real headless Chromium: pages load, a run's steps show with their errors, the chart
renders, no console error, no secret on screen. A screenshot is kept in .cache/test-artifacts/."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn

import webmem
from webmem.core.clock import utcnow
from webmem.server import create_app

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / ".cache" / "test-artifacts"
SITE = "https://news.example.org/"
PASSWORD = "Viewer-S3cret!"


def populate(memory_dir: Path) -> str:
    """Runs over three days on one site (the older ones slower, the latest replayed); the id of one with an error."""
    with webmem.Memory.open(memory_dir, secrets={"news_password": PASSWORD}) as mem:
        now = utcnow()
        for days_ago, steps, replay in ((2, 9, None), (1, 6, None)):
            started = now - timedelta(days=days_ago)
            mem.runs.import_manifest(webmem.RunManifest(
                run_id=f"run_{days_ago}00000000000_old{days_ago:03d}", status="completed", goal="Subscribe to the newsletter",
                domain="news.example.org", start_url=SITE, started_at=started, updated_at=started,
                completed_at=started, success=True, summary="Subscribed", turn_count=steps, replay=replay))
        with mem.start_run(goal="Subscribe a@b.com to the newsletter", start_url=SITE) as run:
            run.record_step(action="goto", value=SITE)
            run.record_step(action="fill", target='textbox "Password"', value=PASSWORD, url=SITE)
            run.record_step(action="click", target='button "Subscribe"', url=SITE, ok=False,
                            error="Element is covered by an overlay")
            run.record_step(action="click", target='button "Subscribe"', url=SITE)
            run.finish(success=True, outcome="Subscribed a@b.com")
        return run.id



def record_replays(memory_dir: Path) -> list[str]:
    """Two more runs on the news site that started from a replay (one replayed alone, one handed over) and one
    run on a shop; the ids of the two replays."""
    ids = []
    with webmem.Memory.open(memory_dir) as mem:
        for outcome, done in (("handed_over", 1), ("replayed", 2)):
            with mem.start_run(goal="Subscribe c@d.com to the newsletter", start_url=SITE) as run:
                run.record_step(action="goto", value=SITE)
                run.record_step(action="click", target='button "Subscribe"', url=SITE)
                steps = [webmem.ReplayedStep(step=1, action="goto", status="hit", url=SITE)]
                if done == 2:
                    steps.append(webmem.ReplayedStep(step=2, action="click", target='button "Subscribe"',
                                                     status="healed", url=SITE))
                else:
                    steps.append(webmem.ReplayedStep(step=2, action="click", target='button "Subscribe"',
                                                     status="stale", reason="The Subscribe button is gone"))
                run.finish(success=True, replay=webmem.ReplayReport(
                    outcome=outcome, trajectory_id="traj_news", step=done, steps=steps,
                    reason=None if done == 2 else "The Subscribe button is gone"))
            ids.append(run.id)
        with mem.start_run(goal="Buy a lamp", start_url="https://shop.example.com/") as run:
            run.record_step(action="goto", value="https://shop.example.com/")
            run.finish(success=False)
    return ids


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free port of 127.0.0.1, as ``webmem serve`` serves it: its address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    try:
        while not server.started:
            assert time.monotonic() < deadline, "the viewer's server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def viewer_url(memory_dir: Path) -> Iterator[str]:
    with serving(create_app(str(memory_dir))) as url:
        yield url


def test_the_viewer_shows_runs_steps_and_a_chart(page: Any, memory_dir: Path, viewer_url: str) -> None:
    run_id = populate(memory_dir)
    with webmem.Memory.open(memory_dir) as mem:  # "archive" and "hide" did the same steps
        for verb, name in (("Archive", "Apollo"), ("Hide", "Zeus")):
            mem.trajectories.save(goal=f"{verb} the article {name}", start_url=SITE, steps=[
                webmem.Step(action="click", target=f'link "{name}"', url=SITE),
                webmem.Step(action="click", target='button "Archive"', url=f"{SITE}articles/7")])
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(viewer_url)
    page.get_by_role("link", name="Subscribe a@b.com to the newsletter").click()
    page.get_by_role("heading", name="Steps").wait_for()
    rows = page.locator("table").first.locator("tbody tr")
    assert rows.count() == 4
    assert "Element is covered by an overlay" in rows.nth(2).inner_text() and "failed" in rows.nth(2).inner_text()
    assert "{news_password}" in rows.nth(1).inner_text()
    assert run_id in page.locator("table").nth(1).inner_text()  # lineage
    page.get_by_role("link", name="news.example.org").first.click()
    page.get_by_role("heading", name="What memory saved, per day").wait_for()
    chart = page.get_by_role("img", name="What memory saved over time")
    assert chart.locator("polyline[data-series=steps_per_run]").get_attribute("points").count(",") == 3  # three days
    page.get_by_role("heading", name="Words that name one act here").wait_for()
    assert page.get_by_role("cell", name='"archive" = "hide"').or_(
        page.get_by_role("cell", name='"hide" = "archive"')).count() == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "viewer-site.png"), full_page=True)
    for name in ("Sites", "Trajectories", "Lessons", "Runs"):
        page.get_by_role("link", name=name, exact=True).click()
        page.get_by_role("heading", name=name).wait_for()
        assert PASSWORD not in page.content()
    assert problems == []


def test_the_viewer_asks_for_the_token_and_keeps_it_for_the_session(page: Any, memory_dir: Path) -> None:
    populate(memory_dir)
    with serving(create_app(str(memory_dir), token="tok-v")) as url:
        page.goto(url)
        assert "Unauthorized" in page.get_by_role("alert").inner_text()
        page.get_by_label("Token").fill("tok-v")
        page.get_by_role("button", name="Use").click()
        a_run = page.get_by_role("link", name="Subscribe a@b.com to the newsletter")
        a_run.wait_for()
        page.reload()
        a_run.wait_for()
        assert page.get_by_label("Token").input_value() == "tok-v"
        page.get_by_label("Namespace").fill("another")
        page.get_by_role("button", name="Use").click()
        page.get_by_text("Nothing yet.").wait_for()
        assert page.get_by_role("alert").count() == 0
        page.get_by_label("Namespace").fill("default")
        page.get_by_role("button", name="Use").click()
        a_run.wait_for()
        assert page.evaluate("localStorage.length") == 0  # the token does not outlive the browser session


def test_the_viewer_says_which_trajectory_a_new_run_would_get_and_why(page: Any, memory_dir: Path,
                                                                       viewer_url: str) -> None:
    populate(memory_dir)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(viewer_url + "#/trajectories")
    page.get_by_placeholder("a new run's goal").fill("Subscribe c@d.com to the newsletter")
    page.get_by_placeholder("its start URL").fill(SITE)
    page.get_by_role("button", name="Match").click()
    verdict = page.get_by_role("status")
    verdict.wait_for()
    assert verdict.inner_text().startswith("It would get traj_")
    matched = page.locator("table").first.locator("tbody tr").first.locator("td")
    assert matched.nth(0).inner_text() == "Subscribe a@b.com to the newsletter" and matched.nth(3).inner_text() == "yes"
    assert len(matched.nth(4).inner_text()) > 10  # the why, in words
    page.get_by_placeholder("a new run's goal").fill("Cancel my account")
    page.get_by_role("button", name="Match").click()
    page.get_by_text("It would get none").wait_for()
    assert PASSWORD not in page.content() and problems == []


def test_each_trajectory_links_to_its_playwright_script(page: Any, memory_dir: Path, viewer_url: str) -> None:
    populate(memory_dir)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(viewer_url + "#/trajectories")
    page.get_by_role("link", name="Python").first.click()
    script = page.locator("pre.script")
    script.wait_for()
    text = script.inner_text()
    assert "Goal: Subscribe a@b.com to the newsletter" in text and "def run(page: Page" in text
    assert 'get_by_role("button", name="Subscribe", exact=True)' in text
    assert PASSWORD not in page.content() and 'secret("WEBMEM_SECRET_NEWS_PASSWORD")' in text
    page.go_back()
    page.get_by_role("link", name="TypeScript").first.click()
    page.get_by_text("@playwright/test").first.wait_for()
    assert page.get_by_role("button", name="Download").inner_text().endswith(".spec.ts") and problems == []


def only_local(requests: list[str]) -> list[str]:
    """The requests that went anywhere but 127.0.0.1 (data: and blob: URLs go nowhere)."""
    return [url for url in requests if urlsplit(url).scheme not in ("data", "blob")
            and urlsplit(url).hostname != "127.0.0.1"]


def test_the_api_docs_render_from_local_assets_alone(page: Any, viewer_url: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(viewer_url + "docs")
    page.locator(".opblock-summary-path", has_text="/v1/runs/{run_id}/steps").first.wait_for()
    assert page.locator(".opblock").count() >= 20
    assert requests and only_local(requests) == []
    assert page.request.get(viewer_url + "redoc").status == 404  # ReDoc would load its logo from a CDN


def test_the_first_page_pictures_what_memory_saved_per_site_and_a_run_shows_its_replay(
        page: Any, memory_dir: Path, viewer_url: str) -> None:
    populate(memory_dir)
    handed_over, replayed = record_replays(memory_dir)
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("request", lambda request: requests.append(request.url))
    page.goto(viewer_url)
    news = page.get_by_role("img", name="news.example.org: steps per run")
    news.wait_for()
    assert news.locator("circle").count() == 5  # every finished run on the site, oldest first
    assert [news.locator("circle").nth(i).get_attribute("data-outcome") for i in range(5)] == [
        "succeeded", "succeeded", "succeeded", "handed over", "replayed"]
    assert page.get_by_role("img", name="shop.example.com: steps per run").locator("circle").count() == 1
    assert "20% replayed" in page.locator(".site-card", has=news).inner_text()
    page.locator(".site-card", has=news).get_by_role("link", name="news.example.org").click()
    page.get_by_role("heading", name="What memory saved, per day").wait_for()
    page.goto(f"{viewer_url}#/run/{handed_over}")
    page.get_by_role("heading", name="Replay").wait_for()
    said = page.get_by_test_id("replay-outcome").inner_text()
    assert "handed over at step 1" in said and "The Subscribe button is gone" in said
    report = page.locator("table", has=page.get_by_role("columnheader", name="Replayed"))
    assert report.locator("tbody tr").count() == 2 and "stale" in report.locator("tbody tr").nth(1).inner_text()
    page.goto(f"{viewer_url}#/run/{replayed}")
    page.get_by_test_id("replay-outcome").filter(has_text="Replayed 2 steps").wait_for()
    page.get_by_role("link", name="Runs", exact=True).click()
    page.get_by_role("heading", name="Runs").wait_for()
    assert only_local(requests) == [] and problems == []
