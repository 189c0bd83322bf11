"""Every ``webmem`` command on a memory filled from the other agents' fixtures: output shapes,
``--json`` that is only data, exit codes, and one-line errors for bad input and bad databases.

The memory is filled the way a user would: ``webmem import`` of the ``.agent-memory/`` fixture
directory and of the lesson file. Expected values come from the fixture files themselves.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import shutil
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
import pytest
from click.testing import CliRunner, Result

import webmem
from webmem.cli import cli
from webmem.interop.transfer import import_path
from webmem.service import DEFAULT_MATCH_LIMIT
from webmem.store import engine, sqlite_connections
from webmem.store.migrations import MIGRATIONS, apply_migrations

FIXTURES = Path("/work/shared/fixtures")
AGENT_MEMORY = FIXTURES / "agent-memory"
LESSON_FILE = FIXTURES / "lessons-memory.json"
ROOT = Path(__file__).resolve().parent.parent

SHOP = "www.example-shop.com"
SHOP_ORIGIN = "https://www.example-shop.com"
# Lineage in the fixture (FORMATS.md 1.8): resume S2 -> S3 in session cart-e2e, fork S3 -> S4;
# fork L1 -> L2 and resume L1 -> L3, where L1 has no session.
S2, S3, S4 = "cart-e2e_1793896814194", "cart-e2e_1793897551996", "fork_1794144044530_ikvqlk_1794144045764"
L1, L2, L3 = "run_1794308438923_jg3e7s", "fork_1794388850496_1zrt90_1794388851815", "run_1795032934989_6fmgjv"
MISSING_RUN = "run_1700000000000_nope00"


# --- helpers ---------------------------------------------------------------------------------------------------


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(arg) for arg in args], catch_exceptions=False)


def on(directory: Path, *args: object) -> Result:
    """``webmem --memory-dir DIRECTORY args...``"""
    return invoke("--memory-dir", directory, *args)


def data(result: Result) -> Any:
    """The JSON on stdout of a successful command (fails the test if stdout holds anything else)."""
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def assert_one_line_error(result: Result, *fragments: str, code: int = 1) -> str:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert result.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def host_key(url: str) -> str:
    return urlsplit(url).netloc.lower()


def folder_domain(folder: Path) -> str:
    host, _, port = folder.name.rpartition("_")
    return f"{host}:{port}" if port.isdigit() else folder.name


def fixture_trajectories() -> list[dict[str, Any]]:
    files = sorted(AGENT_MEMORY.glob("traj_*.json")) + sorted(AGENT_MEMORY.glob("domains/*/trajectories/traj_*.json"))
    return [json.loads(path.read_text(encoding="utf-8")) for path in files]


def fixture_manifests() -> dict[str, dict[str, Any]]:
    found = (json.loads(path.read_text(encoding="utf-8")) for path in (AGENT_MEMORY / "agent-runs").glob("*.json"))
    return {manifest["runId"]: manifest for manifest in found}


def fixture_domain_files(name: str) -> dict[str, dict[str, Any]]:
    return {folder_domain(path.parent): json.loads(path.read_text(encoding="utf-8"))
            for path in (AGENT_MEMORY / "domains").glob(f"*/{name}")}


def fixture_facts(domain: str) -> dict[tuple[str, str, str], float]:
    """(type, key, value) -> confidence; exact duplicates in the file become one fact (the higher confidence)."""
    found: dict[tuple[str, str, str], float] = {}
    for fact in fixture_domain_files("knowledge.json")[domain]["facts"]:
        key = (fact["type"], fact["key"], fact["value"])
        found[key] = max(found.get(key, 0.0), fact["confidence"])
    return found


def copy_memory(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory filled by ``webmem import`` of the fixture directory and the lesson file."""
    directory = tmp_path_factory.mktemp("template") / "memory"
    report = data(on(directory, "import", AGENT_MEMORY, "--json"))
    assert report["added"] == {"selectors": 47, "facts": 26, "sessions": 15, "trajectories": 20, "runs": 12}
    assert report["merged"] == {"facts": 3}  # exact duplicate facts of the fixture (FORMATS.md 1.3)
    assert report["problems"] == [] and not report["dry_run"]
    lessons = data(on(directory, "import", LESSON_FILE, "--json"))
    assert (lessons["added"], lessons["merged"]) == ({"lessons": 6}, {"lessons": 3})  # its 3 seeds are ours
    return directory


@pytest.fixture
def filled(template: Path, tmp_path: Path) -> Path:
    """A private copy of the template memory, for tests that write or that check nothing was written."""
    return copy_memory(template, tmp_path / "filled")


def snapshot(directory: Path) -> dict[str, Any]:
    """Everything a memory holds, through the CLI: its full JSON export and its record counts."""
    export = data(on(directory, "export", "--format", "json"))
    counts = data(on(directory, "stats", "--json"))["counts"]
    return {"export": export, "counts": counts}


def fill_episode(directory: Path) -> None:
    """Rep 1 of session 'tickets': a correct step, a wrong one with a correction, an ungraded one."""
    page = {"url": "https://support.example.com/tickets/4021", "title": "Ticket 4021", "elements": [
        {"role": "combobox", "name": "Priority", "ref": "e17"}, {"role": "button", "name": "Delete", "ref": "e23"},
        {"role": "button", "name": "Save", "ref": "e31"}]}
    with webmem.Memory.open(directory, prune_lessons=False) as mem:
        episodes = mem.episodes
        episodes.init_episode("tickets")
        for action, text in [("click('e17')", "Priority"), ("click('e23')", "Delete"), ("click('e31')", "Save")]:
            step = episodes.record_step_start(page, "Set the priority of ticket 4021 to High", action, text)
            episodes.record_step_end(step, page)
        episodes.persist_memories()
        episodes.add_grades_to_memories({
            "task_completed": False, "overall_explanation": "Priority unchanged",
            "step_grades": [
                {"step_number": 1, "is_correct": True, "explanation": "Opened the priority selector",
                 "confidence": 0.9},
                {"step_number": 2, "is_correct": False, "explanation": "Deleting was not the task",
                 "correction": "Choose High in the priority dropdown", "confidence": 0.8},
            ],
        })


# --- help and the reference -------------------------------------------------------------------------------------


def all_commands() -> list[tuple[list[str], click.Command]]:
    found: list[tuple[list[str], click.Command]] = []

    def visit(command: click.Command, path: list[str]) -> None:
        found.append((path, command))
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                visit(sub, [*path, name])

    visit(cli, [])
    return found


COMMAND_PATHS = [path for path, _ in all_commands()]


def test_every_command_of_the_issue_exists() -> None:
    names = {" ".join(path) for path in COMMAND_PATHS}
    assert names >= {
        "runs", "runs show", "runs resume", "runs fork", "runs tree", "sessions", "facts", "selectors",
        "trajectories", "trajectories show", "trajectories match", "lessons", "lessons recall", "episodes",
        "context", "export", "import", "prune", "stats", "doctor", "migrate",
    }


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda path: " ".join(path) or "webmem")
def test_every_command_has_help_for_h_and_in_the_reference(path: list[str]) -> None:
    command = dict((tuple(p), c) for p, c in all_commands())[tuple(path)]
    summary = (command.help or "").strip().splitlines()[0] if command.help else ""
    assert summary, f"{path} has no help text"
    for flag in ("-h", "--help"):
        result = invoke(*path, flag)
        assert result.exit_code == 0
        assert result.stdout.startswith(f"Usage: {' '.join(['cli', *path])}")
        assert " ".join(summary.split()) in " ".join(result.stdout.split())
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert param.help, f"{' '.join(path)} {param.opts[0]} has no help text"
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"## `{' '.join(['webmem', *path])}`" in reference


def test_version_and_unknown_command() -> None:
    result = invoke("--version")
    assert result.exit_code == 0 and webmem.__version__ in result.stdout
    result = invoke("no-such-command")
    assert result.exit_code == 2 and "No such command" in result.stderr


