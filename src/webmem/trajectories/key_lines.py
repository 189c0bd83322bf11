"""Lines of keys as an origin's snapshot holds them (its ids, shapes and forms): keys joined by one separator,
read back without parsing, and searched without splitting."""

from __future__ import annotations

import json
from typing import Any

SEPARATOR = "\x1e"  # between the keys of a line


def keys(text: str | None) -> list[str]:
    return text.split(SEPARATOR) if text else []


def has_key(text: str | None, key: str) -> bool:
    """Whether ``key`` is one of the keys of a line (``keys(text)``), without splitting it."""
    if not text:
        return False
    return (text == key or text.startswith(key + SEPARATOR) or text.endswith(SEPARATOR + key)
            or SEPARATOR + key + SEPARATOR in text)


def json_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # never a raw line break


def key_line(joined: str) -> str:
    """A line of keys as it is (read back without parsing: its separators would be JSON escapes), or as a JSON
    string when it holds a line break or begins with a quote (never for ids and tokens, which are words)."""
    return json_line(joined) if "\n" in joined or joined.startswith('"') else joined


def read_key_line(line: str) -> str:
    return json.loads(line) if line.startswith('"') else line
