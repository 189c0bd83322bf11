"""Statements compiled once and run on the driver's cursor (the write path) behave as SQLAlchemy's own:
the same stored values, secrets redacted, driver errors translated, nothing kept from a failed
transaction; on both backends."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pg_cluster
import psycopg
import pytest
import rows
from sqlalchemy import DateTime, bindparam, select

import webmem
from webmem.store import engine, pool_checks
from webmem.store.prepared import Prepared, _text_compiled, reading_ahead
from webmem.store.schema import runs, selectors
from webmem.store.statements import plain_select
from webmem.store.types import json_loads

SITE = "https://shop.example/"
SELECTOR_KEY = (selectors.c.namespace == bindparam("namespace"), selectors.c.domain == bindparam("domain"),
                selectors.c.element == bindparam("element"))
READ_ENTRY = Prepared(select(selectors.c.success_count, selectors.c.last_used, selectors.c.stable_selector)
                      .where(*SELECTOR_KEY))
INSERT_ENTRY = Prepared(selectors.insert())
READ_RUN = Prepared(select(runs.c.success, runs.c.artifact_paths, runs.c.replay, runs.c.started_at)
                    .where(runs.c.namespace == bindparam("ns"), runs.c.run_id == bindparam("run_id")))


def entry(mem: webmem.Memory, **changes: object) -> dict[str, object]:
    return {"namespace": mem.namespace, "domain": "shop.example", "element": 'button "Buy"',
            "stable_selector": "#buy", "last_ref": None, "success_count": 3,
            "last_used": datetime(2026, 3, 1, 12, 30, 5, 123456, tzinfo=timezone(timedelta(hours=2))),
            "stale_since": None, **changes}


def test_values_written_by_a_prepared_statement_read_back_as_sqlalchemy_reads_them(mem: webmem.Memory) -> None:
    with mem.store.write() as conn:
        INSERT_ENTRY.execute(conn, entry(mem)).close()
    with mem.store.read() as conn:  # read by SQLAlchemy
        listed = conn.execute(select(selectors).where(selectors.c.namespace == mem.namespace)).one()
    assert listed.last_used == datetime(2026, 3, 1, 10, 30, 5, 123456, tzinfo=UTC)  # stored as UTC, given as +02:00
    assert (listed.success_count, listed.stable_selector) == (3, "#buy")
    mem.selectors.record("shop.example", 'button "Buy"', "#buy-now")  # an upsert by a prepared statement
    with mem.store.read() as conn:
        count, used, selector = READ_ENTRY.first(conn, {"namespace": mem.namespace, "domain": "shop.example",
                                                        "element": 'button "Buy"'})
    assert (count, selector) == (4, "#buy-now") and used.tzinfo is not None and used > listed.last_used


@pytest.mark.parametrize("moment", [
    datetime(2026, 3, 1, 12, 30, 5, 123456, tzinfo=timezone(timedelta(hours=2))),
    datetime(2026, 3, 1, 10, 30, 5, tzinfo=UTC),  # no microseconds: still written out (texts are compared)
    datetime(999, 1, 2, 3, 4, 5, 6),  # naive (taken as UTC), a year of three digits
])
def test_a_timestamp_is_stored_as_the_same_text_sqlalchemy_stores(mem: webmem.Memory, moment: datetime) -> None:
    with mem.store.write() as conn:
        INSERT_ENTRY.execute(conn, entry(mem, element="prepared", last_used=moment)).close()
        conn.execute(selectors.insert().values(entry(mem, element="sqlalchemy", last_used=moment)))
    with mem.store.read() as conn:
        stored = conn.exec_driver_sql(
            "SELECT element, CAST(last_used AS TEXT) FROM selectors WHERE namespace = '%s' ORDER BY element"
            % mem.namespace).all()
    assert stored[0][1] == stored[1][1], stored
    if mem.store.dialect == "sqlite":  # as SQLAlchemy's own DATETIME stores the UTC time
        dialect = mem.store.engine.dialect
        as_stored = DateTime().dialect_impl(dialect).bind_processor(dialect)
        assert stored[0][1] == as_stored(moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment)


def test_json_booleans_and_timestamps_come_back_typed(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Buy tea", start_url=SITE)
    run.update(artifact_paths=["out/a.png"])
    run.finish(success=True)
    with mem.store.read() as conn:
        success, paths, replay, started = READ_RUN.first(conn, {"ns": mem.namespace, "run_id": run.id})
    assert success is True and paths == ["out/a.png"] and replay is None
    assert started == mem.runs.get(run.id).started_at and started.tzinfo is not None


@pytest.mark.parametrize("text", ['{"a": [1, 2.5, "x", null, true]}', ' {"a": 1} ', "[]", "null", '"\u00e9"', '{"a": 1}x',
                                  "", " ", '{"a": ', b'{"a": 1}', "-Infinity"])
def test_stored_json_is_read_as_json_loads_reads_it(text: str | bytes) -> None:
    def outcome(loads: Any) -> Any:
        try:
            return loads(text)
        except ValueError as exc:
            return type(exc), str(exc)

    assert outcome(json_loads) == outcome(json.loads)


def test_a_timestamp_written_in_another_form_reads_back_as_sqlalchemy_reads_it(tmp_path: Path) -> None:
    """SQLite keeps timestamps as text: one written by hand or by another tool in another form is read as
    SQLAlchemy's DATETIME reads it, as UTC."""
    with webmem.Memory.open(tmp_path) as mem:
        dialect = mem.store.engine.dialect
        parse = DateTime().dialect_impl(dialect).result_processor(dialect, None)
        for text in ("2026-03-01 10:30:05", "2026-03-01T10:30:05.5", "2026-03-01 10:30:05.123456", "2026-03-01"):
            with mem.store.write() as conn:
                conn.exec_driver_sql("DELETE FROM selectors")
                INSERT_ENTRY.execute(conn, entry(mem)).close()
                conn.exec_driver_sql("UPDATE selectors SET last_used = ?", (text,))
            with mem.store.read() as conn:
                used = READ_ENTRY.first(conn, {"namespace": mem.namespace, "domain": "shop.example",
                                               "element": 'button "Buy"'})[1]
            assert used == parse(text).replace(tzinfo=UTC) and used.tzinfo is UTC, text


