"""Both backends under the conditions of a team: concurrent writers keep every counter exact; a
namespace is a hard partition, through the API and the CLI (and, with PostgreSQL, through row-level
security even for a query that forgets its filter); a missing driver and a missing server say how
to get them, and nothing is skipped silently."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pg_cluster
import psycopg
import pytest
import rows
from click.testing import CliRunner
from fastapi.testclient import TestClient
from psycopg import sql
from sqlalchemy import text

import webmem
from webmem.cli import cli
from webmem.core.clock import utcnow
from webmem.server import create_app
from webmem.store.migrations import NAMESPACED_TABLES
from webmem.working.memory import AgentMemory

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"

# --- concurrency ----------------------------------------------------------------------------------

PROCESSES = 8
RUNS_PER_PROCESS = 200
TARGET = 'button "Add to cart"'
SELECTOR = "#add-to-cart"
FACT = {"type": "quirk", "key": "k", "value": "v"}
EARLY_FACT = {"type": "timing", "key": "first-load", "value": "slow"}  # only in each agent's first runs
EARLY_RUNS = 4
ERROR = "Error: locator.click: the zebra overlay intercepts pointer events"


def _agent(location: str, local_dir: str, number: int, barrier: Any) -> None:
    """One agent process: 200 runs on the same domain, each hitting the same selector, fact, lesson
    and pattern."""
    mem = webmem.Memory.open(location, local_dir=local_dir)
    try:
        (pattern,) = mem.patterns.get_patterns_for_domain(DOMAIN)
        barrier.wait(timeout=120)
        for i in range(RUNS_PER_PROCESS):
            run = mem.start_run(goal=f"Agent {number} buys item {i}", start_url=SHOP)
            run.record_step(action="click", target=TARGET, selector=SELECTOR, url=SHOP, ok=True, verified=True)
            run.on_error("click", ERROR)
            mem.patterns.record_usage(pattern.id, success=True)
            run.finish(success=True, outcome=f"agent {number} bought item {i}",
                       facts=[FACT, EARLY_FACT] if i < EARLY_RUNS else [FACT])
    finally:
        mem.close()


FIRST_OPENERS = 6


def _first_open(location: str, local_dir: str, number: int, barrier: Any) -> None:
    """One process of a fleet that starts together on a store nobody has opened yet."""
    barrier.wait(timeout=120)
    with webmem.Memory.open(location, local_dir=local_dir) as mem:
        with mem.start_run(goal=f"Agent {number} starts", start_url=SHOP) as run:
            run.record_step(action="click", target=TARGET, url=SHOP)


def test_a_fleet_opening_a_new_store_together_all_succeed(memory_location: str, memory_dir: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(FIRST_OPENERS)
    openers = [ctx.Process(target=_first_open, args=(memory_location, str(memory_dir), n, barrier))
               for n in range(FIRST_OPENERS)]  # nothing opened (or migrated) the store before them
    for opener in openers:
        opener.start()
    for opener in openers:
        opener.join(timeout=300)
    assert [opener.exitcode for opener in openers] == [0] * FIRST_OPENERS
    with webmem.Memory.open(memory_location, local_dir=memory_dir) as mem:
        assert rows.count(mem, "runs") == FIRST_OPENERS
        assert all(state.applied_at is not None for state in mem.migrations())


def test_concurrent_agents_keep_every_count_exact(open_memory: Any, memory_location: str, memory_dir: Path) -> None:
    with open_memory() as mem:
        lesson = mem.lessons.record("Press Escape to close the zebra overlay.", "error_recovery", "click",
                                    "zebra overlay")
        lesson = mem.lessons.record("Press Escape to close the zebra overlay.", "error_recovery", "click",
                                    "zebra overlay")  # counted again: starts above 1
        pattern = mem.patterns.learn_pattern(DOMAIN, "add to cart", "navigation",
                                             [{"tool": "click", "target": TARGET, "selector": SELECTOR}])
        lessons_before = len(mem.lessons.list())
    assert lesson.use_count == 2

    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    agents = [ctx.Process(target=_agent, args=(memory_location, str(memory_dir), n, barrier)) for n in range(PROCESSES)]
    started = time.monotonic()
    for agent in agents:
        agent.start()
    for agent in agents:
        agent.join(timeout=600)
    elapsed = time.monotonic() - started
    assert [agent.exitcode for agent in agents] == [0] * PROCESSES

    total = PROCESSES * RUNS_PER_PROCESS
    with open_memory() as mem:
        assert rows.count(mem, "runs") == total
        assert rows.count(mem, "runs", "status = 'completed'") == total
        assert rows.count(mem, "run_steps") == total
        assert rows.count(mem, "trajectories") == total
        # the session log keeps the newest five per domain, however many agents finish at once
        assert rows.count(mem, "sessions") == 5 and len(mem.knowledge.sessions(DOMAIN)) == 5

        (selector,) = mem.selectors.list(DOMAIN)
        assert (selector.element, selector.stable_selector, selector.success_count) == (TARGET, SELECTOR, total)

        facts = {(f.type, f.key, f.value): f for f in mem.knowledge.facts(DOMAIN, min_confidence=0)}
        early = facts.pop(tuple(EARLY_FACT.values()))
        # k=v, typical-steps and first-meaningful-action, confirmed by every run
        assert rows.count(mem, "facts") == len(facts) + 1 == 4 and tuple(FACT.values()) in facts
        # each confirmation closes a fifth of the gap to 1: c_n = 1 - 0.4 * 0.8 ** (n - 1)
        for fact in facts.values():
            assert fact.sources == total, fact
            assert fact.confidence == pytest.approx(1 - 0.4 * 0.8 ** (total - 1), abs=1e-12)
        boosts = PROCESSES * EARLY_RUNS  # few enough that one lost boost shows in the confidence too
        assert early.sources == boosts
        assert early.confidence == pytest.approx(1 - 0.4 * 0.8 ** (boosts - 1), abs=1e-12)

        recalled = mem.lessons.get(lesson.id)
        assert recalled.use_count == total + lesson.use_count
        assert len(mem.lessons.list()) == lessons_before  # nothing learned twice
        assert rows.count(mem, "lesson_runs", "lesson_id = :id", id=lesson.id) == total
        assert rows.count(mem, "lesson_domains", "lesson_id = :id", id=lesson.id) == 1

        (used,) = mem.patterns.get_patterns_for_domain(DOMAIN)
        assert used.id == pattern.id and used.success_count == pattern.success_count + total
        assert rows.count(mem, "patterns") == 1

    logged = [json.loads(line) for line in (memory_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    kinds = [event["event"] for event in logged]
    assert kinds.count("run_finished") == kinds.count("session_recorded") == total
    boosts = [e["event"] for e in logged if e["event"] in ("fact_recorded", "fact_boosted") and e.get("key") == "k"]
    assert boosts.count("fact_recorded") == 1 and len(boosts) == total  # learned once, confirmed by the rest
    print(f"{total} runs by {PROCESSES} processes in {elapsed:.1f}s")


# --- tenant isolation -----------------------------------------------------------------------------

MARKER = "zanzibar"  # a word in every record that namespace A writes, and in nothing B can see
# what the reads ask for, without the marker (a command may echo its question)
EPISODE, SESSION, QUERY, ERROR_SEEN = "episode-shop", "session-shop", "Search watches", "Error: intercepts pointer events"


def fill(mem: webmem.Memory) -> dict[str, str]:
    """One record of every kind in ``mem``'s namespace, through the public API; returns their ids."""
    tip = mem.lessons.record(f"On this shop, close the {MARKER} banner first.", "site_specific", domain=DOMAIN)
    learned = mem.lessons.record(f"Press Escape when the {MARKER} overlay blocks a click.", "error_recovery",
                                 "click", f"{MARKER} overlay")
    run = mem.start_run(goal=f"Search {MARKER} watches", start_url=SHOP, session_id=SESSION,
                        episode=EPISODE)
    run.on_domain(SHOP)
    run.on_error("click", f"Error: the {MARKER} overlay intercepts pointer events")
    run.record_step(action="fill", target='textbox "Search"', selector="#q", value=f"{MARKER} watches", url=SHOP,
                    verified=True, internal_state=f"search for {MARKER}")
    run.record_step(action="click", target=f'button "Search {MARKER}"', selector=f"#{MARKER}", url=SHOP,
                    verified=True)
    working = run.working
    working.start_task(f"find {MARKER} watches", user_context={"city": MARKER})
    working.record_cycle(f"look for {MARKER}", {"tool": "click", "parameters": {"ref": MARKER}},
                         observation=f"{MARKER} listed", url=SHOP)
    working.set_scratch("note", MARKER)
    working.add_inferred_context("brand", MARKER, source=f"{MARKER} page title")
    mem.knowledge.record_fact(DOMAIN, "quirk", f"{MARKER}-banner", f"a {MARKER} banner on the first visit")
    mem.selectors.record(DOMAIN, f'link "{MARKER}"', f"#link-{MARKER}")
    pattern = mem.patterns.learn_pattern(DOMAIN, f"search for {MARKER}", "search",
                                         [{"tool": "fill", "target": 'textbox "Search"', "value": "{query}"}])
    run.finish(success=True, outcome=f"found the {MARKER} watches",
               facts=[{"type": "timing", "key": f"{MARKER}-load", "value": "2s"}])
    mem.episodes.init_episode(EPISODE, rep=1)
    mem.episodes.add_grades_to_memories({"task_completed": True, "overall_explanation": f"{MARKER} found",
                                         "step_grades": [{"step_number": 1, "is_correct": True,
                                                          "explanation": f"typed {MARKER}"}]})
    (trajectory,) = mem.trajectories.list()
    return {"run": run.id, "trajectory": trajectory.id, "lesson": learned.id, "tip": tip.id, "pattern": pattern.id}


