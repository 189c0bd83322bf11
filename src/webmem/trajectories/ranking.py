"""Ranking an origin's stored goals against a new goal, touching only the goals that can compete.

Lexical evidence comes first: the inverted index gives, for every stored goal, how many of the new
goal's words it shares, which bounds its score; goals are scored exactly in the order of their
bounds until no bound can beat what was found. A semantic stage (when a goal embedder is set)
rescues rewordings that share too few words: a stored goal whose vector is close enough to the
new goal's, that shares some words and agrees on contrasts, reaches the threshold.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .index import OriginGoals, StoredGoal
from .recall import VALUE_WEIGHT, Signature, contrast_conflict, score, tokens, value_agreement

#: Cosine of the goals' vectors at which a reworded goal counts as the same task ...
SEMANTIC_THRESHOLD = 0.75
#: ... provided the two goals still share this much lexical similarity.
SEMANTIC_LEXICAL_FLOOR = 0.3


@dataclass(frozen=True)
class Scored:
    """A stored goal with its similarity to the new goal, what it rests on, and its cosine (if asked)."""

    goal: StoredGoal
    similarity: float
    why: str
    semantic: float | None = None
    agree: float = 0.0  # how many values agree: the tie-break between goals of one shape


def rank(
    held: OriginGoals, query: Signature, query_goal: str, *, limit: int | None,
    competing: Callable[[StoredGoal], bool],
) -> list[Scored]:
    """The stored goals, best first: all of them scored when ``limit`` is None, else enough to be
    sure of the ``limit`` closest ``competing`` ones (goals that may win: not expired, not excluded).

    Goals are taken by how many of the new goal's tokens they share, most first: ``c`` shared
    tokens bound the similarity by what ``c`` could give at best, so once that bound is below the
    ``limit``-th best score found, no goal sharing fewer tokens can enter the top.
    """
    if limit is None:
        return _sorted([_scored(held, p, query, query_goal) for p in range(len(held.goals))])
    weights = {token: held.weight(token) for token in tokens(query)}
    shared: dict[int, float] = {}
    for token, weight in weights.items():
        for position in held.postings.get(token, ()):
            shared[position] = shared.get(position, 0.0) + weight
    total = sum(weights.values())
    # a stored goal holds at least the tokens it shares: its Dice is at most 2s / (total + s)
    bounds = sorted(((2 * common / (total + common), p) for p, common in shared.items()), reverse=True)
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
    fitting = {p for p in held.templated if held.goals[p].signature.terms <= query.terms}
    for position in fitting:
        take(position)
    for dice, position in bounds:
        if len(top) >= limit and dice + VALUE_WEIGHT * (1 - dice) < top[0]:
            break
        if position not in fitting:
            take(position)
    return _sorted(results)


def _scored(held: OriginGoals, position: int, query: Signature, query_goal: str) -> Scored:
    goal = held.goals[position]
    similarity, why = score(query, goal.signature, query_goal, held.weight)
    return Scored(goal, similarity, why, agree=value_agreement(query, goal.signature, held.weight))


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
        similarity, why = (item.similarity, item.why) if item else score(query, goal.signature, query_goal, held.weight)
        if (similarity < threshold and cosine >= SEMANTIC_THRESHOLD and similarity >= SEMANTIC_LEXICAL_FLOOR
                and not contrast_conflict(query, goal.signature)):
            similarity, why = threshold + (1 - threshold) * 0.1 * cosine, f"{why}; reworded (cosine {cosine:.2f})"
        results.append(Scored(goal, similarity, why, cosine, value_agreement(query, goal.signature, held.weight)))
    return _sorted(results)