def test_a_registered_secret_never_reaches_the_database_through_a_prepared_statement(mem: webmem.Memory) -> None:
    mem.secrets.add("hunter2-horse-battery", name="api_key")
    run = mem.start_run(goal="Log in", start_url=SITE)
    # add_step is the registry's own write, below Run's redaction: the statement redacts by itself
    mem.runs.add_step(run.id, webmem.Step(action="fill", target='textbox "Key"', value="x",
                                          error="rejected key hunter2-horse-battery", url=SITE))
    assert b"hunter2-horse-battery" not in rows.stored_bytes(mem)
    assert mem.runs.steps(run.id)[0].error == "rejected key {api_key}"


def test_a_driver_error_is_a_store_error_and_the_transaction_keeps_nothing(mem: webmem.Memory) -> None:
    with mem.store.write() as conn:
        INSERT_ENTRY.execute(conn, entry(mem)).close()
    with pytest.raises(webmem.StoreError, match="selectors|UNIQUE|unique|duplicate"):
        with mem.store.write() as conn:
            INSERT_ENTRY.execute(conn, entry(mem, element='link "Home"')).close()
            INSERT_ENTRY.execute(conn, entry(mem)).close()  # the same key again
    assert [item.element for item in mem.selectors.list("shop.example")] == ['button "Buy"']


