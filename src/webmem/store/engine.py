"""The store: one SQLAlchemy engine, transactions that nest, and driver errors translated."""

from __future__ import annotations

import functools
import itertools
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.pool import NullPool

from ..core.errors import InvalidInput, StoreCorrupt, StoreError, StoreLocked, StoreReadOnly
from ..core.locations import DB_FILE
from . import sqlite_connections as sqlite
from .pool_checks import note_checkin, ping_if_idle
from .types import json_loads

RETRY_ATTEMPTS = 5
T = TypeVar("T")
#: How long a write that gives way (``write_if_free``) lets PostgreSQL wait for a lock before it gives up.
GIVE_WAY_LOCK_TIMEOUT_MS = 1
POOL_CONNECTIONS = 5  # PostgreSQL connections kept open per memory (more are opened, then closed, under load)
_SERIAL = "webmem_serial"
_SERIALS = itertools.count(1)  # a number per connection opened, never reused (unlike id())


@dataclass
class _Transaction:
    conn: Connection
    writable: bool
    after_commit: list[Callable[[], None]] = field(default_factory=list)


@dataclass
class _Together:
    """Deferred items handed to their ``flush`` in one call."""

    flush: Callable[[list[Any]], None]
    items: list[Any]

    def __call__(self) -> None:
        self.flush(self.items)


