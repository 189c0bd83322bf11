"""Ranking an origin's stored goals against a new goal, touching only the goals that can compete.

Lexical evidence comes first: the inverted index gives, for every stored goal, the weight of the
new goal's tokens it shares, which bounds its score; goals are scored exactly in the order of their
bounds until no bound can beat what was found. A semantic stage (when a goal embedder is set)
rescues rewordings that share too few words: a stored goal whose vector is close enough to the
new goal's, that shares some words and agrees on contrasts, reaches the threshold.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .conflicts import contrast_conflict, other_things
from .held import OriginGoals, StoredGoal
from .recall import (
    VALUE_MARK,
    VALUE_WEIGHT,
    Signature,
    exact_token,
    explain,
    frame_share,
    frame_token,
    score,
    shares_only_values,
    signature,
)
from .wordings import (
    LONG_GOAL_WORDS,
    LONG_TEXT_WORDS,
    SKELETON_SHARE,
    head_token_of,
    in_order_share,
    opening_of,
    opening_tokens,
    text_token_of,
    word_count,
)

#: Cosine of the goals' vectors at which a reworded goal counts as the same task ...
SEMANTIC_THRESHOLD = 0.75
#: ... provided the two goals still share this much lexical similarity.
SEMANTIC_LEXICAL_FLOOR = 0.3
#: The share of a new goal's token weight its commonest tokens may hold and still be read only when needed.
COMMON_SHARE = 0.125
TIE_MARGIN = 1e-9
RARE_VALUE = 16  # a value at most this many goals name: those goals are scored at once, wherever they are
_FIRST = operator.itemgetter(0)


@dataclass(slots=True)
class Scored:
    """A stored goal with its similarity to the new goal, how far their values agree (the tie-break
    between goals of one shape), and the cosine of their vectors when a goal embedder was asked."""

    goal: StoredGoal
    similarity: float
    agree: float = 0.0
    semantic: float | None = None
    rescued: bool = False  # lifted to the threshold by the semantic stage
    lead: tuple[float, float, str] | None = None  # lifted to the threshold by its lead: its similarity, the next
    #                                               task's, and by what words when not all of them ("" for all)
    read_as: tuple[str, str, str, str, str | None] | None = None  # reached by a reading of the goal: the word said,
    #   the word it was read as (``acts``), the reading, why it may be read so, and the one task a field's option
    #   may reach (None for a learned act)

    def why(self, query: Signature, query_goal: str) -> str:
        """What the similarity rests on, in a few words."""
        if self.read_as is not None:
            word, meant, reading, because, _ = self.read_as
            why = explain(signature(reading), self.goal.signature, reading, self.agree, like=self.goal.goal)
            return f'"{word}" read as "{meant}" ({because}): {why}'
        why = explain(query, self.goal.signature, query_goal, self.agree, like=self.goal.goal)
        if self.lead is not None:
            own, runner_up, by = self.lead
            why = f"{why}; a clear lead ({own:.2f} against {runner_up:.2f} for any other task{', ' if by else ''}{by})"
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
    (counting the tokens not read as shared) until no bound beats the ``limit``-th best. Forms are grouped
    by the tokens they share as bit masks (a mask of forms per token), never one by one; within a group,
    a form's own weight ``w`` bounds it exactly (``2 min(s, w) / (t + w)``), so that of the forms that
    share as much as the best, only those light enough to reach it are scored. Within a form,
    or a template the new goal fits, goals that agree alike on values rank newest first: only the newest
    are scored, until none left can agree further (:meth:`_Ranking.newest`).
    """
    with held.lock:  # goals added meanwhile by another thread wait (see OriginGoals)
        if limit is None:
            return _sorted([_scored(held, p, query, query_goal) for p in range(len(held.goals))])
        return _pruned(held, query, query_goal, limit, competing)


