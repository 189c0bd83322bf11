"""Parameterised trajectories: the values of a goal that recur in its steps become slots.

``Enter "Kasie" and press Submit`` with a step ``fill textbox "" "Kasie"`` becomes the goal template
``Enter "{1}" and press {2}`` and the slotted step ``fill textbox "" "{1}"``; a new goal that fits the
template binds the slots, and the steps are replayed with the new values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.models import Step

_QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|(?<![\w])\'([^\'\n]{1,200})\'(?![\w])')
_WORD = re.compile(r"[^\W_](?:[\w'.@-]*[^\W_])?")
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*$")
_SLOT = re.compile(r"\{(\d{1,3})\}")
#: A value typed into a secret field that came from the goal is stored as a reference to that value.
GOAL_VALUE = re.compile(r"^\{goal:(\d{1,3})\}$")
_BRACES = re.compile(r"[{}]")


@dataclass(frozen=True)
class GoalValue:
    text: str
    start: int
    end: int
    quoted: bool


def goal_values(goal: str) -> list[GoalValue]:
    """The values a goal names, in order: quoted strings, numbers, and words with a capital (not the
    goal's first word) or a digit in them."""
    values: list[GoalValue] = []
    taken: list[tuple[int, int]] = []
    for match in _QUOTED.finditer(goal):
        group = next(index for index in (1, 2, 3) if match.group(index) is not None)
        if match.group(group).strip():
            values.append(GoalValue(match.group(group), match.start(group), match.end(group), True))
            taken.append((match.start(), match.end()))
    for match in _WORD.finditer(goal):
        if any(start <= match.start() < end for start, end in taken):
            continue
        word = match.group()
        first_word = not goal[:match.start()].strip()
        if _NUMBER.match(word) or any(char.isdigit() for char in word) or (
            not first_word and (word[0].isupper() or any(char.isupper() for char in word[1:]))
        ):
            values.append(GoalValue(word, match.start(), match.end(), False))
    values.sort(key=lambda value: value.start)
    return values


def goal_value_reference(goal: str, value: str) -> str | None:
    """``{goal:N}`` when ``value`` is the goal's N-th value (to store in place of a secret typed from it)."""
    for number, candidate in enumerate(goal_values(goal), start=1):
        if candidate.text == value:
            return "{goal:%d}" % number
    return None


def parameterise(goal: str, steps: Sequence[Step]) -> tuple[str, list[Step]] | None:
    """The goal template and slotted steps, or None when no value of the goal recurs in the steps
    (or the goal or steps contain braces of their own, which a template could not tell apart)."""
    if _BRACES.search(goal):
        return None
    values = goal_values(goal)
    if any(_BRACES.search(step.target or "") or (
        step.value and _BRACES.search(step.value) and not GOAL_VALUE.match(step.value)
    ) for step in steps):
        return None
    slots: dict[str, int] = {}
    for index, value in enumerate(values, start=1):
        referenced = any(step.value == "{goal:%d}" % index for step in steps)
        if referenced or any(_occurs(value.text, step) for step in steps):
            slots.setdefault(value.text, len(slots) + 1)
    if not slots:
        return None
    template_parts: list[str] = []
    position = 0
    for value in values:
        if value.text in slots:
            template_parts += [goal[position:value.start], "{%d}" % slots[value.text]]
            position = value.end
    template = "".join([*template_parts, goal[position:]])
    numbered = {index: value.text for index, value in enumerate(values, start=1)}
    slotted = [_slotted_step(step, slots, numbered) for step in steps]
    return template, slotted


def bind(template: str, goal: str) -> dict[int, str] | None:
    """The slot values that make ``template`` read as ``goal``, or None when the goal does not fit it."""
    pattern = ["^"]
    position = 0
    seen: set[str] = set()
    for match in _SLOT.finditer(template):
        pattern.append(_literal(template[position:match.start()]))
        number = match.group(1)
        quoted = template[match.start() - 1:match.start()] in ('"', "“", "'")
        if number in seen:
            pattern.append(f"(?P=s{number})")
        else:
            seen.add(number)
            pattern.append(f"(?P<s{number}>[^\"”\n]+?)" if quoted else f"(?P<s{number}>[^\\s\"“”]+?)")
        position = match.end()
    pattern += [_literal(template[position:]), "$"]
    found = re.match("".join(pattern), goal.strip())
    if found is None:
        return None
    return {int(name[1:]): value for name, value in found.groupdict().items()}


def fill(steps: Sequence[Step], values: dict[int, str]) -> list[Step]:
    """The slotted steps with each ``{n}`` replaced by its value."""
    def filled(text: str | None) -> str | None:
        return _SLOT.sub(lambda match: values.get(int(match.group(1)), match.group()), text) if text else text

    return [step.model_copy(update={"value": filled(step.value), "target": filled(step.target)}) for step in steps]


def _literal(text: str) -> str:
    return r"\s+".join(re.escape(word) for word in text.split(" ")) if text.strip() else re.escape(text)


def _occurs(value: str, step: Step) -> bool:
    pattern = re.compile(rf"(?<![\w]){re.escape(value)}(?![\w])")
    return bool(step.value and pattern.search(step.value)) or bool(step.target and pattern.search(step.target))


def _slotted_step(step: Step, slots: dict[str, int], numbered: dict[int, str]) -> Step:
    def slotted(text: str | None) -> str | None:
        if not text:
            return text
        for value in sorted(slots, key=len, reverse=True):
            text = re.sub(rf"(?<![\w{{]){re.escape(value)}(?![\w}}])", "{%d}" % slots[value], text)
        return text

    value = step.value
    reference = GOAL_VALUE.match(value) if value else None
    if reference is not None:
        original = numbered.get(int(reference.group(1)))
        value = "{%d}" % slots[original] if original in slots else None
    else:
        value = slotted(value)
    return step.model_copy(update={"value": value, "target": slotted(step.target)})
