"""Text helpers: word tokens, Jaccard similarity, and making text safe for a prompt."""

from __future__ import annotations

import re
import unicodedata

from .errors import InvalidInput

_WORD = re.compile(r"\w+", re.UNICODE)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")


def word_tokens(text: str) -> frozenset[str]:
    """Case-folded Unicode word tokens of at least two characters, punctuation removed."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    return frozenset(tok for tok in _WORD.findall(normal.replace("_", " ")) if len(tok) >= 2)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Size of the intersection over size of the union; 0.0 when both are empty."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def clean_for_prompt(text: str, limit: int) -> str:
    """Strip control characters, collapse runs of whitespace, and cut to ``limit`` characters."""
    flat = " ".join(_CONTROL.sub(" ", text).split())
    if len(flat) <= limit:
        return flat
    return flat[: max(0, limit - 1)].rstrip() + "…"


def storable(text: str) -> str:
    """``text`` when a database can hold it; InvalidInput when it holds a NUL character or a lone
    surrogate (text decoded from bytes that were not UTF-8), which neither SQLite's UTF-8 nor
    PostgreSQL can store."""
    if isinstance(text, str):
        if "\x00" in text:
            raise InvalidInput("a text holds a NUL character (\\x00), which cannot be stored")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInput(f"a text is not valid Unicode ({exc.reason} at position {exc.start})") from None
    return text


def storable_field(text: str, *, field: str) -> str:
    """``storable(text)``, its error naming ``field``."""
    try:
        return storable(text)
    except InvalidInput as exc:
        raise InvalidInput(f"{field}: {exc}") from None
