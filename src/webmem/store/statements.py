"""Statements whose SQL differs between backends, written once for all of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Connection, Table, TextClause, select, text
from sqlalchemy.dialects import postgresql, sqlite


def _insert(conn: Connection) -> Any:
    """The INSERT construct of the connection's dialect, which knows ON CONFLICT."""
    return dialect_insert(conn.dialect.name)


def dialect_insert(dialect: str) -> Any:
    """The INSERT construct of the dialect named ``dialect``, which knows ON CONFLICT."""
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


def insert_ignoring_duplicates(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert rows, silently skipping those whose primary key already exists."""
    if not rows:
        return
    keys = [column.name for column in table.primary_key.columns]
    conn.execute(_insert(conn)(table).on_conflict_do_nothing(index_elements=keys), list(rows))


def upsert(conn: Connection, table: Table, row: dict[str, Any], *, update: Sequence[str]) -> None:
    """Insert a row, or update the given columns of the row with the same primary key."""
    keys = [column.name for column in table.primary_key.columns]
    statement = _insert(conn)(table).values(**row)
    conn.execute(statement.on_conflict_do_update(
        index_elements=keys, set_={name: statement.excluded[name] for name in update}
    ))


def insert_or_change(
    conn: Connection, table: Table, row: dict[str, Any], *, keys: Sequence[str], changes: dict[str, Any]
) -> None:
    """Insert a row; if one with the same ``keys`` exists (a race lost), apply ``changes`` to it instead.

    ``changes`` maps column names to SQL expressions over the existing row, so counters stay atomic.
    """
    statement = _insert(conn)(table).values(**row)
    conn.execute(statement.on_conflict_do_update(index_elements=list(keys), set_=changes))


def serialize_on(conn: Connection, key: str) -> None:
    """Make concurrent transactions that check-then-insert under ``key`` take turns.

    PostgreSQL: a transaction-scoped advisory lock. SQLite: nothing to do, since its write
    transactions already hold the database's write lock from their first statement.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": key})


def lock_rows(conn: Connection, table: Table, condition: Any) -> None:
    """Lock the rows matching ``condition`` one after the other in primary-key order, before a
    statement that updates several of them.

    PostgreSQL: an UPDATE locks rows in the order it finds them, which differs between
    transactions, so two of them updating the same rows can deadlock; locking in one order makes
    the second wait instead. SQLite: nothing to do (one writer at a time).
    """
    if conn.dialect.name == "postgresql":
        keys = list(table.primary_key.columns)
        conn.execute(select(*keys).where(condition).order_by(*keys).with_for_update())


def plain_select(columns: Sequence[Column[Any]], where: str, *, order_by: str = "") -> TextClause:
    """``SELECT columns FROM their table WHERE where``, written as SQL text with the columns' types.

    For the statements a hot path runs in every new process: SQLAlchemy compiles text in
    microseconds where it needs a millisecond for a ``select()``; results are typed the same.
    """
    table = columns[0].table
    names = ", ".join(column.name for column in columns)
    sql = f"SELECT {names} FROM {table.name} WHERE {where}" + (f" ORDER BY {order_by}" if order_by else "")
    return text(sql).columns(*columns)


def new_keys(conn: Connection, key: Column[Any], scope: Any, keys: Sequence[str]) -> list[bool]:
    """For each of ``keys``, whether it is new: no row matching ``scope`` has it in column ``key``, and it
    did not come earlier in ``keys`` (rows are read 500 keys at a time)."""
    present: set[str] = set()
    for start in range(0, len(keys), 500):
        present.update(conn.execute(select(key).where(scope, key.in_(keys[start:start + 500]))).scalars())
    new = []
    for item in keys:
        new.append(item not in present)
        present.add(item)
    return new
