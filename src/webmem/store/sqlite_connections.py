"""SQLite's connections: each thread keeps its own, and transactions are begun and ended on the driver.

BEGIN and COMMIT are calls within the process on SQLite; SQLAlchemy's pool checkout and its transaction
objects around them cost more than they do. So a thread keeps its connections from transaction to
transaction (:class:`PinnedConnections`), and :class:`webmem.store.Store` begins and ends SQLite's
transactions on the driver itself (:func:`begin`, :func:`end`). A statement run through SQLAlchemy inside
such a transaction joins it: SQLAlchemy then begins a transaction of its own, which begins nothing on the
driver (:func:`on_sqlalchemy_begin`), and :func:`end` ends it with the driver's.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from ..core.errors import StoreError

BUSY_TIMEOUT_MS = 5_000
LOCK_WAIT_SECONDS = 60.0
#: A writer that finds SQLite's write lock taken tries again after 0.1 ms, then less and less often (at most every
#: 2 ms) for a quarter of a second, before leaving the wait to SQLite's busy handler: that one sleeps 1 ms, then
#: 2, 5, 10 ms..., while a step's write holds the lock for a fifth of a millisecond.
WRITE_RETRY_FIRST_SECONDS = 0.0001
WRITE_RETRY_LONGEST_SECONDS = 0.002
WRITE_RETRY_WINDOW_SECONDS = 0.25


def configure_connection(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
    """A new connection's settings (the engine's ``connect`` event)."""
    dbapi_conn.isolation_level = None  # transactions are begun by begin(), never by the driver
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _switch_to_wal(cursor)
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
    finally:
        cursor.close()


def _switch_to_wal(cursor: sqlite3.Cursor) -> None:
    """``PRAGMA journal_mode = WAL``, tried again while another process holds the lock it needs: processes
    opening a new database together each switch it, and one may wait past the busy timeout."""
    _while_busy(lambda: cursor.execute("PRAGMA journal_mode = WAL"))


def _while_busy(action: Callable[[], object]) -> None:
    """Run ``action``, again at growing intervals while SQLite says the database is locked, for up to
    LOCK_WAIT_SECONDS (then, or on any other error, its sqlite3.Error is raised)."""
    deadline = None
    pause = 0.01
    while True:
        try:
            action()
            return
        except sqlite3.Error as exc:
            deadline = deadline or time.monotonic() + LOCK_WAIT_SECONDS
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.5)


def on_sqlalchemy_begin(conn: Connection) -> None:
    """The engine's ``begin`` event: a transaction SQLAlchemy begins inside one of :class:`webmem.store.Store`'s
    joins it; one begun outside (the engine used directly) begins one on the driver."""
    driver = conn.connection.driver_connection
    if not driver.in_transaction:
        try:
            driver.execute("BEGIN")
        except sqlite3.Error as exc:
            raise DBAPIError.instance("BEGIN", None, exc, sqlite3.Error) from exc


def begin(driver: sqlite3.Connection, *, writable: bool, wait: bool = True) -> None:
    """Begin a transaction on the driver; a writer takes the write lock up front (upgrading a read lock later
    can fail at once with SQLITE_BUSY instead of waiting) and waits for it up to LOCK_WAIT_SECONDS, or not at
    all without ``wait`` (SQLITE_BUSY at once). Raises SQLAlchemy's DBAPIError (what :class:`webmem.store.Store`
    translates)."""

    def begun() -> None:
        if not _took_write_lock_soon(driver):
            driver.execute("BEGIN IMMEDIATE")

    try:
        if writable and not wait:
            _began_at_once(driver)
        elif writable:
            _while_busy(begun)
        else:
            driver.execute("BEGIN")  # deferred: it takes no lock, so it is never refused as busy
    except sqlite3.Error as exc:
        raise DBAPIError.instance("BEGIN", None, exc, sqlite3.Error) from exc


def end(conn: Connection, driver: sqlite3.Connection, *, commit: bool) -> None:
    """Commit or roll back the driver's transaction, and SQLAlchemy's when a statement began one inside it.
    Raises SQLAlchemy's DBAPIError."""
    if conn.in_transaction():
        if commit:
            conn.commit()
        else:
            conn.rollback()
        return
    try:
        if commit:
            driver.commit()
        else:
            driver.rollback()
    except sqlite3.Error as exc:
        raise DBAPIError.instance("COMMIT" if commit else "ROLLBACK", None, exc, sqlite3.Error) from exc


def _began_at_once(driver: sqlite3.Connection) -> None:
    """BEGIN IMMEDIATE without waiting: SQLITE_BUSY at once while another connection writes."""
    driver.execute("PRAGMA busy_timeout = 0")
    try:
        driver.execute("BEGIN IMMEDIATE")
    finally:
        driver.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _took_write_lock_soon(driver: sqlite3.Connection) -> bool:
    """BEGIN IMMEDIATE, tried again at short intervals while another connection writes; False when the lock
    stayed taken for WRITE_RETRY_WINDOW_SECONDS (the caller then waits as SQLite's busy handler does)."""
    driver.execute("PRAGMA busy_timeout = 0")
    try:
        deadline = time.monotonic() + WRITE_RETRY_WINDOW_SECONDS
        pause = WRITE_RETRY_FIRST_SECONDS
        while True:
            try:
                driver.execute("BEGIN IMMEDIATE")
                return True
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                    return False
            time.sleep(pause)
            pause = min(pause * 1.5, WRITE_RETRY_LONGEST_SECONDS)
    finally:
        driver.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def is_busy(exc: sqlite3.Error) -> bool:
    """SQLite's "database is locked" or "busy"."""
    message = str(exc).lower()
    return "locked" in message or "busy" in message


class Pin:
    """A thread's connection (``conn``, and ``driver``, its sqlite3 connection), ``busy`` while a transaction
    runs on it; closed with the thread's local storage when the thread ends."""

    __slots__ = ("conn", "driver", "pid", "busy", "__weakref__")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.driver: sqlite3.Connection = conn.connection.driver_connection
        self.pid = os.getpid()
        self.busy = False

    def usable(self) -> bool:
        return not self.conn.closed and not self.conn.invalidated

    def release(self) -> None:
        if self.pid == os.getpid() and not self.conn.closed:
            self.conn.close()  # the pool logs a driver's failure to close, and raises none

    def __del__(self) -> None:
        self.release()


class PinnedConnections:
    """The connections of each thread (and process), opened at its first transaction and kept until the
    store closes or the thread ends: usually one, another while a transaction of its own runs inside an
    open one (a write inside a read)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._local = threading.local()
        self._held: weakref.WeakSet[Pin] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._closed = False

    def take(self) -> Pin:
        """A connection of this thread with no transaction running, marked busy (the caller clears it)."""
        pins: list[Pin] | None = getattr(self._local, "pins", None)
        if not pins or pins[0].pid != os.getpid():
            pins = self._local.pins = []  # a forked child opens its own, never uses its parent's
        for pin in pins:
            if not pin.busy and pin.usable():
                pin.busy = True
                return pin
        if self._closed:
            raise StoreError("the memory is closed")
        pins[:] = [pin for pin in pins if pin.usable()]
        pin = Pin(self._engine.connect())
        pins.append(pin)
        with self._lock:
            self._held.add(pin)
        pin.busy = True
        return pin

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pins = list(self._held)
        for pin in pins:
            pin.release()