def _pruned(held: OriginGoals, query: Signature, query_goal: str, limit: int,
            competing: Callable[[StoredGoal], bool]) -> list[Scored]:
    ranking = _Ranking(held, query, query_goal, competing, limit)
    weighted = sorted(zip(ranking.weights.values(), map(held.posting_mask, ranking.weights)), key=_FIRST, reverse=True)
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
    groups = _grouped([], weighted[:tail])  # the forms by the weight of the new goal's tokens they share
    if not ranking.full:  # the closest by the tokens read set the bar
        for form in itertools.islice((form for _, mask in groups for form in _bits(mask)), limit):
            ranking.form(form)
    if not ranking.beaten(remaining, False):
        groups = _grouped(groups, weighted[tail:])
        remaining = 0.0
    # forms with a goal that shares a value may be lifted (those that share no token too); forms are read in
    # the order of what they share until none can reach the bar, each only if its own weight lets it
    valued = ranking.valued_mask()
    if valued:
        unshared = valued & ~functools.reduce(operator.or_, (mask for _, mask in groups), 0)
        if unshared:
            groups.append((0.0, unshared))
    known, total = held.form_weights, ranking.total
    for lifted, select in ((True, valued), (False, ~valued)) if valued else ((False, -1),):
        for weight, mask in groups:
            forms = mask & select
            if not forms:
                continue
            common = weight + remaining
            need = ranking.dice_needed(lifted)
            if need > 0 and 2 * common < need * (total + common):
                break
            lightest, heaviest = _own_weights(need, common, total)
            while forms:  # each form whose own weight lets its Dice reach the bar
                low = forms & -forms
                forms ^= low
                form = low.bit_length() - 1
                if lightest <= (known.get(form) or held.form_weight(form)) <= heaviest:
                    ranking.form(form)
                    if (raised := ranking.dice_needed(lifted)) != need:
                        need = raised
                        lightest, heaviest = _own_weights(need, common, total)
    # a goal that begins and ends as the new goal does may score by its frame, whatever words it shares, and a long
    # goal that begins as it does by the words they have in the same order
    if query.frame:
        ranking.framed()
    if query.wording:
        ranking.in_order()
    return _sorted(ranking.results)


def _own_weights(need: float, common: float, total: float) -> tuple[float, float]:
    """The least and the most a form's own tokens may weigh for its Dice to reach ``need``, when it shares the
    weight ``common`` of the new goal's ``total``: ``2 min(common, own) >= need (total + own)`` solved for
    ``own`` (its left side grows with ``own`` up to ``common``, then the right side alone does), widened by a
    hair so that rounding never drops a form the inequality keeps."""
    if need <= 0:
        return float("-inf"), float("inf")
    return need * total / (2 - need) * (1 - 1e-12), (2 * common - need * total) / need * (1 + 1e-12)


