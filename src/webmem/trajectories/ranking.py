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
#: The share of a new goal's token weight its commonest tokens may hold and still be read only when needed.
COMMON_SHARE = 0.125
TIE_MARGIN = 1e-9


@dataclass(slots=True)
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
    value. The commonest of the new goal's tokens are read only when a goal that shares none of the
    others could still beat the best found by those; goals are then scored in the order of their
    bounds (counting the tokens not read as shared) until no bound beats the ``limit``-th best.
    """
    if limit is None:
        return _sorted([_scored(held, p, query, query_goal) for p in range(len(held.goals))])
    weights = {token: held.weight(token) for token in query.tokens}
    weighted = sorted(((weight, held.postings.get(token, ())) for token, weight in weights.items()),
                      key=lambda pair: pair[0], reverse=True)
    total = sum(weight for weight, _ in weighted)
    top: list[float] = []
    results: list[Scored] = []
    scored: set[int] = set()

    def take(position: int) -> None:
        scored.add(position)
        item = _scored(held, position, query, query_goal, weights.__getitem__)
        results.append(item)
        if competing(item.goal):
            if len(top) < limit:
                heapq.heappush(top, item.similarity)
            elif item.similarity > top[0]:
                heapq.heapreplace(top, item.similarity)

    def beaten(common: float, lifted: bool) -> bool:  # (with a margin for sums added in another order)
        if len(top) < limit:
            return False
        dice = 2 * common / (total + common) if common else 0.0
        return (dice + VALUE_WEIGHT * (1 - dice) if lifted else dice) < top[0] - TIE_MARGIN

    # a goal whose template's words are all in the new goal may fit the template (similarity 1)
    for position in held.fitting(query):
        take(position)
    # goals that share a value may be lifted: they are bounded as if they shared every token not yet read
    valued = {position for value in query.values for position in held.valued.get(value, ())}
    # the commonest tokens, worth together at most an eighth of the goal's weight, are read only if
    # a goal that shares none of the others could still compete once the best of those is scored
    tail, kept = len(weighted), total
    while tail and kept - weighted[tail - 1][0] >= total * (1 - COMMON_SHARE):
        tail -= 1
        kept -= weighted[tail][0]
    remaining = total - kept
    shared: dict[int, float] = {}

    def read(tokens: list[tuple[float, Any]]) -> None:
        tokens = sorted(tokens, key=lambda pair: len(pair[1]), reverse=True)
        if tokens and not shared:  # the longest list at C speed
            shared.update(dict.fromkeys(tokens[0][1], tokens[0][0]))
            tokens = tokens[1:]
        for weight, postings in tokens:
            for position in postings:
                shared[position] = shared.get(position, 0.0) + weight

    read(weighted[:tail])
    if len(top) < limit:  # the closest by the tokens read set the bar
        for closest in heapq.nlargest(limit - len(top), shared, key=shared.__getitem__):
            if closest not in scored:
                take(closest)
    if not beaten(remaining, False):
        read(weighted[tail:])
        remaining = 0.0
    for lifted, positions in ((True, valued), (False, shared.keys() - valued)):
        least = _least_shared(top[0], total, lifted) - remaining if len(top) >= limit else float("-inf")
        contenders = [position for position in positions if shared.get(position, 0.0) >= least]
        for position in sorted(contenders, key=lambda p: shared.get(p, 0.0), reverse=True):
            if beaten(shared.get(position, 0.0) + remaining, lifted):
                break
            if position not in scored:
                take(position)
    return _sorted(results)


def _least_shared(bar: float, total: float, lifted: bool) -> float:
    """Just under the least shared weight whose bound can reach ``bar`` (the bound solved for the weight):
    goals that share less need not even be sorted."""
    if lifted:
        bar = (bar - VALUE_WEIGHT) / (1 - VALUE_WEIGHT)
    bar -= TIE_MARGIN
    return bar * total / (2 - bar) - TIE_MARGIN * (total + 1) if bar > 0 else float("-inf")


def _scored(
    held: OriginGoals, position: int, query: Signature, query_goal: str, weight: Callable[[str], float] | None = None,
) -> Scored:
    """``weight``: the weights of the new goal's tokens, looked up (the shared tokens are among them)."""
    goal = held.goal(position)
    similarity, agree = score(query, goal.signature, query_goal, weight or held.weight, like=goal.goal,
                              weigh=held.weigh, weigh_values=held.weigh_values)
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
        found = item or _scored(held, position, query, query_goal)
        similarity, agree = found.similarity, found.agree
        rescued = (similarity < threshold and cosine >= SEMANTIC_THRESHOLD and similarity >= SEMANTIC_LEXICAL_FLOOR
                   and not contrast_conflict(query, goal.signature))
        if rescued:
            similarity = threshold + (1 - threshold) * 0.1 * cosine
        results.append(Scored(goal, similarity, agree, cosine, rescued))
    return _sorted(results)
