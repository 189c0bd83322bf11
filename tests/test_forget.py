"""Forgetting: a lesson, a trajectory, a fact, a selector, a session, or a run with what it produced
goes in one transaction of its namespace; a dry run changes nothing; recall in every process stops
offering a forgotten trajectory; the ``webmem forget`` commands do the same from the shell.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from rows import count
from sqlalchemy import select

import webmem
from webmem.cli import cli
from webmem.store import schema

SHOP = "https://shop.example/"
SITE = "shop.example"
ORIGIN = "https://shop.example"
CLICK_ERROR = "Timeout 5000ms exceeded: <div> intercepts pointer events"
GOAL_A = "search for smart watch reviews"
GOAL_B = "find the cheapest laptop bag"


@dataclass(frozen=True)
class World:
    """What two finished runs (A, then B) and a run resumed from A left in one namespace."""

    run_a: str
    run_b: str
    child: str
    trajectory_a: str
    trajectory_b: str
    shared_lesson: str  # learned from both runs, recalled in A
    lesson_of_a: str  # learned from A alone
    session_a: str


def finished_run(mem: webmem.Memory, goal: str, *, recall: bool = False) -> webmem.Run:
    """A run that fails a click, recovers with Escape, fills the search box, and succeeds."""
    run = mem.start_run(goal=goal, start_url=SHOP, episode=f"episode-{goal.split()[0]}")
    run.record_step(action="click", target='button "Go"', selector="#go", url=SHOP, ok=False, error=CLICK_ERROR)
    if recall:
        run.on_error("click", CLICK_ERROR)
    run.record_step(action="press", target="page", value="Escape", url=SHOP)
    run.record_step(action="fill", target='textbox "Search"', selector="#q", value="smart watch", url=SHOP,
                    verified=True)
    run.working.record_cycle("look at the page", "click", "the menu opened")
    run.finish(success=True, outcome="done")
    return run


def build_world(mem: webmem.Memory) -> World:
    run_b = finished_run(mem, GOAL_B)
    run_a = finished_run(mem, GOAL_A, recall=True)
    (shared,) = [item for item in mem.lessons.list() if item.learned_from == [run_b.id, run_a.id]]
    alone = mem.lessons.record("Use the search box at the top", "site_specific", domain=SITE, run_id=run_a.id)
    mem.knowledge.record_fact(SITE, "selector", "search box", "#q")
    mem.knowledge.record_fact(SITE, "selector", "search box", "#search")
    mem.knowledge.record_fact(SITE, "timing", "results", "2s")
    child = mem.resume_run(run_a.id)
    by_run = {trajectory.run_id: trajectory.id for trajectory in mem.trajectories.list()}
    (session_a,) = [session.id for session in mem.knowledge.sessions(SITE) if session.run_id == run_a.id]
    return World(run_a=run_a.id, run_b=run_b.id, child=child.id, trajectory_a=by_run[run_a.id],
                 trajectory_b=by_run[run_b.id], shared_lesson=shared.id, lesson_of_a=alone.id, session_a=session_a)


def snapshot(mem: webmem.Memory) -> dict[str, list[str]]:
    """Every row of every table in the memory's namespace."""
    with mem.store.read() as conn:
        return {
            table.name: sorted(repr(tuple(row)) for row in conn.execute(
                select(table).where(table.c.namespace == mem.namespace)))
            for table in schema.metadata.sorted_tables if "namespace" in table.c
        }


def forgotten(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event for event in events if event["event"] == "forgotten"]


FORGET: dict[str, Callable[..., webmem.ForgetReport]] = {
    "lesson": lambda mem, world, **options: mem.forget.lesson(world.lesson_of_a, **options),
    "trajectory": lambda mem, world, **options: mem.forget.trajectory(world.trajectory_a, **options),
    "fact": lambda mem, world, **options: mem.forget.fact(SITE, "search box", **options),
    "selector": lambda mem, world, **options: mem.forget.selector(SITE, 'textbox "Search"', **options),
    "session": lambda mem, world, **options: mem.forget.session(world.session_a, **options),
    "run": lambda mem, world, **options: mem.forget.run(world.run_a, **options),
}


# --- each kind ---------------------------------------------------------------------------------------------


