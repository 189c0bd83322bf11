"""Goal spans the steps used: the evidence that a stretch of a goal is a value, whatever its case.

"Delete the book harbors and gardens" with a step that clicked ``link "Harbors and Gardens"`` names
the title in lowercase words and one of them a connector; capitals cannot tell it is a value, the
step can. A span of the goal (one or more words) is a value when a step used all of it: typed or
selected it, clicked (checked, hovered) an element of that name, or went to a URL with it as a query
value or path segment, compared without regard to letter case and spacing. The name of a field
(clicked or typed into) is its label, not a value.

Two kinds of span are never values on this evidence alone: one made of connectors only ("the", "and")
and words that say what to do ("delete", "search", "open", or the goal's first words, such as "Sign
in" for a goal that begins "Sign in and ..."): a step that clicked "Delete" for "delete the book ..."
did what the goal said, it did not use a value of it. Both are values when a step typed them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

from ..core.models import Step

#: A word of a goal: letters and digits, with inner apostrophes, dots, at signs and hyphens.
WORD = re.compile(r"[^\W_](?:[\w'.@-]*[^\W_])?")
#: Words that join the words of a value ("of", "and") but are never a value on their own.
CONNECTORS = frozenset(
    "a an the of and or to in on at for by with from into as is be it its this that these those "
    "my your our their me us all only".split()
)
#: Words that say what to do: a step named after one did what the goal said, it used no value of it.
INSTRUCTION_WORDS = frozenset(
    "click press tap hit select choose pick check uncheck tick open close go navigate visit browse search "
    "find look show hide filter sort type enter fill submit save delete remove edit change update modify add "
    "create new log login logout sign view read send post buy order book cancel confirm continue next back "
    "previous ok yes no done apply reset clear subscribe unsubscribe register join follow unfollow like share "
    "download upload print reply forward archive star flag mark copy paste drag drop expand collapse play pause "
    "stop start accept decline allow deny dismiss refresh reload rename move".split()
)
MAX_SPAN_WORDS = 12
_TYPED = frozenset({"fill", "type", "select"})
_CHOOSING = frozenset({"click", "check", "hover"})
_FIELDS = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider", "listbox"})
_IDENTITY = re.compile(r'^(?P<role>[a-z]+) "(?P<name>(?:[^"\\]|\\.)*)"$', re.S)
_REFERENCE = re.compile(r"^\{goal:\d{1,3}\}$")
_MAX_FIELD = 200


@dataclass(frozen=True)
class GoalValue:
    """A stretch of a goal taken as one value: its text and where it is (``quoted`` when in quotes)."""

    text: str
    start: int
    end: int
    quoted: bool


def key(text: str) -> str:
    """A text as values are compared: letter case and spacing do not count."""
    return " ".join(text.split()).casefold()


def found_as_word(value: str, text: str | None) -> bool:
    """Whether ``value`` is in ``text`` as words of its own ("Look" is in "Look here", not in "Looking")."""
    return bool(text) and value in text and re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", text) is not None


#: The role of a target that is a text the page shows (a clickable span, a cell) rather than an element
#: with a role of its own: ``text "Next"`` is found by that exact visible text.
TEXT_ROLE = "text"


def element_identity(role: str, name: str) -> str:
    """Return the identity of an element as ``role "name"``.

    Backslashes and double quotes in ``name`` are escaped with a backslash,
    the way Playwright's aria snapshots write them, e.g.
    ``element_identity("button", 'Say "hi"')`` is ``button "Say \\"hi\\""``.
    """
    escaped = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'{role} "{escaped}"'


def parse_identity(identity: str | None) -> tuple[str, str] | None:
    """``('button', 'Submit')`` from ``button "Submit"``; None for anything else."""
    match = _IDENTITY.match(identity or "")
    if match is None:
        return None
    return match.group("role"), match.group("name").replace('\\"', '"').replace("\\\\", "\\")


def used_fields(steps: Iterable[Step]) -> tuple[set[str], set[str]]:
    """The whole texts the steps used (as :func:`key` writes them): the values typed or selected, and
    the names of the elements acted on with the query values and path segments of the URLs gone to."""
    typed: list[str] = []
    named: list[str] = []
    for step in steps:
        if step.action in _TYPED and step.value and not _REFERENCE.match(step.value):
            typed.append(step.value)
        identity = parse_identity(step.target) if step.action in _CHOOSING else None
        if identity is not None and identity[1] and identity[0] not in _FIELDS:
            named.append(identity[1])  # the element chosen (a field is named by its label, which is no value)
        if step.action == "goto" and step.value:
            named += _url_parts(step.value)
    return _keys(typed), _keys(named)


def _keys(fields: list[str]) -> set[str]:
    return {key(field) for field in fields if field.strip() and len(field) <= _MAX_FIELD}


def used_spans(goal: str, steps: Sequence[Step], taken: Sequence[GoalValue]) -> list[GoalValue]:
    """The spans of ``goal`` outside ``taken`` that a step used whole, longest first where they
    overlap, in goal order."""
    typed, named = used_fields(steps)
    if not typed and not named:
        return []
    words = [match for match in WORD.finditer(goal)
             if not any(span.start < match.end() and match.start() < span.end for span in taken)]
    found: list[tuple[int, int]] = []
    for first in range(len(words)):
        for last in range(first, min(len(words), first + MAX_SPAN_WORDS)):
            start, end = words[first].start(), words[last].end()
            if any(span.start < end and start < span.end for span in taken):
                break
            text = key(goal[start:end])
            opening = not goal[:start].strip()  # the goal's first words say what to do ("Sign in and ...")
            if text in typed or (
                text in named and not opening and _may_be_named([w.group() for w in words[first:last + 1]])
            ):
                found.append((start, end))
    chosen: list[tuple[int, int]] = []
    for start, end in sorted(found, key=lambda span: (span[0] - span[1], span[0])):
        if not any(other_start < end and start < other_end for other_start, other_end in chosen):
            chosen.append((start, end))
    return [GoalValue(goal[start:end], start, end, False) for start, end in sorted(chosen)]


def _may_be_named(words: list[str]) -> bool:
    """Whether words that name an element acted on may be a value: not connectors alone, not one
    word that says what to do (a typed value is a value whatever its words)."""
    lowered = [word.casefold() for word in words]
    if all(word in CONNECTORS for word in lowered):
        return False
    return not (len(lowered) == 1 and lowered[0] in INSTRUCTION_WORDS)


def _url_parts(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
        query = [value for _, value in parse_qsl(parts.query)]
    except ValueError:
        return []
    return [*query, *(unquote(segment) for segment in parts.path.split("/") if segment)]