class Store:
    """A database that components read and write through.

    ``read()`` and ``write()`` open a transaction and yield its connection. Inside an open
    transaction (in the same thread or task) they join it instead, so that a facade can make
    several components' writes one atomic unit. ``after_commit`` defers work such as event
    emission until the outermost transaction has committed.
    """

    def __init__(self, engine: Engine, *, location: str, pinned: bool = False) -> None:
        self.engine = engine
        self.location = location
        self._active: ContextVar[_Transaction | None] = ContextVar(f"webmem_tx_{id(self)}", default=None)
        # SQLite: each thread keeps its connections from transaction to transaction (a checkout from a pool
        # and back costs more than the transaction's own BEGIN and COMMIT); PostgreSQL's come from its pool
        self._pinned = sqlite.PinnedConnections(engine) if pinned else None

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @classmethod
    def open_sqlite(cls, directory: Path) -> Store:
        path = directory / DB_FILE
        engine = create_engine(
            f"sqlite:///{path}",
            connect_args={"check_same_thread": False, "timeout": sqlite.BUSY_TIMEOUT_MS / 1000},
            poolclass=NullPool,  # each thread's connection is kept by the store itself (PinnedConnections)
            json_deserializer=json_loads,
        )
        event.listen(engine, "connect", sqlite.configure_connection)
        event.listen(engine, "begin", sqlite.on_sqlalchemy_begin)
        store = cls(engine, location=str(path), pinned=True)
        try:
            with store.read() as conn:  # surfaces a corrupt or foreign file now, not at first use
                conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar()
        except BaseException:
            engine.dispose()
            raise
        return store

    @classmethod
    def open_postgres(cls, url: str, *, namespace: str) -> Store:
        """A PostgreSQL store; each transaction carries the namespace for row-level security."""
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise ImportError("PostgreSQL support needs: pip install 'webmem[postgres]'") from None
        try:
            parsed = make_url(url).set(drivername="postgresql+psycopg")
        except ArgumentError as exc:
            raise StoreError(f"not a PostgreSQL URL: {exc}") from None
        engine = create_engine(parsed, pool_size=POOL_CONNECTIONS, max_overflow=10)
        event.listen(engine, "checkout", ping_if_idle)
        event.listen(engine, "checkin", note_checkin)

        def bind_namespace(dbapi_conn: Any, _record: Any) -> None:
            # every connection of this engine serves one namespace: set it once, for the session
            with dbapi_conn.cursor() as cursor:
                cursor.execute("SELECT set_config('webmem.namespace', %s, false)", (namespace,))
            dbapi_conn.commit()

        event.listen(engine, "connect", bind_namespace)
        store = cls(engine, location=parsed.render_as_string(hide_password=True))
        try:
            with store.read() as conn:
                conn.exec_driver_sql("SELECT 1").scalar()
        except BaseException:
            engine.dispose()
            raise
        return store

    def close(self) -> None:
        if self._pinned is not None:
            self._pinned.close()
        self.engine.dispose()

    def retrying(self, work: Callable[[], T]) -> T:
        """Run ``work`` (which opens its own transactions) again when the database reports a
        serialization failure or a deadlock: PostgreSQL asks clients to retry those.

        A connection lost before the commit (the server restarted, or closed it) is retried on a new one;
        one lost during the commit is not (whether the change was stored is unknown) and is reported.
        Inside an open transaction the failure goes up as it is: only the outermost transaction,
        which the server rolled back whole, can be run again.
        """
        if self._active.get() is not None:
            return work()
        attempt = 0
        while True:
            attempt += 1
            try:
                return work()
            except StoreError as exc:
                cause = exc.__cause__
                if not isinstance(cause, DBAPIError) or not _is_retryable(cause):
                    raise
                # after a server restart every pooled connection is dead: each fails once, then a new one serves
                if attempt >= (POOL_CONNECTIONS + 1 if cause.connection_invalidated else RETRY_ATTEMPTS):
                    raise
                time.sleep(0.01 * attempt if not cause.connection_invalidated else 0)

    def write_if_free(self, work: Callable[[Connection], None]) -> bool:
        """Run ``work`` in a write transaction of its own if one can begin at once and ``work`` waits for no lock,
        and say whether it ran: for what a read may write back to spare later reads some work, which must neither
        make the read wait for another writer nor fail because of one. Nothing is written (False) when another
        writer holds what it needs (SQLite's write lock, a row on PostgreSQL) or the database takes no writes (a
        standby); any other error goes up. Run it outside any transaction, as ``after_commit`` work runs."""
        try:
            with self._transaction(writable=True, wait=False) as conn:
                if self._pinned is None:
                    conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{GIVE_WAY_LOCK_TIMEOUT_MS}ms'")
                work(conn)
        except StoreReadOnly:
            return False
        except StoreError as exc:
            cause = exc.__cause__
            if isinstance(cause, DBAPIError) and _held_by_another(cause):
                return False
            raise
        return True

    def read(self) -> AbstractContextManager[Connection]:
        """A read transaction. On PostgreSQL its statements run in autocommit: at READ COMMITTED (webmem's
        level) each statement of a transaction reads as of its own start anyway, and BEGIN and COMMIT would
        cost a round trip each."""
        active = self._active.get()
        if active is not None:
            return nullcontext(active.conn)
        if self._pinned is None:
            return self._autocommitted_read()
        return self._sqlite_transaction(writable=False, dry_run=False)

    @contextmanager
    def _autocommitted_read(self) -> Iterator[Connection]:
        with self._autocommitted() as conn:
            tx = _Transaction(conn, writable=False)
            token = self._active.set(tx)
            try:
                yield conn
            finally:
                self._active.reset(token)
        for callback in tx.after_commit:
            callback()

    @contextmanager
    def write(self, *, dry_run: bool = False) -> Iterator[Connection]:
        """A write transaction; with ``dry_run`` it is rolled back at the end instead of committed
        (for commands that report what they would change) and runs no ``after_commit`` work."""
        active = self._active.get()
        if active is not None and active.writable:
            if dry_run:
                raise StoreError("a dry run cannot join a write transaction that is already open")
            yield active.conn
            return
        with self._transaction(writable=True, dry_run=dry_run) as conn:
            yield conn

    def runs_alone(self) -> bool:
        """Whether a single statement written now would be a transaction of its own on the server: on PostgreSQL
        outside an open write transaction (see :meth:`write_alone`). Never on SQLite, where BEGIN and COMMIT
        are calls within the process, not round trips."""
        if self._pinned is not None:
            return False
        active = self._active.get()
        return active is None or not active.writable

    @contextmanager
    def write_alone(self) -> Iterator[Connection]:
        """A connection for one statement that is its own transaction (autocommit): one round trip to
        PostgreSQL where a transaction of it takes three (BEGIN, it, COMMIT). Run exactly one statement
        with it. Where :meth:`runs_alone` is False it is :meth:`write`.

        A connection lost during the statement is reported as lost at a commit: whether the statement was
        stored is unknown, so it is never run again (see :meth:`retrying`)."""
        if not self.runs_alone():
            with self.write() as conn:
                yield conn
            return
        with self._autocommitted(writes=True) as conn:
            yield conn

    @contextmanager
    def _autocommitted(self, *, writes: bool = False) -> Iterator[Connection]:
        """A PostgreSQL connection from the pool in autocommit, for the time of the block."""
        with _translated_errors(self.location):
            conn = self.engine.connect()
            try:
                driver = conn.connection.driver_connection
                driver.autocommit = True
                try:
                    yield conn
                except DBAPIError as exc:
                    if writes:
                        exc.webmem_at_commit = True  # type: ignore[attr-defined]  (see write_alone)
                    raise
                finally:
                    if not driver.closed:
                        driver.autocommit = False
            finally:
                conn.close()

    def read_mark(self, topic: str) -> tuple[int, int, int] | None:
        """In a read-only SQLite transaction, a value that is the same in two transactions of a thread only if
        nothing it may depend on changed in between: no other connection committed (SQLite's ``data_version``)
        and this connection wrote nothing under ``topic`` (:meth:`note_change`). It also starts the read, so
        what the transaction reads next is as of this value. None elsewhere (PostgreSQL, write transactions):
        read what may have changed."""
        active = self._active.get()
        if self._pinned is None or active is None or active.writable:
            return None
        record = active.conn.connection
        info = record.info
        serial = info.get(_SERIAL)
        if serial is None:
            serial = info[_SERIAL] = next(_SERIALS)
        version = record.driver_connection.execute("PRAGMA data_version").fetchone()[0]
        return serial, info.get(topic, 0), version

    @staticmethod
    def note_change(conn: Connection, topic: str) -> None:
        """Count a write under ``topic`` on this connection (see :meth:`read_mark`)."""
        info = conn.connection.info
        info[topic] = info.get(topic, 0) + 1

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the current transaction commits, or now if there is none."""
        active = self._active.get()
        if active is None:
            callback()
        else:
            active.after_commit.append(callback)

    def after_commit_together(self, flush: Callable[[list[Any]], None], *items: Any) -> None:
        """Hand ``items`` to ``flush`` once the current transaction commits (now if there is none); the items
        given for the same ``flush`` one after another go to it in one call, in order."""
        active = self._active.get()
        if active is None:
            flush(list(items))
            return
        pending = active.after_commit
        if pending and isinstance(pending[-1], _Together) and pending[-1].flush == flush:
            pending[-1].items.extend(items)
        else:
            pending.append(_Together(flush, list(items)))

    def _transaction(self, *, writable: bool, dry_run: bool = False, wait: bool = True
                     ) -> AbstractContextManager[Connection]:
        if self._pinned is not None:
            return self._sqlite_transaction(writable=writable, dry_run=dry_run, wait=wait)
        return self._pooled_transaction(writable=writable, dry_run=dry_run)

    @contextmanager
    def _sqlite_transaction(self, *, writable: bool, dry_run: bool, wait: bool = True) -> Iterator[Connection]:
        """A transaction begun and ended on the driver of one of this thread's connections (see
        :mod:`.sqlite_connections`)."""
        assert self._pinned is not None
        with _translated_errors(self.location):
            pin = self._pinned.take()
            conn, driver = pin.conn, pin.driver
            try:
                sqlite.begin(driver, writable=writable, wait=wait)
                tx = _Transaction(conn, writable)
                token = self._active.set(tx)
                try:
                    yield conn
                    if dry_run:
                        sqlite.end(conn, driver, commit=False)
                        return
                    try:
                        sqlite.end(conn, driver, commit=True)
                    except DBAPIError as exc:
                        exc.webmem_at_commit = True  # type: ignore[attr-defined]  (never run again: see retrying)
                        raise
                except BaseException:
                    if not conn.invalidated and (conn.in_transaction() or driver.in_transaction):
                        sqlite.end(conn, driver, commit=False)
                    raise
                finally:
                    self._active.reset(token)
            finally:
                pin.busy = False
                if conn.invalidated:
                    conn.close()
        for callback in tx.after_commit:
            callback()

    @contextmanager
    def _pooled_transaction(self, *, writable: bool, dry_run: bool) -> Iterator[Connection]:
        with _translated_errors(self.location):
            conn = self.engine.connect()
            try:
                transaction = conn.begin()
            except BaseException:
                conn.close()
                raise
            tx = _Transaction(conn, writable)
            token = self._active.set(tx)
            try:
                yield conn
                if dry_run:
                    transaction.rollback()
                    return
                try:
                    transaction.commit()
                except DBAPIError as exc:
                    exc.webmem_at_commit = True  # type: ignore[attr-defined]  (never run again: see retrying)
                    raise
            except BaseException:
                if transaction.is_active:
                    transaction.rollback()
                raise
            finally:
                self._active.reset(token)
                conn.close()
        for callback in tx.after_commit:
            callback()


def retried(method: Callable[..., T]) -> Callable[..., T]:
    """A component's method that writes in a transaction of its own, run again after a deadlock or
    a serialization failure (see ``Store.retrying``); the component reaches its store as
    ``self._scope.store``.
    """
    @functools.wraps(method)
    def run_again_on_conflict(self: Any, *args: Any, **kwargs: Any) -> T:
        return self._scope.store.retrying(lambda: method(self, *args, **kwargs))

    return run_again_on_conflict


def _is_retryable(exc: DBAPIError) -> bool:
    """A serialization failure or a deadlock, or a connection lost before the commit was sent."""
    if exc.connection_invalidated and not getattr(exc, "webmem_at_commit", False):
        return True
    return getattr(exc.orig, "sqlstate", None) in ("40001", "40P01")


def _held_by_another(exc: DBAPIError) -> bool:
    """Whether a write that gives way (see ``Store.write_if_free``) found what it needs held by another writer:
    SQLite's write lock, or a lock PostgreSQL did not grant within ``GIVE_WAY_LOCK_TIMEOUT_MS`` (lock not
    available)."""
    return _is_busy(exc) or getattr(exc.orig, "sqlstate", None) == "55P03"


_READ_ONLY_TRANSACTION = "25006"  # PostgreSQL's SQLSTATE for a write in a read-only transaction


def _is_busy(exc: DBAPIError) -> bool:
    """SQLite's "database is locked" (PostgreSQL waits for locks itself; its deadlocks are not this)."""
    return isinstance(exc.orig, sqlite3.Error) and sqlite.is_busy(exc.orig)


