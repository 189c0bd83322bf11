"""Binding a goal to a goal template: the values its slots take ("Delete the book {1}" read as "Delete the
book The Measure of Light"), why a goal does not fit a template (:func:`unbound`) or fits it with values of
another kind (:func:`misfit`), and the other ways a goal splits into a template's values
(:func:`bindings`: "Assign the issue {1} to {2}" with a title that holds "to"). Templates are made in
:mod:`.slots`."""

from __future__ import annotations

import re
from functools import lru_cache

from .conversions import GROUPED_NUMBER, SPACED_DATE, TIME_12H, read_date
from .evidence import GoalValue, key
from .reading import read_goal
from .slots import SLOT
from .value_forms import count_digits

_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")
_COUNT = re.compile(r"\d{1,3}")  # a number a count written as a word may stand for: not a year, not a price
#: What an unquoted slot binds: one token, or else a time with its meridiem or a date written with spaces.
_UNQUOTED_SLOT = rf"[^\s\"“”]+?|{TIME_12H}|{SPACED_DATE}"
#: What an unquoted slot between fixed text binds: words (a letter or digit at least; no quotes, no line breaks), as
#: few as fit. Up to its first letter it is atomic: a goal that nearly fits many slots is refused at once.
_SPAN_SLOT = r"(?=\S)(?>[^\"“”\n]{0,200}?[^\W_])[^\"“”\n]{0,200}?(?<=\S)"
_CLOSING = ".!? "  # how a goal may end or not: "Delete the book X." and "delete the book X" are one goal
_LIST = re.compile(r"[,;]\s|>")  # "a, b", "a>b": several values where the recorded run had one


def bind(template: str, goal: str, *, like: str | None = None) -> dict[int, str] | None:
    """The slot values that make ``template`` read as ``goal``, or None when the goal does not fit it
    (with ``like``, the goal the template was recorded from, also when a value is of another kind than
    the one its slot held there: see :func:`misfit`).

    The template's fixed text must be the goal's, regardless of letter case and spacing. A quoted slot
    binds the quoted text; an unquoted one any span of words between the fixed text around it (a
    title of any length, lowercase connectors and all), or where it stands next to another slot, one
    token or, only when the goal fits no other way, a time with its meridiem ("12:21 AM") or a date
    written with spaces ("Nov 5, 2016").
    """
    found, _ = _fitting(template, goal)
    if found is None:
        return None
    values = {int(name[1:]): value for name, value in found.groupdict().items()}
    if like is not None and misfit(template, values, like) is not None:
        return None
    return values


def unbound(template: str, goal: str) -> str:
    """Where ``goal`` stops reading like ``template``, for a person: the first stretch of the template's
    fixed text that the goal does not continue with (or the goal's words after the template's end)."""
    parts = [part for part in re.split(r"(\{\d{1,3}\})", template) if part]
    stripped = goal.strip()
    for count in range(1, len(parts) + 1):
        prefix = "".join(parts[:count])
        if _prefix_pattern(prefix).match(stripped) is None:
            expected = parts[count - 1]
            if not expected.strip() and count < len(parts):
                expected = parts[count]
            if SLOT.fullmatch(expected):
                return f'the goal has no value where the template "{template}" has {expected}'
            return f'the goal does not read "{" ".join(expected.split())}" where the template "{template}" does'
    return f'the goal goes on where the template "{template}" ends'


def _fitting(template: str, goal: str) -> tuple[re.Match[str] | None, int]:
    """How ``goal`` fits ``template``, and where in the goal the text that fits begins. A goal or template with
    something to set aside (:mod:`.reading`: "... Answer with the ID only.") is first read for what identifies the
    task, when the template keeps every slot so: a slot never takes in how the answer must be written."""
    stripped = goal.strip()
    read, read_template = read_goal(stripped).text, read_goal(template).text
    if (read != stripped or read_template != template) and (read_template == template or set(
            SLOT.findall(read_template)) == set(SLOT.findall(template))):
        found, offset = _pattern(read_template).match(read), goal.find(read)
        if found is not None and offset >= 0:
            return found, offset
    return _pattern(template).match(stripped), len(goal) - len(goal.lstrip())


@lru_cache(maxsize=1024)
def _prefix_pattern(prefix: str) -> re.Pattern[str]:
    return re.compile(_pattern(prefix).pattern.removesuffix(f"[{re.escape(_CLOSING)}]*$"), re.IGNORECASE)


def same_wording(one: str, other: str) -> bool:
    """Whether two templates (or goals) read the same, regardless of case, spacing and a closing stop."""
    return key(one).rstrip(_CLOSING) == key(other).rstrip(_CLOSING)


def bound_spans(template: str, goal: str) -> list[GoalValue] | None:
    """Where in ``goal`` each slot of ``template`` binds (a repeated slot once), or None when it does not fit."""
    found, offset = _fitting(template, goal)
    if found is None:
        return None
    return [GoalValue(value, found.start(name) + offset, found.end(name) + offset, False)
            for name, value in found.groupdict().items()]


