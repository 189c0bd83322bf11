"""The ways a goal splits into a template's values: "Assign the issue Export to spreadsheet fails to farid"
reads "Assign the issue {1} to {2}" with {1} = "Export" or with {1} = "Export to spreadsheet fails". The
first split is :func:`~webmem.trajectories.slots.bind`'s (each value as short as fits); the others take one
value longer, up to a later occurrence of the text that follows it. Which one is meant is for the page to
tell (a link named by the value)."""

from __future__ import annotations

import re

from .slots import SLOT, _pattern, bind

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
