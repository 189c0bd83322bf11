"""Ranking an origin's stored goals against a new goal, touching only the goals that can compete.

Lexical evidence comes first: the inverted index gives, for every stored goal, the weight of the
new goal's tokens it shares, which bounds its score; goals are scored exactly in the order of their
bounds until no bound can beat what was found. A semantic stage (when a goal embedder is set)
rescues rewordings that share too few words: a stored goal whose vector is close enough to the
new goal's, that shares some words and agrees on contrasts, reaches the threshold.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .held import OriginGoals, StoredGoal
from .recall import VALUE_WEIGHT, Signature, contrast_conflict, explain, score

#: Cosine of the goals' vectors at which a reworded goal counts as the same task ...
SEMANTIC_THRESHOLD = 0.75
#: ... provided the two goals still share this much lexical similarity.
SEMANTIC_LEXICAL_FLOOR = 0.3


@dataclass(frozen=True)
class Scored:
    """A stored goal with its similarity to the new goal, how far their values agree (the tie-break
    between goals of one shape), and the cosine of their vectors when a goal embedder was asked."""

    goal: StoredGoal
    similarity: float
    agree: float = 0.0
    semantic: float | None = None
    rescued: bool = False  # lifted to the threshold by the semantic stage

    def why(self, query: Signature, query_goal: str) -> str:
        """What the similarity rests on, in a few words."""
        why = explain(query, self.goal.signature, query_goal, self.agree, like=self.goal.goal)
        return f"{why}; reworded (cosine {self.semantic:.2f})" if self.rescued else why


def rank(
    held: OriginGoals, query: Signature, query_goal: str, *, limit: int | None,
    competing: Callable[[StoredGoal], bool],
) -> list[Scored]:
    """The stored goals, best first: all of them scored when ``limit`` is None, else enough to be
    sure of the ``limit`` closest ``competing`` ones (goals that may win: not expired, not excluded).

    A stored goal holds at least the tokens it shares with the new goal, so sharing the weight ``s``
    of the new goal's total ``t`` bounds its Dice by ``2s / (t + s)``, lifted only if it shares a
    value; goals are scored in the order of their bounds until no bound beats the ``limit``-th best.
    """
    if limit is None:
        return _sorted([_scored(held, p, query, query_goal) for p in range(len(held.goals))])
    weighted = sorted(((held.weight(token), held.postings.get(token, ())) for token in query.tokens),
                      key=lambda pair: len(pair[1]), reverse=True)
    total = sum(weight for weight, _ in weighted)
    shared: dict[int, float] = dict.fromkeys(weighted[0][1], weighted[0][0]) if weighted else {}
    for weight, postings in weighted[1:]:
        for position in postings:
            shared[position] = shared.get(position, 0.0) + weight
    # goals that share a value may be lifted: they go first; the rest by the weight they share
    valued = {position for value in query.values for position in held.valued.get(value, ()) if position in shared}
    order = sorted(valued, key=shared.__getitem__, reverse=True) + sorted(
        (position for position in shared if position not in valued) if valued else shared,
        key=shared.__getitem__, reverse=True)
    top: list[float] = []
    results: list[Scored] = []

    def take(position: int) -> None:
        item = _scored(held, position, query, query_goal)
        results.append(item)
        if competing(item.goal):
            if len(top) < limit:
                heapq.heappush(top, item.similarity)
            elif item.similarity > top[0]:
                heapq.heapreplace(top, item.similarity)

    # a goal whose template's words are all in the new goal may fit the template (similarity 1)
    fitting = {p for p in held.templated if held.goals[p].signature.may_fit(query)}
    for position in fitting:
        take(position)
    lifted = len(valued)
    for rank_, position in enumerate(order):
        common = shared[position]
        dice = 2 * common / (total + common)
        if len(top) >= limit and (dice + VALUE_WEIGHT * (1 - dice) if rank_ < lifted else dice) < top[0]:
            if rank_ >= lifted:
                break
            continue
        if position not in fitting:
            take(position)
    return _sorted(results)


def _scored(held: OriginGoals, position: int, query: Signature, query_goal: str) -> Scored:
    goal = held.goals[position]
    similarity, agree = score(query, goal.signature, query_goal, held.weight, like=goal.goal)
    return Scored(goal, similarity, agree)


def _sorted(results: list[Scored]) -> list[Scored]:
    results.sort(key=lambda s: (s.similarity, s.agree, s.goal.created_at), reverse=True)
    return results


def rescue(
    held: OriginGoals, query: Signature, query_goal: str, query_vector: Any, ranked: list[Scored], *, threshold: float
) -> list[Scored]:
    """``ranked`` with every goal's cosine to the new goal, and the reworded ones lifted to the threshold:
    close vectors (``SEMANTIC_THRESHOLD``), some shared words (``SEMANTIC_LEXICAL_FLOOR``), same contrasts."""
    if query_vector is None or not held.goals or any(goal.vector is None for goal in held.goals):
        return ranked
    import numpy

    cosines = held.vectors() @ numpy.asarray(query_vector, dtype=numpy.float32)
    by_id = {item.goal.id: item for item in ranked}
    results = []
    for position, goal in enumerate(held.goals):
        cosine = float(cosines[position])
        item = by_id.get(goal.id)
        if item is None and cosine < SEMANTIC_THRESHOLD:
            continue
        similarity, agree = (item.similarity, item.agree) if item else score(
            query, goal.signature, query_goal, held.weight, like=goal.goal)
        rescued = (similarity < threshold and cosine >= SEMANTIC_THRESHOLD and similarity >= SEMANTIC_LEXICAL_FLOOR
                   and not contrast_conflict(query, goal.signature))
        if rescued:
            similarity = threshold + (1 - threshold) * 0.1 * cosine
        results.append(Scored(goal, similarity, agree, cosine, rescued))
    return _sorted(results)