def assert_every_table_has_rows(mem: webmem.Memory) -> None:
    """So that the isolation checks below can fail: the namespace wrote to every namespaced table."""
    empty = [table for table in NAMESPACED_TABLES
             if rows.count(mem, table, "namespace = :ns", ns=mem.namespace) == 0]
    assert empty == []


def api_reads(mem: webmem.Memory, ids: dict[str, str]) -> str:
    """Everything a namespace can read about A's records through the API, as text; raises nothing
    (a lookup that does not find the record contributes its error class)."""
    seen: list[Any] = []

    def attempt(read: Any) -> None:
        try:
            seen.append(read())
        except webmem.WebmemError as exc:
            seen.append(type(exc).__name__)

    run_id = ids["run"]
    attempt(lambda: [m.model_dump(mode="json") for m in mem.runs.list()])
    attempt(lambda: [m.model_dump(mode="json") for m in mem.runs.list(domain=DOMAIN)])
    attempt(lambda: [m.model_dump(mode="json") for m in mem.runs.list(session_id=SESSION)])
    attempt(lambda: mem.runs.get(run_id).model_dump(mode="json"))
    attempt(lambda: [s.model_dump(mode="json") for s in mem.runs.steps(run_id)])
    attempt(lambda: [m.model_dump(mode="json") for m in mem.runs.lineage(run_id)])
    attempt(lambda: [m.model_dump(mode="json") for m in mem.runs.children(run_id)])
    attempt(lambda: mem.get_run(run_id).manifest.model_dump(mode="json"))
    attempt(lambda: [t.model_dump(mode="json") for t in mem.trajectories.list()])
    attempt(lambda: [t.model_dump(mode="json") for t in mem.trajectories.list(domain=DOMAIN)])
    attempt(lambda: mem.trajectories.get(ids["trajectory"]).model_dump(mode="json"))
    attempt(lambda: [c.trajectory.model_dump(mode="json")
                     for c in mem.trajectories.match(QUERY, origin=SHOP).candidates])
    attempt(lambda: str(mem.trajectories.find_best_match(QUERY, origin=SHOP)))
    attempt(lambda: [f.model_dump(mode="json") for f in mem.knowledge.facts(DOMAIN, min_confidence=0)])
    attempt(lambda: mem.knowledge.domains())
    attempt(lambda: mem.knowledge.format_for_prompt(DOMAIN))
    attempt(lambda: [s.model_dump(mode="json") for s in mem.knowledge.sessions(DOMAIN)])
    attempt(lambda: mem.knowledge.format_sessions(DOMAIN))
    attempt(lambda: [s.model_dump(mode="json") for s in mem.selectors.list(DOMAIN)])
    attempt(lambda: mem.selectors.domains())
    attempt(lambda: mem.selectors.format_for_prompt(DOMAIN))
    attempt(lambda: [item.model_dump(mode="json") for item in mem.lessons.list()])
    attempt(lambda: mem.lessons.get(ids["lesson"]).model_dump(mode="json"))
    attempt(lambda: mem.lessons.get(ids["tip"]).model_dump(mode="json"))
    attempt(lambda: [item.lesson for item in mem.lessons.peek_error("click", ERROR_SEEN)])
    attempt(lambda: [item.lesson for item in mem.lessons.peek_domain(DOMAIN)])
    attempt(lambda: mem.lessons.system_prompt_section())
    attempt(lambda: [e.model_dump(mode="json") for e in mem.episodes.load_all_memories_for_session(EPISODE)])
    attempt(lambda: mem.episodes.sessions())
    attempt(lambda: [p.model_dump(mode="json") for p in mem.patterns.get_patterns_for_domain(DOMAIN)])
    attempt(lambda: mem.patterns.format_for_prompt(DOMAIN))
    attempt(lambda: AgentMemory.load(mem.scope, run_id, patterns=mem.patterns).format_for_prompt(DOMAIN))
    attempt(lambda: AgentMemory.load(mem.scope, run_id, patterns=mem.patterns).context_store.to_dict())
    attempt(lambda: str(mem.preview_context(goal=QUERY, url=SHOP)))
    attempt(lambda: mem.stats()["counts"])
    attempt(lambda: mem.doctor()["orphans"])
    return json.dumps(seen, ensure_ascii=False, default=str)


