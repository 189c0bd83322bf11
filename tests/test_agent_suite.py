"""Suites of agent cases: loading cases, hints derived from a suite run, and `webmem run` end to end
(in a subprocess: the command starts its own Chromium)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from webmem import InvalidInput, Memory
from webmem.agent.suite import CaseResult, SuiteLog, SuiteSummary, derive_hints, load_cases
from webmem.demo.server import serve_site

SITES = Path(__file__).parent / "sites"


def write_cases(tmp_path: Path, data: object, name: str = "cases.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def webmem(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "webmem", *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False, cwd=cwd)


def test_cases_load_with_defaults_and_checks(tmp_path: Path) -> None:
    path = write_cases(tmp_path, {"cases": [
        {"goal": "Sign up", "url": "http://127.0.0.1:9/"},
        {"name": "two", "goal": "Log in", "url": "http://127.0.0.1:9/login", "success": {"text": "Welcome"},
         "max_turns": 4},
    ]})
    first, second = load_cases(path)
    assert (first.name, first.success, first.max_turns) == ("case-1", None, None)
    assert second.name == "two" and second.success.text == "Welcome" and second.max_turns == 4


@pytest.mark.parametrize(("data", "message"), [
    ([], "non-empty list"),
    ([{"goal": "x"}], "case 1: url"),
    ([{"goal": "", "url": "http://a.example/"}], "case 1: goal"),
    ([{"goal": "x", "url": "not a url"}], "case 1: url"),
    ([{"goal": "x", "url": "http://a.example/", "colour": 1}], "unknown keys colour"),
    ([{"goal": "x", "url": "http://a.example/", "success": {"txt": "a"}}], "success check: unknown keys txt"),
    ([{"goal": "x", "url": "http://a.example/", "max_turns": 0}], "max_turns"),
    ([{"name": "a", "goal": "x", "url": "http://a.example/"}, {"name": "a", "goal": "y", "url": "http://a.example/"}],
     "repeated: a"),
])
def test_bad_cases_are_named(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        load_cases(write_cases(tmp_path, data))


def test_a_file_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_text("{nope")
    with pytest.raises(InvalidInput, match="cases.json: cannot read"):
        load_cases(path)


def result(name: str, *, success: bool = True, turns: int = 2, reason: str = "done",
           failed: list[tuple[str, str]] | None = None) -> CaseResult:
    return CaseResult(name, f"goal {name}", "http://a.example/", success, reason, turns, turns, 100, 0, None,
                      failed or [])


def test_hints_name_failing_actions_stuck_loops_long_goals_and_stale_refs() -> None:
    results = [
        result("a", failed=[('click button "Buy"', "Timeout 3000ms exceeded")]),
        result("b", failed=[('click button "Buy"', "Timeout 3000ms exceeded"),
                            ("click ref e7", "no element on the page matches ref e7")]),
        result("c", success=False, turns=3, reason='stopped: the same action (click link "Next") was chosen 3 times'),
        result("d", success=False, turns=20, reason="stopped: turn budget of 20 turns used up"),
    ]
    hints = derive_hints(results, max_turns=20)
    assert "'click button \"Buy\"' failed in 2 runs: Timeout 3000ms exceeded" in hints
    assert any(h.startswith("'goal c' got stuck") for h in hints)
    assert any(h.startswith("'goal d' needed 20 turns and failed") for h in hints)
    assert not any(h.startswith("'goal d' failed last time") for h in hints)
    quick = result("e", success=False, turns=1, reason="nothing left to try")
    assert "'goal e' failed last time: nothing left to try" in derive_hints([quick], max_turns=20)
    budgeted = CaseResult("f", "goal f", "http://a.example/", True, "done", 4, 4, 100, 0, None, [], 5)
    assert any(h.startswith("'goal f' needed 4 turns;") for h in derive_hints([budgeted], max_turns=20))
    assert any("refs went stale 1 times" in h for h in hints)
    assert derive_hints([result("a"), result("b")], max_turns=20) == []


def test_the_suite_log_keeps_summaries_and_the_latest_hints(tmp_path: Path) -> None:
    log = SuiteLog(tmp_path, "../../evil name.json")
    assert log.directory == tmp_path / "suites" / "evil-name"
    summary = SuiteSummary("s", "2026-11-22T10:00:00.000000+0000", "shared", [result("a")], ["hint one"])
    written = log.write(summary)
    assert json.loads(written.read_text())["pass_rate"] == 1.0
    assert log.hints() == ["hint one"]
    (log.directory / "hints.json").write_text("{broken")
    assert log.hints() == []


def test_webmem_run_then_replay_on_the_next_run(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    with serve_site(SITES / "subscribe" / "v1") as url:
        goal = 'Subscribe to the newsletter with the email "ann@example.com"'
        first = webmem("run", "--goal", goal, "--url", url, "--memory-dir", memory, "--json", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        data = json.loads(first.stdout)
        assert data["success"] and data["decisions"] >= 2 and not data["replayed"]
        second = webmem("run", "--goal", 'Subscribe to the newsletter with the email "bo@example.org"', "--url", url,
                        "--memory-dir", memory, "--json", cwd=tmp_path)
        assert second.returncode == 0, second.stderr
        again = json.loads(second.stdout)
        assert again["success"] and again["replayed"] and again["decisions"] == 0
        unreplayed = webmem("run", "--goal", 'Subscribe to the newsletter with the email "di@example.org"', "--url",
                            url, "--memory-dir", memory, "--no-replay-at-start", "--json", cwd=tmp_path)
        assert unreplayed.returncode == 0, unreplayed.stderr
        decided = json.loads(unreplayed.stdout)
        assert decided["success"] and not decided["replayed"] and decided["decisions"] >= 2
        assert "replay_at_start=False" in decided["replay_miss_reason"]
        resumed = webmem("run", "--resume-run", again["run_id"], "--memory-dir", memory, "--json", "--max-turns", "3",
                         cwd=tmp_path)
        assert resumed.returncode in (0, 1), resumed.stderr
        with Memory.open(memory) as mem:
            child = mem.runs.get(json.loads(resumed.stdout)["run_id"])
            assert child.session_id == mem.runs.get(again["run_id"]).session_id
        forked = webmem("run", "--fork-run", again["run_id"], "--goal", 'Subscribe with the email "cy@example.net"',
                        "--memory-dir", memory, "--json", "--max-turns", "4", cwd=tmp_path)
        assert forked.returncode in (0, 1), forked.stderr
        with Memory.open(memory) as mem:
            branch = mem.runs.get(json.loads(forked.stdout)["run_id"])
            assert branch.parent_run_id == again["run_id"]
            assert branch.session_id != mem.runs.get(again["run_id"]).session_id
        cold = webmem("run", "--goal", goal, "--url", url, "--no-memory", "--json", cwd=tmp_path)
        assert json.loads(cold.stdout)["run_id"] is None


def test_webmem_run_suite_writes_a_summary_and_hints_that_reach_the_next_suite_run(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    with serve_site(SITES / "subscribe" / "v1") as url:
        cases = write_cases(tmp_path, [
            {"name": "subscribe", "goal": 'Subscribe with the email "a@b.example"', "url": url,
             "success": {"text": "Thanks, a@b.example"}},
            {"name": "impossible", "goal": 'Click the "Unsubscribe" button', "url": url, "max_turns": 3},
        ], name="news.json")
        first = webmem("run", "--cases", cases, "--memory-dir", memory, "--json", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        summary = json.loads(first.stdout)
        assert summary["cases"] == 2 and summary["passed"] == 1 and summary["pass_rate"] == 0.5
        assert "[1/2] pass subscribe" in first.stderr and "[2/2] FAIL impossible" in first.stderr
        assert summary["hints"], summary
        stored = sorted((memory / "suites" / "news").glob("summary-*.json"))
        assert len(stored) == 1
        second = webmem("run", "--cases", cases, "--memory-dir", memory, "--json", cwd=tmp_path)
        assert second.returncode == 0, second.stderr
        run_ids = {case["run_id"] for case in json.loads(second.stdout)["results"]}
        first_ids = {case["run_id"] for case in summary["results"]}
        events = [json.loads(line) for line in (memory / "events.jsonl").read_text().splitlines()]
        hinted = {event["run_id"] for event in events if event["event"] == "context_built" and any(
            part["name"] == "hints" and part["status"] == "included" for part in event["parts"])}
        assert hinted == run_ids and not hinted & first_ids
        assert len(sorted((memory / "suites" / "news").glob("summary-*.json"))) == 2


@pytest.mark.parametrize(("args", "message"), [
    (("--goal", "x"), "give --goal and --url"),
    (("--resume-run", "r1", "--fork-run", "r2"), "not both"),
    (("--fork-run", "r1"), "--fork-run needs --goal"),
    (("--resume-run", "r1", "--no-memory"), "need the memory"),
])
def test_webmem_run_usage_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    process = webmem("run", *args, cwd=tmp_path)
    assert process.returncode == 2 and message in process.stderr and "Traceback" not in process.stderr
