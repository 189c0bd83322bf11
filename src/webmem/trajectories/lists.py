"""Lists of another length: "Select A, B and click Submit" replayed for "Select C, D, E and click Submit".

A recorded run whose goal names a list of values ("Select {1}, {2} and click {3}") and whose steps do
the same thing to each of them, one block of steps per value in the order the goal names them, is
replayed for a goal that names more or fewer values: one block per value of the new goal. A single
value counts as a list of one ("Select {1} and click {2}" with one check step repeats that step).
Nothing is resized unless each block is the first one with only its slot changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.models import Step
from .binding import bind, misfit, value_kind
from .slots import SLOT, SLOT_REFERENCE

#: What may stand between two values of one list in a goal: a comma or a semicolon.
_SEPARATOR = re.compile(r"\s*[,;]\s*")
_ITEM_CLOSING = ".!?"
MAX_ITEMS = 50


@dataclass(frozen=True)
class Resized:
    """A recorded run made to fit a goal whose list has another length: the template as it reads for
    that goal, the slotted steps with one block per value, and every slot's value."""

    template: str
    steps: list[Step]
    values: dict[int, str]


def resize_lists(template: str, steps: Sequence[Step], goal: str, recorded_goal: str) -> Resized | None:
    """``template`` and its slotted ``steps`` made to fit ``goal`` by giving one of its lists the number
    of values the goal names, or None when no list of the template can be resized to fit it."""
    parts = [part for part in re.split(r"(\{\d{1,3}\})", template) if part]
    for start, end in _runs(parts):
        resized = _resize(parts, start, end, steps, goal, recorded_goal)
        if resized is not None:
            return resized
    return None


@dataclass(frozen=True)
class ListedSteps:
    """A template's list whose steps do the same to each value: the template with the list as one slot
    (its first), which binds a list of any length, and the steps of the list's first value."""

    template: str
    slot: int
    first: int  # the first value's steps are steps[first:end]
    end: int
    after: int  # the steps after the list start at steps[after:]


def listed_steps(template: str, steps: Sequence[Step]) -> ListedSteps | None:
    """The first list in ``template`` whose slotted ``steps`` are one block per value, each the first block
    with only its slot changed; None when there is none. A value alone is a list of one only when its steps
    click or check the elements it names ("Select {1} and click {2}"): a typed value may hold a comma."""
    parts = [part for part in re.split(r"(\{\d{1,3}\})", template) if part]
    for start, end in _runs(parts):
        numbers = [int(SLOT.fullmatch(parts[index]).group(1)) for index in range(start, end + 1, 2)]  # type: ignore[union-attr]
        blocks = _blocks(steps, numbers)
        if blocks is not None and end == start and not _chooses(steps, blocks[0]):
            continue
        if blocks is not None:
            collapsed = "".join(parts[:start]) + parts[start] + "".join(parts[end + 1:])
            return ListedSteps(collapsed, numbers[0], blocks[0][0], blocks[0][-1] + 1, blocks[-1][-1] + 1)
    return None


def _runs(parts: list[str]) -> list[tuple[int, int]]:
    """Each list of the template as (first, last) indexes into ``parts``: unquoted slots that only a
    comma or a semicolon separate (a slot alone is a list of one)."""
    runs: list[tuple[int, int]] = []
    index = 0
    while index < len(parts):
        if not SLOT.fullmatch(parts[index]) or _quoted(parts, index):
            index += 1
            continue
        end = index
        while end + 2 < len(parts) and _SEPARATOR.fullmatch(parts[end + 1]) and SLOT.fullmatch(parts[end + 2]):
            end += 2
        runs.append((index, end))
        index = end + 1
    return runs


def _quoted(parts: list[str], index: int) -> bool:
    before = parts[index - 1] if index else ""
    return before.endswith(('"', "“", "'"))


