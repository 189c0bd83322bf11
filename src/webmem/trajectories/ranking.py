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
from .recall import VALUE_WEIGHT, Signature, score, tokens

#: Cosine of the goals' vectors at which a reworded goal counts as the same task ...
SEMANTIC_THRESHOLD = 0.80
#: ... provided the two goals still share this much lexical similarity.
SEMANTIC_LEXICAL_FLOOR = 0.25


@dataclass(frozen=True)
class Scored:
    """A stored goal with its similarity to the new goal, what it rests on, and its cosine (if asked)."""

    goal: StoredGoal
    similarity: float
    why: str
    semantic: float | None = None


def rank(
    held: OriginGoals, query: Signature, query_goal: str, *, limit: int | None,
    competing: Callable[[StoredGoal], bool],
) -> list[Scored]:
    """The stored goals, best first: all of them scored when ``limit`` is None, else enough to be
    sure of the ``limit`` closest ``competing`` ones (goals that may win: not expired, not excluded)."""
    shared = _shared_counts(held, query)
    query_size = len(tokens(query))
    bounds = []
    for position, goal in enumerate(held.goals):
        sig = goal.signature
        if sig.template and shared.get(position, 0) == len(sig.terms):
            bound = 1.0  # might fit the template
        else:
            size = query_size + len(sig.terms) + len(sig.kinds) + len(sig.contrasts)
            dice = 2 * shared.get(position, 0) / size if size else 0.0
            bound = dice + VALUE_WEIGHT * (1 - dice)
        bounds.append((bound, position))
    everything = limit is None
    if not everything:
        bounds.sort(reverse=True)
    top: list[float] = []  # a heap of the best ``limit`` similarities so far
    results = []
    for bound, position in bounds:
        if not everything and len(top) >= limit and bound < top[0]:  # type: ignore[operator]
            break
        goal = held.goals[position]
        similarity, why = score(query, goal.signature, query_goal)
        results.append(Scored(goal, similarity, why))
        if limit is not None and competing(goal):
            if len(top) < limit:
                heapq.heappush(top, similarity)
            elif similarity > top[0]:
                heapq.heapreplace(top, similarity)
    results.sort(key=lambda s: (s.similarity, s.goal.created_at), reverse=True)
    return results


def _shared_counts(held: OriginGoals, query: Signature) -> dict[int, int]:
    shared: dict[int, int] = {}
    for token in tokens(query):
        for position in held.postings.get(token, ()):
            shared[position] = shared.get(position, 0) + 1
    return shared


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
        similarity, why = (item.similarity, item.why) if item else score(query, goal.signature, query_goal)
        if (similarity < threshold and cosine >= SEMANTIC_THRESHOLD and similarity >= SEMANTIC_LEXICAL_FLOOR
                and query.contrasts == goal.signature.contrasts):
            similarity, why = threshold + (1 - threshold) * 0.1 * cosine, f"{why}; reworded (cosine {cosine:.2f})"
        results.append(Scored(goal, similarity, why, cosine))
    results.sort(key=lambda s: (s.similarity, s.goal.created_at), reverse=True)
    return results