# --- runs: resume, fork, tree ----------------------------------------------------------------------------------


def test_runs_lists_the_fixture_manifests(template: Path) -> None:
    rows = data(on(template, "runs", "--limit", "100", "--json"))
    manifests = fixture_manifests()
    assert {row["run_id"] for row in rows} == set(manifests)
    started = [row["started_at"] for row in rows]
    assert started == sorted(started, reverse=True)
    stored_running = {i for i, m in manifests.items() if m["status"] == "running"}
    assert stored_running and data(on(template, "runs", "--status", "running", "--json")) == []  # long not updated
    abandoned = data(on(template, "runs", "--status", "abandoned", "--json"))
    assert {row["run_id"] for row in abandoned} == stored_running
    in_session = data(on(template, "runs", "--session-id", "cart-e2e", "--json"))
    assert {row["run_id"] for row in in_session} == {S2, S3}
    on_shop = data(on(template, "runs", "--domain", SHOP, "--limit", "100", "--json"))
    assert {row["run_id"] for row in on_shop} == {i for i, m in manifests.items() if host_key(m["startUrl"]) == SHOP}


def test_runs_show_of_an_imported_manifest(template: Path) -> None:
    shown = data(on(template, "runs", "show", S3, "--json"))
    manifest = fixture_manifests()[S3]
    assert (shown["run_id"], shown["session_id"], shown["parent_run_id"]) == (S3, "cart-e2e", S2)
    assert shown["final_url"] == manifest["finalUrl"] and shown["summary"] == manifest["summary"]
    assert shown["steps"] == []
    human = on(template, "runs", "show", S3)
    assert human.exit_code == 0 and S3 in human.stdout and manifest["goal"] in human.stdout


def test_resume_keeps_the_session_and_parent_and_starts_at_the_final_url(template: Path) -> None:
    manifests = fixture_manifests()
    scenario = data(on(template, "runs", "resume", S3, "--json"))
    assert scenario == {"goal": manifests[S3]["goal"], "start_url": manifests[S3]["finalUrl"],
                        "session_id": "cart-e2e", "parent_run_id": S3}
    # L1 has no session: neither has its resume (FORMATS.md 1.5)
    scenario = data(on(template, "runs", "resume", L1, "--goal", "Archive the done tasks", "--json"))
    assert scenario == {"goal": "Archive the done tasks", "start_url": manifests[L1]["finalUrl"],
                        "session_id": None, "parent_run_id": L1}
    human = on(template, "runs", "resume", S3)
    assert human.exit_code == 0
    assert human.stdout.splitlines() == [f"goal: {manifests[S3]['goal']}", f"start_url: {manifests[S3]['finalUrl']}",
                                         "session_id: cart-e2e", f"parent_run_id: {S3}"]


def test_fork_starts_a_new_fork_session_and_needs_a_goal(template: Path) -> None:
    scenario = data(on(template, "runs", "fork", S3, "--goal", "Pay with a gift card instead", "--json"))
    assert set(scenario) == {"goal", "start_url", "session_id", "parent_run_id"}
    assert scenario["session_id"].startswith("fork_") and scenario["session_id"] != "cart-e2e"
    assert (scenario["goal"], scenario["parent_run_id"]) == ("Pay with a gift card instead", S3)
    assert scenario["start_url"] == fixture_manifests()[S3]["finalUrl"]
    again = data(on(template, "runs", "fork", S3, "--goal", "Pay with a gift card instead", "--json"))
    assert again["session_id"] != scenario["session_id"]
    missing = on(template, "runs", "fork", S3)
    assert missing.exit_code == 2 and "Missing option '--goal'" in missing.stderr and missing.stdout == ""
    blank = on(template, "runs", "fork", S3, "--goal", "  ")
    assert_one_line_error(blank, "goal")


def test_printing_a_scenario_records_nothing(filled: Path) -> None:
    before = data(on(filled, "runs", "--limit", "100", "--json"))
    for args in (["resume", S3], ["fork", S3, "--goal", "Try again"]):
        assert on(filled, "runs", *args).exit_code == 0
    assert data(on(filled, "runs", "--limit", "100", "--json")) == before


def test_tree_shows_ancestors_and_descendants(template: Path) -> None:
    tree = data(on(template, "runs", "tree", S3, "--json"))
    assert set(tree) == {"ancestors", "run", "descendants"}
    assert [m["run_id"] for m in tree["ancestors"]] == [S2] and tree["run"]["run_id"] == S3
    assert [(node["run"]["run_id"], node["children"]) for node in tree["descendants"]] == [(S4, [])]
    root = data(on(template, "runs", "tree", L1, "--json"))
    assert root["ancestors"] == [] and {node["run"]["run_id"] for node in root["descendants"]} == {L2, L3}
    top = data(on(template, "runs", "tree", S2, "--json"))
    assert [node["run"]["run_id"] for node in top["descendants"]] == [S3]
    assert [child["run"]["run_id"] for child in top["descendants"][0]["children"]] == [S4]
    human = on(template, "runs", "tree", S2)
    assert human.exit_code == 0
    lines = [line for line in human.stdout.splitlines() if line.strip()]
    assert [next(i for i, line in enumerate(lines) if run in line) for run in (S2, S3, S4)] == [0, 1, 2]
    assert "[session cart-e2e]" in lines[0]


@pytest.mark.parametrize("args", [["show"], ["resume"], ["tree"], ["fork", "--goal", "x"]])
def test_a_missing_run_id_is_a_one_line_error(template: Path, args: list[str]) -> None:
    command, *options = args
    result = on(template, "runs", command, MISSING_RUN, *options)
    assert_one_line_error(result, f"no run {MISSING_RUN!r} in namespace 'default'")


# --- sessions, facts, selectors ----------------------------------------------------------------------------------


def test_sessions_newest_first(template: Path) -> None:
    for domain, knowledge in fixture_domain_files("knowledge.json").items():
        rows = data(on(template, "sessions", domain, "--json"))
        expected = sorted(knowledge["sessions"], key=lambda s: s["timestamp"], reverse=True)
        assert [(r["id"], r["goal"], r["success"], r["final_url"]) for r in rows] == [
            (s["id"], s["goal"], s["success"], s["finalUrl"]) for s in expected]
    human = on(template, "sessions", SHOP)
    assert human.exit_code == 0 and "cart-e2e" in human.stdout
    assert on(template, "sessions", "nothing.example").stdout.strip() == "No sessions for nothing.example."


def test_facts_filters_by_type_and_confidence(template: Path) -> None:
    expected = fixture_facts(SHOP)
    everything = data(on(template, "facts", SHOP, "--min-confidence", "0", "--json"))
    assert {(f["type"], f["key"], f["value"]) for f in everything} == set(expected)
    default = data(on(template, "facts", SHOP, "--json"))
    assert {(f["type"], f["key"], f["value"]) for f in default} == {k for k, c in expected.items() if c >= 0.3}
    confident = data(on(template, "facts", SHOP, "--min-confidence", "0.6", "--json"))
    assert {(f["type"], f["key"], f["value"]) for f in confident} == {k for k, c in expected.items() if c >= 0.6}
    assert confident and len(confident) < len(everything)
    confidences = [f["confidence"] for f in everything]
    assert confidences == sorted(confidences, reverse=True)
    patterns = data(on(template, "facts", SHOP, "--type", "pattern", "--min-confidence", "0", "--json"))
    assert {(f["type"], f["key"], f["value"]) for f in patterns} == {k for k in expected if k[0] == "pattern"}
    # the pattern extractor's two contradicting cookie-dismiss values are both kept (FORMATS.md 1.3)
    assert sorted(f["value"] for f in patterns if f["key"] == "cookie-dismiss") == [
        "Turn 1: click @b505", "Turn 1: click @l1ce5"]
    human = on(template, "facts", SHOP, "--type", "quirk")
    assert human.exit_code == 0 and "size-required" in human.stdout
    bad = on(template, "facts", SHOP, "--type", "gossip")
    assert bad.exit_code == 2
    assert on(template, "facts", SHOP, "--min-confidence", "1.5").exit_code == 2


