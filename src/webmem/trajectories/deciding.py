"""Goal values that decide which element a step acts on, where the step's target cannot follow them.

"Show the tickets with priority major" chose "Priority" in a select that adds a filter, then chose "major"
in the select that appeared, known only by ``select[name="0_priority"]``: the first value decided which
element the second step acts on. As a slot, it would make "... with owner alice" replay the priority's
select (where the owner's filter shows a text box). Such a value stays words of the goal template, so that
each of its values is a task of its own.

A step whose target's name the template slots follows the goal: replay looks for the element the new
values name, with its role, and the name's other words must be on the page as they are. So a value decides
the element of such a step when its words are in what the slots leave of the name. Any other step's
element is known by its name, the names its selector finds it by (attribute values, ids, classes, quoted
texts; not its structure) and its own signals (label, row header, ``name`` attribute...; not the text
around it, which may hold any value of the task): a value whose words are in one of them decides it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.elements import naming_texts, selector_names
from ..core.models import Step
from .evidence import GoalValue, key, parse_identity

_TOKEN = re.compile(r"[^\W_]+")


def deciding_values(candidates: Sequence[GoalValue], steps: Sequence[Step], *,
                    kept: Sequence[GoalValue] = ()) -> set[GoalValue]:
    """The ``candidates`` that decide the element of a step whose target does not follow them, given that
    the other candidates and ``kept`` become slots (a value dropped may leave another deciding in turn)."""
    slots = [*candidates, *kept]
    dropped: set[GoalValue] = set()
    while True:
        texts = [value.text for value in slots if value not in dropped]
        deciding = {value for value in candidates if value not in dropped and _tokens(value.text) and any(
            _within(_tokens(value.text), _tokens(name)) for step in steps for name in _identifying(step, texts))}
        if not deciding:
            return dropped
        dropped |= deciding


def _identifying(step: Step, slots: list[str]) -> list[str]:
    """The texts that tell which element ``step`` acts on, with ``slots`` filled by the goal: what the slots
    leave of a target's name they fill, else its name, selector names and own signals."""
    identity = parse_identity(step.target)
    name = identity[1] if identity is not None else ""
    if name:
        left = _unslotted(name, slots)
        if left != name:
            return [left]
    return [name, *selector_names(step.selector), *naming_texts(step.element)]


def _unslotted(name: str, slots: list[str]) -> str:
    """What slots leave of a target's name, as ``slots._slotted_step`` fills it: nothing when the name is a
    slot's value (in any letter case), else the name without each value that is in it as words."""
    if any(key(name) == key(text) for text in slots):
        return ""
    for text in sorted(slots, key=len, reverse=True):
        if text in name:
            name = re.sub(rf"(?<![\w{{]){re.escape(text)}(?![\w}}])", " ", name)
    return name


def _tokens(text: str) -> list[str]:
    """The words and numbers of a text, in lower case: "0_priority" holds "0" and "priority"."""
    return _TOKEN.findall(text.casefold())


def _within(wanted: list[str], tokens: list[str]) -> bool:
    size = len(wanted)
    return any(tokens[start:start + size] == wanted for start in range(len(tokens) - size + 1))
