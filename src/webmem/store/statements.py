"""Statements whose SQL differs between backends, written once for all of them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Table


def insert_ignoring_duplicates(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """Insert rows, silently skipping those whose primary key already exists."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    keys = [column.name for column in table.primary_key.columns]
    conn.execute(insert(table).on_conflict_do_nothing(index_elements=keys), list(rows))
