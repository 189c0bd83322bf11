"""The storage core: the SQLite file, its pragmas, migrations, errors, concurrency and deferred events."""

from __future__ import annotations

import json
import multiprocessing
import random
import sqlite3
import threading
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import rows
from sqlalchemy import bindparam, select, text
from sqlalchemy.exc import OperationalError

import webmem
from webmem.core.clock import utcnow
from webmem.store import DB_FILE, MIGRATIONS, apply_migrations
from webmem.store.schema import lessons, metadata, migrations_table, run_steps, runs
from webmem.store.sqlite_connections import BUSY_TIMEOUT_MS, WRITE_RETRY_WINDOW_SECONDS

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
MIGRATION_NAMES = [migration.name for migration in MIGRATIONS]


def raw(path: Path) -> sqlite3.Connection:
    """A plain sqlite3 connection, outside webmem, to look at the file as it is."""
    return sqlite3.connect(path / DB_FILE)


def files_in(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def build_old_database(location: str) -> None:
    """A memory written by a webmem that only knew the first migration, holding one run and a step."""
    store = rows.open_store(location)
    try:
        assert apply_migrations(store, target=MIGRATION_NAMES[0]) == [MIGRATION_NAMES[0]]
        with store.write() as conn:
            conn.execute(runs.insert().values(
                namespace="default", run_id="run_0001700000000_oldrun", session_id="sess-old", status="running",
                goal="Find the old shop", domain="www.example-shop.com", start_url="https://www.example-shop.com/",
                started_at=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), updated_at=datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),
                artifact_paths=[], turn_count=1,
            ))
            conn.execute(run_steps.insert().values(
                namespace="default", run_id="run_0001700000000_oldrun", seq=1, url="https://www.example-shop.com/",
                action="click", target='button "Search"', selector="#search", ok=True,
                recorded_at=datetime(2024, 1, 2, 3, 4, 6, tzinfo=UTC),
            ))
    finally:
        store.close()


def applied_migrations(location: str) -> dict[str, datetime]:
    store = rows.open_store(location)
    try:
        with store.read() as conn:
            return dict(conn.execute(select(migrations_table.c.name, migrations_table.c.applied_at)).all())
    finally:
        store.close()


# --- the file and its pragmas -----------------------------------------------------------------


def test_memory_db_is_created_in_the_directory_in_wal_mode(memory_dir: Path) -> None:
    assert not memory_dir.exists()
    with webmem.Memory.open(memory_dir):
        assert (memory_dir / DB_FILE).is_file()
    conn = raw(memory_dir)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_store_connections_have_foreign_keys_on_and_a_busy_timeout(sqlite_mem: webmem.Memory) -> None:
    with sqlite_mem.store.read() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == BUSY_TIMEOUT_MS > 0
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_foreign_keys_are_enforced(mem: webmem.Memory) -> None:
    with pytest.raises(webmem.StoreError, match="(?i)foreign key"):
        with mem.store.write() as conn:
            conn.execute(run_steps.insert().values(
                namespace="default", run_id="run_0000000000000_nobody", seq=1, action="click", ok=True,
                recorded_at=utcnow(),
            ))
    with mem.store.read() as conn:
        assert conn.execute(select(run_steps.c.seq)).all() == []


@pytest.mark.parametrize("held", [0.05, 0.2, WRITE_RETRY_WINDOW_SECONDS + 0.3],
                         ids=["briefly", "for-a-while", "past-the-retries"])