def test_forget_a_lesson_deletes_it_with_its_links(mem: webmem.Memory) -> None:
    world = build_world(mem)
    report = mem.forget.lesson(world.shared_lesson)
    assert (report.kind, report.target, report.dry_run) == ("lesson", world.shared_lesson, False)
    assert dict(report.counts) == {"lessons": 1} and dict(report.ids) == {"lessons": (world.shared_lesson,)}
    assert world.shared_lesson not in {item.id for item in mem.lessons.list()}
    for table in ("lessons", "lesson_domains", "lesson_runs"):
        assert count(mem, table, "lesson_id = :id", id=world.shared_lesson) == 0
    assert world.lesson_of_a in {item.id for item in mem.lessons.list()}


def test_a_forgotten_built_in_lesson_is_not_seeded_again(open_memory: Any) -> None:
    mem = open_memory()
    seed = next(item for item in mem.lessons.list() if item.source == "seed")
    mem.forget.lesson(seed.id)
    assert seed.lesson not in {item.lesson for item in open_memory().lessons.list()}


def test_forget_a_fact_deletes_every_value_of_its_key_unless_narrowed(mem: webmem.Memory) -> None:
    mem.knowledge.record_fact(SITE, "selector", "search box", "#q")
    mem.knowledge.record_fact(SITE, "selector", "search box", "#search")
    mem.knowledge.record_fact(SITE, "quirk", "search box", "hidden on mobile")
    mem.knowledge.record_fact(SITE, "timing", "results", "2s")
    narrowed = mem.forget.fact(SITE, "search box", type="selector", value="#search")
    assert narrowed.ids["facts"] == ("selector:search box=#search",)
    keys = {(fact.type, fact.key, fact.value) for fact in mem.knowledge.facts(SITE, min_confidence=0)}
    assert ("selector", "search box", "#q") in keys and ("selector", "search box", "#search") not in keys
    by_type = mem.forget.fact(SITE, "search box", type="quirk")
    assert by_type.ids["facts"] == ("quirk:search box=hidden on mobile",)
    every = mem.forget.fact(f"{SHOP}any/page", "search box")
    assert every.counts["facts"] == 1
    assert [(fact.key, fact.value) for fact in mem.knowledge.facts(SITE, min_confidence=0)] == [("results", "2s")]


def test_a_fact_whose_key_held_a_secret_is_found_by_the_secret(open_memory: Any) -> None:
    mem = open_memory(secrets={"account": "ACC-99812"})
    mem.knowledge.record_fact(SITE, "quirk", "login ACC-99812", "asks twice")
    assert [fact.key for fact in mem.knowledge.facts(SITE)] == ["login {account}"]
    assert mem.forget.fact(SITE, "login ACC-99812").counts == {"facts": 1}
    assert mem.knowledge.facts(SITE) == []


def test_forget_a_selector_deletes_only_that_element(mem: webmem.Memory) -> None:
    mem.selectors.record(SITE, 'button "Search"', "#go")
    mem.selectors.record(SITE, 'textbox "Search"', "#q")
    report = mem.forget.selector(SITE, 'button "Search"')
    assert dict(report.ids) == {"selectors": ('button "Search"',)}
    assert [entry.element for entry in mem.selectors.list(SITE)] == ['textbox "Search"']


def test_forget_a_session_on_every_domain_or_on_one(mem: webmem.Memory) -> None:
    for domain in (SITE, "other.example", SITE):
        mem.knowledge.record_session(domain, goal="look", outcome="seen", success=True, session_id="s-1")
    mem.knowledge.record_session(SITE, goal="look", outcome="seen", success=True, session_id="s-2")
    report = mem.forget.session("s-1", domain="other.example")
    assert dict(report.counts) == {"sessions": 1} and mem.knowledge.sessions("other.example") == []
    report = mem.forget.session("s-1")
    assert dict(report.counts) == {"sessions": 2} and report.ids["sessions"] == ("s-1",)
    assert [session.id for session in mem.knowledge.sessions(SITE)] == ["s-2"]