def test_a_namespace_sees_nothing_of_another_through_the_api(open_memory: Any) -> None:
    a, b = open_memory(namespace="tenant-a"), open_memory(namespace="tenant-b")
    ids = fill(a)
    assert_every_table_has_rows(a)
    seen_by_a = api_reads(a, ids)
    assert MARKER in seen_by_a  # the reads can see
    assert [name for name, value in ids.items() if value not in seen_by_a] == []

    seen_by_b = api_reads(b, ids)
    assert MARKER not in seen_by_b
    assert not [name for name, value in ids.items() if value in seen_by_b]
    with pytest.raises(webmem.RunNotFound):
        b.runs.get(ids["run"])
    with pytest.raises(webmem.TrajectoryNotFound):
        b.trajectories.get(ids["trajectory"])
    with pytest.raises(webmem.InvalidInput):
        b.lessons.get(ids["lesson"])
    with pytest.raises(webmem.WebmemError):
        b.patterns.record_usage(ids["pattern"], success=True)
    assert b.episodes.init_episode(EPISODE).rep == 1
    # B's own writes with A's names change nothing of A's
    b.runs.start(goal="the same id in B", start_url=SHOP, run_id=ids["run"])
    assert b.get_run(ids["run"]).working.get_task_summary()["cycles"] == 0
    assert a.get_run(ids["run"]).working.get_task_summary()["cycles"] == 1
    assert len(a.runs.steps(ids["run"])) == 2 and b.runs.steps(ids["run"]) == []


