"""A clear lead: a new goal below the threshold that is still far closer to one stored task than to any other.

People who reword a task keep the words that name its act ("delete", "forward", "reply") and change the rest
("Get rid of my message from Debera" for "Find the email by Debera and click the trash icon to delete it"). Their
wording then shares too little with the stored goal to reach the threshold, yet it shares much more with it than
with any other task of the site: the lead over the next task is the evidence, as in matching by the ratio of the
two nearest neighbours. A new task worded in the site's own words is as close to several stored tasks, or to none.

When both goals name the act by a word of meaning ("delete", "forward", "reply"), a weaker lead counts
(``ACT_FLOOR``): the word that names the act is the one a rewording keeps. So it does when the new goal gives a text
in quotes and the leading task is the only one of the site that takes one ('Say to Thekla "Vulputate."' on an inbox
where only replies are given a text): what it is given names it as well.

A lead counts only when the new goal says mostly what the leading goal says (``LEAD_COVER`` of its words at least):
a rewording says the task again and little else, while a new task that shares a few words with one stored task by
chance ("the man is wearing" in "send me a hoodie of the brand the man is wearing") says mostly other things.

With a goal embedder read by its nearest goal (``recall = "nearest"``, :class:`webmem.GloveEmbedder`), a weaker lead
counts too (``NEAREST_FLOOR``, ``NEAREST_RATIO``) when the stored goal nearest to the new one by their vectors is of
the leading task: the words and the vectors agree on which task it is.

Words every task of the site says (an inbox's "email" and a person's name) tell none of them apart: a goal that
shares only those with the leading goal leads nothing, and a next task that shares only those with the new goal is no
evidence against the lead (``_lead_on_what_differs``).

Two goals are of one task when they have one template, or one set of tokens (they differ only in their values).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.terms import OPERATIONS
from .conflicts import other_things
from .held import OriginGoals, StoredGoal
from .ranking import Scored, rank
from .recall import Signature, score, shares_only_values

#: The least similarity a goal below the threshold needs to be taken on its lead ...
LEAD_FLOOR = 0.35
#: ... when the closest goal of any other task is at most this share of it as close.
LEAD_RATIO = 0.4
#: The least similarity a lead needs when the new goal names the leading goal's task (``_names_the_task``).
ACT_FLOOR = 0.25
#: The least share of the new goal's words (its terms, kinds of value and contrasts) the leading goal has too.
LEAD_COVER = 0.4
#: With a goal embedder read by its nearest goal, a lead this weak counts ...
NEAREST_FLOOR = 0.2
#: ... against another task up to this share of it, when the nearest goal by the vectors is of the leading task.
NEAREST_RATIO = 0.5


def same_task(one: StoredGoal, other: StoredGoal) -> bool:
    """Whether two stored goals are of one task: one template, or the same tokens (they differ in values only)."""
    mine, theirs = one.signature, other.signature
    return (mine.template is not None and mine.template == theirs.template) or mine.tokens == theirs.tokens


def clear_lead(held: OriginGoals, query: Signature, query_goal: str, ranked: list[Scored], *, threshold: float,
               competing: Callable[[StoredGoal], bool], query_vector: Any = None) -> list[Scored]:
    """``ranked``, with its closest competing goal lifted to the threshold when no goal reaches it and that goal
    leads every other task clearly (``LEAD_FLOOR``, or ``ACT_FLOOR`` when the new goal names its task:
    ``_names_the_task``; ``LEAD_RATIO``), or, given the new goal's vector from an embedder read by its nearest goal,
    leads them and is of the nearest goal's task (``NEAREST_FLOOR``, ``NEAREST_RATIO``); ``Scored.lead`` keeps both
    similarities. Holds the origin's lock throughout: weighing words remembers their weights, which a goal added
    meanwhile by another thread would make stale (the helpers below run under it)."""
    with held.lock:
        return _clear_lead(held, query, query_goal, ranked, threshold=threshold, competing=competing,
                           query_vector=query_vector)


def _clear_lead(held: OriginGoals, query: Signature, query_goal: str, ranked: list[Scored], *, threshold: float,
                competing: Callable[[StoredGoal], bool], query_vector: Any) -> list[Scored]:
    if any(item.similarity >= threshold and competing(item.goal) for item in ranked):
        return ranked
    lead = max((item for item in ranked if competing(item.goal)), key=lambda item: item.similarity, default=None)
    if lead is None or lead.similarity < (NEAREST_FLOOR if query_vector is not None else ACT_FLOOR):
        return ranked  # below any floor: whether the goal names the task does not matter
    lead_floor = ACT_FLOOR if _names_the_task(held, query, lead.goal, competing) else LEAD_FLOOR
    if query_vector is not None:
        floor, ratio = min(NEAREST_FLOOR, lead_floor), NEAREST_RATIO
    else:
        floor, ratio = lead_floor, LEAD_RATIO
    if lead.similarity < floor or not _may_lead(query, lead.goal.signature):
        return ranked
    shared = query.content & lead.goal.signature.content
    if len(shared) < LEAD_COVER * len(query.content) or shared <= held.common_tokens():
        return ranked
    own = min(lead.similarity, _by_words(held, query, query_goal, lead.goal))
    if own < floor:
        return ranked

    def other_task(stored: StoredGoal) -> bool:
        return competing(stored) and not same_task(stored, lead.goal)

    if not any(map(other_task, held.goals)):  # a lead over no other task is no evidence
        return ranked
    others = rank(held, query, query_goal, limit=1, competing=other_task)
    runner_up = max((item.similarity for item in others if other_task(item.goal)), default=0.0)
    lead_by: tuple[float, float, str] = (own, runner_up, "")
    clear = own >= lead_floor and runner_up <= LEAD_RATIO * own
    if own >= lead_floor and not clear and (differs := _lead_on_what_differs(held, query, query_goal, lead.goal,
                                                                              other_task)):
        clear, lead_by = True, (*differs, "by the words that tell this site's tasks apart")
    if not clear and not (runner_up <= ratio * own and _nearest_is(held, query_vector, lead.goal, competing)):
        return ranked
    lifted = Scored(lead.goal, threshold, lead.agree, lead.semantic, lead.rescued, lead_by)
    return [lifted if item is lead else item for item in ranked]


def _nearest_is(held: OriginGoals, query_vector: Any, leader: StoredGoal,
                competing: Callable[[StoredGoal], bool]) -> bool:
    """Whether the competing goal nearest to the new goal by their vectors is of ``leader``'s task."""
    if query_vector is None or any(goal.vector is None for goal in held.goals):
        return False
    import numpy

    cosines = held.vectors() @ numpy.asarray(query_vector, dtype=numpy.float32)
    nearest = None
    for position in numpy.argsort(-cosines):
        if competing(goal := held.goals[int(position)]):
            nearest = goal
            break
    return nearest is not None and same_task(nearest, leader)