def _resize(parts: list[str], start: int, end: int, steps: Sequence[Step], goal: str,
            recorded_goal: str) -> Resized | None:
    numbers = [int(SLOT.fullmatch(parts[index]).group(1)) for index in range(start, end + 1, 2)]  # type: ignore[union-attr]
    blocks = _blocks(steps, numbers)
    if blocks is None or (end == start and not _chooses(steps, blocks[0])):
        return None  # one value typed is one value, comma and all ("Good catch, thanks")
    collapsed = "".join(parts[:start]) + parts[start] + "".join(parts[end + 1:])
    bound = bind(collapsed, goal)
    if bound is None:
        return None
    listed_text = bound[numbers[0]].strip().rstrip(_ITEM_CLOSING)
    items = [item.strip() for item in _SEPARATOR.split(listed_text)]
    if not 1 <= len(items) <= MAX_ITEMS or len(items) == len(numbers) or not all(items):
        return None
    others = {number: value for number, value in bound.items() if number != numbers[0]}
    recorded = bind("".join(parts), recorded_goal) or {}
    if misfit(collapsed, others, recorded_goal) is not None or not _like(items, recorded.get(numbers[0], "")):
        return None
    fresh = max((int(number) for number in SLOT.findall("".join(parts))), default=0) + 1
    item_numbers = numbers[:len(items)] + list(range(fresh, fresh + len(items) - len(numbers)))
    values = dict(others)
    values.update(zip(item_numbers, items))
    separators = [*_SEPARATOR.findall(listed_text), ""]
    listed = "".join("{%d}%s" % (number, separator) for number, separator in zip(item_numbers, separators))
    template = "".join(parts[:start]) + listed + "".join(parts[end + 1:])
    if bind(template, goal) != values:
        return None
    first, last = blocks[0][0], blocks[-1][-1]
    body: list[Step] = []
    for position, number in enumerate(item_numbers):
        if position < len(blocks):
            body += [steps[index] for index in blocks[position]]
        else:
            body += [_renumbered(steps[index], numbers[0], number) for index in blocks[0]]
    return Resized(template, [*steps[:first], *body, *steps[last + 1:]], values)


def _chooses(steps: Sequence[Step], block: list[int]) -> bool:
    """Whether a value's steps click or check the elements it names (a value alone is then a list of one)."""
    return all(steps[index].action in _CHOOSING and steps[index].value is None for index in block)


def _like(items: list[str], recorded: str) -> bool:
    """Whether each value of the new list is of the kind the list's first value was when recorded (a
    number stays a number) and not far longer."""
    kind, words = value_kind(recorded), len(recorded.split())
    return all((kind == "text" or value_kind(item) == kind) and len(item.split()) <= max(3 * words, words + 5)
               for item in items)


def _blocks(steps: Sequence[Step], numbers: list[int]) -> list[list[int]] | None:
    """The steps of each slot of a list, as consecutive blocks in the list's order, each the first block
    with only its slot changed; None when the steps are not laid out that way."""
    blocks: list[list[int]] = []
    for number in numbers:
        block = [index for index, step in enumerate(steps) if number in _slots_of(step)]
        if not block or block != list(range(block[0], block[-1] + 1)):
            return None
        if any(_slots_of(steps[index]) != {number} for index in block):
            return None
        if blocks and (block[0] != blocks[-1][-1] + 1 or len(block) != len(blocks[0])):
            return None
        if blocks and any(_renumbered(steps[index], number, numbers[0]).model_dump(include=_SHAPE) !=
                          steps[first].model_dump(include=_SHAPE) for index, first in zip(block, blocks[0])):
            return None
        blocks.append(block)
    return blocks


_SHAPE = {"action", "target", "value", "url"}
_CHOOSING = ("click", "check")


def _slots_of(step: Step) -> set[int]:
    return {int(found.group(1)) for text in (step.target, step.value, step.url) if text
            for found in SLOT_REFERENCE.finditer(text)}


def _renumbered(step: Step, old: int, new: int) -> Step:
    """``step`` with every reference to slot ``old`` made one to slot ``new``; its selector, which
    reached the element of the old value, is dropped."""
    def renumber(text: str | None) -> str | None:
        if not text:
            return text
        return SLOT_REFERENCE.sub(lambda found: "{%d%s}" % (new, found.group(2)) if int(found.group(1)) == old
                                  else found.group(), text)

    return step.model_copy(update={"target": renumber(step.target), "value": renumber(step.value),
                                   "url": renumber(step.url), "selector": None})