def cli_reads(ids: dict[str, str]) -> list[list[str]]:
    run_id, trajectory_id = ids["run"], ids["trajectory"]
    return [
        ["runs"], ["runs", "--json"], ["runs", "--domain", DOMAIN, "--json"],
        ["runs", "--session-id", SESSION, "--json"],
        ["runs", "show", run_id], ["runs", "tree", run_id], ["runs", "resume", run_id],
        ["runs", "fork", run_id, "--goal", "again"],
        ["trajectories", "--json"], ["trajectories", "show", trajectory_id],
        ["trajectories", "match", QUERY, "--url", SHOP, "--json"],
        ["facts", DOMAIN, "--min-confidence", "0", "--json"], ["sessions", DOMAIN, "--json"],
        ["selectors", DOMAIN, "--json"], ["lessons", "--json"],
        ["lessons", "recall", "--command", "click", "--error", ERROR_SEEN, "--json"],
        ["lessons", "recall", "--domain", DOMAIN, "--json"],
        ["episodes", EPISODE, "--json"],
        ["context", "--goal", QUERY, "--url", SHOP, "--json"],
        ["stats", "--json"], ["export"], ["export", "--format", "jsonl"],
    ]


@pytest.fixture
def run_cli(backend: str, memory_location: str, memory_dir: Path, tmp_path: Path) -> Any:
    """The ``webmem`` command on the test's store: ``--memory-dir`` for SQLite; ``$WEBMEM_URL``
    (and ``$WEBMEM_DIR`` for local files) for PostgreSQL."""
    local = tmp_path / "cli-local"

    def invoke(namespace: str, args: list[str]) -> Any:
        if backend == "sqlite":
            env = {"WEBMEM_URL": ""}
            prefix = ["--memory-dir", memory_location]
        else:
            env = {"WEBMEM_URL": memory_location, "WEBMEM_DIR": str(local)}
            prefix = []
        return CliRunner().invoke(cli, [*prefix, "--namespace", namespace, *args], env=env, catch_exceptions=False)

    return invoke