def _names_the_task(held: OriginGoals, query: Signature, leader: StoredGoal,
                     competing: Callable[[StoredGoal], bool]) -> bool:
    """Whether the new goal names the leading goal's task: both name its act by a word of meaning, or the new goal
    gives an input in quotes that of the site's tasks only the leader's takes."""
    if query.contrasts & leader.signature.contrasts & OPERATIONS:
        return True
    inputs = [kind for kind in query.kinds & leader.signature.kinds if kind.startswith("quoted")]
    if not inputs:
        return False
    takers = (held.goal(position) for form in held.postings.get(f"<{inputs[0]}>", ())
              for position in held.form_members.get(form))
    return all(same_task(goal, leader) or not competing(goal) for goal in takers)


def _lead_on_what_differs(held: OriginGoals, query: Signature, query_goal: str, leader: StoredGoal,
                          other_task: Callable[[StoredGoal], bool]) -> tuple[float, float] | None:
    """The leader's similarity and the next task's, by the words that tell the site's tasks apart (the tokens every
    shape of the site has, ``OriginGoals.common_tokens``, weigh nothing), when the lead is clear by them."""
    common = held.common_tokens()
    if not common:
        return None

    def weight(token: str) -> float:
        return 0.0 if token in common else held.weight(token)

    own = _by_words(held, query, query_goal, leader, weight)
    if own <= 0.0:
        return None
    # A goal that shares no other token and no value with the new goal scores 0; the goals of one form that share no
    # value with it score alike, so one of each form is read, and those that share a value.
    others = [goal for goal in map(held.goal, {position for value in query.values
                                               for position in held.valued.get(value, ())}) if other_task(goal)]
    for form in {form for token in query.content - common for form in held.postings.get(token, ())}:
        others += next(([goal] for goal in map(held.goal, held.form_members.get(form)) if other_task(goal)), [])
    runner_up = 0.0
    for stored in others:
        runner_up = max(runner_up, _by_words(held, query, query_goal, stored, weight))
        if runner_up > LEAD_RATIO * own:
            return None
    return own, runner_up


def _by_words(held: OriginGoals, query: Signature, query_goal: str, stored: StoredGoal,
              weight: Callable[[str], float] | None = None) -> float:
    """The similarity of two goals by the words they share (each weighing ``weight``, by default the origin's): a
    frame or a wording alike (two long goals that begin and end alike) says how a goal is put, not which task it
    is."""
    plain = Signature(query.terms, query.kinds, query.values, query.contrasts)
    mine = stored.signature
    return score(plain, Signature(mine.terms, mine.kinds, mine.values, mine.contrasts, mine.template), query_goal,
                 weight or held.weight, like=stored.goal)[0]


def _may_lead(query: Signature, stored: Signature) -> bool:
    """A goal may lead on the words of the task it shares, not on values alone, with other inputs in quotes or on
    another kind of element."""
    if other_things(query, stored):
        return False
    return not (stored.template and shares_only_values(query, stored.tokens, stored.template))