def test_a_step_for_a_finished_or_unknown_run_is_refused_by_the_registry(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Buy tea", start_url=SITE)
    step = webmem.Step(action="click", target='button "Buy"', url=SITE)
    assert mem.runs.add_step(run.id, step) == 1
    run.finish(success=False)
    with pytest.raises(webmem.RunClosed):
        mem.runs.add_step(run.id, step)
    with pytest.raises(webmem.RunNotFound):
        mem.runs.add_step("run_nobody", step)
    assert len(mem.runs.steps(run.id)) == 1 and mem.runs.get(run.id).turn_count == 1


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_postgres_connection_closed_by_the_server_is_replaced_and_the_write_done_once(
    mem: webmem.Memory, postgres: pg_cluster.Cluster, memory_location: str
) -> None:
    run = mem.start_run(goal="Buy tea", start_url=SITE)
    run.record_step(action="click", target='button "Tea"', selector="#tea", url=SITE)
    held = [mem.store.engine.connect() for _ in range(engine.POOL_CONNECTIONS)]  # the pool full of connections
    for connection in held:
        connection.close()
    database = memory_location.rsplit("/", 1)[1]
    with psycopg.connect(postgres.admin_url, autocommit=True) as admin:  # the server restarts, say
        closed = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                               "WHERE datname = %s AND pid <> pg_backend_pid()", (database,)).fetchone()
        # pg_terminate_backend only signals: wait until the sessions have ended (each tells its client first), as
        # after a restart; a write that races the end of its session is reported as possibly not stored instead
        deadline = time.monotonic() + 10
        while admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                            (database,)).fetchone()[0] and time.monotonic() < deadline:
            time.sleep(0.01)
    assert closed is not None and closed[0] >= engine.POOL_CONNECTIONS  # every one of them is dead now
    run.record_step(action="click", target='button "Buy"', selector="#buy", url=SITE)  # retried on a new one
    run.record_step(action="click", target='button "Pay"', selector="#pay", url=SITE)
    assert [step.target for step in run.steps] == ['button "Tea"', 'button "Buy"', 'button "Pay"']
    assert run.finish(success=True).status == "completed"


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_postgres_connection_idle_for_a_while_is_checked_before_a_read_uses_it(
    mem: webmem.Memory, postgres: pg_cluster.Cluster, memory_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = mem.start_run(goal="Buy tea", start_url=SITE)
    monkeypatch.setattr(pool_checks, "IDLE_PING_SECONDS", 0.0)  # every connection counts as idle
    database = memory_location.rsplit("/", 1)[1]
    with psycopg.connect(postgres.admin_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE datname = %s AND pid <> pg_backend_pid()", (database,))
    assert mem.runs.get(run.id).goal == "Buy tea"  # a read is not run again: the ping saw the closed one


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_reads_read_ahead_on_postgres_are_taken_once_each_with_their_own_parameters(
    mem: webmem.Memory, open_memory: Any
) -> None:
    """A context's reads go to PostgreSQL together, before they are asked for: the first read of each, with the
    same parameters, takes the rows read ahead; any other read of the block asks the database."""
    mem.knowledge.record_fact("shop.example", "quirk", "modal", "a cookie modal on load")
    other = open_memory()  # another process, say
    with mem.store.read() as conn, reading_ahead(conn, mem.knowledge.context_reads("shop.example")):
        other.knowledge.record_fact("shop.example", "quirk", "banner", "a banner on top")
        assert [fact.key for fact in mem.knowledge.facts("shop.example", min_confidence=0)] == ["modal"]
        assert {fact.key for fact in mem.knowledge.facts("shop.example", min_confidence=0)} == {"modal", "banner"}
        assert {fact.key for fact in mem.knowledge.facts("shop.example")} == {"modal", "banner"}  # other parameters
        assert mem.knowledge.sessions("shop.example") == []  # read ahead too: nothing then, nothing now
    with mem.store.read() as conn:
        assert {fact.key for fact in mem.knowledge.facts("shop.example", min_confidence=0)} == {"modal", "banner"}


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_finish_reads_its_steps_and_the_origins_stamp_ahead_together_on_postgres(
    mem: webmem.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A successful run's finish reads its steps and its origin's stamp (for the trajectory) in one pipeline, and
    the trajectory is saved as when they were read one by one."""
    from webmem.runs import registry as run_registry
    from webmem.trajectories import index

    watched = {id(run_registry._STEPS_OF_RUN): "steps", id(index._STAMP_AND_SNAPSHOT): "stamp"}
    seen: list[tuple[str, bool]] = []
    execute = Prepared.execute

    def noted(self: Prepared, conn: Any, params: Any) -> Any:
        if id(self) in watched:
            seen.append((watched[id(self)], bool(conn.connection.driver_connection.pgconn.pipeline_status)))
        return execute(self, conn, params)

    run = mem.start_run(goal="Buy tea", start_url="https://shop.example/")
    run.record_step(action="click", target='button "Buy"', selector="#buy", verified=True)
    monkeypatch.setattr(Prepared, "execute", noted)
    run.finish(success=True, outcome="bought")
    assert seen == [("steps", True), ("stamp", True)]
    (trajectory,) = mem.trajectories.list()
    assert [step.target for step in trajectory.steps] == ['button "Buy"']
    assert mem.trajectories.match("Buy tea", origin="https://shop.example").best.id == trajectory.id


def test_records_read_for_a_context_are_the_records_sqlalchemy_reads(mem: webmem.Memory) -> None:
    """Facts, sessions and selectors are read by prepared statements and built without validation:
    the records equal those validated from SQLAlchemy's own read of the same rows."""
    mem.knowledge.record_fact("shop.example", "quirk", "modal", "a cookie modal on load")
    mem.knowledge.record_session("shop.example", goal="Buy tea", outcome="bought", success=True,
                                 final_url="https://shop.example/done", turns_used=4, duration_ms=1200)
    mem.selectors.record("shop.example", 'button "Buy"', "#buy")
    from webmem.store.schema import facts, sessions

    with mem.store.read() as conn:
        fact_row = conn.execute(select(facts).where(facts.c.namespace == mem.namespace)).one()._mapping
        session_row = conn.execute(select(sessions).where(sessions.c.namespace == mem.namespace)).one()._mapping
        selector_row = conn.execute(select(selectors).where(selectors.c.namespace == mem.namespace)).one()._mapping
    fact = webmem.Fact.model_validate({name: fact_row[name] for name in webmem.Fact.model_fields})
    session = webmem.Session.model_validate({**{name: session_row[name] for name in webmem.Session.model_fields
                                                if name in session_row},
                                             "id": session_row["session_id"], "timestamp": session_row["recorded_at"]})
    entry_ = webmem.SelectorEntry.model_validate({name: selector_row[name]
                                                  for name in webmem.SelectorEntry.model_fields})
    for read, expected in ((mem.knowledge.facts("shop.example"), fact), (mem.knowledge.sessions("shop.example"), session),
                           (mem.selectors.list("shop.example"), entry_)):
        assert read == [expected]
        assert read[0].model_dump() == expected.model_dump() and list(read[0].__dict__) == list(expected.__dict__)
        assert read[0].model_fields_set == expected.model_fields_set


def test_a_record_built_without_validation_is_the_one_model_construct_builds() -> None:
    from pydantic import BaseModel, Field

    from webmem.core.records import stored_record

    when = datetime(2026, 3, 1, tzinfo=UTC)
    names = ["success_count", "domain", "element", "stable_selector", "last_ref", "last_used", "stale_since"]
    row = [3, "shop.example", 'button "Buy"', "#buy", None, when, None]
    built = stored_record(webmem.SelectorEntry, names, row)
    constructed = webmem.SelectorEntry.model_construct(**dict(zip(names, row)))
    assert built == constructed and built.model_dump() == constructed.model_dump()
    assert list(built.__dict__) == list(webmem.SelectorEntry.model_fields)  # in the fields' order, as validated

    step_names = [name for name in webmem.Step.model_fields if name != "label"]  # a field with a default left out
    step_row = ["click", None, 'button "Buy"', "#buy", None, True, True, None, None, None, 12, 2, 3]
    step_row += [None] * (len(step_names) - len(step_row))  # the optional fields after target_count
    step = stored_record(webmem.Step, step_names, step_row)
    assert step == webmem.Step.model_construct(**dict(zip(step_names, step_row))) and step.label is None
    assert step.model_fields_set == set(step_names) and list(step.__dict__) == list(webmem.Step.model_fields)

    class Aliased(BaseModel):
        name: str = Field(alias="label")
        count: int = 0

    assert stored_record(Aliased, ["label"], ["x"]) == Aliased.model_construct(label="x")  # the slow path
    assert stored_record(Aliased, ["label"], ["x"]).count == 0


def test_named_rows_carry_the_column_names(mem: webmem.Memory) -> None:
    mem.selectors.record("shop.example", 'button "Buy"', "#buy")
    with mem.store.read() as conn:
        [row] = READ_ENTRY.named_rows(conn, {"namespace": mem.namespace, "domain": "shop.example",
                                             "element": 'button "Buy"'})
    assert (row.success_count, row.stable_selector) == (1, "#buy") and row.last_used.tzinfo is not None


def test_sql_text_runs_without_sqlalchemy_compiling_it_and_reads_as_sqlalchemy_reads_it(mem: webmem.Memory) -> None:
    for element, count in (('button "Buy"', 3), ('button "Bag"', 1), ('link "Home"', 7), ("100% off", 2)):
        for _ in range(count):
            mem.selectors.record("shop.example", element, "#x")
    statement = plain_select(
        (selectors.c.element, selectors.c.success_count, selectors.c.last_used),
        "namespace = :ns AND domain = :domain AND (element LIKE 'button%' OR element LIKE '%\\% off' ESCAPE '\\')"
        " AND success_count >= :least", order_by="element")
    assert _text_compiled(statement, mem.store.engine.dialect) is None  # a backslash: SQLAlchemy compiles it
    statement = plain_select(
        (selectors.c.element, selectors.c.success_count, selectors.c.last_used),
        "namespace = :ns AND domain = :domain AND (element LIKE 'button%' OR element LIKE '1__% off')"
        " AND success_count >= :least", order_by="element")
    quick = _text_compiled(statement, mem.store.engine.dialect)
    assert quick is not None and quick.names == ("ns", "domain", "least")
    params = {"ns": mem.namespace, "domain": "shop.example", "least": 2}
    with mem.store.read() as conn:
        read = Prepared(statement).rows(conn, params)
        expected = [tuple(row) for row in conn.execute(statement, params)]
    assert read == expected == [("100% off", 2, read[0][2]), ('button "Buy"', 3, read[1][2])]
    assert all(row[2].tzinfo is not None for row in read)  # typed by the columns, as SQLAlchemy types them
