"""Looking at a store as a whole: record counts, integrity, WAL state, orphaned records.

These are maintenance reads across every table, used by ``webmem stats`` and ``webmem doctor``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Table, func, select, text

from . import schema

COUNTED = {
    "runs": schema.runs, "steps": schema.run_steps, "trajectories": schema.trajectories,
    "sessions": schema.sessions, "facts": schema.facts, "selectors": schema.selectors,
    "lessons": schema.lessons, "episode_entries": schema.episode_entries, "patterns": schema.patterns,
    "working_entries": schema.working_entries,
}


def counts(conn: Connection, namespace: str) -> dict[str, Any]:
    """Records of each kind in the namespace, in total and per domain where the kind has one."""
    result: dict[str, Any] = {}
    for kind, table in COUNTED.items():
        total = conn.execute(select(func.count()).select_from(table).where(table.c.namespace == namespace)).scalar_one()
        entry: dict[str, Any] = {"total": total}
        if "domain" in table.c:
            rows = conn.execute(
                select(table.c.domain, func.count()).where(table.c.namespace == namespace).group_by(table.c.domain)
            ).all()
            entry["by_domain"] = {row[0] or "(any)": row[1] for row in rows}
        result[kind] = entry
    return result


def namespaces(conn: Connection) -> list[str]:
    found: set[str] = set()
    for table in COUNTED.values():
        found |= set(conn.execute(select(table.c.namespace).distinct()).scalars())
    return sorted(found)


def orphans(conn: Connection, namespace: str) -> dict[str, int]:
    """Records that point at a run or session that is not there (some are expected after pruning)."""
    runs = schema.runs
    checks: dict[str, tuple[Table, Any]] = {
        "trajectories without their run": (schema.trajectories, schema.trajectories.c.run_id),
        "sessions without their run": (schema.sessions, schema.sessions.c.run_id),
        "lesson provenance without its run": (schema.lesson_runs, schema.lesson_runs.c.run_id),
        "working memory without its run": (schema.working_entries, schema.working_entries.c.run_id),
    }
    known = select(runs.c.run_id).where(runs.c.namespace == namespace)
    found = {}
    for label, (table, column) in checks.items():
        found[label] = conn.execute(
            select(func.count()).select_from(table).where(
                table.c.namespace == namespace, column.is_not(None), column.not_in(known)
            )
        ).scalar_one()
    episodes = schema.episode_entries
    sessions = select(schema.episode_sessions.c.session_id).where(schema.episode_sessions.c.namespace == namespace)
    found["episode entries without their session"] = conn.execute(
        select(func.count()).select_from(episodes).where(
            episodes.c.namespace == namespace, episodes.c.session_id.not_in(sessions)
        )
    ).scalar_one()
    return found


def health(conn: Connection, location: str) -> dict[str, Any]:
    """Integrity, journal mode and sizes of the store's database, on either backend."""
    if conn.dialect.name == "sqlite":
        return sqlite_health(conn, location)
    # PostgreSQL checks its pages itself and always writes ahead; its WAL belongs to the whole server.
    size = conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
    return {"integrity": "ok", "journal_mode": "wal", "database_bytes": int(size), "wal_bytes": 0}


def sqlite_health(conn: Connection, path: str) -> dict[str, Any]:
    """Integrity check, journal mode, and the database and WAL file sizes."""
    integrity = [row[0] for row in conn.exec_driver_sql("PRAGMA integrity_check").all()]
    journal = conn.exec_driver_sql("PRAGMA journal_mode").scalar()
    wal = Path(f"{path}-wal")
    return {
        "integrity": "ok" if integrity == ["ok"] else integrity[:20],
        "journal_mode": journal,
        "database_bytes": os.path.getsize(path) if os.path.exists(path) else 0,
        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
    }
