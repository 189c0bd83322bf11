"""Extractive compression of large extractions: shorter text that keeps every URL, selector and field.

A browser agent extracts pages that are far larger than the room it has in a prompt. What
it cannot afford to lose are the things it acts on: the links it may follow, the selectors
it may click and the form fields it may fill. :func:`compress_extraction` shrinks a text
(or an HTML page, first turned into a compact outline) by keeping its most informative
lines, then lists whatever URL, selector or field those lines did not carry, and checks
the result to report what it kept. :func:`compress_with` lets the caller plug in a
compressor of its own (an LLM, typically) and falls back on the extractive one when that
compressor loses URLs or overshoots. This module never calls a network itself.

Two modules do the groundwork: :mod:`webmem.extraction_inventory` says what counts as an
item to keep (URLs, selectors, fields) and finds them in a text, and
:mod:`webmem.html_outline` turns an HTML page into the outline whose lines are selected.
This module holds the public API and the line selection: :func:`head_tail`, the scoring
of lines and the greedy choice of those that fit beside the inventory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from ..core.errors import InvalidInput
from ..core.text import clean_for_prompt
from .html_outline import looks_like_html, outline_html
from .inventory import Inventory, InventoryChecker, text_inventory

DEFAULT_MARKER = "\n[... {cut} characters cut ...]\n"
HEAD_SHARE = 0.6  # head_tail keeps this share of the room for the head, the rest for the tail

METHOD_UNCHANGED = "unchanged"  # the text already fit
METHOD_OUTLINE = "outline"  # an HTML page whose whole outline fit
METHOD_EXTRACTIVE = "extractive"  # the best lines, in their original order, plus the inventory
METHOD_HOOK = "hook"  # the caller's compressor, accepted
METHOD_HOOK_FALLBACK = "hook_fallback"  # the caller's compressor was rejected; extractive instead

URLS_HEADING = "URLs:"
SELECTORS_HEADING = "Selectors:"
FIELDS_HEADING = "Fields:"

LONG_UNIT_CHARS = 300  # lines longer than this are split into sentences, then pieces

# Line scores: lines carrying what the agent acts on or numbers it reports go first.
SCORE_URL = 3
SCORE_FIELD = 3
SCORE_SELECTOR = 2
SCORE_HEADING = 2
SCORE_PRICE = 2
SCORE_NUMBER = 1
SCORE_KEYWORD = 1
MAX_KEYWORD_SCORE = 3
KEYWORDS = (
    "price", "total", "error", "required", "invalid", "warning", "login", "log in", "sign in",
    "sign up", "register", "password", "checkout", "cart", "search", "submit", "stock",
    "sold out", "available", "shipping", "discount", "sale", "next", "previous", "page",
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_NUMBER = re.compile(r"\d")
_PRICE = re.compile(r"[$€£¥]\s?\d|\d[\d,]*\.\d\d\b|\b\d+(?:[.,]\d+)?\s?(?:USD|EUR|GBP|%)")
_HEADING_LINE = re.compile(r"#{1,6}\s|title:|description:")


class Compressor(Protocol):
    """A compressor supplied by the caller: returns ``text`` shortened to at most ``max_chars``."""

    def __call__(self, text: str, max_chars: int) -> str: ...


@dataclass(frozen=True)
class CompressionResult:
    """A compressed text and what it kept, checked on the text itself.

    ``within_budget`` is False only when the inventory of URLs, selectors and fields alone
    is longer than ``max_chars``: keeping them wins over the size.
    """

    text: str
    original_chars: int
    compressed_chars: int
    preserved_urls: bool
    preserved_selectors: bool
    preserved_fields: bool
    method: str
    within_budget: bool
    notes: tuple[str, ...] = ()


# --- head and tail -----------------------------------------------------------------------------


def _check_max_chars(max_chars: object) -> int:
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise InvalidInput(f"max_chars: expected a whole number of characters, got {type(max_chars).__name__}")
    if max_chars < 0:
        raise InvalidInput(f"max_chars: must be 0 or more, got {max_chars}")
    return max_chars


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"text: expected a string, got {type(text).__name__}")
    return text


def head_tail(text: str, max_chars: int, *, marker: str = DEFAULT_MARKER) -> str:
    """Keep the head and the tail of ``text`` with ``marker`` between them; at most ``max_chars`` long.

    ``{cut}`` in the marker becomes the number of characters left out. Text that fits is
    returned as is; when even the marker does not fit, the text is simply cut to
    ``max_chars``.
    """
    _check_text(text)
    _check_max_chars(max_chars)
    if not isinstance(marker, str):
        raise InvalidInput(f"marker: expected a string, got {type(marker).__name__}")
    if len(text) <= max_chars:
        return text
    cut = len(text)  # start from the longest count; each pass can only shorten it, so the result fits
    for _ in range(3):
        room = max_chars - len(marker.replace("{cut}", str(cut)))
        if room <= 0:
            return text[:max_chars]
        if len(text) - room == cut:
            break
        cut = len(text) - room
    head = round(room * HEAD_SHARE)
    tail = room - head
    shown = marker.replace("{cut}", str(len(text) - room))
    return text[:head] + shown + (text[len(text) - tail :] if tail else "")


# --- the body to select from, and what it must keep -------------------------------------------


def _inventory_of(text: str) -> tuple[str, Inventory, bool]:
    """The body to select lines from, the items to keep, and whether the text was HTML."""
    if looks_like_html(text):
        body, inventory = outline_html(text)
        return body, inventory, True
    cleaned = "\n".join(_clean_line(line) for line in text.splitlines())
    return cleaned, text_inventory(cleaned), False


# --- selecting lines ---------------------------------------------------------------------------


def _clean_line(line: str) -> str:
    stripped = line.lstrip(" \t")
    indent = line[: len(line) - len(stripped)].replace("\t", "    ")
    return indent + clean_for_prompt(stripped, len(stripped)) if stripped.strip() else ""


def _pieces(line: str) -> list[str]:
    """A long line as sentences, and sentences still too long as pieces cut at spaces or commas."""
    if len(line) <= LONG_UNIT_CHARS:
        return [line]
    pieces = []
    for sentence in _SENTENCE_END.split(line):
        while len(sentence) > LONG_UNIT_CHARS:
            cut = max(sentence.rfind(" ", 0, LONG_UNIT_CHARS), sentence.rfind(",", 0, LONG_UNIT_CHARS) + 1)
            cut = cut if cut > LONG_UNIT_CHARS // 2 else LONG_UNIT_CHARS
            pieces.append(sentence[:cut].rstrip())
            sentence = sentence[cut:].lstrip()
        if sentence:
            pieces.append(sentence)
    return pieces


def _units(body: str) -> list[str]:
    units = []
    for line in body.splitlines():
        cleaned = _clean_line(line)
        if cleaned:
            units.extend(piece for piece in _pieces(cleaned) if piece.strip())
    return units


def _score(unit: str, *, urls: int, selectors: int, fields: int) -> int:
    lowered = unit.lower()
    score = SCORE_URL * bool(urls) + SCORE_SELECTOR * bool(selectors) + SCORE_FIELD * bool(fields)
    score += SCORE_HEADING * bool(_HEADING_LINE.match(unit.lstrip()))
    score += SCORE_PRICE * bool(_PRICE.search(unit)) + SCORE_NUMBER * bool(_NUMBER.search(unit))
    score += min(MAX_KEYWORD_SCORE, SCORE_KEYWORD * sum(1 for word in KEYWORDS if word in lowered))
    return score


@dataclass
class _Kind:
    """One list of the inventory: its heading, the line of each item, and the items no kept line carries yet."""

    heading: str
    lines: list[str]
    uncovered: set[int] = field(default_factory=set)
    uncovered_chars: int = 0

    def __post_init__(self) -> None:
        self.uncovered = set(range(len(self.lines)))
        self.uncovered_chars = sum(len(line) for line in self.lines)

    def cost_without(self, covered: set[int]) -> tuple[int, int]:
        """Characters and lines of this list once the items in ``covered`` are carried by kept lines."""
        newly = covered & self.uncovered
        left = len(self.uncovered) - len(newly)
        if not left:
            return 0, 0
        return len(self.heading) + self.uncovered_chars - sum(len(self.lines[i]) for i in newly), 1 + left

    def cover(self, covered: set[int]) -> None:
        newly = covered & self.uncovered
        self.uncovered_chars -= sum(len(self.lines[i]) for i in newly)
        self.uncovered -= newly

    def render(self) -> list[str]:
        if not self.uncovered:
            return []
        return [self.heading, *(self.lines[i] for i in sorted(self.uncovered))]


def _select(units: list[str], checker: InventoryChecker, max_chars: int) -> tuple[list[str], list[_Kind]]:
    """Greedily keep the best-scored units that fit beside the inventory of what they do not carry.

    The output is the kept units and the inventory lists, one item per line, joined by newlines.
    """
    inventory = checker.inventory
    kinds = [
        _Kind(URLS_HEADING, list(inventory.urls)),
        _Kind(SELECTORS_HEADING, list(inventory.selectors)),
        _Kind(FIELDS_HEADING, [item.render() for item in inventory.fields]),
    ]
    carried = [(checker.urls_in(unit), checker.selectors_in(unit), checker.fields_in(unit)) for unit in units]
    scores = [
        _score(unit, urls=len(urls), selectors=len(selectors), fields=len(fields))
        for unit, (urls, selectors, fields) in zip(units, carried)
    ]
    body_chars = body_lines = 0
    kept: set[int] = set()
    for index in sorted(range(len(units)), key=lambda i: (-scores[i], i)):
        chars, lines = body_chars + len(units[index]), body_lines + 1
        for kind, items in zip(kinds, carried[index]):
            kind_chars, kind_lines = kind.cost_without(items)
            chars, lines = chars + kind_chars, lines + kind_lines
        if chars + lines - 1 <= max_chars:  # the characters plus the newlines between the lines
            kept.add(index)
            body_chars, body_lines = body_chars + len(units[index]), body_lines + 1
            for kind, items in zip(kinds, carried[index]):
                kind.cover(items)
    return [units[i] for i in sorted(kept)], kinds


def compress_extraction(text: str, *, max_chars: int) -> CompressionResult:
    """Shrink ``text`` towards ``max_chars`` characters, keeping every URL, selector and form field.

    An HTML page is first turned into an outline (title, headings, text, ``[link](href)``,
    forms, fields with their labels, buttons; scripts and styles dropped). Its lines are
    scored (URLs, fields, selectors, headings, prices, numbers and keywords first) and the
    best ones that fit are kept, in their original order, followed by ``URLs:``,
    ``Selectors:`` and ``Fields:`` lists of the items those lines do not carry.

    The preservation guarantee wins over the size: when the lists alone are longer than
    ``max_chars``, the result keeps them all and is longer (``within_budget`` False). The
    ``preserved_*`` flags are computed by looking for each item in the result.
    """
    _check_text(text)
    _check_max_chars(max_chars)
    if len(text) <= max_chars:
        return CompressionResult(
            text=text, original_chars=len(text), compressed_chars=len(text), preserved_urls=True,
            preserved_selectors=True, preserved_fields=True, method=METHOD_UNCHANGED, within_budget=True,
        )
    body, inventory, is_html = _inventory_of(text)
    checker = InventoryChecker(inventory)
    units = _units(body)
    kept, kinds = _select(units, checker, max_chars)
    inventory_lines = [line for kind in kinds for line in kind.render()]
    output = "\n".join([*kept, *inventory_lines])
    urls_ok, selectors_ok, fields_ok = checker.preserved(output)
    notes = []
    method = METHOD_OUTLINE if is_html and len(kept) == len(units) else METHOD_EXTRACTIVE
    if len(output) > max_chars:
        notes.append(
            f"the URLs, selectors and fields alone take {len(output)} characters, over max_chars={max_chars}; "
            "all were kept"
        )
    return CompressionResult(
        text=output,
        original_chars=len(text),
        compressed_chars=len(output),
        preserved_urls=urls_ok,
        preserved_selectors=selectors_ok,
        preserved_fields=fields_ok,
        method=method,
        within_budget=len(output) <= max_chars,
        notes=tuple(notes),
    )


def compress_with(
    compressor: Compressor | Callable[[str, int], str] | None, text: str, *, max_chars: int
) -> CompressionResult:
    """Compress with the caller's ``compressor`` (an LLM, say), checked, or extractively.

    The compressor's output is accepted (``method="hook"``) when it keeps every URL of
    the input and is at most ``max_chars`` long; otherwise :func:`compress_extraction`
    is used (``method="hook_fallback"``, with the reasons in ``notes``). It is not called
    when the text already fits or when it is None. Exceptions it raises reach the caller.
    """
    _check_text(text)
    _check_max_chars(max_chars)
    if compressor is None or len(text) <= max_chars:
        return compress_extraction(text, max_chars=max_chars)
    if not callable(compressor):
        raise InvalidInput(f"compressor: expected a callable (text, max_chars) -> str, got {type(compressor).__name__}")
    output = compressor(text, max_chars)
    if not isinstance(output, str):
        raise InvalidInput(f"compressor: returned {type(output).__name__}, expected a string")
    _, inventory, _ = _inventory_of(text)
    checker = InventoryChecker(inventory)
    urls_ok, selectors_ok, fields_ok = checker.preserved(output)
    problems = []
    if not urls_ok:
        missing = [url for i, url in enumerate(inventory.urls) if i not in checker.urls_in(output)]
        problems.append(f"the compressor dropped {len(missing)} of {len(inventory.urls)} URLs (first: {missing[0]})")
    if len(output) > max_chars:
        problems.append(f"the compressor returned {len(output)} characters, over max_chars={max_chars}")
    if problems:
        fallback = compress_extraction(text, max_chars=max_chars)
        notes = (*problems, f"fell back on the {fallback.method} compression", *fallback.notes)
        return replace(fallback, method=METHOD_HOOK_FALLBACK, notes=notes)
    return CompressionResult(
        text=output,
        original_chars=len(text),
        compressed_chars=len(output),
        preserved_urls=urls_ok,
        preserved_selectors=selectors_ok,
        preserved_fields=fields_ok,
        method=METHOD_HOOK,
        within_budget=True,
    )
