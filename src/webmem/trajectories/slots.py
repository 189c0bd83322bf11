"""Parameterised trajectories: the values of a goal that recur in its steps become slots.

``Enter "Kasie" and press Submit`` with a step ``fill textbox "" "Kasie"`` becomes the goal template
``Enter "{1}" and press {2}`` and the slotted step ``fill textbox "" "{1}"``; a new goal that fits the
template binds the slots, and the steps are replayed with the new values.

A typed value may also be derived from a goal value by a conversion (``conversions``): the goal "Enter
11:20 AM as the time" with a step typing "11:20" becomes ``Enter {1} as the time`` and ``{1|time24}``. A derived value names every known conversion that reproduced the value
typed; on replay it is filled only when they all read the new value and agree on it. A time with
its meridiem, a date or a number with thousands separators is one goal value for this purpose
(``goal_spans``), taken as a whole only when a conversion of it is what the steps typed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..core.models import Step
from ..core.redaction import PLACEHOLDER
from ..core.terms import STOP_WORDS
from .completions import completing_units, completing_values, with_completions
from .conversions import (
    GROUPED_NUMBER,
    SLASHED_DATE,
    SPACED_DATE,
    TIME_12H,
    derive,
    reproducing,
)
from .deciding import deciding_values
from .evidence import WORD, GoalValue, found_as_word, key, parse_identity, used_spans
from .places import place_spans

_QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|(?<![\w])\'([^\'\n]{1,200})\'(?![\w])')
_MINUS = re.compile(r"(?<![\w.-])-")  # the sign of a number, not a hyphen ("COVID-19") or a range ("10-12")
#: A slot of a goal template: ``{1}``.
SLOT = re.compile(r"\{(\d{1,3})\}")
#: A slot in a slotted step: ``{1}`` for the goal value itself, ``{1|time24}`` or ``{1|us_date|us_date_short}``
#: for a value derived from it by the conversions named (all of which reproduced the recorded value).
SLOT_REFERENCE = re.compile(r"\{(\d{1,3})((?:\|[a-z][a-z0-9_]*)*)\}")
#: A value typed into a secret field that came from the goal is stored as a reference to that value.
GOAL_VALUE = re.compile(r"^\{goal:(\d{1,3})\}$")
_BRACES = re.compile(r"[{}]")
_COMPOUND = re.compile(rf"(?<![\w:/.,-])(?:{TIME_12H}|{SPACED_DATE}|{SLASHED_DATE}|{GROUPED_NUMBER})(?![\w:/-]|[.,]\d)")
_TYPED = frozenset({"fill", "type", "select"})
#: Single words separated by commas or semicolons: "fzzqo, NYYyS82" (a list of values).
_LISTED = re.compile(r"(?<![\w-])[^\W_]+(?:\s*[,;]\s*[^\W_]+)+(?![\w-])")
#: Where such a list ends: "and" or "or", or the end of the goal or of its sentence.
_LIST_END = re.compile(r"\s*(?:(?:and|or)\b|[.!?]?\s*$)", re.IGNORECASE)


def goal_values(goal: str) -> list[GoalValue]:
    """The values a goal names, in order: quoted strings, numbers, and words with a capital (not the
    goal's first word) or a digit in them."""
    return list(_goal_values(goal))


@lru_cache(maxsize=4096)  # a context reads the values of the same few goals (its own, its sessions') every turn
def _goal_values(goal: str) -> tuple[GoalValue, ...]:
    values: list[GoalValue] = []
    taken: list[tuple[int, int]] = []
    unquoted = goal  # the goal with its quoted values blanked out: the words outside them
    for match in _QUOTED.finditer(goal):
        group = match.lastindex  # the one of the three groups that matched
        if match.group(group).strip():
            values.append(GoalValue(match.group(group), match.start(group), match.end(group), True))
            taken.append((match.start(), match.end()))
            unquoted = unquoted[:match.start()] + " " * (match.end() - match.start()) + unquoted[match.end():]
    opening = len(goal) - len(goal.lstrip())  # where the first word starts: only blanks before it
    for match in WORD.finditer(unquoted):
        begins = match.start()
        word = match.group()
        if word.isalpha() and word.islower():  # most words: no digit, no capital
            continue
        if any(map(str.isdigit, word)) or (begins > opening and any(map(str.isupper, word))):
            signed = word[0].isdigit() and begins > 0 and _MINUS.match(goal, begins - 1) is not None  # "-10"
            values.append(GoalValue(goal[begins - signed:match.end()], begins - signed, match.end(), False))
    if "," in goal or ";" in goal:
        values += _listed_with_values(goal, values, taken, opening)
    if taken or len(values) > 1:
        values.sort(key=lambda value: value.start)
    return tuple(values)


def _listed_with_values(goal: str, values: list[GoalValue], taken: list[tuple[int, int]],
                        opening: int) -> list[GoalValue]:
    """The other words of a list of single words, half or more of them values already ("Select fzzqo,
    NYYyS82 and click Submit"): a list holds values of one kind, lower-case ones too. A list ends the goal
    or is followed by "and" or "or"."""
    found = {value.start for value in values}
    added: list[GoalValue] = []
    for listed in _LISTED.finditer(goal):
        if not _LIST_END.match(goal, listed.end()):
            continue  # "by Ann Carson, published in 2011": the words go on, it is no list
        items = [item for item in WORD.finditer(goal, listed.start(), listed.end())
                 if item.group().casefold() not in STOP_WORDS]  # "Settings, then Privacy" lists no "then"
        if len(items) < 2 or sum(item.start() in found for item in items) * 2 < len(items):
            continue
        added += [GoalValue(item.group(), item.start(), item.end(), False) for item in items
                  if item.start() not in found and item.start() > opening
                  and not any(start <= item.start() < end for start, end in taken)]
    return added


def goal_value_reference(goal: str, value: str) -> str | None:
    """``{goal:N}`` when ``value`` is the goal's N-th value (to store in place of a secret typed from it)."""
    for number, candidate in enumerate(goal_values(goal), start=1):
        if candidate.text == value:
            return "{goal:%d}" % number
    return None


def goal_spans(goal: str) -> list[GoalValue]:
    """The goal's values with the compound ones taken whole, in order: a time with its meridiem ("11:20 AM"),
    a date ("Nov 20, 2016", "11/20/2016") or a grouped number ("1,000") is one span, and the ordinary goal
    values inside it are not listed on their own."""
    return _with_compounds(goal_values(goal), _compound_spans(goal))


def parameterise(
    goal: str, steps: Sequence[Step], *, spans: Sequence[GoalValue] | None = None
) -> tuple[str, list[Step]] | None:
    """The goal template and slotted steps, or None when no value of the goal recurs in the steps
    (or the goal or steps contain braces of their own, which a template could not tell apart).

    The slots are the spans of the goal that a step used whole (see :mod:`.evidence`), and the quoted
    strings, numbers and capitalised words of the goal that recur in the steps; with ``spans``, exactly
    those (the values another template binds in this goal); in either case less those that decide which
    element a step acts on where its target cannot follow them (see :mod:`.deciding`). A typed value that is no goal value as it
    stands but one goal value converted (see ``conversions``) becomes ``{n|name|...}`` with every
    conversion that reproduces it. A compound span is taken whole only when a conversion of it was
    typed and no part of it is used on its own by another step.
    """
    if _BRACES.search(goal) or (spans is None and not _may_hold_values(goal, steps)):
        return None
    values = goal_values(goal)
    if any(_BRACES.search(step.target or "") or (
        step.value and _BRACES.search(step.value) and not GOAL_VALUE.match(step.value)
        and not PLACEHOLDER.fullmatch(step.value)
    ) for step in steps):
        return None
    referenced = {int(match.group(1)) for step in steps if step.value and (match := GOAL_VALUE.match(step.value))}
    number_of = {value: index for index, value in enumerate(values, start=1)}
    if spans is not None:
        used = units = sorted(spans, key=lambda unit: unit.start)
        places = {span: placed for span, placed in place_spans(goal, steps).items() if span in spans}
    else:
        compounds = [span for span in _compound_spans(goal) if _borne_out(span, values, steps, referenced)]
        units = _with_compounds(values, compounds)
        kept = [unit for unit in units if unit.quoted or unit in compounds or number_of.get(unit) in referenced]
        used = used_spans(goal, steps, kept)
        units = sorted([*used, *(unit for unit in units if unit in kept or not _overlapping(unit, used))],
                       key=lambda unit: unit.start)
        places = {span: placed for span, placed in place_spans(goal, steps, units).items()
                  if not any(_overlapping(span, [unit]) for unit in units if unit != span)}
        units = sorted({*units, *places}, key=lambda unit: unit.start)
    fixed = [unit for unit in units if unit in places or number_of.get(unit) in referenced]
    deciding = deciding_values([unit for unit in units if unit not in fixed], steps, kept=fixed)
    units = [unit for unit in units if unit not in deciding]
    derived, completed = _derived(units, steps), completing_values(units, steps)
    sources = {source for source, _ in derived.values()}
    rest = [step.model_copy(update={"value": None}) if index in derived else step for index, step in enumerate(steps)]
    slots: dict[str, int] = {}
    for unit in units:
        if unit in places:
            slots[_place_key(unit)] = len(slots) + 1
        elif unit in used or unit in completing_units(completed) or number_of.get(unit) in referenced or \
                unit.text in sources or any(_occurs(unit.text, step) for step in rest):
            slots.setdefault(unit.text, len(slots) + 1)
    if not slots:
        return None
    template_parts: list[str] = []
    position = 0
    for unit in units:
        name = _place_key(unit) if unit in places else unit.text
        if name in slots:
            template_parts += [goal[position:unit.start], "{%d}" % slots[name]]
            position = unit.end
    template = "".join([*template_parts, goal[position:]])
    numbered = {index: value.text for index, value in enumerate(values, start=1)}
    slotted = [_slotted_step(step, slots, numbered) for step in steps]
    for span, placed in places.items():
        for index in placed:
            slotted[index] = slotted[index].model_copy(update={"place_slot": slots[_place_key(span)]})
    for index, (source, names) in derived.items():
        reference = "{%d|%s}" % (slots[source], "|".join(names))
        slotted[index] = slotted[index].model_copy(update={"value": reference})
    return template, with_completions(slotted, completed, slots)


def _place_key(span: GoalValue) -> str:
    """The slot key of an ordinal that places a step (one per occurrence: "1st ... 1st" are two slots)."""
    return f"\x00place:{span.start}"


def fill(steps: Sequence[Step], values: dict[int, str]) -> list[Step]:
    """The slotted steps with each ``{n}`` replaced by its value (one without a value is left as it is)
    and each derived ``{n|...}`` by the value its conversions agree on, or the whole value None."""
    return [_filled_step(step, values, strict=False)[0] for step in steps]


def fill_checked(steps: Sequence[Step], values: dict[int, str]) -> tuple[list[Step], dict[int, str]]:
    """The slotted steps with their slots filled, and for each step whose value cannot be derived from
    ``values`` (a slot has no value, a recorded conversion cannot read the new value, or the recorded
    conversions disagree on it) why not; such a step keeps its action and target with ``value=None``."""
    filled: list[Step] = []
    unresolved: dict[int, str] = {}
    for index, step in enumerate(steps):
        step, reason = _filled_step(step, values, strict=True)
        filled.append(step)
        if reason is not None:
            unresolved[index] = reason
    return filled, unresolved


def _filled_step(step: Step, values: dict[int, str], *, strict: bool) -> tuple[Step, str | None]:
    value, reason = _filled_text(step.value, values, strict=strict)
    target, target_reason = _filled_text(step.target, values, strict=strict)
    if target is None:
        target = step.target
    return step.model_copy(update={"value": value, "target": target}), reason or target_reason


def _filled_text(text: str | None, values: dict[int, str], *, strict: bool) -> tuple[str | None, str | None]:
    """``text`` with its slots filled, or None and why one of them could not be."""
    if not text:
        return text, None
    reasons: list[str] = []

    def filled(match: re.Match[str]) -> str:
        derived, why = _slot_value(match, values)
        if derived is None and (strict or match.group(2) or int(match.group(1)) in values):
            reasons.append(why)
        return match.group() if derived is None else derived

    result = SLOT_REFERENCE.sub(filled, text)
    return (None, reasons[0]) if reasons else (result, None)


def filled_or(text: str | None, values: dict[int, str], missing: str) -> str | None:
    """``text`` with each slot replaced by the value it stands for under ``values``, or by ``missing``
    when it stands for none (no value for it, or its conversions cannot derive one)."""
    if not text:
        return text

    def filled(match: re.Match[str]) -> str:
        derived = _slot_value(match, values)[0]
        return missing if derived is None else derived

    return SLOT_REFERENCE.sub(filled, text)


def _slot_value(match: re.Match[str], values: dict[int, str]) -> tuple[str | None, str]:
    """The value a slot reference stands for under ``values`` (and ""), or None and why there is none."""
    number, names = int(match.group(1)), tuple(match.group(2).split("|")[1:])
    if number not in values:
        return None, "no value for {%d}" % number
    derived, why = derive(values[number], names)
    if derived is None:
        return None, 'value of {%d} "%s": %s' % (number, values[number], why)
    return derived, ""


def _compound_spans(goal: str) -> list[GoalValue]:
    """The times with a meridiem, dates and grouped numbers of the goal outside its quoted text."""
    quoted = [(match.start(), match.end()) for match in _QUOTED.finditer(goal)]
    return [
        GoalValue(match.group(), match.start(), match.end(), False) for match in _COMPOUND.finditer(goal)
        if not any(start < match.end() and match.start() < end for start, end in quoted)
    ]


def _with_compounds(values: list[GoalValue], compounds: list[GoalValue]) -> list[GoalValue]:
    """``compounds`` and the values outside them, in goal order."""
    outside = [value for value in values if not any(_inside(value, span) for span in compounds)]
    return sorted([*compounds, *outside], key=lambda value: value.start)


def _inside(value: GoalValue, span: GoalValue) -> bool:
    return span.start <= value.start and value.end <= span.end


def _borne_out(span: GoalValue, values: list[GoalValue], steps: Sequence[Step], referenced: set[int]) -> bool:
    """Whether the steps use a compound span whole: a step typed it converted (not as it stands, which its
    parts slot as before), and no part of it is used on its own (in a target, in another step's value
    that does not hold the whole span, or referenced as a secret)."""
    converted = {index for index, step in enumerate(steps) if step.action in _TYPED and step.value
                 and step.value != span.text and reproducing(span.text, step.value)}
    if not converted:
        return False
    for number, part in enumerate(values, start=1):
        if not _inside(part, span):
            continue
        if number in referenced or any(
            found_as_word(part.text, step.target) or (
                index not in converted and found_as_word(part.text, step.value) and not found_as_word(span.text, step.value))
            for index, step in enumerate(steps)
        ):
            return False
    return True


def _derived(units: list[GoalValue], steps: Sequence[Step]) -> dict[int, tuple[str, list[str]]]:
    """For each typed step whose value is no goal value as it stands but exactly one goal value converted:
    that goal value and the conversions that reproduce the step's value."""
    texts = list(dict.fromkeys(unit.text for unit in units))
    derived: dict[int, tuple[str, list[str]]] = {}
    for index, step in enumerate(steps):
        if step.action not in _TYPED or not step.value or step.value in texts or GOAL_VALUE.match(step.value):
            continue
        if step.action == "select" and any(key(text) == key(step.value) for text in texts):
            continue  # an option is chosen by its label in any letter case: the goal's value as it stands
        found = [(text, names) for text in texts if (names := reproducing(text, step.value))]
        if len(found) == 1:
            derived[index] = found[0]
    return derived


def _may_hold_values(goal: str, steps: Sequence[Step]) -> bool:
    """Whether a step may hold a value of the goal (a quick test before the spans are looked for): one typed
    or went to something, or was placed by an ordinal, or its target has a word of the goal in it."""
    if any(step.value or step.target_index is not None for step in steps):
        return True
    targets = " ".join(step.target for step in steps if step.target).casefold()
    return any(word.casefold() in targets for word in WORD.findall(goal))


def _overlapping(unit: GoalValue, spans: Sequence[GoalValue]) -> bool:
    return any(span.start < unit.end and unit.start < span.end for span in spans)


def _occurs(value: str, step: Step) -> bool:
    return found_as_word(value, step.value) or found_as_word(value, step.target)


def _slotted_step(step: Step, slots: dict[str, int], numbered: dict[int, str]) -> Step:
    def slotted(text: str | None) -> str | None:
        if not text:
            return text
        whole = _whole_slot(text, slots)
        if whole is not None:
            return whole
        for value in sorted(slots, key=len, reverse=True):
            if value not in text:
                continue
            text = re.sub(rf"(?<![\w{{]){re.escape(value)}(?![\w}}])", "{%d}" % slots[value], text)
        return text

    value = step.value
    reference = GOAL_VALUE.match(value) if value else None
    if value and PLACEHOLDER.fullmatch(value):
        pass  # a registered secret's placeholder: replay types the secret, whatever the goal says
    elif reference is not None:
        original = numbered.get(int(reference.group(1)))
        value = "{%d}" % slots[original] if original in slots else None
    else:
        value = slotted(value)
    target = step.target
    identity = parse_identity(target)
    whole_name = _whole_slot(identity[1], slots) if identity is not None and identity[1] else None
    if target and whole_name is not None:
        target = target[:target.index('"')] + f'"{whole_name}"'
    else:
        target = slotted(target)
    return step.model_copy(update={"value": value, "target": target})


def _whole_slot(text: str, slots: dict[str, int]) -> str | None:
    """The slot a whole text is, compared without regard to case and spacing; None if none. The page
    is searched for the value the same way (an element's name, a select's option): the goal's "the
    silent river" names the link "The Silent River", which no case conversion would write for every title."""
    wanted = key(text)
    return next(("{%d}" % number for value, number in slots.items() if key(value) == wanted), None)
