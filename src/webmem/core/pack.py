"""The per-turn context: parts by priority, fitted into a token budget, with a report of what fit."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import InvalidInput
from .tokens import TokenCounter

PartStatus = Literal["included", "truncated", "dropped", "empty"]
SEPARATOR = "\n\n"
SEPARATOR_TOKENS = 1
TRUNCATION_MARKER = "[... truncated to fit the context budget]"
MIN_TRUNCATED_TOKENS = 30  # below this much room a part is dropped rather than cut
MAX_BUDGET_TOKENS = 1_000_000
_DEFAULT_COUNTER = TokenCounter()


@dataclass(frozen=True)
class LineCut:
    """How a part that does not fit is cut short by whole lines instead of mid-text: its first ``head``
    lines stay, then as many of the following lines as fit (at least ``least``, else the part is
    dropped), then the line ``omitted(n)`` saying that ``n`` lines were left out. With ``latest``, the
    last lines are the ones kept, after the omission line (a history keeps its most recent entries)."""

    head: int
    omitted: Callable[[int], str]
    least: int = 1
    latest: bool = False
    units: Callable[[str], list[str]] | None = None  # how the body splits into what is kept whole (lines)


@dataclass(frozen=True)
class ContextPart:
    """One section of the context: a heading over a body, ranked by priority (higher first).

    A ``critical`` part is never dropped: when it does not fit it is cut to what room is left.
    ``fit``, when given, builds the body from the tokens still available when the part's turn
    comes (for parts that size themselves, such as extractions); ``body`` is then ignored.
    ``by_lines``, when given, says how the part is cut by whole lines when it does not fit.
    """

    name: str
    heading: str
    priority: int
    body: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)
    critical: bool = False
    fit: Callable[[int], str] | None = None
    by_lines: LineCut | None = None

    def render(self, body: str | None = None) -> str:
        """The part as it appears in the context: its heading over ``body`` (default: its own body)."""
        text = self.body if body is None else body
        return f"## {self.heading}\n{text}" if self.heading else text


@dataclass(frozen=True)
class PartReport:
    name: str
    heading: str
    priority: int
    status: PartStatus
    tokens: int
    full_tokens: int
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data (for JSON output)."""
        return {
            "name": self.name,
            "heading": self.heading,
            "priority": self.priority,
            "status": self.status,
            "tokens": self.tokens,
            "full_tokens": self.full_tokens,
            "detail": dict(self.detail),
        }


