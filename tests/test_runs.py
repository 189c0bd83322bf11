"""The run registry and the Run handle: manifests, steps, finishing, listing, resume, fork, lineage, input checks."""

from __future__ import annotations

import re
import threading
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import webmem

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
GOAL = "Search for smart watch reviews"
RUN_ID = re.compile(r"^run_(\d{13})_([0-9a-z]{6})$")
PROPERTY = settings(
    derandomize=True, deadline=None, max_examples=60, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def is_utc(moment: Any) -> bool:
    return moment is not None and moment.utcoffset() == timedelta(0)


# --- the manifest -----------------------------------------------------------------------------


def test_a_started_run_has_a_running_manifest(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP, session_id="sess-1")
    manifest = run.manifest
    assert manifest.run_id == run.id and RUN_ID.match(run.id)
    assert (manifest.status, manifest.turn_count, manifest.artifact_paths) == ("running", 0, [])
    assert (manifest.goal, manifest.domain, manifest.start_url) == (GOAL, DOMAIN, SHOP)
    assert (manifest.session_id, manifest.parent_run_id) == ("sess-1", None)
    assert manifest.final_url is manifest.current_url is manifest.completed_at is None
    assert manifest.success is manifest.summary is manifest.result is manifest.reason is None
    assert is_utc(manifest.started_at) and is_utc(manifest.updated_at)
    assert run.domain == DOMAIN and run.goal == GOAL and not run.finished
    assert mem.runs.get(run.id) == manifest
    fields = set(webmem.RunManifest.model_fields)
    assert {
        "run_id", "session_id", "parent_run_id", "status", "goal", "domain", "start_url", "final_url",
        "current_url", "started_at", "updated_at", "completed_at", "success", "summary", "artifact_paths",
        "turn_count", "result", "reason",
    } <= fields


def test_update_sets_current_url_turn_count_and_artifacts(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    started = run.manifest
    updated = run.update(current_url=f"{SHOP}search?q=watch", turn_count=4)
    assert (updated.current_url, updated.turn_count) == (f"{SHOP}search?q=watch", 4)
    assert updated.updated_at >= started.updated_at
    assert run.update(artifact_paths=["shots/1.png"]).artifact_paths == ["shots/1.png"]
    assert run.update(artifact_paths=["shots/2.png"]).artifact_paths == ["shots/1.png", "shots/2.png"]
    stored = mem.runs.get(run.id)
    assert (stored.current_url, stored.turn_count, stored.artifact_paths) == (
        f"{SHOP}search?q=watch", 4, ["shots/1.png", "shots/2.png"]
    )
    assert run.update(turn_count=5).current_url == f"{SHOP}search?q=watch"  # untouched fields are kept


@pytest.mark.parametrize(
    ("changes", "field"),
    [({"turn_count": -1}, "turn_count"), ({"turn_count": "3"}, "turn_count"), ({"turn_count": True}, "turn_count"),
     ({"current_url": "nowhere"}, "current_url"), ({"current_url": "ftp://x/"}, "current_url"),
     ({"artifact_paths": "a.png"}, "artifact_paths"), ({"artifact_paths": [""]}, "artifact_paths")],
)
def test_bad_updates_are_refused(mem: webmem.Memory, changes: dict[str, Any], field: str) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    with pytest.raises(webmem.InvalidInput, match=field):
        run.update(**changes)
    assert mem.runs.get(run.id).turn_count == 0


def test_record_step_counts_turns_and_follows_the_url(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=f"{SHOP}a")
    assert (run.manifest.turn_count, run.manifest.current_url) == (1, f"{SHOP}a")
    run.record_step(action="scroll")  # no url: the current url stays
    assert (run.manifest.turn_count, run.manifest.current_url) == (2, f"{SHOP}a")
    run.record_step(action="click", target='link "Next"', url=f"{SHOP}b", ok=False, error="not found")
    assert (run.manifest.turn_count, run.manifest.current_url) == (3, f"{SHOP}b")
    assert [(s.action, s.ok) for s in run.steps] == [("click", True), ("scroll", True), ("click", False)]


def test_steps_recorded_at_once_into_one_run_all_keep_a_place_of_their_own(mem: webmem.Memory) -> None:
    """Threads recording into one run: every step stored once, at positions 1..n, each counted in the run's turns
    and its selector's successes (on PostgreSQL a step is one statement of its own; two written at once can
    reach for the same position, and the second is written again in a transaction that waits for the run's
    row)."""
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    failures: list[BaseException] = []

    def record(worker: int) -> None:
        try:
            for number in range(25):
                run.record_step(action="click", target='button "Next"', selector="#next", url=f"{SHOP}{worker}/{number}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=record, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    urls = [step.url for step in mem.runs.steps(run.id)]
    assert len(urls) == len(set(urls)) == 200
    assert mem.runs.get(run.id).turn_count == 200
    (entry,) = mem.selectors.list(DOMAIN)
    assert (entry.element, entry.stable_selector, entry.success_count) == ('button "Next"', "#next", 200)


def test_a_run_started_and_a_step_recorded_inside_an_open_transaction_go_with_it(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
    with pytest.raises(RuntimeError, match="changed my mind"):
        with mem.store.write():
            run.record_step(action="click", target='button "Buy"', selector="#buy", url=SHOP)
            started = mem.start_run(goal="Buy tea", start_url=SHOP)
            raise RuntimeError("changed my mind")
    with pytest.raises(webmem.RunNotFound):
        mem.runs.get(started.id)
    assert [step.target for step in mem.runs.steps(run.id)] == ['button "Search"']
    assert mem.runs.get(run.id).turn_count == 1
    assert [entry.element for entry in mem.selectors.list(DOMAIN)] == ['button "Search"']
    run.record_step(action="click", target='button "Buy"', selector="#buy", url=SHOP)
    assert [step.target for step in mem.runs.steps(run.id)] == ['button "Search"', 'button "Buy"']


def test_steps_keep_what_a_replay_needs(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    recorded = run.record_step(
        action="type", target='textbox "Search"', selector="#q", value="smart watch", url=SHOP, ok=True,
        verified=True, error=None, expected_effect="results appear", snapshot_hash="abc123", duration_ms=1200.4,
    )
    (stored,) = mem.runs.steps(run.id)
    assert stored == recorded
    assert (stored.target, stored.selector, stored.value, stored.verified) == ('textbox "Search"', "#q", "smart watch", True)
    assert (stored.expected_effect, stored.snapshot_hash, stored.duration_ms) == ("results appear", "abc123", 1200)


@given(
    action=st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40)
    .filter(lambda s: s.strip() == s and s),
    value=st.none() | st.text(st.characters(exclude_characters="\x00"), max_size=200),  # a NUL is refused:
    target=st.none() | st.text(st.characters(exclude_characters="\x00"), max_size=120),  # test_hostile_input
    ok=st.booleans(),
    verified=st.none() | st.booleans(),
    duration=st.none() | st.integers(min_value=0, max_value=10**9),
)
@PROPERTY
def test_steps_round_trip_through_the_database(
    mem: webmem.Memory, action: str, value: str | None, target: str | None, ok: bool, verified: bool | None,
    duration: int | None,
) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    recorded = run.record_step(action=action, target=target, value=value, ok=ok, verified=verified, duration_ms=duration)
    assert mem.runs.steps(run.id) == [recorded]
    assert (recorded.action, recorded.target, recorded.ok, recorded.verified, recorded.duration_ms) == (
        action, target, ok, verified, duration
    )
    if target is None or not re.search(r"(?i)pass|pwd|pin|secret", target):
        assert recorded.value == value


# --- finishing --------------------------------------------------------------------------------


def test_finish_success_completes_the_run(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
    manifest = run.finish(success=True, outcome="Found 12 reviews", final_url=f"{SHOP}reviews")
    assert (manifest.status, manifest.success, manifest.summary) == ("completed", True, "Found 12 reviews")
    assert (manifest.result, manifest.reason, manifest.final_url) == ("Found 12 reviews", None, f"{SHOP}reviews")
    assert is_utc(manifest.completed_at) and manifest.completed_at >= manifest.started_at
    assert manifest.turn_count == 1 and run.finished
    assert mem.runs.get(run.id) == manifest


def test_finish_failure_fails_the_run(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    manifest = run.finish(success=False, outcome="No results", final_url=f"{SHOP}empty")
    assert (manifest.status, manifest.success, manifest.summary) == ("failed", False, "No results")
    assert (manifest.result, manifest.reason) == (None, "No results")
    assert is_utc(manifest.completed_at)


def test_finish_is_idempotent(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
    stale = mem.get_run(run.id)  # a second handle, taken while the run was still running
    first = run.finish(success=True, outcome="Found 12 reviews")
    assert stale.finish(success=False, outcome="from the other handle") == first
    again = run.finish(success=False, outcome="changed my mind", final_url=f"{SHOP}other")
    assert again == first
    # a fresh handle on the finished run does not finish it twice either
    assert mem.get_run(run.id).finish(success=False, outcome="third time") == first
    assert mem.runs.complete(run.id, success=False, summary="fourth") == first
    assert len(mem.knowledge.sessions(DOMAIN)) == 1
    assert len(mem.trajectories.list()) == 1
    assert [e["event"] for e in events].count("run_finished") == 1
    assert [e["event"] for e in events].count("session_recorded") == 1


def test_the_context_manager_fails_the_run_on_an_exception_and_re_raises(mem: webmem.Memory) -> None:
    with pytest.raises(ValueError, match="page crashed"), mem.start_run(goal=GOAL, start_url=SHOP) as run:
        run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
        raise ValueError("page crashed")
    manifest = mem.runs.get(run.id)
    assert (manifest.status, manifest.success) == ("failed", False)
    assert "ValueError" in manifest.reason and "page crashed" in manifest.reason
    assert run.finished
    assert mem.trajectories.list() == []
    (session,) = mem.knowledge.sessions(DOMAIN)
    assert not session.success and "page crashed" in session.outcome


def test_a_block_that_ends_without_finish_fails_the_run(mem: webmem.Memory) -> None:
    with mem.start_run(goal=GOAL, start_url=SHOP) as run:
        run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
    manifest = mem.runs.get(run.id)
    assert (manifest.status, manifest.success) == ("failed", False)
    assert manifest.reason and "finish" in manifest.reason
    assert mem.trajectories.list() == []


def test_a_block_that_finishes_keeps_its_outcome(mem: webmem.Memory) -> None:
    with mem.start_run(goal=GOAL, start_url=SHOP) as run:
        run.finish(success=True, outcome="ok")
    assert mem.runs.get(run.id).status == "completed"


def test_a_finished_run_records_nothing_more(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    run.finish(success=True)
    with pytest.raises(webmem.RunClosed):
        run.record_step(action="click", target='button "Search"')
    with pytest.raises(webmem.RunClosed):
        run.update(turn_count=3)
    with pytest.raises(webmem.RunClosed):
        mem.get_run(run.id).record_step(action="click")
    assert mem.runs.steps(run.id) == []
    assert mem.runs.get(run.id).turn_count == 0


def test_a_failed_run_records_a_session_but_no_trajectory(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP, verified=True)
    run.finish(success=False, outcome="captcha", final_url=f"{SHOP}captcha")
    assert mem.trajectories.list() == []
    assert mem.trajectories.find_best_match(GOAL, origin=SHOP) is None
    (session,) = mem.knowledge.sessions(DOMAIN)
    assert (session.success, session.outcome, session.goal, session.final_url) == (
        False, "captcha", GOAL, f"{SHOP}captcha"
    )
    assert session.run_id == run.id and session.turns_used == 1


def test_sessions_use_the_run_session_id_when_given(mem: webmem.Memory) -> None:
    mem.start_run(goal=GOAL, start_url=SHOP, session_id="checkout-42").finish(success=True)
    mem.start_run(goal="Another goal", start_url=SHOP).finish(success=True)
    newest, oldest = mem.knowledge.sessions(DOMAIN)
    assert oldest.id == "checkout-42"
    assert newest.id != "checkout-42" and newest.id.startswith("session_")


# --- listing ----------------------------------------------------------------------------------


def test_list_runs_filters_and_orders_newest_first(mem: webmem.Memory) -> None:
    a = mem.start_run(goal="one", start_url=SHOP, session_id="s1")
    b = mem.start_run(goal="two", start_url="http://localhost:5173/", session_id="s1")
    c = mem.start_run(goal="three", start_url=f"{SHOP}x", session_id="s2")
    d = mem.start_run(goal="four", start_url=SHOP)
    a.finish(success=True)
    b.finish(success=False)
    ids = lambda found: [m.run_id for m in found]  # noqa: E731
    assert ids(mem.runs.list()) == [d.id, c.id, b.id, a.id]
    assert ids(mem.runs.list(domain=DOMAIN)) == [d.id, c.id, a.id]
    assert ids(mem.runs.list(domain="localhost:5173")) == [b.id]
    assert ids(mem.runs.list(domain="http://LOCALHOST:5173/anything")) == [b.id]
    assert ids(mem.runs.list(session_id="s1")) == [b.id, a.id]
    assert ids(mem.runs.list(status="running")) == [d.id, c.id]
    assert ids(mem.runs.list(status="completed")) == [a.id]
    assert ids(mem.runs.list(status="failed")) == [b.id]
    assert ids(mem.runs.list(limit=2)) == [d.id, c.id]
    assert ids(mem.runs.list(domain=DOMAIN, status="running", limit=1)) == [d.id]
    assert ids(mem.runs.list(domain="nowhere.example")) == []


@pytest.mark.parametrize(
    ("filters", "field"),
    [({"status": "done"}, "status"), ({"limit": 0}, "limit"), ({"limit": "5"}, "limit"), ({"limit": True}, "limit"),
     ({"session_id": ""}, "session_id"), ({"domain": ""}, "domain"), ({"domain": 7}, "domain")],
)
def test_bad_list_filters_are_refused(mem: webmem.Memory, filters: dict[str, Any], field: str) -> None:
    with pytest.raises(webmem.InvalidInput, match=field):
        mem.runs.list(**filters)


@pytest.mark.parametrize("run_id", ["run_0000000000000_zzzzzz", "nope"])
def test_an_unknown_run_id_raises_run_not_found(mem: webmem.Memory, run_id: str) -> None:
    mem.start_run(goal=GOAL, start_url=SHOP)
    with pytest.raises(webmem.RunNotFound, match=run_id):
        mem.runs.get(run_id)
    with pytest.raises(webmem.RunNotFound):
        mem.get_run(run_id)
    with pytest.raises(webmem.RunNotFound):
        mem.resume_run(run_id)
    with pytest.raises(webmem.RunNotFound):
        mem.runs.build_fork_scenario(run_id, "new goal")
    with pytest.raises(webmem.RunNotFound, match="parent_run_id"):
        mem.start_run(goal=GOAL, start_url=SHOP, parent_run_id=run_id)
    assert issubclass(webmem.RunNotFound, webmem.NotFound) and issubclass(webmem.RunNotFound, LookupError)


@pytest.mark.parametrize("run_id", ["", 42, None])
def test_a_malformed_run_id_raises_invalid_input(mem: webmem.Memory, run_id: object) -> None:
    with pytest.raises(webmem.InvalidInput, match="run_id"):
        mem.runs.get(run_id)  # type: ignore[arg-type]


# --- resume, fork, lineage --------------------------------------------------------------------


def test_resume_continues_where_the_run_ended(mem: webmem.Memory) -> None:
    parent = mem.start_run(goal=GOAL, start_url=SHOP, session_id="sess-7")
    parent.finish(success=False, outcome="timed out", final_url=f"{SHOP}page/3")
    same_goal = mem.runs.build_resume_scenario(parent.id)
    assert same_goal == webmem.Scenario(
        goal=GOAL, start_url=f"{SHOP}page/3", session_id="sess-7", parent_run_id=parent.id
    )
    new_goal = mem.runs.build_resume_scenario(parent.id, goal="Read the reviews on page 3")
    assert (new_goal.goal, new_goal.start_url, new_goal.session_id) == (
        "Read the reviews on page 3", f"{SHOP}page/3", "sess-7"
    )


def test_resume_of_a_run_that_never_moved_starts_at_its_start_url(mem: webmem.Memory) -> None:
    parent = mem.start_run(goal=GOAL, start_url=f"{SHOP}start")
    assert mem.runs.build_resume_scenario(parent.id).start_url == f"{SHOP}start"


def test_resume_run_starts_a_child_run_in_the_same_session(mem: webmem.Memory) -> None:
    parent = mem.start_run(goal=GOAL, start_url=SHOP, session_id="sess-7")
    parent.finish(success=True, outcome="half way", final_url=f"{SHOP}cart")
    child = mem.resume_run(parent.id)
    manifest = child.manifest
    assert (manifest.status, manifest.goal, manifest.start_url) == ("running", GOAL, f"{SHOP}cart")
    assert (manifest.session_id, manifest.parent_run_id) == ("sess-7", parent.id)
    assert child.id != parent.id
    other = mem.resume_run(parent.id, goal="Check out")
    assert (other.goal, other.session_id) == ("Check out", "sess-7")


def test_fork_starts_a_new_session_and_needs_a_goal(mem: webmem.Memory) -> None:
    parent = mem.start_run(goal=GOAL, start_url=SHOP, session_id="sess-7")
    parent.finish(success=True, final_url=f"{SHOP}cart")
    scenario = mem.runs.build_fork_scenario(parent.id, "Compare prices instead")
    assert scenario.session_id.startswith("fork_") and scenario.session_id != "sess-7"
    assert (scenario.goal, scenario.start_url, scenario.parent_run_id) == (
        "Compare prices instead", f"{SHOP}cart", parent.id
    )
    assert mem.runs.build_fork_scenario(parent.id, "again").session_id != scenario.session_id
    forked = mem.fork_run(parent.id, goal="Compare prices instead")
    assert forked.session_id.startswith("fork_") and forked.manifest.parent_run_id == parent.id
    for goal in ("", "   ", None, 5):
        with pytest.raises(webmem.InvalidInput, match="goal"):
            mem.runs.build_fork_scenario(parent.id, goal)  # type: ignore[arg-type]
        with pytest.raises(webmem.InvalidInput, match="goal"):
            mem.fork_run(parent.id, goal=goal)  # type: ignore[arg-type]


def test_lineage_and_children_are_queryable(mem: webmem.Memory) -> None:
    root = mem.start_run(goal=GOAL, start_url=SHOP, session_id="sess-1")
    root.finish(success=False, final_url=f"{SHOP}1")
    resumed = mem.resume_run(root.id)
    resumed.finish(success=False, final_url=f"{SHOP}2")
    grandchild = mem.resume_run(resumed.id, goal="Last try")
    fork = mem.fork_run(root.id, goal="Different approach")
    assert [m.run_id for m in mem.runs.lineage(grandchild.id)] == [root.id, resumed.id, grandchild.id]
    assert [m.run_id for m in mem.runs.lineage(root.id)] == [root.id]
    assert [m.run_id for m in mem.runs.lineage(fork.id)] == [root.id, fork.id]
    assert [m.run_id for m in mem.runs.children(root.id)] == [resumed.id, fork.id]
    assert [m.run_id for m in mem.runs.children(resumed.id)] == [grandchild.id]
    assert mem.runs.children(grandchild.id) == []
    with pytest.raises(webmem.RunNotFound):
        mem.runs.lineage("run_0000000000000_zzzzzz")
    with pytest.raises(webmem.RunNotFound):
        mem.runs.children("run_0000000000000_zzzzzz")


# --- ids --------------------------------------------------------------------------------------


def test_run_ids_have_the_documented_shape_and_sort_in_creation_order(mem: webmem.Memory) -> None:
    generated = [mem.runs.generate_run_id() for _ in range(3000)]
    assert all(RUN_ID.match(run_id) for run_id in generated)
    assert generated == sorted(generated)
    assert len(set(generated)) == len(generated)
    started = [mem.start_run(goal=f"goal {i}", start_url=SHOP) for i in range(30)]
    assert [run.id for run in started] == sorted(run.id for run in started)
    for run in started:
        millis = int(RUN_ID.match(run.id).group(1))  # type: ignore[union-attr]
        assert abs(millis - run.manifest.started_at.timestamp() * 1000) < 60_000
    assert generated[-1] < started[0].id


# --- domain keys and URLs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "domain"),
    [
        ("http://LOCALHOST:5173/x", "localhost:5173"),
        ("https://WWW.Example-Shop.com/Path?q=1", "www.example-shop.com"),
        ("https://example.com:443/", "example.com"),
        ("http://example.com:80/a", "example.com"),
        ("http://example.com:443/", "example.com:443"),
        ("https://example.com:8443", "example.com:8443"),
        ("http://127.0.0.1:8000/", "127.0.0.1:8000"),
        ("http://user:pw@host.example:81/", "host.example:81"),
        ("  https://trimmed.example/  ", "trimmed.example"),
    ],
)
def test_the_domain_key_is_the_host_with_port_lower_cased(mem: webmem.Memory, url: str, domain: str) -> None:
    run = mem.start_run(goal=GOAL, start_url=url)
    assert run.domain == domain == mem.runs.get(run.id).domain


hosts = st.lists(st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,8}[a-zA-Z0-9])?", fullmatch=True), min_size=1, max_size=4)


@given(labels=hosts, scheme=st.sampled_from(["http", "https", "HTTP", "Https"]),
       port=st.none() | st.integers(min_value=1, max_value=65535), path=st.sampled_from(["", "/", "/a/b?c=d#e"]))
@PROPERTY
def test_domain_key_property(mem: webmem.Memory, labels: list[str], scheme: str, port: int | None, path: str) -> None:
    host = ".".join(labels)
    url = f"{scheme}://{host}{'' if port is None else f':{port}'}{path}"
    default = {"http": 80, "https": 443}[scheme.lower()]
    expected = host.lower() if port in (None, default) else f"{host.lower()}:{port}"
    assert mem.start_run(goal=GOAL, start_url=url).domain == expected


@pytest.mark.parametrize(
    "url",
    ["not a url", "ftp://x", "ftp://example.com/file", "http://", "https:///path", "", "   ", 123, None,
     b"https://example.com/", "example.com", "/relative/path", "javascript:alert(1)", "http://exa mple.com/",
     "http://example.com:99999/", "http://example.com:0/", "https://example.com/" + "a" * 5000],
)
def test_an_invalid_start_url_is_refused_at_start_run(mem: webmem.Memory, url: object) -> None:
    with pytest.raises(webmem.InvalidInput, match="start_url"):
        mem.start_run(goal=GOAL, start_url=url)  # type: ignore[arg-type]
    assert mem.runs.list() == []


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"action": ""}, "action"),
        ({"action": "   "}, "action"),
        ({"action": 123}, "action"),
        ({"action": None}, "action"),
        ({"ok": "yes"}, "ok"),
        ({"ok": 1}, "ok"),
        ({"verified": "true"}, "verified"),
        ({"duration_ms": -1}, "duration_ms"),
        ({"duration_ms": "fast"}, "duration_ms"),
        ({"value": ["a", "b"]}, "value"),
        ({"value": 42}, "value"),
        ({"target": {"role": "button"}}, "target"),
        ({"selector": 7}, "selector"),
        ({"url": "not a url"}, "url"),
        ({"url": "ftp://x/"}, "url"),
        ({"secret": "yes"}, "secret"),
        ({"snapshot_hash": "h" * 201}, "snapshot_hash"),
    ],
)
def test_bad_step_input_names_the_field(mem: webmem.Memory, fields: dict[str, Any], field: str) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    arguments = {"action": "click", **fields}
    with pytest.raises(webmem.InvalidInput, match=re.escape(field)):
        run.record_step(**arguments)
    assert mem.runs.steps(run.id) == []
    assert mem.runs.get(run.id).turn_count == 0


@pytest.mark.parametrize("goal", ["", "   ", "x" * 2001, 123, None, ["a goal"]])
def test_a_bad_goal_is_refused(mem: webmem.Memory, goal: object) -> None:
    with pytest.raises(webmem.InvalidInput, match="goal"):
        mem.start_run(goal=goal, start_url=SHOP)  # type: ignore[arg-type]
    assert mem.runs.list() == []


def test_a_goal_of_2000_characters_is_accepted(mem: webmem.Memory) -> None:
    assert len(mem.start_run(goal="x" * 2000, start_url=SHOP).goal) == 2000


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"success": "yes"}, "success"), ({"success": None}, "success"), ({"success": True, "outcome": 5}, "outcome"),
     ({"success": True, "final_url": "nowhere"}, "final_url"), ({"success": True, "facts": {"type": "x"}}, "facts")],
)
def test_bad_finish_input_is_refused_and_leaves_the_run_open(
    mem: webmem.Memory, fields: dict[str, Any], field: str
) -> None:
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    with pytest.raises(webmem.InvalidInput, match=field):
        run.finish(**fields)
    assert mem.runs.get(run.id).status == "running"
    assert run.finish(success=True).status == "completed"


@pytest.mark.parametrize("session_id", ["has space", "", "x" * 201, 12])
def test_a_bad_session_id_is_refused(mem: webmem.Memory, session_id: object) -> None:
    with pytest.raises(webmem.InvalidInput, match="session_id"):
        mem.start_run(goal=GOAL, start_url=SHOP, session_id=session_id)  # type: ignore[arg-type]


def test_a_run_finished_by_another_handle_refuses_steps(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Check the price", start_url="https://shop.example/")
    other = mem.get_run(run.id)
    other.finish(success=True, outcome="done")
    with pytest.raises(webmem.RunClosed):
        run.record_step(action="click", target='button "Buy"', selector="#buy", url="https://shop.example/")
    assert mem.runs.steps(run.id) == []
