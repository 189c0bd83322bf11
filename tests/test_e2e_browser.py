"""End to end in real headless Chromium: run 1 records, run 2 with a reworded goal gets it back."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import rows

import webmem
from webmem.agent.browser import element_identity

PASSWORD = "correct-horse-battery"


def act(page: Any, run: webmem.Run, action: str, role: str, name: str, selector: str, value: str | None = None) -> None:
    """Do one step the way an agent would, and record it with what a replay needs."""
    before = page.url
    snapshot = page.locator("body").aria_snapshot()
    element = page.locator(selector)
    if action == "fill":
        element.fill(value or "")
        verified = element.input_value() == value
    else:
        element.click()
        page.wait_for_load_state()
        verified = page.url != before or element.count() == 0 or not element.is_visible()
    run.record_step(
        action=action, target=element_identity(role, name), selector=selector, value=value, url=before,
        ok=True, verified=verified, snapshot_hash=hashlib.sha256(snapshot.encode()).hexdigest()[:16],
        expected_effect=f"{action} {name}",
    )


def test_second_run_gets_first_run_back(open_memory: Any, memory_dir: Path, site_url: str, page: Any) -> None:
    mem = open_memory()
    run1 = mem.start_run(goal="Sign in and search for smart watch reviews", start_url=site_url,
                         session_id="shop-e2e")
    page.goto(site_url + "login.html")
    act(page, run1, "fill", "textbox", "Email", "#email", "sam@example.com")
    act(page, run1, "fill", "textbox", "Password", "#password", PASSWORD)
    act(page, run1, "click", "button", "Sign in", "#sign-in")
    assert "account.html" in page.url
    page.goto(site_url)
    act(page, run1, "fill", "textbox", "Search products", "#search-box", "smart watch")
    act(page, run1, "click", "button", "Search", "#search-btn")
    assert "results.html" in page.url
    run1.finish(success=True, outcome="Signed in and found the smart watch results", final_url=page.url)
    mem.close()

    # A new process would open the same memory: reopen to read from the database only.
    mem = open_memory()
    run2 = mem.start_run(goal="search smart watch reviews after signing in", start_url=site_url)
    context = run2.context(url=site_url)
    text = str(context)

    assert context.part("reference_trajectory").status == "included"
    assert "Goal: Sign in and search for smart watch reviews" in text
    assert '  4. fill textbox "Search products" "smart watch"' in text
    assert '  5. click button "Search" (on ' in text
    assert "[verified]" in text
    assert 'textbox "Password" "{password}"' in text
    assert "## SESSION HISTORY" in text and "Signed in and found the smart watch results" in text
    assert "Final URL: " + site_url + "results.html?q=smart+watch" in text
    assert "## KNOWN SELECTORS" in text and 'button "Search" -> selector #search-btn' in text
    assert "## APP KNOWLEDGE" in text
    assert PASSWORD not in text

    assert PASSWORD.encode() not in rows.stored_bytes(mem), "the password reached the database"
    assert PASSWORD.encode() not in (memory_dir / "events.jsonl").read_bytes(), "the password reached the event log"
    mem.close()


def test_demo_command_prints_second_runs_context(tmp_path: Path) -> None:
    # A process of its own: Playwright's sync API cannot start twice in one thread, and the
    # session's browser fixture may be running.
    directory = tmp_path / "demo-memory"
    result = subprocess.run(
        [sys.executable, "-m", "webmem", "demo", "--memory-dir", str(directory)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for heading in ("## SESSION HISTORY", "## REFERENCE TRAJECTORY", "## APP KNOWLEDGE", "## KNOWN SELECTORS"):
        assert heading in out
    assert 'click button "Search"' in out
    assert f"Memory lives in {directory.resolve()}" in out
    with webmem.Memory.open(directory) as mem:
        runs = mem.runs.list()
        assert [run.status for run in runs] == ["completed", "completed"]
        assert len(mem.trajectories.list()) == 2
