"""The facade: where the memory lives, namespaces, enabled=False, option checks, the event log."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import webmem

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
GOAL = "Search for smart watch reviews"


def every_file(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def successful_run(mem: webmem.Memory, goal: str = GOAL, *, url: str = SHOP) -> webmem.Run:
    run = mem.start_run(goal=goal, start_url=url)
    run.record_step(action="type", target='textbox "Search"', selector="#q", value="smart watch", url=url,
                    verified=True)
    run.record_step(action="click", target='button "Search"', selector="#search-btn", url=url, verified=True)
    run.finish(success=True, outcome="Found 12 reviews", final_url=f"{url}results?q=smart+watch")
    return run


# --- where the memory lives -------------------------------------------------------------------


def test_an_explicit_directory_beats_webmem_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_dir, explicit = tmp_path / "from-env", tmp_path / "explicit"
    monkeypatch.setenv("WEBMEM_DIR", str(env_dir))
    monkeypatch.chdir(tmp_path)
    with webmem.Memory.open(explicit) as mem:
        assert mem.directory == explicit
    assert (explicit / "memory.db").is_file()
    assert not env_dir.exists() and not (tmp_path / ".agent-memory").exists()


def test_webmem_dir_beats_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_dir = tmp_path / "from-env"
    monkeypatch.setenv("WEBMEM_DIR", str(env_dir))
    monkeypatch.chdir(tmp_path)
    with webmem.Memory.open() as mem:
        assert mem.directory == env_dir
    assert (env_dir / "memory.db").is_file()
    assert not (tmp_path / ".agent-memory").exists()


def test_the_default_is_agent_memory_in_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEBMEM_DIR", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with webmem.Memory.open() as mem:
        assert mem.directory.resolve() == (work / ".agent-memory").resolve()
    assert (work / ".agent-memory" / "memory.db").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]


@pytest.mark.parametrize("location", [123, "", "   ", "ftp://db/webmem"])
def test_a_bad_location_is_refused(location: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(webmem.InvalidInput, match="location"):
        webmem.Memory.open(location)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_database_is_a_one_line_store_error(tmp_path: Path) -> None:
    with pytest.raises(webmem.StoreError, match="cannot open the database postgresql"):
        webmem.Memory.open("postgresql://nobody@127.0.0.1:1/none", local_dir=tmp_path / "local")


# --- namespaces -------------------------------------------------------------------------------


def test_nothing_written_in_one_namespace_is_visible_from_another(open_memory: Any) -> None:
    a = open_memory(namespace="bench-a")
    b = open_memory(namespace="bench-b")
    try:
        done = successful_run(a)
        open_run = a.start_run(goal="Still going", start_url=SHOP, session_id="sess-a")
        open_run.record_step(action="click", target='link "Deals"', selector="#deals", url=SHOP)
        a.knowledge.record_fact(DOMAIN, "quirk", "cookie-banner", "appears first")
        a.selectors.record(DOMAIN, 'link "Help"', "#help")
        a_child = a.resume_run(done.id)
        (trajectory,) = a.trajectories.list()
        # A sees its own records (so the checks below can fail)
        assert len(a.runs.list()) == 3
        assert [m.run_id for m in a.runs.children(done.id)] == [a_child.id]
        assert a.trajectories.find_best_match(GOAL, origin=SHOP) is not None
        assert a.knowledge.facts(DOMAIN) and a.knowledge.sessions(DOMAIN) and a.selectors.list(DOMAIN)
        assert str(a.start_run(goal=GOAL, start_url=SHOP).context()) != ""

        # runs and steps
        assert b.runs.list() == []
        assert b.runs.list(session_id="sess-a") == []
        for run_id in (done.id, open_run.id, a_child.id):
            with pytest.raises(webmem.RunNotFound):
                b.runs.get(run_id)
            with pytest.raises(webmem.RunNotFound):
                b.runs.steps(run_id)
            with pytest.raises(webmem.RunNotFound):
                b.get_run(run_id)
        with pytest.raises(webmem.RunNotFound):
            b.resume_run(done.id)
        with pytest.raises(webmem.RunNotFound):
            b.start_run(goal="Child", start_url=SHOP, parent_run_id=done.id)
        with pytest.raises(webmem.RunNotFound):
            b.runs.lineage(done.id)
        # trajectories and matching
        assert b.trajectories.list() == [] and b.trajectories.list(domain=DOMAIN) == []
        with pytest.raises(webmem.TrajectoryNotFound):
            b.trajectories.get(trajectory.id)
        assert b.trajectories.find_best_match(GOAL, origin=SHOP) is None
        assert b.trajectories.match(GOAL, origin=SHOP).candidates == []
        # facts, sessions, selectors
        assert b.knowledge.facts(DOMAIN, min_confidence=0) == []
        assert b.knowledge.sessions(DOMAIN) == []
        assert b.selectors.list(DOMAIN) == []
        assert b.knowledge.format_for_prompt(DOMAIN) == "" and b.selectors.format_for_prompt(DOMAIN) == ""
        # context
        pack = b.start_run(goal=GOAL, start_url=SHOP).context()
        assert str(pack) == "" and pack.included == []

        # writes in B do not touch A's records either
        b_fact = b.knowledge.record_fact(DOMAIN, "quirk", "cookie-banner", "appears first")
        assert (b_fact.sources, b_fact.confidence) == (1, pytest.approx(0.6))
        for _ in range(4):  # conflicting values in B would prune A's fact if namespaces leaked
            b.knowledge.record_fact(DOMAIN, "quirk", "cookie-banner", f"other {_}")
        assert b.selectors.record(DOMAIN, 'link "Help"', "#help").success_count == 1
        reused = b.runs.start(goal="Same id, other namespace", start_url=SHOP, run_id=done.id)
        assert reused.run_id == done.id
        assert b.runs.steps(done.id) == []  # A's steps under the same run id stay A's
        assert b.runs.children(done.id) == [] and b.runs.lineage(done.id) == [reused]
        (a_fact,) = a.knowledge.facts(DOMAIN, type="quirk")
        assert (a_fact.sources, a_fact.confidence) == (1, pytest.approx(0.6))
        assert {e.element: e.success_count for e in a.selectors.list(DOMAIN)}['link "Help"'] == 1
        assert a.runs.get(done.id).goal == GOAL
    finally:
        a.close()
        b.close()


def test_events_carry_their_namespace(open_memory: Any) -> None:
    seen: list[dict[str, Any]] = []
    with open_memory(namespace="ns-1", on_event=seen.append) as mem:
        successful_run(mem)
    assert seen and {event["namespace"] for event in seen} == {"ns-1"}


@pytest.mark.parametrize("namespace", ["", " ", "a b", "a/b", "x" * 101, "ns\n", "ünï", 123, None, ["a"]])
def test_an_invalid_namespace_is_refused(namespace: object, memory_dir: Path) -> None:
    with pytest.raises(webmem.InvalidInput, match="namespace"):
        webmem.Memory.open(memory_dir, namespace=namespace)  # type: ignore[arg-type]
    assert not memory_dir.exists()


@pytest.mark.parametrize("namespace", ["default", "per-run_0001", "bench.shared:v2", "x" * 100])
def test_valid_namespaces_are_accepted(namespace: str, open_memory: Any) -> None:
    with open_memory(namespace=namespace) as mem:
        assert mem.namespace == namespace
        assert mem.start_run(goal=GOAL, start_url=SHOP).manifest.status == "running"


# --- enabled=False ----------------------------------------------------------------------------


def test_a_disabled_memory_creates_nothing_and_gives_an_empty_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "off"
    seen: list[dict[str, Any]] = []
    mem = webmem.Memory.open(target, enabled=False, on_event=seen.append)
    run = mem.start_run(goal=GOAL, start_url="http://LOCALHOST:5173/shop")
    assert run.domain == "localhost:5173" and run.manifest.status == "running"
    pack = run.context(budget_tokens=500)
    assert str(pack) == "" and not pack and pack.included == [] and pack.tokens == 0
    step = run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP, ok=True)
    assert step.action == "click" and run.steps == []
    assert run.update(current_url=SHOP, turn_count=3).turn_count == 3
    finished = run.finish(success=True, outcome="done", final_url=SHOP)
    assert (finished.status, finished.success, finished.summary) == ("completed", True, "done")
    with pytest.raises(webmem.RunClosed):
        run.record_step(action="click")
    mem.close()
    with webmem.Memory.open(enabled=False):  # WEBMEM_DIR and the default are not created either
        pass
    assert list(tmp_path.iterdir()) == []


def test_a_disabled_memory_still_checks_its_input(tmp_path: Path) -> None:
    mem = webmem.Memory.open(tmp_path / "off", enabled=False)
    with pytest.raises(webmem.InvalidInput, match="start_url"):
        mem.start_run(goal=GOAL, start_url="not a url")
    with pytest.raises(webmem.InvalidInput, match="goal"):
        mem.start_run(goal="", start_url=SHOP)
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    with pytest.raises(webmem.InvalidInput, match="action"):
        run.record_step(action="")
    with pytest.raises(webmem.InvalidInput, match="url"):
        run.context(url="ftp://x")


@pytest.mark.parametrize("component", ["runs", "trajectories", "knowledge", "selectors", "store", "scope"])
def test_a_disabled_memory_has_no_components(component: str, tmp_path: Path) -> None:
    mem = webmem.Memory.open(tmp_path / "off", enabled=False)
    with pytest.raises(webmem.MemoryDisabled):
        getattr(mem, component)


def test_a_disabled_memory_cannot_list_migrations_or_resume(tmp_path: Path) -> None:
    mem = webmem.Memory.open(tmp_path / "off", enabled=False)
    with pytest.raises(webmem.MemoryDisabled):
        mem.migrations()
    with pytest.raises(webmem.MemoryDisabled):
        mem.resume_run("run_0000000000000_aaaaaa")
    with pytest.raises(webmem.MemoryDisabled):
        mem.get_run("run_0000000000000_aaaaaa")
    assert issubclass(webmem.MemoryDisabled, webmem.WebmemError)


def test_a_disabled_memory_neither_reads_nor_writes_an_existing_memory(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir) as on:
        successful_run(on)
        on.knowledge.record_fact(DOMAIN, "quirk", "cookie-banner", "appears first")
        assert str(on.start_run(goal=GOAL, start_url=SHOP).context()) != ""
    before = every_file(memory_dir)
    seen: list[dict[str, Any]] = []
    with webmem.Memory.open(memory_dir, enabled=False, on_event=seen.append) as off:
        run = off.start_run(goal=GOAL, start_url=SHOP)
        assert str(run.context()) == ""
        run.record_step(action="click", target='button "Search"', selector="#search-btn", url=SHOP)
        run.finish(success=True, outcome="done")
    assert every_file(memory_dir) == before
    assert seen == []


# --- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("trace_ttl_days", 0),
        ("trace_ttl_days", -1),
        ("trace_ttl_days", "30"),
        ("trace_ttl_days", math.nan),
        ("trace_ttl_days", True),
        ("similarity_threshold", -0.01),
        ("similarity_threshold", 1.01),
        ("similarity_threshold", "0.5"),
        ("similarity_threshold", math.nan),
        ("similarity_threshold", None),
        ("enabled", "yes"),
        ("enabled", 1),
        ("enabled", None),
        ("trace_scoring", "no"),
        ("trace_scoring", 0),
        ("on_event", 42),
        ("on_event", "print"),
    ],
)
def test_bad_options_raise_invalid_input_naming_the_option(option: str, value: object, memory_dir: Path) -> None:
    with pytest.raises(webmem.InvalidInput, match=option):
        webmem.Memory.open(memory_dir, **{option: value})
    assert not memory_dir.exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [("similarity_threshold", 0), ("similarity_threshold", 1), ("similarity_threshold", 0.5),
     ("trace_ttl_days", 0.5), ("trace_ttl_days", 365), ("trace_scoring", True)],
)
def test_options_at_their_bounds_are_accepted(option: str, value: object, open_memory: Any) -> None:
    with open_memory(**{option: value}) as mem:
        assert getattr(mem, option) == value


def test_the_options_reach_the_trajectory_store(open_memory: Any) -> None:
    with open_memory(trace_scoring=True, trace_ttl_days=7, similarity_threshold=0.25) as mem:
        assert (mem.trajectories.trace_scoring, mem.trajectories.ttl_days) == (True, 7)
        assert mem.trajectories.similarity_threshold == 0.25
        assert mem.trajectories.match(GOAL, origin=SHOP).threshold == 0.25


# --- events -----------------------------------------------------------------------------------

REQUIRED_EVENTS = {
    "run_started", "run_finished", "trajectory_saved", "trajectory_matched", "trajectory_missed",
    "fact_recorded", "fact_boosted", "fact_decayed", "facts_pruned", "session_recorded",
    "selector_recorded", "context_built",
}


def full_cycle(mem: webmem.Memory) -> dict[str, str]:
    """Every kind of event the issue lists, in one short story; returns the runs' ids."""
    first = successful_run(mem)  # run_started, selector_recorded, run_finished, trajectory_saved, session, facts
    second = mem.start_run(goal="Search for smart watch reviews please", start_url=SHOP)
    second.context()  # trajectory_matched, context_built
    third = mem.start_run(goal="Cancel my newsletter subscription", start_url=SHOP)
    third.context()  # trajectory_missed
    mem.knowledge.record_fact(DOMAIN, "quirk", "popup", "newsletter modal")
    mem.knowledge.record_fact(DOMAIN, "quirk", "popup", "newsletter modal")  # fact_boosted
    for other in ("cookie modal", "chat widget", "survey"):  # decays the others; the first falls below 0.1
        mem.knowledge.record_fact(DOMAIN, "quirk", "popup", other)
    second.finish(success=False, outcome="gave up")
    return {"first": first.id, "second": second.id, "third": third.id}