class ContextPack:
    """The text handed to the LLM for one turn (``str(pack)``) and how it was put together."""

    def __init__(self, sections: list[str], *, budget_tokens: int, tokens: int, report: list[PartReport]) -> None:
        self._text = SEPARATOR.join(sections)
        self.budget_tokens = budget_tokens
        self.tokens = tokens
        self.report = report

    @classmethod
    def assemble(
        cls, parts: Iterable[ContextPart], budget_tokens: int, *, counter: TokenCounter | None = None
    ) -> ContextPack:
        """Fit parts, highest priority first: whole if they fit, cut if enough room is left, else dropped.

        A dropped part does not stop smaller, lower-priority parts that still fit. The pack's
        tokens are the sum of its sections' counts plus one per separator.
        """
        budget = check_budget(budget_tokens)
        count = (counter or _DEFAULT_COUNTER).count
        ordered = sorted(parts, key=lambda part: (part.critical, part.priority), reverse=True)
        sections: list[str] = []
        report: list[PartReport] = []
        used = 0
        for part in ordered:
            gap = SEPARATOR_TOKENS if sections else 0
            body = part.fit(max(0, budget - used - gap)) if part.fit is not None else part.body
            if not body.strip():
                report.append(_report(part, "empty", 0, 0))
                continue
            full = part.render(body)
            full_tokens = count(full)
            room = budget - used - gap
            if full_tokens <= room:
                chosen, status, tokens = full, "included", full_tokens
            else:
                cut = _cut(part, body, room, count, counter or _DEFAULT_COUNTER)
                if cut is None:
                    report.append(_report(part, "dropped", 0, full_tokens))
                    continue
                chosen, status, tokens = cut, "truncated", count(cut)
            sections.append(chosen)
            used += gap + tokens
            report.append(_report(part, status, tokens, full_tokens))
        return cls(sections, budget_tokens=budget, tokens=used, report=report)

    @property
    def text(self) -> str:
        """The context text (the same as ``str(pack)``)."""
        return self._text

    @property
    def included(self) -> list[str]:
        """Names of the parts that made it in, whole or truncated, in rendering order."""
        return [part.name for part in self.report if part.status in ("included", "truncated")]

    def part(self, name: str) -> PartReport | None:
        """The report of the part named ``name``, or None when there was no such part."""
        return next((part for part in self.report if part.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        """The text, its token count, the budget and each part's report, as plain data."""
        return {
            "text": self._text,
            "tokens": self.tokens,
            "budget_tokens": self.budget_tokens,
            "parts": [part.to_dict() for part in self.report],
        }

    def __str__(self) -> str:
        return self._text

    def __bool__(self) -> bool:
        return bool(self._text)

    def __repr__(self) -> str:
        return f"ContextPack(tokens={self.tokens}, budget_tokens={self.budget_tokens}, included={self.included})"


def check_budget(budget_tokens: object) -> int:
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 1:
        raise InvalidInput(f"budget_tokens: expected a positive integer, got {budget_tokens!r}")
    if budget_tokens > MAX_BUDGET_TOKENS:
        raise InvalidInput(f"budget_tokens: {budget_tokens} is more than the maximum {MAX_BUDGET_TOKENS}")
    return budget_tokens


def _cut(part: ContextPart, body: str, room: int, count: Callable[[str], int], counter: TokenCounter) -> str | None:
    """The part cut to ``room`` tokens, by whole lines when it says so, or None when it should be dropped."""
    if part.by_lines is not None:
        cut = _cut_by_lines(part, part.by_lines, body, room, count)
        if cut is not None or not part.critical:
            return cut
    return _truncated(part, body, room, count, counter)


def _cut_by_lines(
    part: ContextPart, rule: LineCut, body: str, room: int, count: Callable[[str], int]
) -> str | None:
    """The part with its head, the most following lines that fit in ``room`` and the omission line;
    a binary search on how many lines follow the head, so it only returns a text it counted."""
    lines = rule.units(body) if rule.units is not None else body.split("\n")
    head, rest = lines[:rule.head], lines[rule.head:]

    def shown(kept: int) -> str:
        if rule.latest:
            return part.render("\n".join([*head, rule.omitted(len(rest) - kept), *rest[len(rest) - kept:]]))
        return part.render("\n".join([*head, *rest[:kept], rule.omitted(len(rest) - kept)]))

    best: str | None = None
    low, high = max(0, rule.least), len(rest) - 1  # the whole body did not fit
    while low <= high:
        middle = (low + high) // 2
        text = shown(middle)
        if count(text) <= room:
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best


def _truncated(
    part: ContextPart, body: str, room: int, count: Callable[[str], int], counter: TokenCounter
) -> str | None:
    """The part cut to ``room`` tokens with a visible marker, or None when it should be dropped.

    A critical part with too little room for its heading and the marker keeps the start of its
    body alone: it is never dropped while there is any room at all.
    """
    frame = count(part.render("\n" + TRUNCATION_MARKER))
    enough_room = room >= MIN_TRUNCATED_TOKENS or part.critical
    if enough_room and room > frame:
        kept = counter.cut_to_budget(body, room - frame)
        line_end = kept.rfind("\n")
        if line_end > len(kept) // 2:
            kept = kept[:line_end]
        chosen = part.render(f"{kept.rstrip()}\n{TRUNCATION_MARKER}")
        while count(chosen) > room and kept:  # counts of pieces need not add up exactly
            kept = kept[: len(kept) * 9 // 10]
            chosen = part.render(f"{kept.rstrip()}\n{TRUNCATION_MARKER}")
        if count(chosen) <= room and (kept.strip() or not part.critical):
            return chosen
    if part.critical:
        return counter.cut_to_budget(body, room) or None
    return None


def _report(part: ContextPart, status: PartStatus, tokens: int, full_tokens: int) -> PartReport:
    return PartReport(
        name=part.name,
        heading=part.heading,
        priority=part.priority,
        status=status,
        tokens=tokens,
        full_tokens=full_tokens,
        detail=part.detail,
    )
