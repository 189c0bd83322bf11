"""The ways a goal splits into a template's values: "Assign the issue Export to spreadsheet fails to farid"
reads "Assign the issue {1} to {2}" with {1} = "Export" or with {1} = "Export to spreadsheet fails". The
first split is :func:`~webmem.trajectories.slots.bind`'s (each value as short as fits); the others take some
values as long as they fit. Which one is meant is for the page to tell (a link named by the value)."""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import product

from .slots import _SPAN_SLOT, _pattern, bind

#: Splits tried at most (the first, then values taken long, up to this many slots at once).
MAX_SPLITS = 4
_LONGEST = 3
_GREEDY_SPAN = _SPAN_SLOT.replace("}?", "}")


def bindings(template: str, goal: str) -> list[dict[int, str]]:
    """The distinct ways ``goal`` binds ``template`` (at most :data:`MAX_SPLITS`), :func:`bind`'s first;
    none when it does not bind."""
    first = bind(template, goal)
    if first is None:
        return []
    found = [first]
    spans = _span_slots(template)
    for longer in product((False, True), repeat=min(len(spans), _LONGEST)):
        if not any(longer):
            continue
        match = _split_pattern(template, tuple(slot for slot, long in zip(spans, longer) if long)).match(goal.strip())
        if match is None:
            continue
        values = {int(name[1:]): value for name, value in match.groupdict().items()}
        if values not in found:
            found.append(values)
        if len(found) >= MAX_SPLITS:
            break
    return found


def _span_slots(template: str) -> list[str]:
    """The slots that bind a span of words (as the template's pattern writes them)."""
    return re.findall(r"\(\?P<(s\d{1,3})>" + re.escape(_SPAN_SLOT) + r"\)", _pattern(template).pattern)


@lru_cache(maxsize=256)
def _split_pattern(template: str, longer: tuple[str, ...]) -> re.Pattern[str]:
    text = _pattern(template).pattern
    for slot in longer:
        text = text.replace(f"(?P<{slot}>{_SPAN_SLOT})", f"(?P<{slot}>{_GREEDY_SPAN})")
    return re.compile(text, re.IGNORECASE)