class _Ranking:
    """The goals scored so far for one new goal, and what bounds the others."""

    def __init__(self, held: OriginGoals, query: Signature, query_goal: str,
                 competing: Callable[[StoredGoal], bool], limit: int) -> None:
        self.held, self.query, self.query_goal, self.competing, self.limit = held, query, query_goal, competing, limit
        self.weights = dict(zip(query.tokens, map(held.weight, query.tokens)))
        self.total = sum(self.weights.values())
        self.top: list[float] = []  # the similarities of the limit closest competing goals scored
        self.results: list[Scored] = []
        self.scored: dict[int, Scored] = {}
        self._forms_read: set[int] = set()
        # the values every goal names lift none; the others are shared by the goals that name them
        everywhere: list[str] = []
        self._sharing: list[tuple[str, list[int]]] = []
        for value in query.values:
            if held.weight(VALUE_MARK + value) <= 1.0:
                everywhere.append(value)
            elif positions := held.valued.get(value):
                self._sharing.append((value, positions))
        self._everywhere = frozenset(everywhere)

    def valued_mask(self) -> int:
        """The forms with a goal that shares a value with the new goal, as a bit mask."""
        return functools.reduce(operator.or_, [self.held.value_mask(value) for value, _ in self._sharing], 0)

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
        ``limit`` closest: its Dice is at most ``2 common / (total + common)``."""
        need = self.dice_needed(lifted)
        return need > 0 and 2 * common < need * (self.total + common)

    def dice_needed(self, lifted: bool) -> float:
        """The least Dice a goal needs to reach the ``limit`` closest (-inf until ``limit`` are scored), lifted or
        not by agreeing values, with a margin for sums added in another order. A goal sharing the weight ``c``
        of the new goal's tokens, whose own tokens weigh ``w``, has a Dice of at most ``2 min(c, w) / (t + w)``."""
        if len(self.top) < self.limit:
            return float("-inf")
        bar = self.top[0] - TIE_MARGIN
        return (bar - VALUE_WEIGHT) / (1 - VALUE_WEIGHT) if lifted else bar

    def template(self, number: int) -> None:
        """Score the goals of a template the new goal may fit that may be among the closest. Those that fit
        score 1 and rank by how far their values agree with the new goal's, then newest first."""
        held = self.held
        self.newest(held.template_newest_first(number), number, lambda item: item.similarity >= 1.0, templates=True)

    def form(self, form: int) -> None:
        """Score the goals of a form that may be among the closest. Goals of one form that agree alike on
        values score alike unless one fits a template (which :meth:`template` scores), so only the newest
        of them are scored."""
        if form in self._forms_read:
            return
        self._forms_read.add(form)
        held = self.held
        members = held.form_members.get(form)
        if len(members) <= self.limit or self._capped_unalike(form):  # all of them, whatever their order
            for position in members:
                if position not in self.scored:
                    self.take(position)
            return
        form_of = held.form_of
        self.newest(held.newest_first(members, lambda position: form_of[position] == form), form, lambda item: True,
                    templates=False)

    def _signature_of(self, form: int) -> Signature:
        """The signature of a form's first goal: its tokens, frame and wording are every goal's of the form."""
        return self.held.goal(self.held.form_members.get(form)[0]).signature

    def _within_reach(self, forms: int) -> int:
        """Of ``forms``, those whose share of words alike may still rank among the closest: all of them, or when only
        a share of 1 may, those whose frame and wording are the new goal's (the only ones it can be 1 for)."""
        if self.dice_needed(False) < 1 - 2 * TIE_MARGIN:
            return forms
        return forms & self.held.posting_mask(exact_token(self.query.frame, self.query.wording))

    def framed(self) -> None:
        """Score the forms of goals that begin and end as the new goal does (goals of one form share their frame)
        whose share of words that do may lift them among the closest."""
        frame = self.query.frame
        for form in _bits(self._within_reach(self.held.posting_mask(frame_token(frame)))):
            if form not in self._forms_read and frame_share(
                    frame, self._signature_of(form).frame) >= self.dice_needed(False):
                self.form(form)

    def in_order(self) -> None:
        """Score the forms of long goals that begin as the new goal does and share a word of meaning besides, or of
        texts however they begin when it is one (``wordings.LONG_TEXT_WORDS``), whose share of words in the same order
        reaches ``SKELETON_SHARE`` and may lift them among the closest (goals of one form share their wording): only
        wordings of as many words as let that share reach it are read."""
        held, query = self.held, self.query
        wording, opening = query.wording, opening_of(query.wording)
        size = word_count(wording)
        need = max(SKELETON_SHARE, self.dice_needed(False))
        # 2 min(n, m) >= need (n + m): wordings of n words from need m / (2 - need) to (2 - need) m / need, read from
        # the count nearest the new goal's (the highest shares may be there, and raise the bar for the others)
        counts = sorted(range(max(LONG_GOAL_WORDS, math.ceil(need * size / (2 - need) - 1e-9)),
                              math.floor((2 - need) * size / need + 1e-9) + 1), key=lambda count: abs(count - size))
        sharing: int | None = None  # the forms that share a word of meaning besides the opening, once needed
        text = size >= LONG_TEXT_WORDS
        for count in counts:
            forms = held.posting_mask(head_token_of(opening, count))
            if text and count >= LONG_TEXT_WORDS:  # texts, however they begin
                forms |= held.posting_mask(text_token_of(count))
            if not forms or 2 * min(count, size) < need * (count + size):
                continue
            if sharing is None:
                sharing = functools.reduce(operator.or_, [held.posting_mask(token) for token in
                                                          query.content - opening_tokens(wording)], 0)
            for form in _bits(self._within_reach(forms & sharing)):
                if form not in self._forms_read and in_order_share(wording, self._signature_of(form).wording) >= need:
                    self.form(form)
                    need = max(SKELETON_SHARE, self.dice_needed(False))

    def _capped_unalike(self, form: int) -> bool:
        """Whether some goals of the form share only their values with the new goal and others do not
        (``recall.shares_only_values``, decided by a goal's template): then they do not score alike."""
        held = self.held
        numbers = held.form_templates(form)
        if len(numbers) < 2:
            return False
        tokens = self._signature_of(form).content
        return len({number >= 0 and shares_only_values(self.query, tokens, held.templates[number])
                    for number in numbers}) > 1

    def newest(self, newest_first: Iterator[int], group: int, alike: Callable[[Scored], bool], *,
               templates: bool) -> None:
        """Score the goals of a group (form ``group``, or template ``group`` with ``templates``) ``newest_first``
        gives until no goal left can rank above ``limit`` competing ones scored: goals ``alike`` (of the group's
        similarity) whose values agree at least as far as the values still named by the goals left can."""
        group_of = self.held.template_of if templates else self.held.form_of
        # how many goals of the group name each value the new goal shares (the goals left name the rest);
        # those naming a rare value are scored first, wherever they are
        left: dict[str, int] = {}
        early: dict[int, Scored] = {}
        for value, positions in self._sharing:
            if len(positions) <= RARE_VALUE:
                for position in positions:
                    if group_of[position] == group and position not in early:
                        early[position] = self.scored.get(position) or self.take(position)
            elif count := self.held.naming(value, group, templates=templates):
                left[value] = count
        for position in early:
            self._named_left(position, left)
        bar = self._agreement_at_most(frozenset(left))
        # the agreement of each competing goal alike scored: one scored early ranks above the goals left only
        # by agreeing further (it may be older), one scored in turn by agreeing as far (it is newer)
        before = [item.agree for item in early.values() if self.competing(item.goal) and alike(item)]
        reached: list[float] = []
        for position in newest_first:
            if position in early:
                continue
            if left and self._named_left(position, left):
                bar = self._agreement_at_most(frozenset(left))
            item = self.scored.get(position) or self.take(position)
            if self.competing(item.goal) and alike(item):
                reached.append(item.agree)
            if len(reached) + len(before) >= self.limit and \
                    sum(agree >= bar for agree in reached) + sum(agree > bar for agree in before) >= self.limit:
                return

    def _named_left(self, position: int, left: dict[str, int]) -> bool:
        """Count the goal at ``position`` out of ``left`` (goals left that name each value); whether a value
        is no longer named by any."""
        emptied = False
        named = self.held.goal(position).signature.values
        for value in [value for value in left if value in named]:
            left[value] -= 1
            if not left[value]:
                del left[value]
                emptied = True
        return emptied

    def _agreement_at_most(self, values: frozenset[str]) -> float:
        """How far a goal sharing ``values`` agrees on values with the new goal, at most (exactly when its own
        values weigh no more than the new goal's), computed as ``recall.value_agreement`` computes it."""
        common = values | self._everywhere
        if not common:
            return 0.0
        return self.held.weigh_values(common) / (self.held.weigh_values(self.query.values) or 1.0)