def misfit(template: str, values: dict[int, str], like: str, *, typed: frozenset[int] = frozenset()) -> str | None:
    """Why slot values bound from a goal are not of the kind the same slots held in ``like`` (the goal the
    template was recorded from): a number, a time or a date must stay one (a count of up to three digits may be
    written as a word), one value may not become a list ("a, b") or a path ("a>b") unless it is only typed
    (``typed``: "Good catch, thanks" is one comment), and free text may not grow far beyond its recorded length.
    None when they fit."""
    recorded = bind(template, like) or {}
    for number, value in sorted(values.items()):
        earlier = recorded.get(number)
        if earlier is None:
            continue
        kind, was = value_kind(value), value_kind(earlier)
        if was != "text" and kind != was and not (_COUNT.fullmatch(earlier.strip()) and count_digits(value)):
            return 'slot {%d} held a %s ("%s") when recorded; this goal gives "%s"' % (number, was, earlier, value)
        if _LIST.search(value) and not _LIST.search(earlier) and number not in typed:
            return 'slot {%d} held one value ("%s") when recorded; this goal gives several ("%s")' % (
                number, earlier, value)
        words, before = len(value.split()), len(earlier.split())
        if words > max(3 * before, before + 5):
            return 'slot {%d} held %d word%s ("%s") when recorded; this goal gives %d' % (
                number, before, "" if before == 1 else "s", earlier, words)
    return None


def in_recorded_form(template: str, values: dict[int, str], like: str) -> dict[int, str]:
    """``values`` with each count written as a word ("five") in its digits where the same slot held a count in
    ``like`` (the goal the template was recorded from): a run that typed "2" for "the last 2 orders" types "5" for
    "the last five orders"."""
    recorded = bind(template, like) or {}
    return {number: digits if (digits := count_digits(value)) is not None and number in recorded
            and _COUNT.fullmatch(recorded[number].strip()) else value for number, value in values.items()}


def value_kind(text: str) -> str:
    """What a slot's value is: ``number``, ``time``, ``date`` or ``text``."""
    text = text.strip()
    if _NUMBER.match(text) or re.fullmatch(GROUPED_NUMBER, text):
        return "number"
    if re.fullmatch(rf"{TIME_12H}|\d{{1,2}}:[0-5]\d", text):
        return "time"
    if read_date(text) is not None:
        return "date"
    return "text"


@lru_cache(maxsize=4096)
def _pattern(template: str) -> re.Pattern[str]:
    pattern = ["^"]
    position = 0
    seen: set[str] = set()
    slots = list(SLOT.finditer(template))
    for index, match in enumerate(slots):
        pattern.append(_literal(template[position:match.start()]))
        number = match.group(1)
        quoted = template[match.start() - 1:match.start()] in ('"', "“", "'")
        beside = (index > 0 and not template[slots[index - 1].end():match.start()].strip()) or (
            index + 1 < len(slots) and not template[match.end():slots[index + 1].start()].strip())
        if number in seen:
            pattern.append(f"(?P=s{number})")
        elif quoted:
            pattern.append(f"(?P<s{number}>[^\"”\n]+?)")
        else:
            pattern.append(f"(?P<s{number}>{_UNQUOTED_SLOT if beside else _SPAN_SLOT})")
        seen.add(number)
        position = match.end()
    pattern += [_literal(template[position:].rstrip(_CLOSING)), f"[{re.escape(_CLOSING)}]*$"]
    return re.compile("".join(pattern), re.IGNORECASE)


def _literal(text: str) -> str:
    return r"\s+".join(re.escape(word) for word in text.split(" ")) if text.strip() else re.escape(text)


#: Splits returned at most, slots lengthened at most, and later occurrences of a slot's following text tried.
MAX_SPLITS = 4
_LONGER_SLOTS = 3
_LATER = 3
#: Templates with more slots are lists or forms, whose values a comma or a field separates, not a word; and a
#: template that nearly binds a goal can take its pattern long to refuse when it has many slots.
MAX_SLOTS = 4
_WORD = re.compile(r"[^\W\d_]")


def bindings(template: str, goal: str) -> list[dict[int, str]]:
    """The distinct ways ``goal`` binds ``template`` (at most :data:`MAX_SPLITS`), :func:`bind`'s first;
    none when it does not bind. Each other way lengthens one slot's value to a later occurrence of the
    fixed text after it and binds the rest as :func:`bind` does (so no pattern can backtrack for long)."""
    first = bind(template, goal)
    if first is None:
        return []
    found = [first]
    if len(first) > MAX_SLOTS:
        return found
    text = goal.strip()
    match = _pattern(template).match(text)
    slots = list(SLOT.finditer(template))
    lengthened = 0
    for index, slot in enumerate(slots):
        following = template[slot.end():slots[index + 1].start() if index + 1 < len(slots) else len(template)]
        number = int(slot.group(1))
        if match is None or not _WORD.search(following) or lengthened >= _LONGER_SLOTS \
                or f"s{number}" not in match.groupdict():
            continue
        lengthened += 1
        start, end = match.span(f"s{number}")
        joint = re.compile(r"\s+".join(map(re.escape, following.split())), re.IGNORECASE)
        for later in list(joint.finditer(text, end + 1))[:_LATER]:
            value = text[start:later.start()].strip()
            if "{" in value or "}" in value:
                continue
            values = bind(template.replace(slot.group(0), value, 1), goal) if template.count(slot.group(0)) == 1 \
                else None
            if values is not None and (split := {**values, number: value}) not in found:
                found.append(dict(sorted(split.items())))
            if len(found) >= MAX_SPLITS:
                return found
    return found