def test_a_namespace_sees_nothing_of_another_through_the_cli(open_memory: Any, run_cli: Any) -> None:
    a = open_memory(namespace="tenant-a")
    open_memory(namespace="tenant-b").close()
    ids = fill(a)
    a.close()
    shown_to_a = ""
    for args in cli_reads(ids):
        as_a = run_cli("tenant-a", args)
        assert as_a.exit_code == 0, (args, as_a.output)
        shown_to_a += as_a.output
        as_b = run_cli("tenant-b", args)
        leaked = [name for name, value in ids.items() if value in as_b.stdout]
        assert MARKER not in as_b.stdout and not leaked, (args, as_b.stdout)
        if args[1:2] in (["show"], ["tree"], ["resume"], ["fork"]):  # a lookup by A's id: not found in B
            assert as_b.exit_code == 1 and "in namespace 'tenant-b'" in as_b.stderr, (args, as_b.stderr)
        else:
            assert as_b.exit_code == 0, (args, as_b.output)
    assert MARKER in shown_to_a  # the reads can see
    assert [name for name, value in ids.items() if value not in shown_to_a] == ["pattern"]  # no command shows one
    counted_in_a = json.loads(run_cli("tenant-a", ["stats", "--json"]).stdout)["counts"]
    counted_in_b = json.loads(run_cli("tenant-b", ["stats", "--json"]).stdout)["counts"]
    assert all(entry["total"] > 0 for entry in counted_in_a.values())
    assert {kind: entry["total"] for kind, entry in counted_in_b.items()} == {
        kind: 3 if kind == "lessons" else 0 for kind in counted_in_a  # B's own seed lessons only
    }


# --- row-level security (PostgreSQL) --------------------------------------------------------------


# Row-level security is PostgreSQL's: these tests run on that backend only (unless it was deselected).
postgres_only = pytest.mark.parametrize(
    "backend", [name for name in os.environ.get("WEBMEM_TEST_BACKENDS", "sqlite,postgres").split(",")
                if name.strip() == "postgres"],
)


def raw_counts(url: str, namespace: str | None) -> dict[str, int]:
    """Rows of every namespaced table as the ``webmem`` role sees them, with webmem.namespace set or not."""
    with psycopg.connect(url, autocommit=True) as conn:
        if namespace is not None:
            conn.execute("SELECT set_config('webmem.namespace', %s, false)", (namespace,))
        return {table: conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))).fetchone()[0]
                for table in NAMESPACED_TABLES}


