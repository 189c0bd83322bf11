"""Stored rows, looked at and changed directly on either backend: as the user (deleting a record),
as the clock (ageing one), or as an auditor (is a secret anywhere in the database?).

Everything goes through the memory's own store, so on PostgreSQL row-level security shows and
accepts only the memory's namespace; on SQLite a raw statement sees every namespace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, String, Text, inspect, select, text, update

import webmem
from webmem.store import Store, schema


def execute(mem: webmem.Memory, statement: str, **params: Any) -> None:
    """Run a plain SQL statement (``:name`` parameters) in its own write transaction."""
    with mem.store.write() as conn:
        conn.execute(text(statement), params)


def count(mem: webmem.Memory, table: str, where: str = "1=1", **params: Any) -> int:
    """How many rows of ``table`` match ``where`` (``:name`` parameters)."""
    with mem.store.read() as conn:
        return int(conn.execute(text(f"SELECT count(*) FROM {table} WHERE {where}"), params).scalar_one())


def change(mem: webmem.Memory, table: str, where: dict[str, Any], **values: Any) -> int:
    """Set columns of the rows whose columns equal ``where``, with the column types (timestamps...)."""
    target = schema.metadata.tables[table]
    statement = update(target).where(*(target.c[name] == value for name, value in where.items())).values(**values)
    with mem.store.write() as conn:
        return int(conn.execute(statement).rowcount)


def value(mem: webmem.Memory, table: str, column: str, **where: Any) -> Any:
    """One column of the one row whose columns equal ``where``, typed (a timestamp is an aware datetime)."""
    target = schema.metadata.tables[table]
    with mem.store.read() as conn:
        return conn.execute(
            select(target.c[column]).where(*(target.c[name] == item for name, item in where.items()))
        ).scalar_one()


def values(mem: webmem.Memory, table: str, column: str, **where: Any) -> list[Any]:
    """One column of every row whose columns equal ``where``, typed."""
    target = schema.metadata.tables[table]
    with mem.store.read() as conn:
        return list(conn.execute(
            select(target.c[column]).where(*(target.c[name] == item for name, item in where.items()))
        ).scalars())


def dump(mem: webmem.Memory) -> str:
    """Every text and JSON column of every row of every table, as one string to search."""
    parts: list[str] = []
    with mem.store.read() as conn:
        for table in schema.metadata.sorted_tables:
            columns = [column for column in table.c if isinstance(column.type, String | Text | JSON)]
            if not columns:
                continue
            for row in conn.execute(select(*columns)):
                for item in row:
                    if item is not None:
                        parts.append(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False))
    return "\n".join(parts)


def stored_bytes(mem: webmem.Memory) -> bytes:
    """What the database holds, to search for a secret: on SQLite the bytes of its files (the
    database and its write-ahead log, as on disk now); on PostgreSQL every stored text (``dump``).
    """
    if mem.store.dialect == "sqlite":
        path = Path(mem.store.location)
        return b"".join(file.read_bytes() for file in (path, Path(f"{path}-wal")) if file.exists())
    return dump(mem).encode()


def open_store(location: str, *, namespace: str = "default") -> Store:
    """The bare store at a memory location (a directory or a PostgreSQL URL), without migrating it."""
    if location.startswith("postgresql://"):
        return Store.open_postgres(location, namespace=namespace)
    directory = Path(location)
    directory.mkdir(parents=True, exist_ok=True)
    return Store.open_sqlite(directory)


def schema_of(location: str) -> dict[str, Any]:
    """Tables, columns, keys and indexes of a database, as SQLAlchemy reflects them."""
    store = open_store(location)
    try:
        with store.read() as conn:
            insp = inspect(conn)
            shape: dict[str, Any] = {}
            for table in sorted(insp.get_table_names()):
                shape[table] = {
                    "columns": {c["name"]: bool(c["nullable"]) for c in insp.get_columns(table)},
                    "pk": sorted(insp.get_pk_constraint(table)["constrained_columns"]),
                    "fks": sorted(
                        (tuple(fk["constrained_columns"]), fk["referred_table"], tuple(fk["referred_columns"]))
                        for fk in insp.get_foreign_keys(table)
                    ),
                    "unique": sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(table)),
                    "indexes": sorted(i["name"] for i in insp.get_indexes(table)),
                }
            return shape
    finally:
        store.close()