def _grouped(groups: list[tuple[float, int]], tokens: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """``groups`` (forms as bit masks, by the weight of the tokens read they share) split further by ``tokens``
    (a weight and the mask of the forms that have the token), heaviest first."""
    for weight, having in tokens:
        split: list[tuple[float, int]] = []
        alone = having
        for shared, mask in groups:
            inside = mask & having
            if inside:
                split.append((shared + weight, inside))
                alone &= ~inside
                if inside != mask:
                    split.append((shared, mask ^ inside))
            else:
                split.append((shared, mask))
        if alone:
            split.append((weight, alone))
        groups = split
    groups.sort(key=_FIRST, reverse=True)
    return groups


def _bits(mask: int) -> Iterator[int]:
    """The numbers of the bits set in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


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
    close vectors (``SEMANTIC_THRESHOLD``), some shared words (``SEMANTIC_LEXICAL_FLOOR``), same contrasts, as
    many inputs in quotes."""
    with held.lock:
        return _rescued(held, query, query_goal, query_vector, ranked, threshold)


def _rescued(held: OriginGoals, query: Signature, query_goal: str, query_vector: Any, ranked: list[Scored],
             threshold: float) -> list[Scored]:
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
                   and not contrast_conflict(query, goal.signature) and not other_things(query, goal.signature))
        if rescued:
            similarity = threshold + (1 - threshold) * 0.1 * cosine
        results.append(Scored(goal, similarity, agree, cosine, rescued))
    return _sorted(results)
