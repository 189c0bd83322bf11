"""A clear lead: a new goal below the threshold that is still far closer to one stored task than to any other.

People who reword a task keep the words that name its act ("delete", "forward", "reply") and change the rest
("Get rid of my message from Debera" for "Find the email by Debera and click the trash icon to delete it"). Their
wording then shares too little with the stored goal to reach the threshold, yet it shares much more with it than
with any other task of the site: the lead over the next task is the evidence, as in matching by the ratio of the
two nearest neighbours. A new task worded in the site's own words is as close to several stored tasks, or to none.

Two goals are of one task when they have one template, or one set of tokens (they differ only in their values).
"""

from __future__ import annotations

from collections.abc import Callable

from .held import OriginGoals, StoredGoal
from .ranking import Scored, rank
from .recall import Signature, other_inputs, score, shares_only_values

#: The least similarity a goal below the threshold needs to be taken on its lead ...
LEAD_FLOOR = 0.35
#: ... when the closest goal of any other task is at most this share of it as close.
LEAD_RATIO = 0.4


def same_task(one: StoredGoal, other: StoredGoal) -> bool:
    """Whether two stored goals are of one task: one template, or the same tokens (they differ in values only)."""
    mine, theirs = one.signature, other.signature
    return (mine.template is not None and mine.template == theirs.template) or mine.tokens == theirs.tokens


def clear_lead(held: OriginGoals, query: Signature, query_goal: str, ranked: list[Scored], *, threshold: float,
               competing: Callable[[StoredGoal], bool]) -> list[Scored]:
    """``ranked``, with its closest competing goal lifted to the threshold when no goal reaches it and that goal
    leads every other task clearly (``LEAD_FLOOR``, ``LEAD_RATIO``); ``Scored.lead`` keeps both similarities."""
    if any(item.similarity >= threshold and competing(item.goal) for item in ranked):
        return ranked
    lead = max((item for item in ranked if competing(item.goal)), key=lambda item: item.similarity, default=None)
    if lead is None or lead.similarity < LEAD_FLOOR or not _may_lead(query, lead.goal.signature):
        return ranked
    own = min(lead.similarity, _by_words(held, query, query_goal, lead.goal))
    if own < LEAD_FLOOR:
        return ranked

    def other_task(stored: StoredGoal) -> bool:
        return competing(stored) and not same_task(stored, lead.goal)

    with held.lock:
        if not any(map(other_task, held.goals)):  # a lead over no other task is no evidence
            return ranked
        others = rank(held, query, query_goal, limit=1, competing=other_task)
    runner_up = max((item.similarity for item in others if other_task(item.goal)), default=0.0)
    if runner_up > LEAD_RATIO * own:
        return ranked
    lifted = Scored(lead.goal, threshold, lead.agree, lead.semantic, lead.rescued, (own, runner_up))
    return [lifted if item is lead else item for item in ranked]


def _by_words(held: OriginGoals, query: Signature, query_goal: str, stored: StoredGoal) -> float:
    """The similarity of two goals by the words they share: a frame or a wording alike (two long goals that begin
    and end alike) says how a goal is put, not which task it is."""
    plain = Signature(query.terms, query.kinds, query.values, query.contrasts)
    mine = stored.signature
    return score(plain, Signature(mine.terms, mine.kinds, mine.values, mine.contrasts, mine.template), query_goal,
                 held.weight, like=stored.goal)[0]


def _may_lead(query: Signature, stored: Signature) -> bool:
    """A goal may lead on the words of the task it shares, not on values alone or with other inputs in quotes."""
    if other_inputs(query, stored) is not None:
        return False
    return not (stored.template and shares_only_values(query, stored.tokens, stored.template))
