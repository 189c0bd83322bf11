"""One origin's stored goals as recall holds them: compact records, an inverted index, and a snapshot.

A goal is kept as a compact record and becomes a :class:`StoredGoal` (with its decoded signature) only when
ranking touches it. The whole structure packs into one text snapshot (the origin's row in ``trajectory_snapshots``,
written and read by :mod:`.snapshots`): a new process reads one value instead of every trajectory row, and decodes
nothing up front.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import json
import math
import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core.terms import MECHANICS
from .form_shapes import FormShapes
from .key_lines import has_key
from .key_lines import keys as keys_of
from .positions import NumberedLists, NumberRow, PositionLists
from .recall import VALUE_MARK, Signature, decode, fixed_terms, signature, value_weight
from .wordings import FRAME_MARK

#: What an origin remembers of the new goals it is asked about (the weights of their token and value sets, counts)
#: beyond one entry per goal it holds, before it starts again: so what the process keeps stays in proportion to
#: the goals it holds.
REMEMBERED_BEYOND_GOALS = 1024
SEARCHED_ADDS = 8  # goals an origin read from a snapshot takes with its ids and shapes searched as text; then sets cost less
_SHAPE_SEPARATOR = "\x1f"  # between the tokens of a shape or a form


@dataclass(slots=True)
class StoredGoal:
    """A successful trajectory as recall holds it: everything but its steps."""

    id: str
    goal: str
    run_id: str | None
    created_at: datetime
    duration_ms: int
    step_count: int
    verified_steps: int
    signature: Signature
    vector: Any = None

    @property
    def verification_rate(self) -> float:
        return self.verified_steps / self.step_count if self.step_count else 0.0


def _record(goal: StoredGoal) -> list[Any]:
    return [goal.id, goal.goal, goal.run_id, goal.created_at.isoformat(), goal.duration_ms, goal.step_count,
            goal.verified_steps, goal.signature.template, goal.signature.encode()]


def _goal(record: list[Any] | str) -> StoredGoal:
    if isinstance(record, str):  # as a snapshot holds it: read when first asked for
        record = json.loads(record)
    id_, goal, run_id, created_at, duration_ms, step_count, verified_steps, template, encoded = record
    return StoredGoal(id_, goal, run_id, datetime.fromisoformat(created_at), duration_ms, step_count, verified_steps,
                      decode(encoded, template) or signature(goal, template))


class _Goals(Sequence[StoredGoal]):
    """The goals by position, each built from its record the first time it is asked for."""

    def __init__(self, held: OriginGoals) -> None:
        self._held = held

    def __len__(self) -> int:
        return len(self._held.records)

    def __getitem__(self, position: int) -> StoredGoal:  # type: ignore[override]
        return self._held.goal(position)

    def __iter__(self) -> Iterator[StoredGoal]:
        return (self[position] for position in range(len(self)))


@dataclass
class OriginGoals:
    """One origin's stored goals, with an inverted index from each word to the goals that use it.

    Goals are added while other threads of the process read: whatever reads more than one attribute, or fills
    what is remembered, holds ``lock`` (as :meth:`add` does). Whoever holds it never waits for the goal index's
    lock, which is held around adds."""

    version: int = 0
    removals: int = 0
    records: list[list[Any] | str] = field(default_factory=list)  # a goal's fields, or as JSON text
    built: dict[int, StoredGoal] = field(default_factory=dict)
    ids_text: str | None = None  # the ids as a snapshot holds them, read when first needed
    forms_text: str | None = None  # the distinct token sets of the goals (a key each), read when first needed
    form_members: NumberedLists = field(default_factory=NumberedLists)  # the goals of each form
    form_row: NumberRow = field(default_factory=lambda: NumberRow())  # each goal's form number
    postings: PositionLists = field(default_factory=lambda: PositionLists())  # from each token to its forms
    templates: list[str] = field(default_factory=list)  # the distinct goal templates, by number
    members: NumberedLists = field(default_factory=NumberedLists)  # the goals of each template
    template_row: NumberRow = field(default_factory=lambda: NumberRow())  # each goal's template number (-1: none)
    fixed: PositionLists = field(default_factory=lambda: PositionLists())  # from a word of a template's fixed text
    fixed_sizes: list[int] = field(default_factory=list)  # how many such words each template has
    unfixed: list[int] = field(default_factory=list)  # templates without fixed words: any goal may fit them
    late: list[int] = field(default_factory=list)  # goals created before one stored ahead of them (imports, races)
    last_created: datetime | None = None  # the newest time a goal not late was created at
    shapes_text: str | None = None  # the shapes as a snapshot holds them, read when first needed
    shape_count: int = 0  # how many distinct token sets the goals have
    form_shapes: FormShapes = field(default_factory=FormShapes)  # how many of them each form has
    spread: dict[str, int] = field(default_factory=dict)  # in how many shapes each token occurs
    valued: PositionLists = field(default_factory=lambda: PositionLists())  # from each value to the goals that name it
    texts_text: str | None = None  # from a hash of a goal's words to the goals, as JSON, read when first needed
    checked: Any = None  # the store's read mark at which these goals were last found current
    act_words: Any = None  # the words learned to name one act here and the fields' options (``acts.read_by_acts``),
    #                        with the version they hold for
    act_templates: Any = None  # the templates by how they begin and end (``acts``), as far as read
    _common: tuple[int, frozenset[str]] | None = None  # ``common_tokens`` with the shape count it holds for
    _weights: dict[str, float] = field(default_factory=dict)
    _sums: dict[frozenset[str], float] = field(default_factory=dict)  # the weight of a goal's tokens, by token set
    _value_sums: dict[frozenset[str], float] = field(default_factory=dict)
    form_weights: dict[int, float] = field(default_factory=dict)  # ``form_weight`` of the forms asked for so far
    _form_templates: dict[int, set[int]] = field(default_factory=dict)  # ``form_templates`` of the forms asked for
    _token_sets: dict[int, frozenset[str]] = field(default_factory=dict)  # ``_form_tokens`` of the forms asked for
    _masks: dict[str, int] = field(default_factory=dict)  # ``postings`` as bit masks of form numbers, once asked for
    _all_masks: bool = True  # every token's mask is in ``_masks`` (goals only added); not so for a snapshot's
    _vectors: Any = None
    _ids: set[str] | None = None  # ``ids_text`` as a set, once asked for
    _ids_added: set[str] = field(default_factory=set)  # ids added before that (an add does not make the set)
    _shapes: set[str] | None = None
    _shapes_added: set[str] = field(default_factory=set)
    _numbers: dict[str, int] | None = None
    _late_newest: list[int] | None = None
    _naming: dict[tuple[bool, int, str], int] = field(default_factory=dict)  # ``naming``, until a goal is added
    _value_masks: dict[str, int] = field(default_factory=dict)  # ``value_mask`` of the values asked for, kept whole
    lock: threading.RLock = field(default_factory=threading.RLock, compare=False, repr=False)
    _form_numbers: dict[str, int] | None = None
    _forms: list[str] | None = None
    _texts: PositionLists | None = None
    _texts_added: list[tuple[str, int]] = field(default_factory=list)  # goals added before ``texts`` was read

    @property
    def goals(self) -> _Goals:
        return _Goals(self)

    def goal(self, position: int) -> StoredGoal:
        """The goal at ``position``, built from its record the first time it is asked for."""
        goal = self.built.get(position)
        if goal is None:
            goal = self.built[position] = _goal(self.records[position])
        return goal

    @property
    def ids(self) -> set[str]:
        return self._sets()[0]

    @property
    def shapes(self) -> set[str]:
        """The distinct token sets among the goals, each as one key."""
        return self._sets()[1]

    def _sets(self) -> tuple[set[str], set[str]]:
        """The ids and the shapes as sets: a snapshot's lines of them made sets once, with those added before."""
        with self.lock:
            if self._ids is None or self._shapes is None:
                self._ids = {*keys_of(self.ids_text), *self._ids_added}
                self._shapes = {*keys_of(self.shapes_text), *self._shapes_added}
                self._ids_added.clear()
                self._shapes_added.clear()
            return self._ids, self._shapes

    def _searching(self) -> bool:
        """Whether the ids and shapes are still searched as a snapshot's text (the first few goals added)."""
        return self._ids is None and len(self._ids_added) < SEARCHED_ADDS

    def holds(self, goal_id: str) -> bool:
        """Whether a goal of this id is held."""
        with self.lock:
            if self._searching():
                return goal_id in self._ids_added or has_key(self.ids_text, goal_id)
            return goal_id in self.ids

    def _new_shape(self, key: str) -> bool:
        """Whether no goal held has this shape; if so, it is one now."""
        searching = self._searching()
        kept = self._shapes_added if searching else self.shapes
        if key in kept or (searching and has_key(self.shapes_text, key)):
            return False
        kept.add(key)
        return True

    def add_new(self, goals: Sequence[StoredGoal]) -> None:
        """Add those of ``goals`` not held yet; more than ``SEARCHED_ADDS`` make the ids and shapes sets at once."""
        with self.lock:
            if len(goals) > SEARCHED_ADDS:
                self._sets()
            for goal in goals:
                if not self.holds(goal.id):
                    self.add(goal)

    def add(self, goal: StoredGoal) -> None:
        with self.lock:
            position = len(self.records)
            self._naming.clear()
            self.records.append(_record(goal))
            self.built[position] = goal
            (self._ids_added if self._ids is None else self._ids).add(goal.id)
            number = self._template_number(goal.signature.template) if goal.signature.template else -1
            self.template_row.append(number)
            if number >= 0:
                self.members.append(number, position)
            if self.last_created is not None and goal.created_at <= self.last_created:
                self.late.append(position)
                self._late_newest = None
            else:
                self.last_created = goal.created_at
            words = goal.signature.tokens
            form = self._form_number(words)
            self.form_row.append(form)
            self.form_members.append(form, position)
            self._form_templates.get(form, set()).add(number)
            for value in goal.signature.values:
                self.valued.append(value, position)
                if value in self._value_masks:
                    self._value_masks[value] |= 1 << form
            self._texts_added.append((_text_key(goal.goal.split()), position))
            shape = goal.signature.content | {VALUE_MARK + value for value in goal.signature.values}
            key = _SHAPE_SEPARATOR.join(sorted(shape))
            if self._new_shape(key):
                self.shape_count += 1
                self.form_shapes.add(form, self._form_tokens)
                for token in shape:
                    self.spread[token] = self.spread.get(token, 0) + 1
                self._weights.clear()
                self._sums.clear()
                self._value_sums.clear()
                self.form_weights.clear()
            self._vectors = None

    @property
    def form_of(self) -> list[int]:
        """The number of each goal's form (its token set), by position."""
        return self.form_row.numbers

    @property
    def forms(self) -> list[str]:
        """The distinct token sets of the goals, each as one key, by number."""
        if self._forms is None:
            self._forms = keys_of(self.forms_text)
        return self._forms

    @property
    def texts(self) -> PositionLists:
        """From a hash of a goal's words to the positions of the goals with those words."""
        if self._texts is None:
            self._texts = PositionLists(json.loads(self.texts_text) if self.texts_text else {})
        for key, position in self._texts_added:
            self._texts.append(key, position)
        self._texts_added.clear()
        return self._texts

    def _form_number(self, tokens: frozenset[str]) -> int:
        key = _SHAPE_SEPARATOR.join(sorted(tokens))
        if self._form_numbers is None:
            self._form_numbers = dict(zip(self.forms, range(len(self.forms))))
        number = self._form_numbers.get(key)
        if number is None:
            number = self._form_numbers[key] = len(self.forms)
            self.forms.append(key)
            for token in tokens:
                self.postings.append(token, number)
                if self._all_masks or token in self._masks:
                    self._masks[token] = self._masks.get(token, 0) | 1 << number
        return number

    def _form_tokens(self, form: int) -> frozenset[str]:
        """The tokens of form ``form``, remembered."""
        if (known := self._token_sets.get(form)) is None:
            known = self._token_sets[form] = frozenset(self.forms[form].split(_SHAPE_SEPARATOR))
        return known

    def form_templates(self, form: int) -> set[int]:
        """The numbers of the templates of the goals of form ``form`` (-1 for goals without one), remembered."""
        if (known := self._form_templates.get(form)) is None:
            known = self._form_templates[form] = set(map(self.template_of.__getitem__, self.form_members.get(form)))
        return known

    @property
    def template_of(self) -> list[int]:
        """The number of each goal's template (-1 for a goal without one), by position."""
        return self.template_row.numbers

    def _template_number(self, template: str) -> int:
        if self._numbers is None:
            self._numbers = {text: number for number, text in enumerate(self.templates)}
        number = self._numbers.get(template)
        if number is None:
            number = self._numbers[template] = len(self.templates)
            self.templates.append(template)
            terms = fixed_terms(template)
            self.fixed_sizes.append(len(terms))
            if not terms:
                self.unfixed.append(number)
            for term in terms:
                self.fixed.append(term, number)
        return number

    def posting_mask(self, token: str) -> int:
        """The forms that have ``token``, as a bit mask (bit ``n`` for form ``n``)."""
        mask = self._masks.get(token)
        if mask is None:
            positions = self.postings.get(token, ())
            if not positions:
                return 0  # not remembered: the words of new goals no stored goal has would pile up
            mask = self._masks[token] = functools.reduce(operator.or_, map((1).__lshift__, positions), 0)
        return mask

    def fitting_templates(self, query: Signature) -> list[int]:
        """The numbers of the templates the goal ``query`` may fit: it names every word of the template's
        fixed text (``Signature.may_fit``), found through the words it names."""
        if not self.fixed:  # no template with fixed words: the words of the query need not be found
            return list(self.unfixed)
        hits: dict[int, int] = {}
        for term in query.fit_terms():
            for number in self.fixed.get(term, ()):
                hits[number] = hits.get(number, 0) + 1
        return [number for number, count in hits.items() if count == self.fixed_sizes[number]] + self.unfixed

    def template_goals(self, number: int) -> list[int]:
        """The positions of the goals of template ``number``, oldest first."""
        return self.members.get(number)

    def template_newest_first(self, number: int) -> Iterator[int]:
        """The positions of the goals of template ``number``, newest first (see :meth:`newest_first`)."""
        template_of = self.template_of
        return self.newest_first(self.template_goals(number), lambda position: template_of[position] == number)

    def newest_first(self, positions: list[int], belongs: Callable[[int], bool]) -> Iterator[int]:
        """``positions`` (ascending; ``belongs`` says whether a position is one of them) newest goal first, by
        id between goals of one time. Goals not late follow their positions' order, so only the late ones
        are sorted, and only the goals consumed are built."""
        if not self.late:
            return reversed(positions)
        if self._late_newest is None:
            self._late_newest = sorted(self.late, key=self.time_key, reverse=True)
        late = set(self._late_newest)
        in_order = (position for position in reversed(positions) if position not in late)
        others = (position for position in self._late_newest if belongs(position))
        return heapq.merge(in_order, others, key=self.time_key, reverse=True)

    def value_mask(self, value: str) -> int:
        """The forms with a goal that names ``value``, as a bit mask (as ``posting_mask`` for a token)."""
        mask = self._value_masks.get(value)
        if mask is None:
            positions = self.valued.get(value, ())
            if not positions:
                return 0
            form_of = self.form_of
            mask = self._value_masks[value] = functools.reduce(operator.or_, {1 << form_of[p] for p in positions}, 0)
        return mask

    def naming(self, value: str, group: int, *, templates: bool) -> int:
        """How many goals of form ``group`` (of template ``group`` with ``templates``) name ``value``: a pass over
        the goals that name it, remembered until a goal is added (a task done many times names one value in
        thousands of goals)."""
        key = (templates, group, value)
        known = self._naming.get(key)
        if known is None:
            group_of = self.template_of if templates else self.form_of
            known = self._remember(self._naming, key,
                                   operator.countOf(map(group_of.__getitem__, self.valued.get(value, ())), group))
        return known

    def named(self, words: list[str]) -> list[int]:
        """The positions of the goals that may be these words (the same hash of them: compare), ascending."""
        return self.texts.get(_text_key(words), [])

    def time_key(self, position: int) -> tuple[datetime, str]:
        goal = self.goal(position)
        return goal.created_at, goal.id

    def weight(self, token: str) -> float:
        """How much a token says about which task a goal is, on this origin: a word that most of its goals use
        ("click", "submit") says little, a rare one ("colour picker") much: (1 + ln idf)²; a frame nothing."""
        known = self._weights.get(token)
        if known is None:
            shapes = self.spread.get(token)
            if shapes is None and token[0] == FRAME_MARK:  # a frame: a stored goal's is remembered
                if token in self.postings:
                    self._weights[token] = 0.0
                return 0.0
            count = self.shape_count
            if token[0] != VALUE_MARK and (beyond := self.form_shapes.uncounted(self._form_tokens)):
                count -= beyond  # a form counts at most its cap of shapes
                if shapes:
                    shapes -= self.form_shapes.uncounted(self._form_tokens, token)
            known = (1.0 + math.log((count + 1) / ((shapes or 0) + 1))) ** 2 * MECHANICS.get(token, 1.0)
            if shapes is not None:  # a new goal's own word (of no shape) is never remembered
                self._weights[token] = known
        return known

    def common_tokens(self) -> frozenset[str]:
        """The tokens every shape of the origin's goals has (an inbox's "email", "<name>"): they tell none of its
        tasks apart. Remembered until a new shape comes (shapes are only added)."""
        if self._common is None or self._common[0] != self.shape_count:
            count = self.shape_count
            self._common = count, frozenset(token for token, shapes in self.spread.items() if shapes == count)
        return self._common[1]

    def weigh(self, tokens: frozenset[str]) -> float:
        """The weight of a goal's tokens (``weight`` summed), remembered until a new shape changes the weights."""
        known = self._sums.get(tokens)
        if known is None:
            known = self._remember(self._sums, tokens, self.weight_of(tokens))
        return known

    def weight_of(self, tokens: Iterable[str]) -> float:
        """``weight`` summed over the tokens (each token's weight looked up at C speed once it is known)."""
        try:
            return sum(map(self._weights.__getitem__, tokens))
        except KeyError:
            return sum(map(self.weight, tokens))

    def form_weight(self, number: int) -> float:
        """The weight of the tokens of form ``number`` (``weigh`` of any of its goals' tokens), remembered."""
        known = self.form_weights.get(number)
        if known is None:
            key = self.forms[number]
            known = self.form_weights[number] = self.weight_of(key.split(_SHAPE_SEPARATOR)) if key else 0.0
        return known

    def _remember(self, remembered: dict[Any, Any], key: Any, value: Any) -> Any:
        """``value`` kept under ``key``; ``remembered`` starts again once it holds ``REMEMBERED_BEYOND_GOALS`` entries
        more than the goals held (new goals' token sets, each met once, would pile up)."""
        if len(remembered) >= len(self.records) + REMEMBERED_BEYOND_GOALS:
            remembered.clear()
        remembered[key] = value
        return value

    def weigh_values(self, values: frozenset[str]) -> float:
        """The weight of a goal's values (``recall.value_weight``), remembered as ``weigh`` is."""
        known = self._value_sums.get(values)
        if known is None:
            known = self._remember(self._value_sums, values, value_weight(values, self.weight))
        return known

    def vectors(self) -> Any:
        """The goals' vectors as one matrix (rows in the order of ``goals``), built once."""
        if self._vectors is None:
            import numpy

            self._vectors = numpy.vstack([goal.vector for goal in self.goals]) if self.records else None
        return self._vectors


def _text_key(words: list[str]) -> str:
    return hashlib.blake2b(" ".join(words).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