def test_forget_a_run_takes_what_it_produced_and_keeps_what_others_share(mem: webmem.Memory) -> None:
    world = build_world(mem)
    facts_before = mem.knowledge.facts(SITE)
    selectors_before = mem.selectors.list(SITE)
    report = mem.forget.run(world.run_a)
    assert dict(report.counts) == {"steps": 3, "trajectories": 1, "lesson_links": 4, "lessons": 1, "sessions": 1,
                                   "episode_entries": 3, "working_entries": 1, "working_state": 1, "runs": 1}
    assert report.ids["trajectories"] == (world.trajectory_a,) and report.ids["lessons"] == (world.lesson_of_a,)
    assert dict(report.kept) == {"child_runs": (world.child,), "lessons": (world.shared_lesson,)}
    assert report.notes and "facts, selectors" in report.notes[0]
    with pytest.raises(webmem.RunNotFound):
        mem.runs.get(world.run_a)
    for table in ("run_steps", "trajectories", "sessions", "episode_entries", "working_entries", "working_state",
                  "lesson_runs"):
        assert count(mem, table, "run_id = :id", id=world.run_a) == 0, table
    lessons = {item.id: item for item in mem.lessons.list()}
    assert world.lesson_of_a not in lessons
    assert (lessons[world.shared_lesson].learned_from, lessons[world.shared_lesson].recalled_in) == ([world.run_b], [])
    assert mem.runs.get(world.child).parent_run_id == world.run_a  # kept, link and all (no foreign key)
    assert [manifest.run_id for manifest in mem.runs.lineage(world.child)] == [world.child]  # stops at the gap
    assert mem.runs.get(world.run_b).status == "completed" and len(mem.runs.steps(world.run_b)) == 3
    assert [t.id for t in mem.trajectories.list()] == [world.trajectory_b]
    assert [s.run_id for s in mem.knowledge.sessions(SITE)] == [world.run_b]
    assert count(mem, "episode_entries", "run_id = :id", id=world.run_b) == 3
    assert (mem.knowledge.facts(SITE), mem.selectors.list(SITE)) == (facts_before, selectors_before)
    assert set(mem.doctor()["orphans"].values()) == {0}


# --- dry runs, events, transactions -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(FORGET))
def test_a_dry_run_changes_nothing_emits_nothing_and_tells_what_would_go(
    kind: str, mem: webmem.Memory, events: list[dict[str, Any]]
) -> None:
    world = build_world(mem)
    before = snapshot(mem)
    preview = FORGET[kind](mem, world, dry_run=True)
    assert snapshot(mem) == before
    assert forgotten(events) == []
    assert preview.dry_run and preview.total > 0
    done = FORGET[kind](mem, world)
    assert snapshot(mem) != before
    assert (done.counts, done.ids, done.kept, done.dry_run) == (preview.counts, preview.ids, preview.kept, False)


