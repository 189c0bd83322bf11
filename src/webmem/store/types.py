"""Column types shared by the schema and the migrations."""

from __future__ import annotations

from datetime import datetime
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

    def sqlite_text(self, value: datetime | None) -> str | None:
        """What ``process_bind_param`` and SQLAlchemy's SQLite DATETIME make of ``value``, in one step."""
        if value is None:
            return None
        return as_utc(value).isoformat(" ", timespec="microseconds")[:26]

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return as_utc(value)