class _translated_errors:
    """The driver's errors as webmem's inside the block (a class, not a generator: every transaction enters one)."""

    __slots__ = ("_location",)

    def __init__(self, location: str) -> None:
        self._location = location

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        if isinstance(exc, DBAPIError):
            raise _translate(exc, self._location) from exc
        if isinstance(exc, UnicodeEncodeError):  # a text the database cannot hold: a lone surrogate, from any caller
            raise InvalidInput(f"a text is not valid Unicode ({exc.reason}: {exc.object[exc.start:exc.end]!r} "
                               f"at position {exc.start})") from None


def _translate(exc: DBAPIError, location: str) -> StoreError:
    message = str(exc.orig)
    lowered = message.lower()
    if exc.connection_invalidated and getattr(exc, "webmem_at_commit", False):
        return StoreError(f"the connection to {location} was lost while committing: the change may not have been "
                          f"stored ({message.strip().splitlines()[0] if message.strip() else 'no detail'})")
    if _is_busy(exc):
        return StoreLocked(
            f"the database {location} stayed locked by another process for more than {sqlite.LOCK_WAIT_SECONDS:.0f}s"
        )
    if getattr(exc.orig, "sqlstate", None) == _READ_ONLY_TRANSACTION:
        return StoreReadOnly(f"the database {location} takes no writes (a standby, or default_transaction_read_only "
                             "is on): reading works, writing needs the primary or a writable database")
    if "not a database" in lowered or "malformed" in lowered or "file is encrypted" in lowered or \
            "could not decode to utf-8" in lowered:
        return StoreCorrupt(f"{location} is not a webmem database or is damaged ({message})")
    if ("unable to open" in lowered or "readonly database" in lowered) and _read_only(location):
        return StoreError(f"cannot open the database {location}: its file system is read-only, and webmem "
                          "writes there even to read (the WAL and its index); copy the memory directory "
                          "to a writable place to look inside it")
    if "unable to open" in lowered or "connection" in lowered and "failed" in lowered:
        return StoreError(f"cannot open the database {location} ({message.strip().splitlines()[0]})")
    return StoreError(f"database error on {location}: {message}")


def _read_only(location: str) -> bool:
    """Whether the file system holding the SQLite file at ``location`` is mounted read-only."""
    try:
        return bool(os.statvfs(Path(location).parent).f_flag & os.ST_RDONLY)
    except (OSError, ValueError):  # not a path (a PostgreSQL URL), or gone
        return False
