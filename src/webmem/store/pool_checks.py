"""PostgreSQL's pooled connections, checked before use only when they may have been lost."""

from __future__ import annotations

import select
import time
from typing import Any

from sqlalchemy.exc import DisconnectionError

IDLE_PING_SECONDS = 5.0  # a PostgreSQL connection unused for longer is checked before it is used again


def ping_if_idle(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
    """A connection idle for a while is checked before use (the server may have closed it meanwhile), and so is
    one the server sent something to while it sat in the pool (a server that ends a session says so, then closes
    it); one in steady use is not: a ping on every checkout would cost a round trip per transaction."""
    if getattr(dbapi_conn, "broken", False) or getattr(dbapi_conn, "closed", False):
        raise DisconnectionError("the connection was lost")
    last = record.info.get("webmem_checked_in")
    if last is None or time.monotonic() - last < IDLE_PING_SECONDS and not _has_input(dbapi_conn):
        return
    import psycopg

    try:
        dbapi_conn.execute("SELECT 1")
        dbapi_conn.rollback()
    except psycopg.Error as exc:
        raise DisconnectionError(f"the connection was lost ({exc})") from exc


def _has_input(dbapi_conn: Any) -> bool:
    """Whether the server sent something to an idle connection (no wait: a look at its socket)."""
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(dbapi_conn.fileno(), select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([dbapi_conn.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        return True  # the ping says what became of it


def note_checkin(_dbapi_conn: Any, record: Any) -> None:
    record.info["webmem_checked_in"] = time.monotonic()
