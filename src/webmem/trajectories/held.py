"""One origin's stored goals as recall holds them: compact records, an inverted index, and a snapshot.

A goal is kept as a compact record and becomes a :class:`StoredGoal` (with its decoded signature)
only when ranking touches it. The whole structure packs into one JSON snapshot, stored with the
origin's row in ``trajectory_origins``, so that a new process reads one value instead of every
trajectory row and decodes nothing up front.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .recall import SIGNATURE_VERSION, VALUE_MARK, Signature, decode, fixed_terms, signature, value_weight

SNAPSHOT_FORMAT = 2
_SHAPE_SEPARATOR = "\x1f"


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
        built = self._held.built
        goal = built.get(position)
        if goal is None:
            goal = built[position] = _goal(self._held.records[position])
        return goal

    def __iter__(self) -> Iterator[StoredGoal]:
        return (self[position] for position in range(len(self)))


@dataclass
class OriginGoals:
    """One origin's stored goals, with an inverted index from each word to the goals that use it."""

    version: int = 0
    removals: int = 0
    records: list[list[Any] | str] = field(default_factory=list)  # a goal's fields, or as JSON text
    built: dict[int, StoredGoal] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    postings: dict[str, list[int]] = field(default_factory=dict)
    templated: list[int] = field(default_factory=list)  # positions of the goals with a template
    fixed: dict[str, list[int]] = field(default_factory=dict)  # from each word of a template's fixed text to its goals
    fixed_sizes: dict[int, int] = field(default_factory=dict)  # how many such words each templated goal's template has
    unfixed: list[int] = field(default_factory=list)  # templated goals without fixed words: any goal may fit them
    shapes: set[str] = field(default_factory=set)  # the distinct token sets among the goals, as keys
    spread: dict[str, int] = field(default_factory=dict)  # in how many shapes each token occurs
    valued: dict[str, list[int]] = field(default_factory=dict)  # from each value to the goals that name it
    _weights: dict[str, float] = field(default_factory=dict)
    _sums: dict[frozenset[str], float] = field(default_factory=dict)  # the weight of a goal's tokens, by token set
    _value_sums: dict[frozenset[str], float] = field(default_factory=dict)
    _vectors: Any = None

    @property
    def goals(self) -> _Goals:
        return _Goals(self)

    def add(self, goal: StoredGoal) -> None:
        position = len(self.records)
        self.records.append(_record(goal))
        self.built[position] = goal
        self.ids.add(goal.id)
        if goal.signature.template:
            self.templated.append(position)
            terms = fixed_terms(goal.signature.template)
            self.fixed_sizes[position] = len(terms)
            if not terms:
                self.unfixed.append(position)
            for term in terms:
                self.fixed.setdefault(term, []).append(position)
        words = goal.signature.tokens
        for token in words:
            self.postings.setdefault(token, []).append(position)
        for value in goal.signature.values:
            self.valued.setdefault(value, []).append(position)
        shape = words | {VALUE_MARK + value for value in goal.signature.values}
        key = _SHAPE_SEPARATOR.join(sorted(shape))
        if key not in self.shapes:
            self.shapes.add(key)
            for token in shape:
                self.spread[token] = self.spread.get(token, 0) + 1
            self._weights.clear()
            self._sums.clear()
            self._value_sums.clear()
        self._vectors = None

    def fitting(self, query: Signature) -> list[int]:
        """The positions of the goals whose template the goal ``query`` may fit: it names every word of
        the template's fixed text (``Signature.may_fit``), found through the words it names."""
        hits: dict[int, int] = {}
        for term in query.terms:
            for position in self.fixed.get(term, ()):
                hits[position] = hits.get(position, 0) + 1
        return [position for position, count in hits.items() if count == self.fixed_sizes[position]] + self.unfixed

    def weight(self, token: str) -> float:
        """How much a token says about which task a goal is, on this origin: a word that most of its
        goals use ("click", "submit") says little, a rare one ("colour picker") much: (1 + ln idf)²."""
        known = self._weights.get(token)
        if known is None:
            rarity = (len(self.shapes) + 1) / (self.spread.get(token, 0) + 1)
            known = self._weights[token] = (1.0 + math.log(rarity)) ** 2
        return known

    def weigh(self, tokens: frozenset[str]) -> float:
        """The weight of a goal's tokens (``weight`` summed), remembered until a new shape changes the weights."""
        known = self._sums.get(tokens)
        if known is None:
            known = self._sums[tokens] = sum(map(self.weight, tokens))
        return known

    def weigh_values(self, values: frozenset[str]) -> float:
        """The weight of a goal's values (``recall.value_weight``), remembered as ``weigh`` is."""
        known = self._value_sums.get(values)
        if known is None:
            known = self._value_sums[values] = value_weight(values, self.weight)
        return known

    def vectors(self) -> Any:
        """The goals' vectors as one matrix (rows in the order of ``goals``), built once."""
        if self._vectors is None:
            import numpy

            self._vectors = numpy.vstack([goal.vector for goal in self.goals]) if self.records else None
        return self._vectors

    def pack(self) -> str:
        """The whole structure as one JSON text (without vectors)."""
        return json.dumps({
            "format": SNAPSHOT_FORMAT, "signature": SIGNATURE_VERSION, "version": self.version,
            "removals": self.removals, "ids": sorted(self.ids), "postings": self.postings,
            "records": [record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)
                        for record in self.records],
            "templated": self.templated, "fixed": self.fixed,
            "fixed_sizes": [[position, size] for position, size in self.fixed_sizes.items()], "unfixed": self.unfixed,
            "shapes": sorted(self.shapes), "spread": self.spread, "valued": self.valued,
        }, ensure_ascii=False, separators=(",", ":"))


def unpack(text: str | None) -> OriginGoals | None:
    """The structure a snapshot holds, or None when there is none or it was written by another
    version of the matcher (then the origin is read from its rows)."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT or data.get("signature") != SIGNATURE_VERSION:
        return None
    try:
        return OriginGoals(
            version=data["version"], removals=data["removals"], records=data["records"], ids=set(data["ids"]),
            postings=data["postings"], templated=data["templated"], fixed=data["fixed"],
            fixed_sizes={position: size for position, size in data["fixed_sizes"]}, unfixed=data["unfixed"], shapes=set(data["shapes"]),
            spread=data["spread"], valued=data["valued"],
        )
    except (KeyError, TypeError, IndexError):
        return None
