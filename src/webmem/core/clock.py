"""Time and ids: timezone-aware UTC timestamps and sortable record ids."""

from __future__ import annotations

import secrets
import threading
from datetime import UTC, datetime

_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_id_lock = threading.Lock()
_last_id: tuple[int, int, int] = (0, 0, 0)  # (millis, suffix as a number, suffix length) of the last id


def utcnow() -> datetime:
    """The current time as a timezone-aware UTC datetime."""
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """The same instant in UTC; a naive datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def new_id(prefix: str, *, length: int = 6) -> str:
    """``<prefix>_<ms since epoch>_<random base36>``: sorts by creation time, unique in practice.

    Within one process ids sort in the order they were made: an id made in the same
    millisecond as the previous one takes the previous suffix plus one (as monotonic ULIDs do).
    """
    global _last_id
    size = len(_ALPHABET) ** length
    with _id_lock:
        millis = int(utcnow().timestamp() * 1000)
        last_millis, last_number, last_length = _last_id
        if millis <= last_millis and length == last_length and last_number + 1 < size:
            millis, number = last_millis, last_number + 1
        else:
            millis = max(millis, last_millis + 1)
            number = secrets.randbelow(size // 2)  # leaves room to count up within the millisecond
        _last_id = (millis, number, length)
    digits = []
    for _ in range(length):
        number, digit = divmod(number, len(_ALPHABET))
        digits.append(_ALPHABET[digit])
    return f"{prefix}_{millis:013d}_{''.join(reversed(digits))}"
