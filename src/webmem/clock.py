"""Time and ids: timezone-aware UTC timestamps and sortable record ids."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"


def utcnow() -> datetime:
    """The current time as a timezone-aware UTC datetime."""
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def new_id(prefix: str, *, length: int = 6) -> str:
    """``<prefix>_<ms since epoch>_<random base36>``: sorts by creation time, unique in practice."""
    millis = int(utcnow().timestamp() * 1000)
    suffix = "".join(secrets.choice(_ALPHABET) for _ in range(length))
    return f"{prefix}_{millis:013d}_{suffix}"
