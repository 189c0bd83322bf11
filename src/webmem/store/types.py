"""Column types shared by the schema and the migrations."""

from __future__ import annotations

import json
import json.scanner
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from ..core.clock import as_utc


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that goes in as any aware datetime and always comes back as aware UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        utc = as_utc(value)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def bind_processor(self, dialect: Dialect) -> Any:
        if dialect.name == "sqlite":
            return _sqlite_text  # a quarter of the time of the two processors it stands for, for every timestamp
        return super().bind_processor(dialect)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return as_utc(value)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        if dialect.name == "sqlite":  # SQLite's text is naive UTC: one step, as for binding
            parse = self.impl_instance.dialect_impl(dialect).result_processor(dialect, coltype)

            def aware(value: Any) -> datetime | None:
                return None if value is None else parse(value).replace(tzinfo=UTC)

            return aware
        return super().result_processor(dialect, coltype)


def json_loads(text: Any) -> Any:
    """``json.loads`` of a JSON text the memory wrote itself (no blanks around it), through the decoder's
    scanner at once; anything else (blanks, bytes, an error) is read by ``json.loads`` itself."""
    if type(text) is str:
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:
            return json.loads(text)
        if end == len(text):
            return value
    return json.loads(text)


_SCAN = json.scanner.make_scanner(json.JSONDecoder())


def _sqlite_text(value: datetime | None) -> str | None:
    """What ``UTCDateTime.process_bind_param`` and SQLAlchemy's SQLite DATETIME make of ``value``, in one step."""
    if value is None:
        return None
    return as_utc(value).isoformat(" ", timespec="microseconds")[:26]