def test_selectors_most_successful_first(template: Path) -> None:
    expected = fixture_domain_files("selectors.json")["localhost:5173"]["entries"]
    rows = data(on(template, "selectors", "localhost:5173", "--limit", "100", "--json"))
    assert {r["element"] for r in rows} == set(expected)
    for row in rows:
        entry = expected[row["element"]]
        assert (row["success_count"], row["last_ref"], row["stable_selector"]) == (
            entry["successCount"], entry.get("lastRef"), entry.get("stableSelector"))
    counts = [r["success_count"] for r in rows]
    assert counts == sorted(counts, reverse=True)
    assert len(data(on(template, "selectors", "localhost:5173", "--limit", "3", "--json"))) == 3
    human = on(template, "selectors", SHOP)
    assert human.exit_code == 0 and "#onetrust-accept-btn-handler" in human.stdout


# --- trajectories ------------------------------------------------------------------------------------------------


def test_trajectories_list_and_show(template: Path) -> None:
    files = fixture_trajectories()
    rows = data(on(template, "trajectories", "--limit", "100", "--json"))
    assert {r["id"] for r in rows} == {t["id"] for t in files}
    local = data(on(template, "trajectories", "--domain", "localhost:5173", "--json"))
    assert {r["id"] for r in local} == {t["id"] for t in files if host_key(t["origin"]) == "localhost:5173"}
    chosen = next(t for t in files if t["id"] == "traj_1794144059416_e93erh")
    shown = data(on(template, "trajectories", "show", chosen["id"], "--json"))
    assert (shown["goal"], shown["origin"], shown["success"]) == (chosen["goal"], SHOP_ORIGIN, False)
    assert [s["selector"] for s in shown["steps"]] == [s["action"].get("selector") for s in chosen["steps"]]
    human = on(template, "trajectories", "show", chosen["id"])
    assert human.exit_code == 0
    # the fixture clicks "@b9f7" twice in a row: the reference shows the path that worked, once
    assert f"Goal: {chosen['goal']}" in human.stdout
    assert "Steps (3 that worked; 1 redundant step left out):" in human.stdout
    missing = on(template, "trajectories", "show", "traj_0_missing")
    assert_one_line_error(missing, "traj_0_missing")


def recent_copy(target: Path) -> Path:
    """The fixture directory with every trajectory moved forward in time (order kept), so that
    matching does not depend on today's date (trajectories expire after 30 days)."""
    shutil.copytree(AGENT_MEMORY, target)
    files = sorted(target.glob("traj_*.json")) + sorted(target.glob("domains/*/trajectories/traj_*.json"))
    loaded = {path: json.loads(path.read_text(encoding="utf-8")) for path in files}
    stamp = lambda text: datetime.fromisoformat(text.replace("Z", "+00:00"))  # noqa: E731
    newest = max(stamp(item["timestamp"]) for item in loaded.values())
    shift = datetime.now(UTC) - timedelta(days=1) - newest
    for path, item in loaded.items():
        moved = stamp(item["timestamp"]) + shift
        item["timestamp"] = moved.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        path.write_text(json.dumps(item, indent=2), encoding="utf-8")
    return target


