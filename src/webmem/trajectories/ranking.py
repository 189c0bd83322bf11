"""Ranking an origin's stored goals against a new goal, touching only the goals that can compete.

Lexical evidence comes first: the inverted index gives, for every stored goal, the weight of the
new goal's tokens it shares, which bounds its score; goals are scored exactly in the order of their
bounds until no bound can beat what was found. A semantic stage (when a goal embedder is set)
rescues rewordings that share too few words: a stored goal whose vector is close enough to the
new goal's, that shares some words and agrees on contrasts, reaches the threshold.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .held import OriginGoals, StoredGoal
from .recall import VALUE_MARK, VALUE_WEIGHT, Signature, contrast_conflict, explain, score

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

    Goals are read by form (the set of their tokens: goals that differ only by their values share one).
    A form holds at least the tokens it shares with the new goal, so sharing the weight ``s`` of the
    new goal's total ``t`` bounds its goals' Dice by ``2s / (t + s)``, lifted only for goals that share a
    value. The commonest of the new goal's tokens are read only when a form that shares none of the
    others could still beat the best found by those; forms are then read in the order of their bounds
    (counting the tokens not read as shared) until no bound beats the ``limit``-th best. Within a form,
    or a template the new goal fits, goals that agree alike on values rank newest first: only the newest
    of them are scored (:meth:`_Ranking.newest`).
    """
    if limit is None:
        return _sorted([_scored(held, p, query, query_goal) for p in range(len(held.goals))])
    ranking = _Ranking(held, query, query_goal, competing, limit)
    weighted = sorted(((weight, held.postings.get(token, ())) for token, weight in ranking.weights.items()),
                      key=lambda pair: pair[0], reverse=True)
    # a goal whose template's words are all in the new goal may fit the template (similarity 1)
    for number in held.fitting_templates(query):
        ranking.template(number)
    # the commonest tokens, worth together at most an eighth of the goal's weight, are read only if
    # a form that shares none of the others could still compete once the best of those is scored
    tail, kept = len(weighted), ranking.total
    while tail and kept - weighted[tail - 1][0] >= ranking.total * (1 - COMMON_SHARE):
        tail -= 1
        kept -= weighted[tail][0]
    remaining = ranking.total - kept
    shared: dict[int, float] = {}  # from a form to the weight of the new goal's tokens it shares

    def read(tokens: list[tuple[float, Any]]) -> None:
        tokens = sorted(tokens, key=lambda pair: len(pair[1]), reverse=True)
        if tokens and not shared:  # the longest list at C speed
            shared.update(dict.fromkeys(tokens[0][1], tokens[0][0]))
            tokens = tokens[1:]
        for weight, forms in tokens:
            for form in forms:
                shared[form] = shared.get(form, 0.0) + weight

    read(weighted[:tail])
    if not ranking.full:  # the closest by the tokens read set the bar
        for form in heapq.nlargest(limit, shared, key=shared.__getitem__):
            ranking.form(form)
    if not ranking.beaten(remaining, False):
        read(weighted[tail:])
        remaining = 0.0
    valued = ranking.valued_forms.keys()
    for lifted, forms in ((True, valued), (False, shared.keys() - valued)):
        least = _least_shared(ranking.top[0], ranking.total, lifted) - remaining if ranking.full else float("-inf")
        contenders = [form for form in forms if shared.get(form, 0.0) >= least]
        for form in sorted(contenders, key=lambda f: shared.get(f, 0.0), reverse=True):
            if ranking.beaten(shared.get(form, 0.0) + remaining, lifted):
                break
            ranking.form(form)
    return _sorted(ranking.results)


