"""The per-turn context: parts by priority, fitted into a token budget, with a report of what fit."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import InvalidInput
from .tokens import CHARS_PER_TOKEN, estimate_tokens

PartStatus = Literal["included", "truncated", "dropped", "empty"]
SEPARATOR = "\n\n"
TRUNCATION_MARKER = "[... truncated to fit the context budget]"
MIN_TRUNCATED_TOKENS = 30  # below this much room a part is dropped rather than cut
MAX_BUDGET_TOKENS = 1_000_000


@dataclass(frozen=True)
class ContextPart:
    """One section of the context: a heading over a body, ranked by priority (higher first)."""

    name: str
    heading: str
    priority: int
    body: str
    detail: Mapping[str, Any] = field(default_factory=dict)

    def render(self, body: str | None = None) -> str:
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

    def __init__(self, sections: list[str], *, budget_tokens: int, report: list[PartReport]) -> None:
        self._text = SEPARATOR.join(sections)
        self.budget_tokens = budget_tokens
        self.report = report

    @classmethod
    def assemble(cls, parts: Iterable[ContextPart], budget_tokens: int) -> ContextPack:
        """Fit parts, highest priority first: whole if they fit, cut if enough room is left, else dropped.

        A dropped part does not stop smaller, lower-priority parts that still fit.
        """
        budget = check_budget(budget_tokens)
        ordered = sorted(parts, key=lambda part: part.priority, reverse=True)
        sections: list[str] = []
        report: list[PartReport] = []
        used_chars = 0
        budget_chars = budget * CHARS_PER_TOKEN
        for part in ordered:
            if not part.body.strip():
                report.append(_report(part, "empty", "", ""))
                continue
            full = part.render()
            gap = len(SEPARATOR) if sections else 0
            room = budget_chars - used_chars - gap
            if len(full) <= room:
                chosen, status = full, "included"
            elif room // CHARS_PER_TOKEN >= MIN_TRUNCATED_TOKENS and room > _frame(part):
                chosen, status = _truncated(part, room), "truncated"
            else:
                report.append(_report(part, "dropped", "", full))
                continue
            sections.append(chosen)
            used_chars += gap + len(chosen)
            report.append(_report(part, status, chosen, full))
        return cls(sections, budget_tokens=budget, report=report)

    @property
    def text(self) -> str:
        return self._text

    @property
    def tokens(self) -> int:
        return estimate_tokens(self._text)

    @property
    def included(self) -> list[str]:
        """Names of the parts that made it in, whole or truncated, in rendering order."""
        return [part.name for part in self.report if part.status in ("included", "truncated")]

    def part(self, name: str) -> PartReport | None:
        return next((part for part in self.report if part.name == name), None)

    def to_dict(self) -> dict[str, Any]:
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


def _frame(part: ContextPart) -> int:
    """Characters a truncated part needs besides its body: heading, newline, marker."""
    return len(part.render("")) + 1 + len(TRUNCATION_MARKER)


def _truncated(part: ContextPart, room: int) -> str:
    body = part.body[: room - _frame(part)]
    line_end = body.rfind("\n")
    if line_end > len(body) // 2:
        body = body[:line_end]
    return part.render(f"{body.rstrip()}\n{TRUNCATION_MARKER}")


def _report(part: ContextPart, status: PartStatus, chosen: str, full: str) -> PartReport:
    return PartReport(
        name=part.name,
        heading=part.heading,
        priority=part.priority,
        status=status,
        tokens=estimate_tokens(chosen),
        full_tokens=estimate_tokens(full),
        detail=part.detail,
    )