def test_trajectories_match_with_and_without_trace_scoring(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    data(on(directory, "import", recent_copy(tmp_path / "recent"), "--json"))
    files = fixture_trajectories()
    shop_ok = {t["id"] for t in files if t["origin"] == SHOP_ORIGIN and t["success"]}
    goal = "Add the Trailblazer 2 running shoe in size 10 to the cart"
    [winner] = [t["id"] for t in files if t["origin"] == SHOP_ORIGIN and t["success"] and t["goal"] == goal]

    plain = data(on(directory, "trajectories", "match", goal, "--url", f"{SHOP_ORIGIN}/p/x", "--json", "--all"))
    assert set(plain) == set(webmem.MatchReport.model_fields) >= {"goal", "origin", "candidates", "scored", "best"}
    assert plain["scored"] == len(plain["candidates"])
    assert plain["trace_scoring"] is False and plain["origin"] == SHOP_ORIGIN
    assert {c["trajectory"]["id"] for c in plain["candidates"]} == shop_ok  # failed runs are never candidates
    assert all(c["score"] == c["similarity"] for c in plain["candidates"])
    assert plain["best"]["id"] == winner and plain["reason"].startswith(f"{winner} won: similarity 1.00")
    # by default the closest few, from the ranking that scores only the goals that can compete
    closest = data(on(directory, "trajectories", "match", goal, "--url", SHOP_ORIGIN, "--json"))
    assert len(shop_ok) > DEFAULT_MATCH_LIMIT == len(closest["candidates"]) and closest["scored"] == len(shop_ok)
    def ranked(report: dict, limit: int) -> list[tuple[str, float, str] | float]:
        """The closest ``limit`` candidates; of those that share nothing (0: their order is that of whichever the
        ranking scored), only the similarity."""
        return [(c["trajectory"]["id"], c["similarity"], c["why"]) if c["similarity"] else 0.0
                for c in report["candidates"][:limit]]

    assert ranked(closest, DEFAULT_MATCH_LIMIT) == ranked(plain, DEFAULT_MATCH_LIMIT)
    assert closest["best"]["id"] == winner and sum(c["similarity"] > 0 for c in closest["candidates"]) >= 2
    two = data(on(directory, "trajectories", "match", goal, "--url", SHOP_ORIGIN, "--limit", "2", "--json"))
    assert ranked(two, 2) == ranked(plain, 2) and two["scored"] == len(shop_ok)
    assert f"the closest {DEFAULT_MATCH_LIMIT} of {len(shop_ok)}" in on(
        directory, "trajectories", "match", goal, "--url", SHOP_ORIGIN).stdout
    both = on(directory, "trajectories", "match", goal, "--url", SHOP_ORIGIN, "--all", "--limit", "2")
    assert both.exit_code == 2 and "give --limit or --all, not both" in both.stderr
    assert on(directory, "trajectories", "match", goal, "--url", SHOP_ORIGIN, "--all=yes").exit_code == 2

    traced = data(on(directory, "trajectories", "match", goal, "--url", SHOP_ORIGIN, "--trace-scoring", "--json",
                     "--all"))
    assert traced["trace_scoring"] is True and traced["best"]["id"] == winner
    for candidate in traced["candidates"]:
        assert set(candidate) == {"trajectory", "similarity", "score", "recency", "speed", "verification_rate",
                                  "eligible", "reason", "why", "semantic"}
        assert "steps" not in candidate["trajectory"]  # a match report never decodes the losers' steps
        blend = (0.6 * candidate["similarity"] + 0.2 * candidate["recency"] + 0.1 * candidate["speed"]
                 + 0.1 * candidate["verification_rate"])
        assert candidate["score"] == pytest.approx(blend)
    scores = [c["score"] for c in traced["candidates"] if c["eligible"]]
    assert scores == sorted(scores, reverse=True)

    human = on(directory, "trajectories", "match", goal, "--url", SHOP_ORIGIN, "--trace-scoring", "--all")
    assert human.exit_code == 0
    assert f"Candidates on {SHOP_ORIGIN}: {len(shop_ok)} (threshold 0.50)" in human.stdout
    assert all(trajectory in human.stdout for trajectory in shop_ok)
    assert human.stdout.strip().splitlines()[-1] == traced["reason"]

    nothing = data(on(directory, "trajectories", "match", "Track parcel 42 with the courier", "--url", SHOP_ORIGIN,
                      "--json", "--all"))
    assert nothing["best"] is None and len(nothing["candidates"]) == len(shop_ok)
    assert nothing["reason"].startswith(f"no eligible candidate among {len(shop_ok)}; closest: ")
    elsewhere = data(on(directory, "trajectories", "match", goal, "--url", "https://nowhere.example/", "--json"))
    assert (elsewhere["candidates"], elsewhere["reason"]) == ([], "no successful trajectory on this origin")
    assert on(directory, "trajectories", "match", goal).exit_code == 2  # --url is required
    # how the answer must be written is set aside, and values are read in their usual forms; both are shown
    worded = f"Could you please {goal[0].lower()}{goal[1:]} by 05/01/2021? Answer with the order number only."
    read = on(directory, "trajectories", "match", worded, "--url", SHOP_ORIGIN)
    assert 'Set aside (not compared): "Could you please"; "Answer with the order number only."' in read.stdout
    assert 'Values read: "05/01/2021" as date 2021-05-01' in read.stdout
    assert read.stdout.strip().splitlines()[-1].startswith(f"{winner} won")


# --- lessons ----------------------------------------------------------------------------------------------------


def test_lessons_by_tier_and_domain(template: Path) -> None:
    everything = data(on(template, "lessons", "--json"))
    assert len(everything) == 9
    tiers = [item["tier"] for item in everything]
    assert tiers == sorted(tiers)
    first = data(on(template, "lessons", "--tier", "1", "--json"))
    second = data(on(template, "lessons", "--tier", "2", "--json"))
    assert {item["category"] for item in first} == {"tool_fallback", "best_practice"}
    assert {item["category"] for item in second} == {"site_specific", "error_recovery"}
    assert len(first) == 5 and len(second) == 4
    assert {item["id"] for item in first} | {item["id"] for item in second} == {item["id"] for item in everything}
    amazon = data(on(template, "lessons", "--domain", "www.amazon.com", "--json"))
    assert [(item["domain"], item["use_count"]) for item in amazon] == [("amazon.com", 5)]
    assert on(template, "lessons", "--tier", "3").exit_code == 2
    human = on(template, "lessons", "--tier", "2")
    assert human.exit_code == 0 and "site_specific" in human.stdout and "best_practice" not in human.stdout


def test_lessons_recall_only_looks(filled: Path) -> None:
    before = data(on(filled, "lessons", "--json"))
    error = "TimeoutError: locator.click: <div class=overlay> intercepts pointer events"
    found = data(on(filled, "lessons", "recall", "--command", "click", "--error", error, "--json"))
    assert found and all("lesson" in item for item in found)
    assert any(item["error_pattern"] == "intercepts pointer events" for item in found)
    site = data(on(filled, "lessons", "recall", "--domain", "www.amazon.com", "--json"))
    assert [item["domain"] for item in site] == ["amazon.com"]
    human = on(filled, "lessons", "recall", "--domain", "www.amazon.com")
    assert human.exit_code == 0 and human.stdout.startswith("- On amazon.com")
    both = on(filled, "lessons", "recall", "--command", "click", "--error", error, "--domain", "www.amazon.com")
    assert both.exit_code == 0
    assert data(on(filled, "lessons", "--json")) == before  # use counts, last_used, domains: all unchanged


@pytest.mark.parametrize("args", [[], ["--command", "click"], ["--error", "Timeout"], ["--command", "click",
                                                                                     "--domain", "a.example"]])
def test_lessons_recall_bad_combinations_are_usage_errors(template: Path, args: list[str]) -> None:
    result = on(template, "lessons", "recall", *args)
    assert result.exit_code == 2 and "give --command and --error together, or --domain" in result.stderr


# --- episodes and context --------------------------------------------------------------------------------------


def test_episodes_table_prompt_csv_and_json(filled: Path) -> None:
    fill_episode(filled)
    rows = data(on(filled, "episodes", "tickets", "--json"))
    assert [(r["rep"], r["step_num"], r["outcome"]) for r in rows] == [(1, 1, "success"), (1, 2, "failure"),
                                                                         (1, 3, "pending")]
    assert all("internal_state_embedding" not in r for r in rows)
    table = on(filled, "episodes", "tickets")
    assert table.exit_code == 0 and "Choose High in the priority dropdown" in table.stdout
    prompt = on(filled, "episodes", "tickets", "--format", "prompt")
    assert prompt.exit_code == 0
    assert prompt.stdout.startswith("# Lessons From Previous Attempt")
    assert "REPEAT: [/tickets/4021 90%] click: 'Priority'" in prompt.stdout
    assert "AVOID: [/tickets/4021 80%] click: 'Delete'" in prompt.stdout
    assert "Do this instead: Choose High in the priority dropdown" in prompt.stdout
    csv_text = on(filled, "episodes", "tickets", "--format", "csv").stdout
    assert csv_text.splitlines()[0].startswith("id,session_id,rep,step_num")
    assert len(csv_text.strip().splitlines()) == 4
    assert on(filled, "episodes", "nobody").stdout.strip() == "No episode entries."
    assert on(filled, "episodes", "tickets", "--format", "yaml").exit_code == 2


def test_context_preview_reports_the_pack_and_records_no_run(filled: Path) -> None:
    before = snapshot(filled)
    goal, url = "Add the Trailblazer 2 running shoe in size 10 to the cart", f"{SHOP_ORIGIN}/"
    pack = data(on(filled, "context", "--goal", goal, "--url", url, "--json"))
    assert set(pack) == {"text", "tokens", "budget_tokens", "parts"}
    assert pack["budget_tokens"] == 2000 and 0 < pack["tokens"] <= 2000
    for part in pack["parts"]:
        assert set(part) == {"name", "heading", "priority", "status", "tokens", "full_tokens", "detail"}
        assert part["status"] in {"included", "truncated", "dropped", "empty"}
    statuses = {part["name"]: part["status"] for part in pack["parts"]}
    assert statuses["session_history"] == statuses["app_knowledge"] == "included"
    assert "## SESSION HISTORY" in pack["text"] and "## APP KNOWLEDGE" in pack["text"]
    assert "testpass" not in pack["text"]

    small = data(on(filled, "context", "--goal", goal, "--url", url, "--budget", "120", "--json"))
    assert small["budget_tokens"] == 120 and small["tokens"] <= 120
    assert {part["status"] for part in small["parts"]} & {"truncated", "dropped"}

    human = on(filled, "context", "--goal", goal, "--url", url, "--budget", "120")
    assert human.exit_code == 0
    assert small["text"] in human.stdout and f"{small['tokens']} of 120 tokens" in human.stdout
    assert on(filled, "context", "--goal", goal, "--url", url, "--budget", "0").exit_code == 2
    assert on(filled, "context", "--goal", goal).exit_code == 2
    assert_one_line_error(on(filled, "context", "--goal", goal, "--url", "ftp://files.example/"), "url")
    assert snapshot(filled) == before


# --- export -----------------------------------------------------------------------------------------------------

KINDS = ["runs", "trajectories", "facts", "sessions", "selectors", "lessons", "episodes"]


@pytest.mark.parametrize("kind", KINDS)
def test_export_each_kind_as_json_jsonl_and_csv(filled: Path, kind: str) -> None:
    fill_episode(filled)
    counts = data(on(filled, "stats", "--json"))["counts"]
    expected = counts["episode_entries" if kind == "episodes" else kind]["total"]
    assert expected > 0
    body = data(on(filled, "export", "--kind", kind))
    assert set(body) == {"webmem_export", "namespace", kind} and body["webmem_export"] == 1
    assert len(body[kind]) == expected
    lines = on(filled, "export", "--kind", kind, "--format", "jsonl").stdout.splitlines()
    assert len(lines) == expected
    assert all(json.loads(line)["kind"] == kind for line in lines)
    assert [json.loads(line)["record"] for line in lines] == body[kind]
    rows = list(csv.DictReader(io.StringIO(on(filled, "export", "--kind", kind, "--format", "csv").stdout)))
    assert len(rows) == expected


def test_export_all_kinds_by_default_and_to_a_file(filled: Path, tmp_path: Path) -> None:
    fill_episode(filled)
    body = data(on(filled, "export"))
    assert set(body) == {"webmem_export", "namespace", *KINDS}
    target = tmp_path / "out" / "memory.json"
    target.parent.mkdir()
    result = on(filled, "export", "-o", target)
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.startswith("Wrote ") and str(target) in result.stderr
    assert json.loads(target.read_text(encoding="utf-8")) == body
    two = on(filled, "export", "--kind", "facts", "--kind", "runs", "--format", "jsonl")
    assert {json.loads(line)["kind"] for line in two.stdout.splitlines()} == {"facts", "runs"}


def test_export_prompt_for_lessons_and_episodes_only(filled: Path) -> None:
    fill_episode(filled)
    lessons = on(filled, "export", "--kind", "lessons", "--format", "prompt")
    assert lessons.exit_code == 0 and lessons.stdout.startswith("## Lessons from experience")
    tier_one = data(on(filled, "lessons", "--tier", "1", "--json"))
    assert all(f"- {item['lesson']}" in lessons.stdout for item in tier_one)
    episodes = on(filled, "export", "--kind", "episodes", "--format", "prompt")
    assert episodes.exit_code == 0 and episodes.stdout.startswith("# Lessons From Previous Attempt")
    assert_one_line_error(on(filled, "export", "--kind", "runs", "--format", "prompt"), "lessons and episodes")


def test_export_csv_of_two_kinds_is_a_one_line_error(filled: Path, tmp_path: Path) -> None:
    target = tmp_path / "two.csv"
    result = on(filled, "export", "--kind", "facts", "--kind", "runs", "--format", "csv", "-o", target)
    assert_one_line_error(result, "one kind at a time")
    assert not target.exists()
    assert_one_line_error(on(filled, "export", "--format", "csv"), "one kind at a time")
    assert on(filled, "export", "--kind", "gossip").exit_code == 2
    assert on(filled, "export", "--format", "xml").exit_code == 2


def test_export_agent_memory_needs_a_directory(filled: Path, tmp_path: Path) -> None:
    result = on(filled, "export", "--format", "agent-memory")
    assert result.exit_code == 2 and "-o DIR" in result.stderr
    target = tmp_path / "exported"
    result = on(filled, "export", "--format", "agent-memory", "-o", target)
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.startswith("Wrote 26 facts, 15 sessions, 47 selectors, 20 trajectories, 12 runs to")
    assert sorted(path.name for path in (target / "domains").iterdir()) == sorted(
        path.name for path in (AGENT_MEMORY / "domains").iterdir())
    assert len(list((target / "agent-runs").glob("*.json"))) == 12
    assert len(list(target.glob("domains/*/trajectories/traj_*.json"))) == 20


# --- import -----------------------------------------------------------------------------------------------------


def test_import_detects_each_source(filled: Path, tmp_path: Path) -> None:
    export_json, export_jsonl = tmp_path / "memory.json", tmp_path / "memory.jsonl"
    fill_episode(filled)
    assert on(filled, "export", "-o", export_json).exit_code == 0
    assert on(filled, "export", "--format", "jsonl", "-o", export_jsonl).exit_code == 0
    expected = data(on(filled, "stats", "--json"))["counts"]
    for number, source in enumerate([export_json, export_jsonl]):
        target = tmp_path / f"from-export-{number}"
        report = data(on(target, "import", source, "--json"))
        assert set(report) == {"added", "merged", "skipped", "problems", "notes", "dry_run"}
        assert report["problems"] == [] and report["added"]["trajectories"] == 20
        assert report["added"]["episodes"] == 3
        counts = data(on(target, "stats", "--json"))["counts"]
        assert {kind: counts[kind]["total"] for kind in counts} == {kind: expected[kind]["total"] for kind in expected}
    lessons_only = tmp_path / "lessons-only"
    report = data(on(lessons_only, "import", LESSON_FILE, "--json"))
    assert set(report["added"]) | set(report["merged"]) == {"lessons"}
    directory = tmp_path / "layout-only"
    report = data(on(directory, "import", AGENT_MEMORY, "--json"))
    assert "lessons" not in report["added"] and report["added"]["runs"] == 12
    assert sorted(report["notes"]) == sorted([
        "hints.json: suite summaries and hints are not memory records; not imported",
        "runs: suite summaries and hints are not memory records; not imported"])
    human = on(directory, "import", AGENT_MEMORY)
    assert human.exit_code == 0 and "already there" in human.stdout and "note: hints.json" in human.stdout


def test_import_dry_run_changes_nothing(filled: Path, tmp_path: Path) -> None:
    source = recent_copy(tmp_path / "recent")
    (source / "traj_1799999999999_extra1.json").write_text(json.dumps({
        "id": "traj_1799999999999_extra1", "goal": "Find the returns policy", "origin": SHOP_ORIGIN,
        "steps": [{"url": f"{SHOP_ORIGIN}/", "action": {"action": "click", "selector": "@l99"}}],
        "success": True, "durationMs": 900, "model": "gpt-5.4", "timestamp": "2026-11-20T10:00:00.000Z"}))
    before = snapshot(filled)
    report = data(on(filled, "import", source, "--dry-run", "--json"))
    assert report["dry_run"] is True and report["added"] == {"trajectories": 1}
    assert report["skipped"]["trajectories"] == 20 and report["skipped"]["runs"] == 12
    human = on(filled, "import", source, "--dry-run")
    assert human.exit_code == 0 and "Dry run: nothing changed; would import" in human.stdout
    lessons = data(on(filled, "import", LESSON_FILE, "--dry-run", "--json"))
    assert lessons["dry_run"] is True and lessons["merged"] == {"lessons": 9}
    assert snapshot(filled) == before
    assert data(on(filled, "import", source, "--json"))["added"] == {"trajectories": 1}
    assert snapshot(filled) != before


def test_import_of_more_than_300_records_draws_no_bar_when_stderr_is_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("FORCE_TERMINAL", "TTY_INTERACTIVE", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    source = many_trajectories(tmp_path / "many", 320)
    result = on(tmp_path / "memory", "import", source)
    assert result.exit_code == 0 and "320" in result.stdout
    # rich draws nothing on a pipe (CliRunner's stderr is one): no frames, no escape codes in a log
    assert result.stderr.strip() == "" and "\x1b" not in result.stderr
    quiet = on(tmp_path / "memory2", "import", source, "--json")
    assert data(quiet)["added"] == {"trajectories": 320} and quiet.stderr.strip() == ""


def many_trajectories(root: Path, count: int) -> Path:
    root.mkdir(parents=True)
    for number in range(count):
        name = f"traj_{1794000000000 + number}_m{number:05d}"
        (root / f"{name}.json").write_text(json.dumps({
            "id": name, "goal": f"Open order {number}", "origin": SHOP_ORIGIN,
            "steps": [{"url": f"{SHOP_ORIGIN}/orders", "action": {"action": "click", "selector": f"@l{number:x}"},
                       "snapshotHash": "12345"}],
            "success": True, "durationMs": 1000, "model": "gpt-5.4", "timestamp": "2026-11-01T10:00:00.000Z"}))
    return root


def run_with_stderr_on_a_terminal(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Run ``python -m webmem args`` with stdout on a pipe and stderr on a pseudo-terminal."""
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        process = subprocess.run([sys.executable, "-m", "webmem", *args], stdout=subprocess.PIPE, stderr=slave,
                                 stdin=subprocess.DEVNULL, env=env, timeout=120, check=False)
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)
    return process.returncode, process.stdout.decode("utf-8"), b"".join(chunks).decode("utf-8", errors="replace")


def test_import_of_more_than_300_records_draws_a_bar_on_a_terminal(tmp_path: Path) -> None:
    source = many_trajectories(tmp_path / "many", 320)
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    for name in ("NO_COLOR", "TTY_INTERACTIVE", "TTY_COMPATIBLE"):
        env.pop(name, None)
    code, out, err = run_with_stderr_on_a_terminal("--memory-dir", str(tmp_path / "m1"), "import", str(source),
                                                   env=env)
    assert code == 0
    assert "Importing" in err and "/320" in err  # the bar, on stderr
    assert "Importing" not in out and "trajectories" in out  # the table, on stdout
    code, out, err = run_with_stderr_on_a_terminal("--memory-dir", str(tmp_path / "m2"), "import", str(source),
                                                   "--json", env=env)
    assert code == 0 and json.loads(out)["added"] == {"trajectories": 320}
    assert "Importing" not in err


# --- prune, stats, doctor, migrate ------------------------------------------------------------------------------


def prunable_export(path: Path) -> Path:
    """A webmem export with one record of each kind prune removes, next to ones it keeps."""
    now = datetime.now(UTC)
    stamp = lambda moment: moment.isoformat().replace("+00:00", "Z")  # noqa: E731
    step = {"action": "click", "url": f"{SHOP_ORIGIN}/", "target": 'button "Go"', "selector": "#go", "ok": True}
    trajectory = {"goal": "Open the sale page", "origin": SHOP_ORIGIN, "domain": SHOP, "steps": [step],
                  "success": True, "duration_ms": 1200}
    fact = {"domain": SHOP, "type": "quirk", "key": "banner", "sources": 1,
            "first_seen": stamp(now), "last_seen": stamp(now)}
    lesson = {"category": "error_recovery", "domain": None, "use_count": 1, "helpful_count": 0, "unhelpful_count": 0,
              "source": "learned", "triggered_domains": [SHOP], "created_at": stamp(now - timedelta(days=200))}
    path.write_text(json.dumps({
        "webmem_export": 1, "namespace": "default",
        "trajectories": [{**trajectory, "id": "traj_old", "created_at": stamp(now - timedelta(days=45))},
                         {**trajectory, "id": "traj_new", "created_at": stamp(now - timedelta(days=2))}],
        "facts": [{**fact, "value": "A banner hides the menu", "confidence": 0.05},
                  {**fact, "value": "A cookie banner covers the footer", "confidence": 0.6}],
        "lessons": [{**lesson, "id": "lesson_stale", "lesson": "When hover fails with 'detached', try click instead.",
                     "failed_command": "hover", "error_pattern": "element is detached from the dom",
                     "last_used": stamp(now - timedelta(days=120))},
                    {**lesson, "id": "lesson_fresh",
                     "lesson": "When press fails with 'not focused', try click instead.",
                     "failed_command": "press", "error_pattern": "element is not focused",
                     "last_used": stamp(now - timedelta(days=3))}],
    }))
    return path


def test_prune_dry_run_then_prune(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    report = data(on(directory, "import", prunable_export(tmp_path / "prunable.json"), "--json"))
    assert report["problems"] == []
    before = snapshot(directory)
    planned = data(on(directory, "prune", "--dry-run", "--json"))
    assert planned == {"dry_run": True, "removed": {"trajectories": 1, "lessons": 1, "facts": 1, "patterns": 0}}
    assert snapshot(directory) == before  # a dry run removes nothing, and neither does opening the memory
    human = on(directory, "prune", "--dry-run")
    assert human.exit_code == 0 and "would be removed" in human.stdout
    done = data(on(directory, "prune", "--json"))
    assert done == {"dry_run": False, "removed": planned["removed"]}
    left = data(on(directory, "export"))
    assert [t["id"] for t in left["trajectories"]] == ["traj_new"]
    assert [f["confidence"] for f in left["facts"]] == [0.6]
    assert "lesson_stale" not in {item["id"] for item in left["lessons"]}
    assert "lesson_fresh" in {item["id"] for item in left["lessons"]}
    again = data(on(directory, "prune", "--json"))
    assert again["removed"] == {"trajectories": 0, "lessons": 0, "facts": 0, "patterns": 0}


def test_reading_commands_do_not_prune(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    data(on(directory, "import", prunable_export(tmp_path / "prunable.json"), "--json"))
    for args in (["lessons"], ["stats"], ["export"], ["doctor"], ["lessons", "recall", "--domain", SHOP]):
        assert on(directory, *args).exit_code == 0
    assert "lesson_stale" in {item["id"] for item in data(on(directory, "lessons", "--json"))}


def test_stats_counts_per_kind_and_domain(template: Path) -> None:
    found = data(on(template, "stats", "--json"))
    assert set(found) == {"namespace", "location", "counts", "database_bytes", "wal_bytes"}
    assert found["namespace"] == "default" and found["location"] == str(template / "memory.db")
    assert found["database_bytes"] == (template / "memory.db").stat().st_size > 0
    counts = found["counts"]
    assert {"runs", "trajectories", "sessions", "facts", "selectors", "lessons", "episode_entries"} <= set(counts)
    manifests = fixture_manifests().values()
    assert counts["runs"]["by_domain"] == {
        domain: sum(1 for m in manifests if host_key(m["startUrl"]) == domain)
        for domain in {host_key(m["startUrl"]) for m in manifests}}
    trajectories = fixture_trajectories()
    assert counts["trajectories"]["by_domain"] == {
        domain: sum(1 for t in trajectories if host_key(t["origin"]) == domain)
        for domain in {host_key(t["origin"]) for t in trajectories}}
    knowledge = fixture_domain_files("knowledge.json")
    assert counts["facts"]["by_domain"] == {domain: len(fixture_facts(domain)) for domain in knowledge}
    assert counts["sessions"]["by_domain"] == {domain: len(k["sessions"]) for domain, k in knowledge.items()}
    assert counts["selectors"]["by_domain"] == {
        domain: len(s["entries"]) for domain, s in fixture_domain_files("selectors.json").items()}
    assert counts["lessons"]["total"] == 9 and counts["episode_entries"]["total"] == 0
    assert all(entry["total"] == sum(entry.get("by_domain", {}).values()) or "by_domain" not in entry
               for entry in counts.values())
    human = on(template, "stats")
    assert human.exit_code == 0
    assert f"database {found['database_bytes']} bytes" in human.stdout and "localhost:5173" in human.stdout


def test_namespaces_partition_stats_and_listings(filled: Path) -> None:
    other = data(on(filled, "--namespace", "elsewhere", "stats", "--json"))
    assert other["namespace"] == "elsewhere"
    assert {kind: entry["total"] for kind, entry in other["counts"].items() if kind != "lessons"} == {
        kind: 0 for kind in other["counts"] if kind != "lessons"}
    assert data(on(filled, "--namespace", "elsewhere", "runs", "--json")) == []
    assert data(on(filled, "--namespace", "elsewhere", "sessions", SHOP, "--json")) == []


def test_doctor_ok(template: Path) -> None:
    report = data(on(template, "doctor", "--json"))
    assert set(report) == {"ok", "integrity", "journal_mode", "database_bytes", "wal_bytes", "migrations",
                           "pending_migrations", "orphans", "namespaces", "abandoned_runs"}
    assert all(run_id.startswith("run_") for run_id in report["abandoned_runs"])  # the fixture has old running runs
    assert report["ok"] is True and report["integrity"] == "ok" and report["journal_mode"] == "wal"
    assert [m["name"] for m in report["migrations"]] == [m.name for m in MIGRATIONS]
    assert report["pending_migrations"] == [] and report["namespaces"] == ["default"]
    assert set(report["orphans"].values()) == {0}
    human = on(template, "doctor")
    assert human.exit_code == 0 and human.stdout.strip().splitlines()[-1] == "ok"
    assert "integrity: ok" in human.stdout


def test_doctor_exits_1_when_the_integrity_check_fails(filled: Path) -> None:
    # an index that misses a row: SQLite still opens the file, its integrity check does not pass
    raw = sqlite3.connect(filled / "memory.db", isolation_level=None)
    raw.execute("CREATE TABLE scratch(a)")
    raw.execute("CREATE INDEX scratch_a ON scratch(a)")
    raw.execute("PRAGMA writable_schema=ON")
    raw.execute("UPDATE sqlite_master SET sql='CREATE INDEX scratch_a ON scratch(a) WHERE 0' WHERE name='scratch_a'")
    raw.close()
    raw = sqlite3.connect(filled / "memory.db", isolation_level=None)
    raw.execute("INSERT INTO scratch VALUES (1)")
    raw.execute("PRAGMA writable_schema=ON")
    raw.execute("UPDATE sqlite_master SET sql='CREATE INDEX scratch_a ON scratch(a)' WHERE name='scratch_a'")
    raw.close()
    result = on(filled, "doctor", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and any("scratch_a" in line for line in report["integrity"])
    human = on(filled, "doctor")
    assert human.exit_code == 1 and human.stdout.strip().splitlines()[-1] == "problems found"


def test_migrate_and_list(template: Path, tmp_path: Path) -> None:
    listed = data(on(template, "migrate", "--list", "--json"))
    assert [row["name"] for row in listed] == [m.name for m in MIGRATIONS]
    assert all(set(row) == {"name", "applied_at"} and row["applied_at"] for row in listed)
    human = on(template, "migrate", "--list")
    assert human.exit_code == 0 and all(m.name in human.stdout for m in MIGRATIONS)
    done = on(template, "migrate")
    assert done.exit_code == 0 and done.stdout.strip() == f"schema up to date: {len(MIGRATIONS)} migrations applied"
    assert data(on(template, "migrate", "--json")) == listed
    nowhere = tmp_path / "nowhere"
    assert_one_line_error(on(nowhere, "migrate", "--list"), "no webmem memory")
    assert not nowhere.exists()


def test_migrate_brings_an_older_database_up_to_date(tmp_path: Path) -> None:
    directory = tmp_path / "old"
    directory.mkdir()
    store = engine.Store.open_sqlite(directory)
    try:
        apply_migrations(store, target=MIGRATIONS[0].name)
    finally:
        store.close()
    with sqlite3.connect(directory / "memory.db") as raw:
        assert [row[0] for row in raw.execute("SELECT name FROM webmem_migrations")] == [MIGRATIONS[0].name]
    result = data(on(directory, "migrate", "--json"))
    assert [row["name"] for row in result] == [m.name for m in MIGRATIONS] and all(r["applied_at"] for r in result)
    with sqlite3.connect(directory / "memory.db") as raw:
        assert {row[0] for row in raw.execute("SELECT name FROM webmem_migrations")} == {m.name for m in MIGRATIONS}


# --- --json is only data, human output is not JSON --------------------------------------------------------------


JSON_COMMANDS = [
    ["runs"], ["runs", "show", S3], ["runs", "resume", S3], ["runs", "fork", S3, "--goal", "Try PayPal"],
    ["runs", "tree", S3], ["sessions", SHOP], ["facts", SHOP], ["selectors", SHOP], ["trajectories"],
    ["trajectories", "show", "traj_1794144059416_e93erh"],
    ["trajectories", "match", "Add a shoe", "--url", SHOP_ORIGIN],
    ["lessons"], ["lessons", "recall", "--domain", "www.amazon.com"], ["episodes", "tickets"],
    ["context", "--goal", "Add a shoe", "--url", SHOP_ORIGIN], ["import", str(LESSON_FILE), "--dry-run"],
    ["prune", "--dry-run"], ["stats"], ["doctor"], ["migrate", "--list"], ["migrate"],
]


@pytest.mark.parametrize("args", JSON_COMMANDS, ids=lambda args: " ".join(args[:2]))
def test_json_flag_prints_only_json_and_people_get_no_json(filled: Path, args: list[str]) -> None:
    fill_episode(filled)
    result = on(filled, *args, "--json")
    assert result.exit_code == 0 and result.stderr.strip() == ""
    parsed = json.loads(result.stdout)
    assert isinstance(parsed, dict | list) and parsed
    people = on(filled, *args)
    assert people.exit_code == 0 and people.stdout.strip()
    with pytest.raises(json.JSONDecodeError):
        json.loads(people.stdout)


# --- errors: one line, exit 1; usage: exit 2 ------------------------------------------------------------------


def test_corrupt_import_files_are_one_line_errors(filled: Path, tmp_path: Path) -> None:
    before = snapshot(filled)
    full = on(filled, "export").stdout
    truncated = tmp_path / "truncated.json"
    truncated.write_text(full[: len(full) // 2], encoding="utf-8")
    assert_one_line_error(on(filled, "import", truncated), "truncated.json: not valid JSON")
    lines = on(filled, "export", "--format", "jsonl").stdout
    broken = tmp_path / "broken.jsonl"
    broken.write_text(lines[: len(lines) // 3], encoding="utf-8")
    assert_one_line_error(on(filled, "import", broken, "--json"), "broken.jsonl: not valid JSON")
    half_lessons = tmp_path / "memory.json"
    text = LESSON_FILE.read_text(encoding="utf-8")
    half_lessons.write_text(text[: len(text) // 2], encoding="utf-8")
    assert_one_line_error(on(filled, "import", half_lessons), "memory.json")
    assert snapshot(filled) == before


def test_a_path_that_is_neither_layout_lesson_file_nor_export(filled: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("remember the milk\n", encoding="utf-8")
    assert_one_line_error(on(filled, "import", notes), "is not an .agent-memory directory, a lesson memory.json or "
                                                       "a webmem export")
    other_json = tmp_path / "package.json"
    other_json.write_text(json.dumps({"name": "left-pad", "version": "1.3.0"}), encoding="utf-8")
    assert_one_line_error(on(filled, "import", other_json), "is not an .agent-memory directory")
    empty = tmp_path / "empty-dir"
    empty.mkdir()
    assert_one_line_error(on(filled, "import", empty), "is a directory but not an .agent-memory layout")
    missing = on(filled, "import", tmp_path / "not-there")
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def newer_database(directory: Path) -> Path:
    with sqlite3.connect(directory / "memory.db") as raw:
        raw.execute("INSERT INTO webmem_migrations (name, applied_at) VALUES ('9999_from_the_future', "
                    "'2030-01-01 00:00:00.000000')")
    return directory


READING_AND_WRITING = [["runs"], ["stats"], ["doctor"], ["lessons"], ["export"], ["migrate", "--list"],
                       ["import", str(LESSON_FILE)], ["prune", "--dry-run"]]


@pytest.mark.parametrize("args", READING_AND_WRITING, ids=lambda args: " ".join(args[:1]))
def test_a_database_from_a_newer_webmem(filled: Path, args: list[str]) -> None:
    newer_database(filled)
    assert_one_line_error(on(filled, *args), "9999_from_the_future", "upgrade webmem")
    assert_one_line_error(on(filled, *args, *(["--json"] if args[0] not in ("export",) else [])), "newer webmem")


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
@pytest.mark.parametrize("args", READING_AND_WRITING, ids=lambda args: " ".join(args[:1]))
def test_a_corrupt_memory_db(filled: Path, args: list[str], damage: str) -> None:
    database = filled / "memory.db"
    if damage == "garbage":
        database.write_bytes(b"not a database at all " * 400)
    else:
        database.write_bytes(database.read_bytes()[:20_000])
    assert_one_line_error(on(filled, *args), "is not a webmem database or is damaged")


def test_a_database_locked_by_another_process(filled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The store waits LOCK_WAIT_SECONDS (60 s) for a writer's lock, each attempt waiting up to
    # BUSY_TIMEOUT_MS in SQLite itself; both are read when a transaction starts, so the in-process
    # CliRunner sees the patched values.
    monkeypatch.setattr(sqlite_connections, "LOCK_WAIT_SECONDS", 0.3)
    monkeypatch.setattr(sqlite_connections, "BUSY_TIMEOUT_MS", 50)
    before = data(on(filled, "lessons", "--json"))
    holder = sqlite3.connect(filled / "memory.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        assert_one_line_error(on(filled, "import", LESSON_FILE), "locked by another process")
        assert_one_line_error(on(filled, "prune", "--json"), "locked by another process")
        # the database is in WAL mode: reading commands still work while another process writes
        assert data(on(filled, "lessons", "--json")) == before
        with webmem.Memory.open(filled, prune_lessons=False) as mem, pytest.raises(webmem.StoreLocked):
            import_path(mem, LESSON_FILE)
    finally:
        holder.rollback()
        holder.close()
    assert data(on(filled, "import", LESSON_FILE, "--json"))["merged"] == {"lessons": 9}


@pytest.mark.parametrize("args", [
    ["runs", "--limit", "0"], ["runs", "--status", "paused"], ["runs", "show"], ["runs", "--bogus"],
    ["sessions"], ["facts"], ["selectors", SHOP, "--limit", "-1"], ["trajectories", "show"],
    ["trajectories", "match", "goal"], ["lessons", "--tier", "0"], ["episodes"], ["context", "--url", SHOP_ORIGIN],
    ["export", "--format", "yaml"], ["import"], ["prune", "--force"], ["stats", "extra"], ["migrate", "--all"],
])
def test_usage_errors_exit_2(template: Path, args: list[str]) -> None:
    result = on(template, *args)
    assert result.exit_code == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr and result.stderr.strip().splitlines()[-1].startswith("Error: ")


def test_a_missing_memory_is_an_error_for_reading_commands(tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere"
    for args in (["stats"], ["doctor"], ["lessons"], ["export"], ["prune", "--dry-run"], ["sessions", SHOP]):
        assert_one_line_error(on(nowhere, *args), "no webmem memory")
    assert not nowhere.exists()


# --- real processes --------------------------------------------------------------------------------------------


def run_webmem(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "webmem", *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False)


def test_subprocess_import_json_and_errors(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    done = run_webmem("--memory-dir", directory, "import", AGENT_MEMORY, "--json")
    assert done.returncode == 0 and done.stderr == ""
    assert json.loads(done.stdout)["added"]["trajectories"] == 20
    missing = run_webmem("--memory-dir", directory, "runs", "show", MISSING_RUN)
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.splitlines() == [f"Error: run_id: no run {MISSING_RUN!r} in namespace 'default'"]
    (directory / "memory.db").write_bytes(b"\x00garbage" * 1000)
    broken = run_webmem("--memory-dir", directory, "stats", "--json")
    assert broken.returncode == 1 and broken.stdout == "" and "Traceback" not in broken.stderr
    assert len(broken.stderr.splitlines()) == 1 and "is not a webmem database" in broken.stderr
    usage = run_webmem("--memory-dir", directory, "runs", "fork", S3)
    assert usage.returncode == 2 and "Missing option '--goal'" in usage.stderr


def test_data_that_looks_like_rich_markup_is_printed_as_it_is(tmp_path: Path) -> None:
    directory = tmp_path / "memory"
    goal = "Close the [/b] dialog, then [red]save[/red]"
    with webmem.Memory.open(directory) as mem:
        run = mem.start_run(goal=goal, start_url="https://forms.example/", session_id="s1")
        run.record_step(action="click", target='button "[/x] Close"', selector="#close", url="https://forms.example/")
        run.finish(success=True, outcome="Closed [/i]")
    for args in (["runs"], ["runs", "show", run.id], ["runs", "tree", run.id], ["sessions", "forms.example"],
                 ["trajectories"], ["selectors", "forms.example"]):
        result = on(directory, *args)
        assert result.exit_code == 0, (args, result.stderr)
        assert "[/" in result.stdout
    assert goal in on(directory, "runs", "tree", run.id).stdout
    assert "[session s1]" in on(directory, "runs", "tree", run.id).stdout


def test_import_of_an_unusable_path_creates_no_memory(tmp_path: Path) -> None:
    target = tmp_path / "fresh-memory"
    junk = tmp_path / "notes.txt"
    junk.write_text("just some notes\n")
    result = CliRunner().invoke(cli, ["--memory-dir", str(target), "import", str(junk)], catch_exceptions=False)
    assert result.exit_code == 1
    assert not target.exists()


def test_csv_cells_that_would_start_a_formula_are_neutralised_unless_raw(tmp_path: Path) -> None:
    formula = '=HYPERLINK("http://evil.example","Click")'
    directory = tmp_path / "hostile"
    with webmem.Memory.open(directory) as mem:
        mem.knowledge.record_fact("shop.example", "quirk", "@sum", formula)
        mem.knowledge.record_fact("shop.example", "quirk", "minus", "-2+3")
        page = {"url": "https://shop.example/", "title": "+cmd|' /C calc'!A0", "elements": []}
        mem.episodes.init_episode("hostile")
        step = mem.episodes.record_step_start(page, "Buy", "click('e1')", "=1+1")
        mem.episodes.record_step_end(step, page)
        mem.episodes.persist_memories()
    facts = list(csv.DictReader(io.StringIO(on(directory, "export", "--kind", "facts", "--format", "csv").stdout)))
    assert {(row["key"], row["value"]) for row in facts} == {("'@sum", "'" + formula), ("minus", "'-2+3")}
    for command in (["export", "--kind", "episodes", "--format", "csv"], ["episodes", "hostile", "--format", "csv"]):
        (row,) = csv.DictReader(io.StringIO(on(directory, *command).stdout))
        assert (row["action_element_text"], row["env_pre_title"]) == ("'=1+1", "'+cmd|' /C calc'!A0")
        (raw,) = csv.DictReader(io.StringIO(on(directory, *command, "--raw-csv").stdout))
        assert (raw["action_element_text"], raw["env_pre_title"]) == ("=1+1", "+cmd|' /C calc'!A0")
    raw_facts = list(csv.DictReader(io.StringIO(
        on(directory, "export", "--kind", "facts", "--format", "csv", "--raw-csv").stdout)))
    assert ("@sum", formula) in {(row["key"], row["value"]) for row in raw_facts}


def test_export_does_not_overwrite_a_file_unless_forced(filled: Path, tmp_path: Path) -> None:
    target = tmp_path / "memory.json"
    target.write_text("mine", encoding="utf-8")
    refused = on(filled, "export", "-o", target)
    assert refused.exit_code == 2 and "exists: give --force" in refused.stderr
    assert target.read_text(encoding="utf-8") == "mine"
    forced = on(filled, "export", "-o", target, "--force")
    assert forced.exit_code == 0 and json.loads(target.read_text(encoding="utf-8"))["webmem_export"] == 1
    report = tmp_path / "report.html"
    report.write_text("mine", encoding="utf-8")
    bench = invoke("bench", "miniwob", "--tasks", "click-test", "--episodes", "1", "-o", report)
    assert bench.exit_code == 2 and "exists: give --force" in bench.stderr and report.read_text() == "mine"


def test_reading_a_namespace_that_does_not_exist_creates_nothing(filled: Path) -> None:
    before = data(on(filled, "stats", "--json"))
    for command in (["runs"], ["lessons"], ["stats"], ["doctor"], ["export"],
                    ["context", "--goal", "find shoes", "--url", "https://shop.example/"]):
        result = invoke("--memory-dir", filled, "--namespace", "ghost", *command)
        assert "Traceback" not in result.output, command
    assert data(on(filled, "stats", "--json")) == before
    assert "ghost" not in on(filled, "doctor").stdout
    assert data(invoke("--memory-dir", filled, "--namespace", "ghost", "lessons", "--json")) == []
