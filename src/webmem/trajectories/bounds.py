"""Bounds on a number: "at least 16GB", "no more than $50", "4 stars or higher".

A bound says how a number limits what is wanted. It is no superlative: "a laptop with at least 16GB of RAM" is not
"the laptop with the least RAM", nor "a product with at most 10 reviews" "the product with the most reviews". And one
bound said in several ways is one: "at least", "no less than", "a minimum of", "more than", "over", "or more" bound a
number from below (``LOWER``); "at most", "no more than", "a maximum of", "up to", "less than", "under", "or less"
from above (``UPPER``). The words that say a bound are read where they meet a number (just before it, or just after
it or the word or value that follows it: "4 stars or higher", "16GB RAM or more") and put as one word for them,
which the goal's terms keep as a contrast: two goals that bound their numbers alike agree on it, and two that bound
them otherwise differ. A goal that gives its number with no bound may simply not say one (``conflicts``).
"""

from __future__ import annotations

from ..core.terms import BOUND_LOWER as LOWER
from ..core.terms import BOUND_UPPER as UPPER
from .spans import kept

#: How a bound ends just before its number.
_BEFORE = {
    **dict.fromkeys([("at", "least"), ("no", "less", "than"), ("not", "less", "than"), ("no", "fewer", "than"),
                     ("more", "than"), ("greater", "than"), ("higher", "than"), ("over",), ("above",), ("minimum",),
                     ("min",), ("minimum", "of"), ("upwards", "of")], LOWER),
    **dict.fromkeys([("at", "most"), ("no", "more", "than"), ("not", "more", "than"), ("less", "than"),
                     ("fewer", "than"), ("lower", "than"), ("under",), ("below",), ("up", "to"), ("maximum",),
                     ("max",), ("maximum", "of")], UPPER),
}
#: How a bound begins just after its number, or after the word that follows it ("4 stars or higher").
_AFTER = {
    **dict.fromkeys([("or", "more"), ("or", "higher"), ("or", "above"), ("or", "greater"), ("or", "over"),
                     ("or", "better"), ("and", "up"), ("and", "above"), ("and", "over")], LOWER),
    **dict.fromkeys([("or", "less"), ("or", "fewer"), ("or", "lower"), ("or", "below"), ("or", "under"),
                     ("and", "under"), ("and", "below")], UPPER),
}
#: A limit named a few words before its number: "a minimum storage capacity of 12 pairs".
_LIMITS = {"minimum": LOWER, "min": LOWER, "maximum": UPPER, "max": UPPER}
_LIMIT_REACH = 4  # the most words between a limit and the "of" before its number
_LONGEST = max(map(len, _BEFORE))
_BEFORE_ENDS = frozenset(phrase[-1] for phrase in _BEFORE) | {"of"}
_AFTER_STARTS = frozenset(phrase[0] for phrase in _AFTER)


def read_bounds(pieces: list[list[str]], spans: list[tuple[int, int, str, str]]) -> list[list[str]]:
    """A goal's ``pieces`` (its words between its values, as ``spans.between`` cuts them at ``spans``) with the words
    of each bound on a number put as ``LOWER`` or ``UPPER`` (the same list when there is none)."""
    read = pieces
    for place, span in enumerate(kept(spans)):
        if span[2] != "number":
            continue
        after = place + 1  # past a value that names what is counted ("16GB RAM or more")
        if not read[after] and after + 1 < len(read):
            after += 1
        for at, bounded in ((place, _bound_before(read[place])), (after, _bound_after(read[after]))):
            if bounded is not None:
                read = list(read) if read is pieces else read
                read[at] = bounded
    return read


def _bound_before(piece: list[str]) -> list[str] | None:
    """The piece before a number with its bound put as one word, or None when it ends with none."""
    if not piece or piece[-1] not in _BEFORE_ENDS:
        return None
    for size in range(min(_LONGEST, len(piece)), 0, -1):
        if (bound := _BEFORE.get(tuple(piece[-size:]))) is not None:
            return [*piece[:-size], bound]
    if piece[-1] == "of":
        for place in range(len(piece) - 2, max(-1, len(piece) - 3 - _LIMIT_REACH), -1):
            if (bound := _LIMITS.get(piece[place])) is not None:
                return [*piece[:place], bound, *piece[place + 1:]]
    return None


def _bound_after(piece: list[str]) -> list[str] | None:
    """The piece after a number with its bound put as one word, or None when it begins with none."""
    for start in (0, 1):
        if start < len(piece) and piece[start] in _AFTER_STARTS and (
                bound := _AFTER.get(tuple(piece[start:start + 2]))):
            return [*piece[:start], bound, *piece[start + 2:]]
    return None
