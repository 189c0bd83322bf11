"""Statements built and compiled once, then run straight on the driver's cursor.

SQLAlchemy spends tens of microseconds building, caching and wrapping every ``conn.execute``;
for the write path (a step recorded, a run finished, a bulk import) that is most of the cost.
A :class:`Prepared` statement is written once with SQLAlchemy's constructs (so the SQL still
comes from the schema, with each dialect's quoting and casts), compiled once per dialect, and
run on the DBAPI cursor of the connection's open transaction, with the columns' own type
conversions applied to parameters and results, and free-text parameters redacted with the
memory's secrets exactly as every other statement's are.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.elements import TextClause
from sqlalchemy.sql.selectable import TextualSelect
from sqlalchemy.sql.sqltypes import NullType

from .redacting import redacted_value, secrets_for, text_kind

Processor = Callable[[Any], Any] | None
StatementFactory = Callable[[str], ClauseElement]


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]  # every parameter the SQL takes, in order for a positional paramstyle
    positional: bool
    defaults: Mapping[str, Any]  # literal values the statement carries itself
    binders: tuple[Processor, ...]  # one per name
    text_kinds: tuple[tuple[int, bool], ...]  # (position, is JSON) of each free-text parameter: redacted
    columns: tuple[Any, ...]  # the result columns
    driver_error: type[Exception]


class Prepared:
    """One statement, compiled once per dialect.

    ``statement`` is a SQLAlchemy construct with named ``bindparam()`` parameters, or a function of
    the dialect's name that builds it (for constructs that differ by dialect, such as an upsert).
    Run it inside a transaction opened by :class:`webmem.store.Store`.
    """

    def __init__(self, statement: ClauseElement | StatementFactory) -> None:
        self._statement = statement
        self._compiled: dict[str, _Compiled] = {}
        # per dialect, made at the first result: the position and the conversion of each column that has one
        self._readers: dict[str, list[tuple[int, Callable[[Any], Any]]]] = {}
        self._row_type: Any = None

    def execute(self, conn: Connection, params: Mapping[str, Any]) -> Any:
        """Run with ``params``; returns the driver's cursor (``rowcount``, rows still to read)."""
        compiled = self._compiled.get(conn.dialect.name) or self._for(conn.dialect)
        driver = conn.connection.driver_connection
        try:
            return driver.execute(compiled.sql, _bound(compiled, params, conn.engine))
        except compiled.driver_error as exc:
            raise _translated(conn, compiled, exc, driver) from exc

    def execute_many(self, conn: Connection, rows: Iterable[Mapping[str, Any]]) -> None:
        """Run once per mapping of ``rows``, in one driver call."""
        compiled = self._compiled.get(conn.dialect.name) or self._for(conn.dialect)
        batch = [_bound(compiled, row, conn.engine) for row in rows]
        if not batch:
            return
        driver = conn.connection.driver_connection
        cursor = driver.cursor()
        try:
            cursor.executemany(compiled.sql, batch)
        except compiled.driver_error as exc:
            raise _translated(conn, compiled, exc, driver) from exc
        finally:
            cursor.close()

    def rows(self, conn: Connection, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The result rows, each value converted as its column's type says (read ahead, when it was: see
        :func:`reading_ahead`)."""
        ahead = _READ_AHEAD.get()
        if ahead is not None and ahead[0] is conn:
            found = ahead[1].get(id(self))
            if found is not None and found[0] == params:
                del ahead[1][id(self)]
                return found[1]
        return self._taken(conn, self.execute(conn, params))

    def _taken(self, conn: Connection, cursor: Any) -> list[tuple[Any, ...]]:
        try:
            fetched = cursor.fetchall()
            if not fetched:
                return []
            converted = self._readers.get(conn.dialect.name)
            if converted is None:
                converted = self._readers[conn.dialect.name] = _readers(
                    self._compiled[conn.dialect.name].columns, cursor.description, conn.dialect
                )
        finally:
            cursor.close()
        if not converted:
            return [tuple(row) for row in fetched]
        rows = []
        for row in fetched:
            values = list(row)
            for index, read in converted:
                values[index] = read(values[index])
            rows.append(tuple(values))
        return rows

    def named_rows(self, conn: Connection, params: Mapping[str, Any]) -> list[Any]:
        """The result rows as named tuples: each value also under its column's name (``row.goal``)."""
        found = self.rows(conn, params)
        if self._row_type is None:
            names = [column.name for column in self._compiled[conn.dialect.name].columns]
            self._row_type = namedtuple("Row", names)  # type: ignore[misc]  (names known only at run time)
        make = self._row_type._make
        return [make(row) for row in found]

    def first(self, conn: Connection, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        found = self.rows(conn, params)
        return found[0] if found else None

    def scalar(self, conn: Connection, params: Mapping[str, Any]) -> Any:
        row = self.first(conn, params)
        return None if row is None else row[0]

    def rowcount(self, conn: Connection, params: Mapping[str, Any]) -> int:
        """Run a statement that returns no rows; how many rows it changed."""
        cursor = self.execute(conn, params)
        try:
            return int(cursor.rowcount)
        finally:
            cursor.close()

    def _for(self, dialect: Dialect) -> _Compiled:
        compiled = self._compiled.get(dialect.name)
        if compiled is None:
            compiled = self._compiled[dialect.name] = _compile(self._statement, dialect)
        return compiled


Read = tuple[Prepared, Mapping[str, Any]]
_READ_AHEAD: ContextVar[tuple[Connection, dict[int, tuple[Mapping[str, Any], list[tuple[Any, ...]]]]] | None] = \
    ContextVar("webmem_read_ahead", default=None)


@contextmanager
def reading_ahead(conn: Connection, reads: Sequence[Read]) -> Iterator[None]:
    """On PostgreSQL, run ``reads`` (statements with their parameters, each statement once) up front in one round
    trip, as a pipeline; inside the block, the first :meth:`Prepared.rows` of each with the same parameters on
    ``conn`` takes its rows from there. Elsewhere it does nothing: each read runs when asked (SQLite's are calls within
    the process). Reads at webmem's READ COMMITTED level each see the database as of their own start, so
    reading them a moment earlier changes nothing they may rely on."""
    if conn.dialect.name != "postgresql" or not reads:
        yield
        return
    if len({id(prepared) for prepared, _ in reads}) < len(reads):
        raise ValueError("reading_ahead: a statement is read ahead once")
    driver = conn.connection.driver_connection
    try:
        with driver.pipeline():
            sent = [(prepared, params, prepared.execute(conn, params)) for prepared, params in reads]
    except conn.dialect.loaded_dbapi.Error as exc:
        lost = conn.dialect.is_disconnect(exc, driver, None)
        if lost:
            conn.invalidate()
        raise DBAPIError.instance("a pipeline of reads", None, exc, conn.dialect.loaded_dbapi.Error,
                                  connection_invalidated=lost) from exc
    token = _READ_AHEAD.set((conn, {id(prepared): (params, prepared._taken(conn, cursor))
                                    for prepared, params, cursor in sent}))
    try:
        yield
    finally:
        _READ_AHEAD.reset(token)


def _compile(statement: ClauseElement | StatementFactory, dialect: Dialect) -> _Compiled:
    construct = statement if isinstance(statement, ClauseElement) else statement(dialect.name)
    if isinstance(construct, TextualSelect):
        quick = _text_compiled(construct, dialect)
        if quick is not None:
            return quick
    compiled = construct.compile(dialect=dialect)
    binds = {name: bind for bind, name in compiled.bind_names.items()}
    positional = compiled.positiontup is not None
    names = tuple(compiled.positiontup) if positional else tuple(binds)
    columns: Sequence[Any] = getattr(construct, "exported_columns", None) or ()
    return _Compiled(
        sql=compiled.string,
        names=names,
        positional=positional,
        defaults={name: bind.value for name, bind in binds.items() if not bind.required},
        binders=tuple(_binder(binds[name].type, dialect) for name in names),
        text_kinds=tuple((position, kind) for position, name in enumerate(names)
                         if (kind := text_kind(binds[name].type)) is not None),
        columns=tuple(columns),
        driver_error=dialect.loaded_dbapi.Error,
    )


def _text_compiled(construct: TextualSelect, dialect: Dialect) -> _Compiled | None:
    """SQL text with untyped named parameters (:func:`webmem.store.statements.plain_select`) as the driver takes
    it, without SQLAlchemy's compiler, which takes a quarter of a millisecond per statement in a new process:
    SQLite's driver takes ``:name`` itself, psycopg ``%(name)s``. None for anything else."""
    element = construct.element
    if not isinstance(element, TextClause) or "\\" in element.text \
            or any(not isinstance(bind.type, NullType) or not bind.required for bind in element._bindparams.values()):
        return None
    if dialect.name == "sqlite":
        sql = element.text
    elif dialect.name == "postgresql" and dialect.driver == "psycopg":
        sql = TextClause._bind_params_regex.sub(lambda found: "%%(%s)s" % found.group(1), element.text.replace("%", "%%"))
    else:
        return None
    names = tuple(element._bindparams)
    return _Compiled(sql=sql, names=names, positional=False, defaults={}, binders=(None,) * len(names),
                     text_kinds=(), columns=tuple(construct.exported_columns), driver_error=dialect.loaded_dbapi.Error)


def _binder(type_: Any, dialect: Dialect) -> Processor:
    return type_.dialect_impl(dialect).bind_processor(dialect)


def _readers(columns: Sequence[Any], description: Sequence[Any], dialect: Dialect) -> list[tuple[int, Callable[[Any], Any]]]:
    """The position and the result conversion of each column that has one, given the driver's type code for it
    (PostgreSQL's numbers need it)."""
    found = [(index, column.type.dialect_impl(dialect).result_processor(dialect, described[1]))
             for index, (column, described) in enumerate(zip(columns, description))]
    return [(index, read) for index, read in found if read is not None]


def _translated(conn: Connection, compiled: _Compiled, exc: Exception, driver: Any) -> DBAPIError:
    """The driver's error as SQLAlchemy's; a connection the error shows lost is dropped from the pool."""
    lost = conn.dialect.is_disconnect(exc, driver, None)
    if lost:
        conn.invalidate()
    return DBAPIError.instance(compiled.sql, None, exc, compiled.driver_error, connection_invalidated=lost)


def _bound(compiled: _Compiled, params: Mapping[str, Any], engine: Engine) -> Any:
    """The parameters as the driver takes them: converted by their types, free texts redacted (as
    :mod:`webmem.store.redacting` does for every statement SQLAlchemy runs)."""
    defaults = compiled.defaults
    values = [
        (params[name] if name in params else defaults[name]) if bind is None
        else bind(params[name] if name in params else defaults[name])
        for name, bind in zip(compiled.names, compiled.binders)
    ]
    secrets = secrets_for(engine)
    if secrets is not None and len(secrets):
        for position, is_json in compiled.text_kinds:
            values[position] = redacted_value(values[position], is_json, secrets)
    return tuple(values) if compiled.positional else dict(zip(compiled.names, values))