def test_every_event_goes_to_the_callback_and_to_events_jsonl(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    ids = full_cycle(mem)
    lines = (mem.directory / "events.jsonl").read_text(encoding="utf-8").splitlines()
    logged = [json.loads(line) for line in lines]
    assert all(isinstance(event, dict) for event in logged)
    assert logged == events  # the same events, in the same order
    for event in logged:
        stamp = datetime.fromisoformat(event["ts"])
        assert stamp.utcoffset() == timedelta(0)
        assert event["namespace"] == "default"
        assert "run_id" in event
    kinds = {event["event"] for event in logged}
    assert REQUIRED_EVENTS <= kinds, REQUIRED_EVENTS - kinds

    def of(kind: str) -> list[dict[str, Any]]:
        return [event for event in logged if event["event"] == kind]

    assert [e["run_id"] for e in of("run_started")] == [ids["first"], ids["second"], ids["third"]]
    assert [(e["run_id"], e["status"]) for e in of("run_finished")] == [
        (ids["first"], "completed"), (ids["second"], "failed")
    ]
    assert [e["run_id"] for e in of("trajectory_saved")] == [ids["first"]]
    assert [e["run_id"] for e in of("trajectory_matched")] == [ids["second"]]
    assert [e["run_id"] for e in of("trajectory_missed")] == [ids["third"]]
    assert {e["run_id"] for e in of("session_recorded")} == {ids["first"], ids["second"]}
    assert [e["key"] for e in of("fact_boosted")] == ["popup"]
    assert of("facts_pruned")[0]["count"] == 1
    assert of("fact_decayed")
    assert {e["element"] for e in of("selector_recorded")} == {'textbox "Search"', 'button "Search"'}


def test_context_built_reports_its_parts(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    successful_run(mem)
    run = mem.start_run(goal="Search for smart watch reviews again", start_url=SHOP)
    pack = run.context(budget_tokens=1500)
    (built,) = [e for e in events if e["event"] == "context_built"]
    assert built["run_id"] == run.id
    assert built["budget_tokens"] == 1500 and built["tokens"] == pack.tokens
    parts = {part["name"]: part for part in built["parts"]}
    assert set(parts) == {
        "last_error", "replay_handover", "site_tips", "episode_advice", "session_history", "reference_trajectory",
        "app_knowledge", "known_selectors",
    }
    for part in built["parts"]:
        assert part["status"] in ("included", "truncated", "dropped", "empty")
        assert isinstance(part["tokens"], int) and isinstance(part["full_tokens"], int)
    assert [p["name"] for p in built["parts"] if p["status"] in ("included", "truncated")] == pack.included
    assert parts["reference_trajectory"]["status"] == "included"
    assert parts["reference_trajectory"]["tokens"] > 0
    assert parts["reference_trajectory"]["detail"]["trajectory_id"] == mem.trajectories.list()[0].id


def test_the_library_never_prints(open_memory: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    seen: list[dict[str, Any]] = []
    with open_memory(on_event=seen.append) as mem:
        full_cycle(mem)
        str(mem.start_run(goal=GOAL, start_url=SHOP).context(budget_tokens=40))
        with pytest.raises(webmem.InvalidInput):
            mem.start_run(goal="", start_url=SHOP)
        with pytest.raises(webmem.RunNotFound):
            mem.get_run("run_0000000000000_zzzzzz")
        with pytest.raises(ValueError), mem.start_run(goal=GOAL, start_url=SHOP):
            raise ValueError("boom")
    off = webmem.Memory.open(tmp_path / "off", enabled=False)
    off_run = off.start_run(goal=GOAL, start_url=SHOP)
    str(off_run.context())
    off_run.finish(success=True)
    assert seen
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