def test_a_writer_waits_for_another_connection_holding_the_lock(sqlite_mem: webmem.Memory, memory_dir: Path,
                                                                 held: float) -> None:
    """Tried again at short intervals, then (past the retry window) with SQLite's own busy wait: either way the
    write goes through once the lock is free, and the connection keeps its busy timeout."""
    mem = sqlite_mem
    blocker = sqlite3.connect(memory_dir / DB_FILE, check_same_thread=False, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    blocker.execute("INSERT INTO webmem_migrations (name, applied_at) VALUES ('x_probe', '2024-01-01 00:00:00')")
    release = threading.Timer(held, blocker.execute, args=("ROLLBACK",))
    release.start()
    try:
        run = mem.start_run(goal="Wait for the lock", start_url=SHOP)  # waits for the rollback, then writes
    finally:
        release.join()
        blocker.close()
    assert mem.runs.get(run.id).status == "running"
    with mem.store.read() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == BUSY_TIMEOUT_MS


# --- migrations -------------------------------------------------------------------------------


def test_migrations_are_recorded_and_listed_with_utc_times(mem: webmem.Memory) -> None:
    states = mem.migrations()
    assert [state.name for state in states] == MIGRATION_NAMES
    assert len(MIGRATION_NAMES) >= 2
    for state in states:
        assert state.applied
        assert state.applied_at is not None and state.applied_at.utcoffset() == timedelta(0)
    with mem.store.read() as conn:
        recorded = [row[0] for row in conn.execute(text("SELECT name FROM webmem_migrations ORDER BY name"))]
    assert recorded == MIGRATION_NAMES


def test_opening_twice_applies_nothing_new(open_memory: Any) -> None:
    with open_memory() as first:
        before = first.migrations()
    with open_memory() as second:
        assert apply_migrations(second.store) == []
        assert second.migrations() == before
        assert rows.count(second, "webmem_migrations") == len(MIGRATION_NAMES)


def test_an_older_database_is_upgraded_on_open_and_keeps_its_data(
    open_memory: Any, memory_location: str, another_location: str
) -> None:
    build_old_database(memory_location)
    old_applied = applied_migrations(memory_location)
    assert list(old_applied) == [MIGRATION_NAMES[0]]
    assert "ix_runs_domain" not in rows.schema_of(memory_location)["runs"]["indexes"]

    with open_memory() as mem:
        states = {state.name: state for state in mem.migrations()}
        assert all(state.applied for state in states.values())
        old = mem.runs.get("run_0001700000000_oldrun")
        assert (old.goal, old.session_id, old.status, old.turn_count) == ("Find the old shop", "sess-old", "running", 1)
        assert old.started_at.utcoffset() == timedelta(0) and old.started_at.year == 2024
        assert [(s.action, s.selector) for s in mem.runs.steps(old.run_id)] == [("click", "#search")]
        assert [r.run_id for r in mem.runs.list(domain=DOMAIN)] == [old.run_id]
        # the old run goes on as any other
        handle = mem.get_run(old.run_id)
        handle.record_step(action="type", target='textbox "Search"', value="shop", url=SHOP)
        assert handle.finish(success=True, outcome="done").status == "completed"

    now_applied = applied_migrations(memory_location)
    assert sorted(now_applied) == MIGRATION_NAMES
    assert now_applied[MIGRATION_NAMES[0]] == old_applied[MIGRATION_NAMES[0]]  # not re-applied

    webmem.Memory.open(another_location).close()
    upgraded_shape, fresh_shape = rows.schema_of(memory_location), rows.schema_of(another_location)
    assert upgraded_shape == fresh_shape
    assert {"ix_runs_domain", "ix_runs_recent", "ix_runs_session", "ix_runs_parent"} <= set(
        upgraded_shape["runs"]["indexes"]
    )
    assert "ix_facts_domain" in upgraded_shape["facts"]["indexes"]


def test_the_migrated_schema_matches_the_schema_module(mem: webmem.Memory, memory_location: str) -> None:
    shape = rows.schema_of(memory_location)
    assert set(shape) == set(metadata.tables)
    for name, table in metadata.tables.items():
        reflected = shape[name]
        assert reflected["columns"] == {c.name: bool(c.nullable) for c in table.columns}, name
        assert reflected["pk"] == sorted(c.name for c in table.primary_key.columns), name
        expected_fks = sorted(
            (tuple(fk.column_keys), fk.referred_table.name, tuple(e.column.name for e in fk.elements))
            for fk in table.foreign_key_constraints
        )
        assert reflected["fks"] == expected_fks, name
    assert shape["facts"]["unique"] == [("namespace", "domain", "type", "key", "value")]


def test_a_failing_migration_leaves_no_trace_and_is_retried_on_the_next_open(
    open_memory: Any, memory_location: str
) -> None:
    def alter(statement: str) -> None:
        store = rows.open_store(memory_location)
        try:
            with store.write() as conn:
                conn.execute(text(statement))
        finally:
            store.close()

    store = rows.open_store(memory_location)
    try:
        apply_migrations(store, target=MIGRATION_NAMES[0])
    finally:
        store.close()
    # Without facts.key, the last index of the second migration fails, after it created the others.
    alter("ALTER TABLE facts RENAME COLUMN key TO misplaced_key")
    with pytest.raises(webmem.StoreError, match=r'column:? "?key'):
        open_memory()
    assert list(applied_migrations(memory_location)) == [MIGRATION_NAMES[0]]
    # indexes created before the failure inside the same migration were rolled back with it
    shape = rows.schema_of(memory_location)
    assert [name for table in shape.values() for name in table["indexes"] if name.startswith("ix_")] == []
    alter("ALTER TABLE facts RENAME COLUMN misplaced_key TO key")
    with open_memory() as mem:
        assert all(state.applied for state in mem.migrations())
    shape = rows.schema_of(memory_location)
    assert "ix_runs_domain" in shape["runs"]["indexes"] and "ix_facts_domain" in shape["facts"]["indexes"]


def test_a_database_stopped_between_migrations_reopens(open_memory: Any, memory_location: str) -> None:
    store = rows.open_store(memory_location)
    try:
        assert apply_migrations(store, target=MIGRATION_NAMES[0]) == [MIGRATION_NAMES[0]]
        assert apply_migrations(store, target=MIGRATION_NAMES[0]) == []
    finally:
        store.close()
    with open_memory() as mem:
        pending = {state.name for state in mem.migrations() if not state.applied}
        assert pending == set()


def test_apply_migrations_rejects_an_unknown_target(mem: webmem.Memory) -> None:
    with pytest.raises(webmem.InvalidInput, match="target"):
        apply_migrations(mem.store, target="9999_nope")


def test_a_database_from_a_newer_webmem_is_refused_and_left_untouched(
    open_memory: Any, memory_location: str, memory_dir: Path, backend: str
) -> None:
    with open_memory() as mem:
        mem.start_run(goal="Leave me alone", start_url=SHOP)
        with mem.store.write() as conn:
            conn.execute(migrations_table.insert().values(name="9999_future", applied_at=datetime(2030, 1, 1, tzinfo=UTC)))

    def state() -> Any:
        if backend == "sqlite":  # not modified, and nothing left open (no -wal/-shm)
            return files_in(memory_dir)
        with closing(rows.open_store(memory_location)) as store, store.read() as conn:
            return [conn.execute(select(table)).all() for table in (migrations_table, runs, lessons)]

    before = state()
    with pytest.raises(webmem.SchemaTooNew, match="9999_future"):
        open_memory()
    assert state() == before
    with pytest.raises(webmem.StoreError):  # SchemaTooNew is a StoreError
        open_memory()


def test_a_corrupt_database_raises_store_corrupt_naming_the_path(memory_dir: Path) -> None:
    memory_dir.mkdir()
    garbage = random.Random(20240601).randbytes(16_384)
    (memory_dir / DB_FILE).write_bytes(garbage)
    with pytest.raises(webmem.StoreCorrupt) as caught:
        webmem.Memory.open(memory_dir)
    assert str(memory_dir / DB_FILE) in str(caught.value)
    assert isinstance(caught.value, webmem.StoreError)
    assert (memory_dir / DB_FILE).read_bytes() == garbage
    assert sorted(p.name for p in memory_dir.iterdir()) == [DB_FILE]


def test_opening_a_path_that_is_a_file_raises_invalid_input(tmp_path: Path) -> None:
    target = tmp_path / "not-a-dir"
    target.write_text("hello")
    with pytest.raises(webmem.InvalidInput, match="location"):
        webmem.Memory.open(target)
    assert target.read_text() == "hello"


# --- concurrent writers -----------------------------------------------------------------------

WORKERS = 4
STEPS_PER_WORKER = 50
FACT = ("quirk", "cookie-banner", "appears on the first visit")


def _worker(location: str, local_dir: str, number: int, barrier: Any) -> None:
    mem = webmem.Memory.open(location, local_dir=local_dir)
    try:
        run = mem.start_run(goal=f"Worker {number} adds items", start_url=SHOP, session_id=f"worker-{number}")
        barrier.wait(timeout=60)
        for i in range(STEPS_PER_WORKER):
            run.record_step(action="click", target='button "Add to cart"', selector="#add", url=f"{SHOP}item/{i}")
            mem.knowledge.record_fact(DOMAIN, *FACT)
        run.finish(success=True, outcome=f"worker {number} done")
    finally:
        mem.close()


def test_concurrent_processes_lose_no_writes(open_memory: Any, memory_location: str, memory_dir: Path) -> None:
    open_memory().close()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(WORKERS)
    processes = [
        ctx.Process(target=_worker, args=(memory_location, str(memory_dir), n, barrier)) for n in range(WORKERS)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0] * WORKERS

    total = WORKERS * STEPS_PER_WORKER
    with open_memory() as mem:
        finished = mem.runs.list()
        assert len(finished) == WORKERS
        assert {run.session_id for run in finished} == {f"worker-{n}" for n in range(WORKERS)}
        for run in finished:
            assert run.status == "completed"
            assert run.turn_count == STEPS_PER_WORKER
            steps = mem.runs.steps(run.run_id)
            assert [step.url for step in steps] == [f"{SHOP}item/{i}" for i in range(STEPS_PER_WORKER)]

        (fact,) = mem.knowledge.facts(DOMAIN, type="quirk")
        assert fact.sources == total  # the first recording plus total - 1 boosts
        assert fact.confidence == pytest.approx(1 - 0.4 * 0.8 ** (total - 1))
        derived = {f.key: f for f in mem.knowledge.facts(DOMAIN, type="pattern")}
        assert derived["typical-steps"].value == f"{STEPS_PER_WORKER} steps"
        assert derived["typical-steps"].sources == WORKERS

        (entry,) = mem.selectors.list(DOMAIN)
        assert (entry.element, entry.stable_selector, entry.success_count) == ('button "Add to cart"', "#add", total)
        assert len(mem.trajectories.list(domain=DOMAIN)) == WORKERS
        assert len(mem.knowledge.sessions(DOMAIN)) == WORKERS

    lines = (memory_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()
    logged = [json.loads(line) for line in lines]  # no two processes' lines interleave
    fact_events = [e for e in logged if e["event"] in ("fact_recorded", "fact_boosted") and e["key"] == FACT[1]]
    assert len(fact_events) == total
    assert [e["event"] for e in fact_events].count("fact_recorded") == 1
    assert sum(1 for e in logged if e["event"] == "step_recorded") == total
    assert sum(1 for e in logged if e["event"] == "run_finished") == WORKERS


# --- events wait for the commit ---------------------------------------------------------------


def test_events_are_deferred_until_the_transaction_commits(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    with mem.store.write():
        mem.knowledge.record_fact(DOMAIN, "timing", "search-results", "about 2s")
        mem.selectors.record(DOMAIN, 'button "Search"', "#search")
        assert events == []
        assert not (mem.directory / "events.jsonl").exists()
    assert [e["event"] for e in events] == ["fact_recorded", "selector_recorded"]
    logged = (mem.directory / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["event"] for line in logged] == ["fact_recorded", "selector_recorded"]


def test_events_of_a_rolled_back_transaction_are_dropped(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    called: list[str] = []
    with pytest.raises(RuntimeError, match="abort"):
        with mem.store.write():
            mem.knowledge.record_fact(DOMAIN, "timing", "search-results", "about 2s")
            mem.selectors.record(DOMAIN, 'button "Search"', "#search")
            mem.start_run(goal="Never happened", start_url=SHOP)
            mem.store.after_commit(lambda: called.append("after"))
            raise RuntimeError("abort")
    assert events == [] and called == []
    assert not (mem.directory / "events.jsonl").exists()
    assert mem.knowledge.facts(DOMAIN) == []
    assert mem.selectors.list(DOMAIN) == []
    assert mem.runs.list() == []
    # outside a transaction a callback runs at once; after a commit the deferred one runs
    mem.store.after_commit(lambda: called.append("now"))
    with mem.store.write():
        mem.store.after_commit(lambda: called.append("committed"))
        assert called == ["now"]
    assert called == ["now", "committed"]


def test_nested_writes_join_the_outer_transaction(mem: webmem.Memory) -> None:
    with mem.store.write() as outer:
        mem.start_run(goal="Joined", start_url=SHOP)
        with mem.store.write() as inner:
            assert inner is outer
    with mem.store.read() as conn:
        assert conn.execute(select(runs.c.goal)).scalars().all() == ["Joined"]


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_postgres_reads_and_lone_statements_run_without_a_transaction_and_writes_in_one(mem: webmem.Memory) -> None:
    """On PostgreSQL a read's statements, and a write of one statement (``write_alone``), are each a transaction
    of their own (no BEGIN and COMMIT round trips: a statement's ``now()`` is its own start); a write's
    statements share one transaction, and so do a read's inside it."""
    def starts(conn: Any) -> list[datetime]:
        found = []
        for _ in range(2):
            found.append(conn.execute(text("SELECT now()")).scalar())
            time.sleep(0.01)
        return found

    with mem.store.read() as conn:
        first, second = starts(conn)
        with mem.store.read() as joined:
            assert joined is conn
    assert first < second
    with mem.store.write_alone() as conn:
        conn.execute(text("SELECT 1")).close()
        assert conn.connection.driver_connection.autocommit
    with mem.store.write() as conn:
        first, second = starts(conn)
        assert first == second
        with mem.store.read() as joined:
            assert joined is conn and starts(joined) == [first, first]
        with mem.store.write_alone() as joined:
            assert joined is conn
    with mem.store.read() as conn:
        assert not conn.in_transaction() or conn.connection.driver_connection.autocommit


def test_statements_on_the_driver_and_through_sqlalchemy_share_one_transaction(mem: webmem.Memory) -> None:
    """A transaction's statements run on the driver (prepared ones) and through SQLAlchemy commit together and
    are rolled back together, whichever ran first; a statement that fails leaves the connection ready for the
    next transaction."""
    lesson = lessons.insert().values(
        namespace="default", lesson_id=bindparam("id"), lesson="Wait for the banner", category="best_practice",
        use_count=0, helpful_count=0, unhelpful_count=0, source="learned", created_at=utcnow(), last_used=utcnow())

    def both(conn: Any, name: str, sqlalchemy_first: bool) -> None:
        if sqlalchemy_first:
            conn.execute(lesson, {"id": f"probe {name}"})
        mem.start_run(goal=name, start_url=SHOP)
        if not sqlalchemy_first:
            conn.execute(lesson, {"id": f"probe {name}"})

    for sqlalchemy_first in (False, True):
        with pytest.raises(RuntimeError, match="abort"):
            with mem.store.write() as conn:
                both(conn, f"rolled back {sqlalchemy_first}", sqlalchemy_first)
                raise RuntimeError("abort")
        with mem.store.write() as conn:
            both(conn, f"kept {sqlalchemy_first}", sqlalchemy_first)
    with pytest.raises(webmem.StoreError):
        with mem.store.write() as conn:
            mem.start_run(goal="rolled back by a failed statement", start_url=SHOP)
            conn.execute(lesson, {"id": "probe kept True"})  # the key is taken
    with mem.store.read() as conn:
        assert sorted(conn.execute(select(runs.c.goal)).scalars()) == ["kept False", "kept True"]
        assert sorted(conn.execute(select(lessons.c.lesson_id).where(lessons.c.lesson_id.like("probe %")))
                      .scalars()) == ["probe kept False", "probe kept True"]
    if mem.store.dialect == "sqlite":
        with mem.store.read() as conn:
            driver = conn.connection.driver_connection
            with mem.store.write() as writer:  # a write inside a read: a connection of its own
                assert writer is not conn
                mem.start_run(goal="written inside a read", start_url=SHOP)
            assert driver.in_transaction
        assert not driver.in_transaction
        with mem.store.read() as again:
            assert again is conn  # the thread's connection, free again


def test_a_dry_run_write_rolls_back_and_runs_no_after_commit_work(mem: webmem.Memory) -> None:
    ran: list[str] = []
    before = mem.lessons.list()
    with mem.store.write(dry_run=True):
        mem.lessons.record("Close the cookie banner before clicking", "best_practice")
        mem.store.after_commit(lambda: ran.append("after"))
        assert len(mem.lessons.list()) == len(before) + 1  # visible inside the transaction
    assert mem.lessons.list() == before and ran == []
    with mem.store.write():
        with pytest.raises(webmem.StoreError, match="dry run"):
            with mem.store.write(dry_run=True):
                pass


def test_each_thread_keeps_its_connection_and_one_that_could_not_open_one_tries_again(
    sqlite_mem: webmem.Memory, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SQLite connections are kept per thread from transaction to transaction; a thread whose first
    connection failed to open (a file system hiccup) opens one at its next transaction."""
    store = sqlite_mem.store
    with store.read() as first:
        pass
    with store.read() as again:
        assert again is first  # kept, not checked out of a pool again
    real_connect = store.engine.connect
    failures = [OperationalError("connect", None, sqlite3.OperationalError("unable to open database file"))]

    def connect() -> Any:
        if failures:
            raise failures.pop()
        return real_connect()

    monkeypatch.setattr(store.engine, "connect", connect)
    seen: list[Any] = []

    def in_a_thread() -> None:
        for _ in range(2):
            try:
                seen.append(len(sqlite_mem.runs.list()))
            except webmem.StoreError as exc:
                seen.append(type(exc).__name__)
        with store.read() as conn:
            seen.append(conn is not first)

    worker = threading.Thread(target=in_a_thread)
    worker.start()
    worker.join()
    assert seen == ["StoreError", 0, True]


def test_a_new_database_held_locked_past_the_busy_timeout_is_opened_once_it_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fleet opening a new memory together: each process switches it to WAL, which needs the database to
    itself; one that another process keeps locked past SQLite's busy timeout tries again (up to
    LOCK_WAIT_SECONDS) instead of failing."""
    from webmem.store import sqlite_connections

    monkeypatch.setattr(sqlite_connections, "BUSY_TIMEOUT_MS", 100)
    tmp_path.mkdir(exist_ok=True)
    holder = sqlite3.connect(tmp_path / DB_FILE, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    released = threading.Timer(0.8, lambda: holder.execute("COMMIT"))
    released.start()
    began = time.monotonic()
    try:
        with webmem.Memory.open(tmp_path) as mem:
            assert mem.runs.list() == []
    finally:
        released.join()
        holder.close()
    assert time.monotonic() - began >= 0.7  # it waited for the lock rather than taking the database from under it
