"""Places named by the goal: "the 2nd textbox", "the third radio button", "the last link".

When a step acted on one of several elements with the same role and name (``Step.target_index``
of ``target_count``), and the goal names that place with an ordinal, the ordinal is a slot of the
goal template: a new goal's ordinal says which of the elements to act on ("the 3rd textbox").
An ordinal is tied to the step whose role the words after it name ("2nd radio button" -> a radio),
else to the steps in order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.models import Step
from .evidence import GoalValue, parse_identity

_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
ORDINAL = re.compile(r"(?<![\w-])(?:(\d{1,4})(?:st|nd|rd|th)|(" + "|".join(_WORDS) + r"|last))(?![\w-])",
                     re.IGNORECASE)
#: Words a goal uses for an element's role, after the ordinal ("the 2nd input textbox").
_ROLE_WORDS = {
    "textbox": ("textbox", "text box", "input", "field", "text field", "textarea"),
    "radio": ("radio",),
    "checkbox": ("checkbox", "check box"),
    "button": ("button",),
    "link": ("link", "result"),
    "tab": ("tab",),
    "combobox": ("dropdown", "drop-down", "list", "select"),
    "option": ("option",),
    "listitem": ("item",),
}
_FOLLOWING_WORDS = 3


def place_of(text: str | None, count: int | None) -> int | None:
    """The place (from 1) an ordinal names among ``count`` elements, or None when it names none of them."""
    found = ORDINAL.fullmatch((text or "").strip())
    if found is None:
        return None
    word = (found.group(2) or "").casefold()
    place = int(found.group(1)) if found.group(1) else count if word == "last" else _WORDS.index(word) + 1
    return place if place is not None and count is not None and 1 <= place <= count else None


def place_spans(goal: str, steps: Sequence[Step], taken: Sequence[GoalValue] = ()) -> dict[GoalValue, list[int]]:
    """The ordinals of ``goal`` that name the place of a step's element, each with the steps it places.

    ``taken``: spans already slots of another kind, left alone (an ordinal inside a quoted value).
    """
    placed = [index for index, step in enumerate(steps) if step.target_index is not None]
    if not placed:
        return {}
    spans = [GoalValue(found.group(), found.start(), found.end(), False) for found in ORDINAL.finditer(goal)
             if not any(span.start < found.end() and found.start() < span.end for span in taken if span.quoted)]
    found: dict[GoalValue, list[int]] = {}
    free = list(placed)
    for span in spans:
        role = _role_after(goal, span.end)
        matching = [index for index in free if place_of(span.text, steps[index].target_count) == steps[index].target_index
                    and (role is None or _role(steps[index]) == role)]
        if matching:
            first_target = steps[matching[0]].target
            tied = [index for index in matching if steps[index].target == first_target]
            found[span] = tied
            free = [index for index in free if index not in tied]
    return found


def _role_after(goal: str, end: int) -> str | None:
    following = " ".join(goal[end:].split()[:_FOLLOWING_WORDS]).casefold()
    for role, words in _ROLE_WORDS.items():
        if any(re.search(rf"(?<!\w){re.escape(word)}", following) for word in words):
            return role
    return None


def _role(step: Step) -> str | None:
    identity = parse_identity(step.target)
    return identity[0] if identity is not None else None


def placed(slotted: Sequence[Step], steps: Sequence[Step], values: dict[int, str]) -> list[Step] | str:
    """``steps`` (the slotted steps filled) with each place the new goal names, or why one names no place
    among the elements the step chose from. A step moved to another place loses the recorded
    element's selector and identity signals: they found the element that place held then."""
    result = list(steps)
    for index, source in enumerate(slotted):
        if source.place_slot is None:
            continue
        said = values.get(source.place_slot)
        place = place_of(said, source.target_count)
        if place is None:
            return (f'step {index + 1}: the goal\'s "{said}" names no place among the {source.target_count} '
                    f"{source.target or 'elements'} it chose from")
        moved = place != source.target_index
        result[index] = result[index].model_copy(update={
            "target_index": place, "place_slot": None, "selector": None if moved else result[index].selector,
            "element": None if moved else result[index].element})
    return result
