"""Where a goal names its values: emails, URLs, dates, amounts, sizes and counts in any usual form
(:mod:`.value_forms`), quoted text, numbers and names; and what a goal embedder is given of a goal."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..core.terms import words
from .reading import read_goal
from .slots import goal_values
from .value_forms import value_spans

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+", re.IGNORECASE)
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”')


def embedding_text(goal: str) -> str:
    """What a goal embedder is given of a goal: the goal read for what identifies its task (:mod:`.reading`: how the
    answer must be written and politeness set aside). Its values stay: without them, goals of one shape that differ
    only in what they name ("Click the * button", "Click the * link") come too close."""
    return read_goal(goal).text


def value_spans_of(goal: str) -> tuple[list[tuple[int, int, str, str]], list[str]]:
    """Where a goal names its values, each with its kind and its normalised value, in order; and the units of its
    sizes (also words of the task)."""
    spans: list[tuple[int, int, str, str]] = []
    for kind, pattern, hinted in (("email", _EMAIL, "@" in goal), ("url", _URL, "://" in goal or "www." in goal.lower())):
        if hinted:
            spans += [(m.start(), m.end(), kind, m.group().casefold()) for m in pattern.finditer(goal)]
    units = []
    for read in value_spans(goal):
        if not any(start < read.end and read.start < end for start, end, _, _ in spans):
            spans.append((read.start, read.end, read.kind, read.value))
            units += [read.unit] if read.unit else []
    capitals_mean_names: bool | None = None
    for value in goal_values(goal):
        if spans and any(start <= value.start < end for start, end, _, _ in spans):
            continue
        kind = "quoted" if value.quoted else "number" if _is_number(value.text) else "name"
        if kind == "name" and not any(map(str.isdigit, value.text)):
            if capitals_mean_names is None:
                capitals_mean_names = not _mostly_capitalised(goal)
            if not capitals_mean_names:
                continue
        spans.append((value.start, value.end, kind, " ".join(words(value.text))))
    spans.sort()
    return spans, units


def between(goal: str, spans: list[tuple[int, int, str, str]]) -> list[str]:
    """The stretches of a goal between its values (``kept``)."""
    rest = []
    position = 0
    for start, end, _, _ in kept(spans):
        rest.append(goal[position:start])
        position = end
    rest.append(goal[position:])
    return rest


def kept(spans: list[tuple[int, int, str, str]]) -> Iterator[tuple[int, int, str, str]]:
    """The spans that do not overlap one before them: the values a goal's stretches lie between."""
    position = 0
    for span in spans:
        if span[0] >= position:
            yield span
            position = span[1]


def _mostly_capitalised(goal: str) -> bool:
    """True for goals In Title Case or IN CAPITALS, where a capital says nothing about a name."""
    unquoted = _QUOTED.sub(" ", goal)
    found = [word for word in re.findall(r"[^\W\d_]+", unquoted)[1:] if len(word) >= 2]
    return len(found) >= 2 and sum(word[0].isupper() for word in found) >= 0.8 * len(found)


def _is_number(text: str) -> bool:
    return any(map(str.isdigit, text)) and not any(map(str.isalpha, text))