@postgres_only
def test_row_level_security_shows_each_session_only_its_namespace(open_memory: Any, memory_location: str) -> None:
    pg_location = memory_location
    a, b = open_memory(namespace="tenant-a"), open_memory(namespace="tenant-b")
    fill(a)
    fill(b)
    b.start_run(goal="one more run in B", start_url=SHOP)
    assert_every_table_has_rows(a)
    with psycopg.connect(pg_location) as conn:
        assert conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
                            ).fetchone() == (False, False)

    assert raw_counts(pg_location, None) == dict.fromkeys(NAMESPACED_TABLES, 0)
    seen_as_a = raw_counts(pg_location, "tenant-a")
    assert seen_as_a == {table: rows.count(a, table, "namespace = 'tenant-a'") for table in NAMESPACED_TABLES}
    assert all(seen_as_a.values())
    with psycopg.connect(pg_location, autocommit=True) as conn:
        conn.execute("SELECT set_config('webmem.namespace', 'tenant-a', false)")
        assert conn.execute("SELECT count(*) FROM runs WHERE namespace <> 'tenant-a'").fetchone()[0] == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO facts (namespace, domain, type, key, value, confidence, sources, first_seen, last_seen)"
                " VALUES ('tenant-b', 'x.example', 'quirk', 'planted', 'by a', 0.6, 1, now(), now())"
            )
        # nor can A move its own row into B
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute("UPDATE runs SET namespace = 'tenant-b'")
    assert b.knowledge.facts("x.example", min_confidence=0) == []

    # a query that forgets its namespace filter, through B's store, still sees only B's rows
    with b.store.read() as conn:
        runs_seen = conn.execute(text("SELECT count(*) FROM runs")).scalar_one()
        namespaces = set(conn.execute(text("SELECT DISTINCT namespace FROM runs")).scalars())
        lessons_seen = set(conn.execute(text("SELECT namespace FROM lessons")).scalars())
    assert runs_seen == 2 and namespaces == {"tenant-b"} and lessons_seen == {"tenant-b"}
    with a.store.read() as conn:
        assert conn.execute(text("SELECT count(*) FROM runs")).scalar_one() == 1


@postgres_only
def test_every_table_with_a_namespace_has_row_level_security_forced(open_memory: Any, memory_location: str) -> None:
    open_memory().close()
    with psycopg.connect(memory_location) as conn:
        found = conn.execute(
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,"
            " (SELECT count(*) FROM pg_policies p WHERE p.schemaname = n.nspname AND p.tablename = c.relname)"
            " FROM information_schema.columns col"
            " JOIN pg_namespace n ON n.nspname = col.table_schema"
            " JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = col.table_name"
            " WHERE col.column_name = 'namespace' AND col.table_schema = current_schema() AND c.relkind = 'r'"
        ).fetchall()
    assert {name for name, *_ in found} >= set(NAMESPACED_TABLES)
    assert [name for name, enabled, forced, policies in found if not (enabled and forced and policies)] == []