@pytest.mark.parametrize("kind", sorted(FORGET))
def test_each_deletion_emits_one_forgotten_event(kind: str, mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    world = build_world(mem)
    report = FORGET[kind](mem, world)
    (event,) = forgotten(events)
    assert (event["kind"], event["id"], event["counts"]) == (kind, report.target, dict(report.counts))
    assert event["namespace"] == mem.namespace
    assert event["run_id"] == (world.run_a if kind == "run" else None)


def test_the_event_goes_out_after_the_commit_and_a_rollback_forgets_nothing(
    mem: webmem.Memory, events: list[dict[str, Any]]
) -> None:
    world = build_world(mem)
    with mem.store.write():
        mem.forget.trajectory(world.trajectory_a)
        assert forgotten(events) == []
    assert len(forgotten(events)) == 1
    before = snapshot(mem)
    with pytest.raises(RuntimeError), mem.store.write():
        mem.forget.run(world.run_a)
        raise RuntimeError("the caller's transaction fails")
    assert snapshot(mem) == before and len(forgotten(events)) == 1
    assert mem.runs.get(world.run_a).run_id == world.run_a


def test_the_report_is_frozen(mem: webmem.Memory) -> None:
    mem.selectors.record(SITE, 'button "Search"', "#go")
    report = mem.forget.selector(SITE, 'button "Search"', dry_run=True)
    with pytest.raises(FrozenInstanceError):
        report.dry_run = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        report.counts["selectors"] = 0  # type: ignore[index]
    assert json.loads(json.dumps(report.to_dict()))["ids"] == {"selectors": ['button "Search"']}


# --- namespaces, unknown ids, bad input ---------------------------------------------------------------------


def test_another_namespace_is_untouched_and_its_ids_are_not_found(mem: webmem.Memory, open_memory: Any) -> None:
    other = open_memory(namespace="other")
    theirs = build_world(other)
    mine = build_world(mem)
    before = snapshot(other)
    for kind in ("lesson", "trajectory", "session", "run"):
        with pytest.raises(webmem.NotFound):
            FORGET[kind](mem, theirs)
    for kind in ("fact", "selector"):  # keyed by domain, not by id: this namespace's own go
        FORGET[kind](mem, theirs)
    assert snapshot(other) == before
    for kind in ("lesson", "session", "run"):
        FORGET[kind](mem, mine)
    assert snapshot(other) == before
    assert other.trajectories.match(GOAL_A, origin=ORIGIN).best is not None


@pytest.mark.parametrize(("kind", "call", "error", "named"), [
    ("lesson", lambda f, **o: f.lesson("lesson_nope", **o), webmem.NotFound, "'lesson_nope'"),
    ("trajectory", lambda f, **o: f.trajectory("traj_nope", **o), webmem.TrajectoryNotFound, "'traj_nope'"),
    ("fact", lambda f, **o: f.fact(SITE, "no such key", **o), webmem.NotFound, "'no such key'"),
    ("selector", lambda f, **o: f.selector(SITE, 'link "Nope"', **o), webmem.NotFound, "'link \"Nope\"'"),
    ("session", lambda f, **o: f.session("session_nope", **o), webmem.NotFound, "'session_nope'"),
    ("run", lambda f, **o: f.run("run_nope", **o), webmem.RunNotFound, "'run_nope'"),
])
def test_an_unknown_id_is_not_found_naming_it_and_the_namespace(
    kind: str, call: Callable[..., Any], error: type[Exception], named: str, mem: webmem.Memory,
    events: list[dict[str, Any]],
) -> None:
    build_world(mem)
    before = snapshot(mem)
    for dry_run in (True, False):
        with pytest.raises(error) as caught:
            call(mem.forget, dry_run=dry_run)
        message = str(caught.value)
        assert kind in message and named in message and "namespace 'default'" in message
    assert snapshot(mem) == before and forgotten(events) == []


@pytest.mark.parametrize("call", [
    lambda f: f.lesson(5), lambda f: f.trajectory(""), lambda f: f.run(None), lambda f: f.session("  "),
    lambda f: f.fact(3, "key"), lambda f: f.fact(SITE, ""), lambda f: f.fact(SITE, "key", type="colour"),
    lambda f: f.fact(SITE, "key", value=7), lambda f: f.selector("", 'button "Go"'), lambda f: f.selector(SITE, None),
    lambda f: f.session("s-1", domain="not a/domain"), lambda f: f.run("run_x", dry_run="yes"),
])
def test_wrong_types_are_invalid_input(call: Callable[[webmem.Forgetting], Any], mem: webmem.Memory) -> None:
    with pytest.raises(webmem.InvalidInput):
        call(mem.forget)


def test_a_disabled_memory_has_nothing_to_forget(tmp_path: Path) -> None:
    with pytest.raises(webmem.MemoryDisabled):
        webmem.Memory.open(tmp_path / "off", enabled=False).forget.run("run_x")


# --- recall after a trajectory is forgotten -------------------------------------------------------------------


def test_a_forgotten_trajectory_is_matched_by_no_memory_any_more(mem: webmem.Memory, open_memory: Any) -> None:
    world = build_world(mem)
    second = open_memory()  # another process's memory: its own caches, warmed before the deletion
    for memory in (mem, second):
        assert memory.trajectories.match(GOAL_A, origin=ORIGIN).best.id == world.trajectory_a
        assert memory.trajectories.find_replay(GOAL_A, ORIGIN).trajectory.id == world.trajectory_a
        assert memory.trajectories.get(world.trajectory_a).id == world.trajectory_a
        assert memory.preview_context(goal=GOAL_A, url=SHOP).part("reference_trajectory").status == "included"
    mem.forget.trajectory(world.trajectory_a)
    for memory in (mem, second):
        assert memory.trajectories.match(GOAL_A, origin=ORIGIN).best is None
        assert memory.trajectories.find_replay(GOAL_A, ORIGIN) is None
        with pytest.raises(webmem.TrajectoryNotFound):
            memory.trajectories.get(world.trajectory_a)
        assert memory.trajectories.match(GOAL_B, origin=ORIGIN).best.id == world.trajectory_b
        assert memory.preview_context(goal=GOAL_A, url=SHOP).part("reference_trajectory").status == "empty"


def test_forgetting_a_run_takes_its_trajectory_out_of_recall_everywhere(mem: webmem.Memory, open_memory: Any) -> None:
    world = build_world(mem)
    second = open_memory()
    assert second.trajectories.match(GOAL_A, origin=ORIGIN).best.id == world.trajectory_a
    mem.forget.run(world.run_a)
    assert mem.trajectories.match(GOAL_A, origin=ORIGIN).best is None
    assert second.trajectories.match(GOAL_A, origin=ORIGIN).best is None


CHECKER = textwrap.dedent("""
    import sys

    import webmem

    memory = webmem.Memory.open(sys.argv[1], local_dir=sys.argv[2])
    for line in sys.stdin:
        best = memory.trajectories.match(sys.argv[3], origin=sys.argv[4]).best
        print(best.id if best else "none", flush=True)
""")


def test_a_process_that_matched_before_no_longer_matches_after(
    mem: webmem.Memory, memory_location: str, memory_dir: Path
) -> None:
    world = build_world(mem)
    checker = subprocess.Popen(
        [sys.executable, "-c", CHECKER, memory_location, str(memory_dir), GOAL_A, ORIGIN],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert checker.stdin is not None and checker.stdout is not None
        checker.stdin.write("match\n")
        checker.stdin.flush()
        assert checker.stdout.readline().strip() == world.trajectory_a
        mem.forget.trajectory(world.trajectory_a)
        out, err = checker.communicate("match\n", timeout=60)
        assert out.strip() == "none", err
    finally:
        if checker.poll() is None:
            checker.kill()
            checker.wait()


# --- the command line ---------------------------------------------------------------------------------------


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Path, World]:
    """A SQLite memory directory holding the world, closed again (the CLI opens it)."""
    directory = tmp_path / "cli-memory"
    with webmem.Memory.open(directory) as memory:
        world = build_world(memory)
    return directory, world


def forget(directory: Path, *args: str, namespace: str = "default") -> Result:
    return CliRunner().invoke(cli, ["--memory-dir", str(directory), "--namespace", namespace, "forget", *args],
                              catch_exceptions=False)


def disk_snapshot(directory: Path) -> dict[str, list[str]]:
    with webmem.Memory.open(directory, seed_lessons=None, prune_lessons=False) as memory:
        return snapshot(memory)


def test_cli_dry_run_prints_one_line_per_kind_and_changes_nothing(filled: tuple[Path, World]) -> None:
    directory, world = filled
    before = disk_snapshot(directory)
    result = forget(directory, "run", world.run_a, "--dry-run")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert f"would delete 1 run: {world.run_a}" in lines
    assert f"would delete 1 trajectory: {world.trajectory_a}" in lines
    assert f"would delete 1 lesson: {world.lesson_of_a}" in lines
    assert any(line.startswith("would delete 3 steps: ") for line in lines)
    assert any(line.startswith("kept 1 run resumed or forked from it") and world.child in line for line in lines)
    assert lines[-1] == "dry run: nothing was deleted in namespace default"
    assert disk_snapshot(directory) == before
    result = forget(directory, "run", world.run_a)
    assert result.exit_code == 0 and f"deleted 1 run: {world.run_a}" in result.stdout.splitlines()
    assert "would" not in result.stdout and disk_snapshot(directory) != before


def test_cli_json_is_the_report(filled: tuple[Path, World]) -> None:
    directory, world = filled
    preview = json.loads(forget(directory, "trajectory", world.trajectory_a, "--dry-run", "--json").stdout)
    assert preview["dry_run"] is True and preview["ids"] == {"trajectories": [world.trajectory_a]}
    done = json.loads(forget(directory, "trajectory", world.trajectory_a, "--json").stdout)
    assert {**preview, "dry_run": False} == done
    with webmem.Memory.open(directory) as memory:
        assert memory.trajectories.match(GOAL_A, origin=ORIGIN).best is None


@pytest.mark.parametrize(("args", "counts"), [
    (["lesson", "{lesson_of_a}"], {"lessons": 1}),
    (["fact", SITE, "search box", "--type", "selector", "--value", "#q"], {"facts": 1}),
    (["fact", SITE, "search box"], {"facts": 2}),
    (["selector", SITE, 'textbox "Search"'], {"selectors": 1}),
    (["session", "{session_a}", "--domain", SITE], {"sessions": 1}),
])
def test_cli_forgets_each_kind(args: list[str], counts: dict[str, int], filled: tuple[Path, World]) -> None:
    directory, world = filled
    chosen = [arg.format(**vars(world)) for arg in args]
    assert json.loads(forget(directory, *chosen, "--json").stdout)["counts"] == counts
    result = forget(directory, *chosen)
    assert result.exit_code == 1 and result.stdout == ""


def test_cli_unknown_id_is_one_line_and_the_namespace_is_respected(filled: tuple[Path, World]) -> None:
    directory, world = filled
    result = forget(directory, "run", world.run_a, namespace="elsewhere")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.strip() == f"Error: run_id: no run '{world.run_a}' in namespace 'elsewhere'"
    with webmem.Memory.open(directory, seed_lessons=None, prune_lessons=False) as memory:
        assert memory.doctor()["namespaces"] == ["default"]  # looking for it created nothing there


def test_cli_never_creates_a_memory(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    result = forget(missing, "lesson", "lesson_x", "--dry-run")
    assert result.exit_code == 1 and "no webmem memory" in result.stderr
    assert not missing.exists()
