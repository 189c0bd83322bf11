"""Take docs/viewer.png, the README's picture of the viewer's first page: runs recorded through the Python API
on two sites (the first ones explored step by step, the later ones replayed), served by ``create_app`` on
127.0.0.1 and shot with Playwright and Chromium.

Usage: python scripts/viewer_screenshot.py [OUT.png]
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

import webmem
from webmem.agent.browser import launch_chromium
from webmem.server import create_app

TARGET = Path(__file__).resolve().parent.parent / "docs" / "viewer.png"
SHOP = "https://shop.example.com/"
NEWS = "https://news.example.org/"
#: (site, goal, steps explored before the remembered path, the remembered path's steps, the replay's outcome)
RUNS = [
    (SHOP, "Buy a desk lamp under $40", 5, None),
    (SHOP, "Buy a reading lamp under $30", 3, None),
    (SHOP, "Buy a floor lamp under $80", 1, "handed_over"),
    (SHOP, "Buy a desk lamp under $50", 0, "replayed"),
    (SHOP, "Buy a table lamp under $25", 0, "replayed"),
    (SHOP, "Buy a desk lamp under $35", 0, "replayed"),
    (NEWS, "Subscribe a@example.org to the newsletter", 3, None),
    (NEWS, "Subscribe b@example.org to the newsletter", 0, "replayed"),
    (NEWS, "Subscribe c@example.org to the newsletter", 0, "replayed"),
]


def path_for(site: str, goal: str) -> list[dict[str, str]]:
    """The steps that reach the goal: what a replay does as remembered."""
    if site == NEWS:
        email = goal.split()[1]
        return [{"action": "goto", "value": site},
                {"action": "fill", "target": 'textbox "Email"', "value": email, "url": site},
                {"action": "click", "target": 'button "Subscribe"', "url": site}]
    item = goal.removeprefix("Buy a ").split(" under")[0]
    return [{"action": "goto", "value": site},
            {"action": "fill", "target": 'searchbox "Search"', "value": item, "url": site},
            {"action": "click", "target": 'button "Search"', "url": site},
            {"action": "click", "target": f'link "{item.title()}"', "url": f"{site}search"},
            {"action": "click", "target": 'button "Add to cart"', "url": f"{site}item"}]


def record(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        for site, goal, explored, replay in RUNS:
            steps = path_for(site, goal)
            with mem.start_run(goal=goal, start_url=site) as run:
                done = []
                for number, step in enumerate(steps, start=1):
                    if replay and (replay == "replayed" or number == 1):
                        done.append(webmem.ReplayedStep(step=number, action=step["action"], target=step.get("target"),
                                                        status="hit", url=step.get("url")))
                    run.record_step(**step)
                    if number == 1:
                        for _ in range(explored):  # looking around before finding the way
                            run.record_step(action="scroll", url=site)
                report = None
                if replay:
                    trajectory = mem.trajectories.list(domain=run.domain)[0].id
                    missed = None if replay == "replayed" else webmem.ReplayedStep(
                        step=2, action=steps[1]["action"], target=steps[1].get("target"), status="missed",
                        reason="The search box moved into a menu")
                    report = webmem.ReplayReport(outcome=replay, trajectory_id=trajectory,
                                                 step=len(done) if replay == "replayed" else 2,
                                                 reason=missed.reason if missed else None,
                                                 steps=[*done, *([missed] if missed else [])])
                run.finish(success=True, outcome="Done", replay=report)


def shoot(memory_dir: Path, target: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(str(memory_dir)), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = browser.new_page(viewport={"width": 1100, "height": 720})
            page.goto(f"http://127.0.0.1:{port}/")
            page.get_by_role("img", name="shop.example.com: steps per run").wait_for()
            page.screenshot(path=str(target))
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def main() -> None:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET
    with tempfile.TemporaryDirectory() as scratch:
        record(Path(scratch) / "memory")
        shoot(Path(scratch) / "memory", target)
    print(f"wrote {target} ({target.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