@postgres_only
def test_a_database_that_takes_no_writes_is_read_and_a_write_says_why_it_fails(
    open_memory: Any, memory_location: str, memory_dir: Path,
) -> None:
    """A standby (here a session with default_transaction_read_only): opening and reading work, nothing stored is
    lost, what a read would write back waits for a writable open, and a write fails with a clear error."""
    with open_memory() as mem:
        step = webmem.Step(action="fill", target='textbox "Search"', value="smart watch")
        saved = mem.trajectories.save(goal="Search for smart watch reviews", start_url=SHOP, steps=[step])
        stale = mem.lessons.record("Scroll the element into view first.", "error_recovery", "click",
                                   "outside of the viewport")
        assert rows.change(mem, "lessons", {"lesson_id": stale.id}, last_used=utcnow() - timedelta(days=91)) == 1
        assert rows.change(mem, "trajectories", {"trajectory_id": saved.id}, goal_signature="s1|another version") == 1
    joined = "&" if "?" in memory_location else "?"
    read_only = f"{memory_location}{joined}options=-c%20default_transaction_read_only%3Don"

    with webmem.Memory.open(read_only, local_dir=memory_dir) as standby:
        assert standby.trajectories.match("find reviews of smart watches", origin=SHOP).best.id == saved.id
        assert stale.id in [lesson.id for lesson in standby.lessons.list()]
        assert [run.run_id for run in standby.runs.list()] == []
        with pytest.raises(webmem.StoreReadOnly, match="takes no writes"):
            standby.start_run(goal="Buy a smart watch", start_url=SHOP)
        with pytest.raises(webmem.StoreReadOnly, match="takes no writes"):
            standby.lessons.prune(now=utcnow())
    with TestClient(create_app(read_only, local_dir=memory_dir)) as client:  # the HTTP API on the standby
        found = client.get("/v1/trajectories/match", params={"goal": "find reviews of smart watches", "url": SHOP})
        assert found.status_code == 200 and saved.id in found.text
        refused = client.post("/v1/runs", json={"goal": "Buy a smart watch", "start_url": SHOP})
        assert refused.status_code == 503 and refused.json()["title"] == "StoreReadOnly"
        assert "takes no writes" in refused.json()["detail"] and "Traceback" not in refused.text

    with open_memory() as mem:  # writable again: the prune and the write-back happen
        assert stale.id not in [lesson.id for lesson in mem.lessons.list()]
        assert rows.value(mem, "trajectories", "goal_signature", trajectory_id=saved.id).startswith("s1|")
        assert mem.trajectories.match("find reviews of smart watches", origin=SHOP).best.id == saved.id
        assert not rows.value(mem, "trajectories", "goal_signature", trajectory_id=saved.id).startswith("s1|")


# --- a missing driver, a missing server ------------------------------------------------------------


def test_without_psycopg_opening_a_postgresql_url_says_what_to_install(tmp_path: Path) -> None:
    script = ("import sys; sys.modules['psycopg'] = None; import webmem; "
              "webmem.Memory.open('postgresql://x@127.0.0.1:1/y')")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                            cwd=tmp_path, env={**os.environ, "WEBMEM_DIR": str(tmp_path / "local")}, check=False)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError") and "pip install 'webmem[postgres]'" in last


BLOCK_INITDB = """
import glob

_real = glob.glob


def _without_postgresql(pattern, *args, **kwargs):
    # this machine, as one without Debian's PostgreSQL server
    return [] if pattern.startswith("/usr/lib/postgresql/") else _real(pattern, *args, **kwargs)


glob.glob = _without_postgresql
"""


def test_without_postgresql_the_cluster_fails_with_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEBMEM_TEST_POSTGRES_URL", raising=False)
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(pg_cluster.glob, "glob", lambda pattern: [])
    with pytest.raises(RuntimeError) as caught:
        pg_cluster.start()
    assert str(caught.value) == pg_cluster.HOW_TO_GET_ONE


def test_without_postgresql_the_test_run_fails_instead_of_skipping(tmp_path: Path) -> None:
    """A test on the postgres backend errors (exit code 1) with the message; nothing is skipped."""
    (tmp_path / "block_initdb.py").write_text(textwrap.dedent(BLOCK_INITDB), encoding="utf-8")
    env = {key: value for key, value in os.environ.items()
           if key not in ("WEBMEM_TEST_POSTGRES_URL", "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")}
    env.update(PATH="", PYTHONPATH=str(tmp_path), WEBMEM_TEST_BACKENDS="sqlite,postgres")
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "block_initdb", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         "tests/test_knowledge.py::test_a_new_fact_starts_at_0_6_with_one_source"],
        capture_output=True, text=True, timeout=300, cwd=root, env=env, check=False,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "1 passed, 1 error" in out and "skipped" not in out, out
    assert pg_cluster.HOW_TO_GET_ONE.split(":")[0] in out