class _Ranking:
    """The goals scored so far for one new goal, and what bounds the others."""

    def __init__(self, held: OriginGoals, query: Signature, query_goal: str,
                 competing: Callable[[StoredGoal], bool], limit: int) -> None:
        self.held, self.query, self.query_goal, self.competing, self.limit = held, query, query_goal, competing, limit
        self.weights = {token: held.weight(token) for token in query.tokens}
        self.total = sum(self.weights.values())
        self.top: list[float] = []  # the similarities of the limit closest competing goals scored
        self.results: list[Scored] = []
        self.scored: dict[int, Scored] = {}
        self._forms_read: set[int] = set()
        # the values every goal names lift none; the others are shared by the goals that name them
        everywhere: list[str] = []
        sharing: dict[int, list[str]] = {}
        for value in query.values:
            if held.weight(VALUE_MARK + value) <= 1.0:
                everywhere.append(value)
                continue
            for position in held.valued.get(value, ()):
                sharing.setdefault(position, []).append(value)
        self._everywhere = frozenset(everywhere)
        self.valued_forms: dict[int, dict[int, frozenset[str]]] = {}  # form -> position -> values it shares
        self._valued_templates: dict[int, dict[int, frozenset[str]]] = {}
        form_of, template_of = (held.form_of, held.template_of) if sharing else ([], [])
        for position, values in sharing.items():
            self.valued_forms.setdefault(form_of[position], {})[position] = frozenset(values)
            self._valued_templates.setdefault(template_of[position], {})[position] = frozenset(values)

    @property
    def full(self) -> bool:
        return len(self.top) >= self.limit

    def take(self, position: int) -> Scored:
        self.scored[position] = item = _scored(self.held, position, self.query, self.query_goal,
                                               self.weights.__getitem__)
        self.results.append(item)
        if self.competing(item.goal):
            if len(self.top) < self.limit:
                heapq.heappush(self.top, item.similarity)
            elif item.similarity > self.top[0]:
                heapq.heapreplace(self.top, item.similarity)
        return item

    def beaten(self, common: float, lifted: bool) -> bool:
        """Whether a goal sharing the weight ``common`` of the new goal's tokens can no longer reach the
        ``limit`` closest (with a margin for sums added in another order)."""
        if not self.full:
            return False
        dice = 2 * common / (self.total + common) if common else 0.0
        return (dice + VALUE_WEIGHT * (1 - dice) if lifted else dice) < self.top[0] - TIE_MARGIN

    def template(self, number: int) -> None:
        """Score the goals of a template the new goal may fit that may be among the closest. Those that fit
        score 1; among them, those that share the same values with the new goal rank newest first."""
        held = self.held
        valued = self._valued_templates.get(number, {})
        for values, positions in _by_values(valued).items():
            most = self._agreement_at_most(values)
            self.newest(held.newest_first(positions, set(positions).__contains__),
                        lambda item, most=most: item.similarity >= 1.0 and item.agree == most)
        self.newest(held.template_newest_first(number), lambda item: item.similarity >= 1.0, skip=valued)

    def form(self, form: int) -> None:
        """Score the goals of a form that may be among the closest. Goals of one form that share the same
        values with the new goal score alike unless one fits a template (which :meth:`template` scores),
        so only the newest of them are scored."""
        if form in self._forms_read:
            return
        self._forms_read.add(form)
        held = self.held
        members = held.form_members.get(form)
        valued = self.valued_forms.get(form)
        if valued is None and len(members) <= self.limit:  # all of them, whatever their order
            for position in members:
                if position not in self.scored:
                    self.take(position)
            return
        for values, positions in _by_values(valued or {}).items():
            most = self._agreement_at_most(values)
            self.newest(held.newest_first(positions, set(positions).__contains__), lambda item, most=most: item.agree == most)
        form_of = held.form_of
        self.newest(held.newest_first(members, lambda position: form_of[position] == form), lambda item: True,
                    skip=valued)

    def newest(self, newest_first: Iterator[int], ranks_above: Callable[[Scored], bool], *,
               skip: Mapping[int, Any] | None = None) -> None:
        """Score the goals ``newest_first`` gives (but those in ``skip``) until ``limit`` competing goals scored
        ``ranks_above`` every older one of them."""
        found = 0
        for position in newest_first:
            if skip and position in skip:
                continue
            item = self.scored.get(position) or self.take(position)
            if self.competing(item.goal) and ranks_above(item):
                found += 1
                if found >= self.limit:
                    return

    def _agreement_at_most(self, values: frozenset[str]) -> float:
        """How far a goal sharing ``values`` agrees on values with the new goal, at most (exactly when its own
        values weigh no more than the new goal's), computed as ``recall.value_agreement`` computes it."""
        common = values | self._everywhere
        if not common:
            return 0.0
        return self.held.weigh_values(common) / (self.held.weigh_values(self.query.values) or 1.0)


def _by_values(sharing: Mapping[int, frozenset[str]]) -> dict[frozenset[str], list[int]]:
    """Positions grouped by the values they share with the new goal, each group ascending."""
    groups: dict[frozenset[str], list[int]] = {}
    for position in sorted(sharing):
        groups.setdefault(sharing[position], []).append(position)
    return groups


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
