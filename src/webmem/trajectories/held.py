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

SNAPSHOT_FORMAT = 3
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
        return self._held.goal(position)

    def __iter__(self) -> Iterator[StoredGoal]:
        return (self[position] for position in range(len(self)))


class PositionLists(dict[str, list[int]]):
    """From a key (a word, a value) to the positions of the goals that have it. A snapshot's lists stay
    text ("3,5,8") until ``get`` or ``setdefault`` first asks for them: a match reads a handful."""

    def get(self, key: str, default: Any = None) -> Any:
        found = dict.get(self, key, default)
        if type(found) is str:
            found = self[key] = [int(position) for position in found.split(",")] if found else []
        return found

    def setdefault(self, key: str, default: Any = None) -> Any:
        found = self.get(key)
        return found if found is not None else dict.setdefault(self, key, default)

    def packed(self) -> dict[str, str]:
        return {key: found if type(found) is str else ",".join(map(str, found)) for key, found in self.items()}


@dataclass
class OriginGoals:
    """One origin's stored goals, with an inverted index from each word to the goals that use it."""

    version: int = 0
    removals: int = 0
    records: list[list[Any] | str] = field(default_factory=list)  # a goal's fields, or as JSON text
    built: dict[int, StoredGoal] = field(default_factory=dict)
    ids_text: str | None = None  # the ids as a snapshot holds them (JSON), read when first needed
    postings: PositionLists = field(default_factory=lambda: PositionLists())
    fixed: PositionLists = field(default_factory=lambda: PositionLists())  # from each word of a template's fixed text to its goals
    fixed_sizes: dict[int, int] = field(default_factory=dict)  # how many such words each templated goal's template has
    unfixed: list[int] = field(default_factory=list)  # templated goals without fixed words: any goal may fit them
    shapes_text: str | None = None  # the shapes as a snapshot holds them (JSON), read when first needed
    shape_count: int = 0  # how many distinct token sets the goals have
    spread: dict[str, int] = field(default_factory=dict)  # in how many shapes each token occurs
    valued: PositionLists = field(default_factory=lambda: PositionLists())  # from each value to the goals that name it
    _weights: dict[str, float] = field(default_factory=dict)
    _sums: dict[frozenset[str], float] = field(default_factory=dict)  # the weight of a goal's tokens, by token set
    _value_sums: dict[frozenset[str], float] = field(default_factory=dict)
    _vectors: Any = None
    _ids: set[str] | None = None
    _shapes: set[str] | None = None

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
        if self._ids is None:
            self._ids = set(json.loads(self.ids_text)) if self.ids_text else set()
        return self._ids

    @property
    def shapes(self) -> set[str]:
        """The distinct token sets among the goals, each as one key."""
        if self._shapes is None:
            self._shapes = set(json.loads(self.shapes_text)) if self.shapes_text else set()
        return self._shapes

    def add(self, goal: StoredGoal) -> None:
        position = len(self.records)
        self.records.append(_record(goal))
        self.built[position] = goal
        self.ids.add(goal.id)
        if goal.signature.template:
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
            self.shape_count += 1
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
            rarity = (self.shape_count + 1) / (self.spread.get(token, 0) + 1)
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
        """The whole structure as text (without vectors): lines of JSON, so that a reader parses only the
        index up front (the ids and shapes when it adds a goal, each goal's line when ranking touches it)."""
        header = {"format": SNAPSHOT_FORMAT, "signature": SIGNATURE_VERSION, "version": self.version,
                  "removals": self.removals, "shape_count": self.shape_count,
                  "fixed": self.fixed.packed(), "fixed_sizes": [[position, size] for position, size in self.fixed_sizes.items()],
                  "unfixed": self.unfixed, "postings": self.postings.packed(), "spread": self.spread,
                  "valued": self.valued.packed()}
        rest = "\n".join([_json_line(sorted(self.ids)), _json_line(sorted(self.shapes)),
                          *(record if isinstance(record, str) else _json_line(record) for record in self.records)])
        header["length"] = len(rest)  # a snapshot cut short or pasted over is not read
        return _json_line(header) + "\n" + rest


def _json_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))  # never a raw line break


def unpack(text: str | None) -> OriginGoals | None:
    """The structure a snapshot holds, or None when there is none, it is unreadable, or it was written
    by another version of the matcher (then the origin is read from its rows)."""
    if not text:
        return None
    header_text, _, rest = text.partition("\n")
    try:
        data = json.loads(header_text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT or data.get("signature") != SIGNATURE_VERSION \
            or data.get("length") != len(rest):
        return None
    lines = rest.split("\n")
    if len(lines) < 2 or not all(line.startswith("[") and line.endswith("]") for line in lines[:2]):
        return None
    try:
        return OriginGoals(
            version=data["version"], removals=data["removals"], records=lines[2:], ids_text=lines[0],
            shapes_text=lines[1], shape_count=data["shape_count"], postings=PositionLists(data["postings"]),
            fixed=PositionLists(data["fixed"]),
            fixed_sizes={position: size for position, size in data["fixed_sizes"]}, unfixed=data["unfixed"],
            spread=data["spread"], valued=PositionLists(data["valued"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
