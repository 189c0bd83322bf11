"""What sets two goals apart whatever words they share: a contrast ("cheapest" and "most expensive", "reply" and
"forward"), another number of inputs in quotes, another kind of element acted on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.terms import DIMENSIONS, ELEMENT_KINDS, POSITIONS

if TYPE_CHECKING:
    from .recall import Signature

SHORT_GOAL_TERMS = 8  # goals of at most this many terms disagree on a contrast only one of them names


#: Dimensions a goal may leave unsaid: only another term of them sets two goals apart.
_MAY_GO_UNSAID = frozenset(("operation", "bound"))


def contrast_conflict(query: Signature, stored: Signature) -> list[str]:
    """The words of meaning on which two goals disagree.

    Two goals that name different terms of one dimension ("cheapest" and "priciest", "buy" and
    "sell") disagree. A term only the new goal names ("cheapest", "not") is a disagreement between
    short goals, where every word counts; a long goal may mention it in passing. One only the stored goal names is
    one when it does more than narrow what the new goal asks for (``_narrows``). A goal that names
    no operation may simply not say it, nor one that gives a number with no bound ("a hotel with 4 stars" against
    "a hotel with at least 4 stars": two bounds differ only from each other). An age only one goal names ("the most
    recent") does not set apart two goals that pick their thing by values of one kind (``_picks_by_value``).
    """
    differ: set[str] = set()
    short = len(query.terms) <= SHORT_GOAL_TERMS and len(stored.terms) <= SHORT_GOAL_TERMS
    for dimension in {DIMENSIONS[term] for term in query.contrasts ^ stored.contrasts}:
        asked = {term for term in query.contrasts if DIMENSIONS[term] == dimension}
        done = {term for term in stored.contrasts if DIMENSIONS[term] == dimension}
        if asked and done:
            differ |= asked ^ done
        elif short and dimension not in _MAY_GO_UNSAID:
            if dimension == "age" and _picks_by_value(query, stored):
                continue
            if not asked and _narrows(query, stored, dimension):
                continue
            differ |= asked ^ done
    return sorted(differ)


def _narrows(query: Signature, stored: Signature, dimension: str) -> bool:
    """Whether a term of ``dimension`` that only the stored goal names just narrows what the new goal asks for: "Show
    me the laptop" is answered by what "Show me the cheapest laptop" did. It does not when it negates ("not"), when the
    new goal picks its thing by a kind of value the stored goal does not give (the products it names against "the
    most expensive bed"), or by a position the stored goal does not name where that one picks by age ("the first album"
    against "the latest album"; "the item in the first row" is answered by "the newest item in the first row")."""
    return dimension != "negation" and query.kinds <= stored.kinds and not (
        dimension == "age" and (query.values - stored.values) & POSITIONS)


def _picks_by_value(query: Signature, stored: Signature) -> bool:
    """Whether two goals pick what they act on by values of one kind and by no position: "reply to the most recent
    email from Karylin" picks Karylin's email as "reply to the email by Coletta" does, its age says which of hers.
    "The first album of X" against "the latest album of Y" picks by position and age, and they differ."""
    return bool(query.kinds & stored.kinds) and not (query.values | stored.values) & POSITIONS


def other_inputs(query: Signature, stored: Signature) -> tuple[int, int] | None:
    """How many inputs each goal gives in quotes, when both give some and the new goal gives more ("Enter the
    username "a" and the password "b"" against "Enter the password "c" into both fields"): it asks for inputs the
    stored task never took, so they are different tasks, and score at most what agreeing values alone lift a score
    to. A short goal that gives fewer may leave one out ("Type a city that begins with "Lis"" against "... begins
    with "Ma" and ends with "id""); a long goal spells its task out, so long goals differ either way round."""
    if query.kinds == stored.kinds:  # the same kinds of value: as many inputs in quotes, or none
        return None
    asked, given = _inputs(query.kinds), _inputs(stored.kinds)
    if not asked or not given or asked == given:
        return None
    short = max(len(query.terms), len(stored.terms)) <= SHORT_GOAL_TERMS
    return (asked, given) if asked > given or not short else None


def other_elements(query: Signature, stored: Signature) -> tuple[list[str], list[str]] | None:
    """The kinds of element two short goals act on, when each names one the other does not ("Select 5 with the
    spinner" and "Select 7 with the slider"; "Click the link "sed"" and "Click on the "Cancel" button"): they act on
    different elements, so they are different tasks. A goal that names fewer kinds, or none, may simply not say them
    ("Switch to the left tab" against "Switch between the tabs and click on the link"); a long goal may name them
    in passing."""
    asked, done = query.terms & ELEMENT_KINDS, stored.terms & ELEMENT_KINDS
    if not (asked - done and done - asked) or max(len(query.terms), len(stored.terms)) > SHORT_GOAL_TERMS:
        return None
    return sorted(asked - done), sorted(done - asked)


def other_things(query: Signature, stored: Signature) -> bool:
    """Whether two goals give other inputs in quotes (``other_inputs``) or act on other kinds of element
    (``other_elements``): different tasks, whatever words they share."""
    return other_inputs(query, stored) is not None or other_elements(query, stored) is not None


def _inputs(kinds: frozenset[str]) -> int:
    for kind in kinds:
        if kind.startswith("quoted"):
            count = kind.partition("*")[2]
            return int(count) if count.isdecimal() else 1  # a stored signature changed by hand counts as one
    return 0
