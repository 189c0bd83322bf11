"""Reading JSON that someone else wrote: every way it can be unreadable is one InvalidInput."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InvalidInput


def read_text(path: Path, *, limit: int) -> str:
    """The UTF-8 text of ``path``; InvalidInput (without the path: callers name the file) when it is
    larger than ``limit`` bytes or not UTF-8."""
    if path.stat().st_size > limit:
        raise InvalidInput(f"larger than {limit // (1024 * 1024)} MB")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None


def parse(text: str) -> Any:
    """The JSON value of ``text``; InvalidInput when it is not JSON or nests too deep to be read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON ({exc})") from None
    except RecursionError:
        raise InvalidInput("JSON nested too deeply to be read") from None


def read_json(path: Path, *, limit: int) -> Any:
    """The JSON value in the file at ``path`` (see :func:`read_text` and :func:`parse`)."""
    return parse(read_text(path, limit=limit))
