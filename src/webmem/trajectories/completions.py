"""Suggestions that complete the goal's values: "Nicaragua" picked after typing "Nica" for the goal "an
item that starts with "Nica" and ends with "ua"". Such a target's name is stored as its slots around a
gap (``text "{1}…{2}"``, the step marked ``completes``); replay acts on the one element of the role whose
name starts with the first value and ends with the second, and hands over when none or several do. Only a
name picked after the run typed its start counts: a button "Looking" clicked for "Look" is no suggestion.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.models import Step
from .evidence import GoalValue, found_as_word, key, parse_identity

#: Stands for the text between a completed name's values.
GAP = "…"
MIN_VALUE_CHARS = 2  # "a" begins too many names to say which one was meant


def completing_values(units: Sequence[GoalValue], steps: Sequence[Step]) -> dict[int, tuple[GoalValue, GoalValue | None]]:
    """For each step whose target's name is longer than a quoted value of the goal that an earlier step typed
    and that the name begins with (and may end with another, which may overlap it: "Egyp" and "ypt" in
    "Egypt"): those values, the longest that fit."""
    quoted = [unit for unit in units if unit.quoted and len(unit.text.strip()) >= MIN_VALUE_CHARS]
    found: dict[int, tuple[GoalValue, GoalValue | None]] = {}
    typed: set[str] = set()
    for index, step in enumerate(steps if quoted else ()):
        if step.action in ("fill", "type") and step.value:
            typed.add(key(step.value))
        identity = parse_identity(step.target) if typed else None
        name = key(identity[1]) if identity is not None else ""
        if not name or any(found_as_word(key(unit.text), name) for unit in units):
            continue  # a name that holds a goal value as a word of its own is slotted as it stands
        starts = [unit for unit in quoted if key(unit.text) in typed and name.startswith(key(unit.text))
                  and len(name) > len(key(unit.text))]
        if not starts:
            continue
        start = max(starts, key=lambda unit: len(unit.text))
        ends = [unit for unit in quoted if unit != start and name.endswith(key(unit.text))
                and len(name) > len(key(unit.text))]
        found[index] = (start, max(ends, key=lambda unit: len(unit.text)) if ends else None)
    return found


def completing_units(completed: dict[int, tuple[GoalValue, GoalValue | None]]) -> set[GoalValue]:
    return {unit for pair in completed.values() for unit in pair if unit is not None}


def with_completions(slotted: list[Step], completed: dict[int, tuple[GoalValue, GoalValue | None]],
                     slots: dict[str, int]) -> list[Step]:
    """``slotted`` with each completed step's name written as its slots around the gap (``{1}…{2}``)."""
    steps = list(slotted)
    for index, (first, last) in completed.items():
        target = steps[index].target or ""
        name = '"{%d}%s%s"' % (slots[first.text], GAP, "" if last is None else "{%d}" % slots[last.text])
        steps[index] = steps[index].model_copy(update={"target": target[:target.index('"')] + name, "completes": True})
    return steps


def completes(pattern: str, name: str) -> bool:
    """Whether ``name`` completes a filled pattern ("Egyp…ypt"): it begins and ends with the pattern's parts
    (in any letter case; they may overlap) and is longer than either."""
    head, _, tail = pattern.partition(GAP)
    name, head, tail = key(name), key(head), key(tail)
    return len(name) > max(len(head), len(tail)) and name.startswith(head) and name.endswith(tail)


def completions(pattern: str, names: Sequence[str]) -> list[str]:
    """The distinct names that complete ``pattern``, in order."""
    return list(dict.fromkeys(name for name in names if completes(pattern, name)))


def hover_before_pick(step: Step, following: Step | None) -> bool:
    """Whether ``step`` hovers over the suggestion that ``following`` clicks: the hover adds nothing but a
    second copy of the name (which a menu announces), so replay and scripts leave it out."""
    return bool(step.completes) and step.action == "hover" and following is not None \
        and following.action == "click" and following.target == step.target


def started_by(pattern: str) -> str:
    """What a completed name begins with: the text a run typed before picking the suggestion."""
    return pattern.partition(GAP)[0]
