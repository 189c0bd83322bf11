"""The goals of each origin's successful trajectories, held in memory and kept in step with the database.

Recall never scans full trajectory rows: it reads an origin's goals (id, goal, signature, counts,
vector) once, then on every match asks the origin's row in ``trajectory_origins`` whether anything
changed. Saves raise the origin's ``version`` (each trajectory keeps the version it was saved
under as ``origin_seq``), so another process's new trajectories are read alone; deletes raise
``removals``, and the origin is read again whole. Only the winner's steps are ever decoded.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, select, update

from ..core.embeddings import Embedder
from ..store.schema import trajectories, trajectory_origins
from ..store.statements import insert_or_change
from .recall import VALUE_MARK, Signature, decode, signature

MAX_HELD_GOALS = 200_000  # across origins; the least recently matched origins are let go first
_GOAL_COLUMNS = (
    trajectories.c.trajectory_id, trajectories.c.goal, trajectories.c.run_id, trajectories.c.created_at,
    trajectories.c.duration_ms, trajectories.c.step_count, trajectories.c.verified_steps,
    trajectories.c.goal_template, trajectories.c.goal_signature, trajectories.c.origin_seq,
)
_VECTOR_COLUMNS = (trajectories.c.goal_vector, trajectories.c.goal_vector_model)
_STAMP = select(trajectory_origins.c.version, trajectory_origins.c.removals).where(
    trajectory_origins.c.namespace == bindparam("ns"), trajectory_origins.c.origin == bindparam("origin")
)



def _goals_query(*, with_vectors: bool, newer: bool) -> Any:
    statement = select(*_GOAL_COLUMNS, *(_VECTOR_COLUMNS if with_vectors else ())).where(
        trajectories.c.namespace == bindparam("ns"), trajectories.c.origin == bindparam("origin"),
        trajectories.c.success.is_(True),
    )
    if newer:
        statement = statement.where(trajectories.c.origin_seq > bindparam("after")).order_by(trajectories.c.origin_seq)
    return statement


_GOAL_QUERIES = {(vectors, newer): _goals_query(with_vectors=vectors, newer=newer)
                 for vectors in (False, True) for newer in (False, True)}


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


@dataclass
class OriginGoals:
    """One origin's stored goals, with an inverted index from each word to the goals that use it."""

    version: int = 0
    removals: int = 0
    goals: list[StoredGoal] = field(default_factory=list)
    postings: dict[str, list[int]] = field(default_factory=dict)
    templated: list[int] = field(default_factory=list)  # positions of the goals with a template
    shapes: set[frozenset[str]] = field(default_factory=set)  # the distinct token sets among the goals
    spread: dict[str, int] = field(default_factory=dict)  # in how many shapes each token occurs
    valued: dict[str, list[int]] = field(default_factory=dict)  # from each value to the goals that name it
    _weights: dict[str, float] = field(default_factory=dict)
    _vectors: Any = None

    def add(self, goal: StoredGoal) -> None:
        position = len(self.goals)
        self.goals.append(goal)
        if goal.signature.template:
            self.templated.append(position)
        words = goal.signature.tokens
        for token in words:
            self.postings.setdefault(token, []).append(position)
        for value in goal.signature.values:
            self.valued.setdefault(value, []).append(position)
        shape = words | {VALUE_MARK + value for value in goal.signature.values}
        if shape not in self.shapes:
            self.shapes.add(shape)
            for token in shape:
                self.spread[token] = self.spread.get(token, 0) + 1
            self._weights.clear()
        self._vectors = None

    def weight(self, token: str) -> float:
        """How much a token says about which task a goal is, on this origin: a word that most of its
        goals use ("click", "submit") says little, a rare one ("colour picker") much: (1 + ln idf)²."""
        known = self._weights.get(token)
        if known is None:
            rarity = (len(self.shapes) + 1) / (self.spread.get(token, 0) + 1)
            known = self._weights[token] = (1.0 + math.log(rarity)) ** 2
        return known

    def vectors(self) -> Any:
        """The goals' vectors as one matrix (rows in the order of ``goals``), built once."""
        if self._vectors is None:
            import numpy

            self._vectors = numpy.vstack([goal.vector for goal in self.goals]) if self.goals else None
        return self._vectors


class GoalIndex:
    """Per-origin goals of one namespace, read lazily and refreshed by version."""

    def __init__(self, namespace: str, *, embedder: Embedder | None = None, max_goals: int = MAX_HELD_GOALS) -> None:
        self._ns = namespace
        self.embedder = embedder
        self._max_goals = max_goals
        self._origins: OrderedDict[str, OriginGoals] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    def goals(self, conn: Connection, origin: str) -> tuple[OriginGoals, list[tuple[str, bytes]]]:
        """The origin's goals as the database holds them now (read inside the caller's transaction),
        and the vectors computed for goals stored without one or under another model (to store).
        """
        stamp = conn.execute(_STAMP, {"ns": self._ns, "origin": origin}).first()
        version, removals = (stamp.version, stamp.removals) if stamp is not None else (0, 0)
        with self._lock:
            held = self._origins.get(origin)
            if held is not None and (held.version, held.removals) == (version, removals):
                self._origins.move_to_end(origin)
                return held, []
        fresh = held is None or held.removals != removals or held.version > version
        statement = _GOAL_QUERIES[self.embedder is not None, not fresh]
        rows = conn.execute(
            statement, {"ns": self._ns, "origin": origin, "after": 0 if fresh else held.version}
        ).all() if stamp is not None else []
        new_goals, unembedded = self._stored_goals(rows)
        with self._lock:
            if fresh:
                held = OriginGoals()
            assert held is not None
            known = {goal.id for goal in held.goals}
            for goal in new_goals:
                if goal.id not in known:
                    held.add(goal)
            seqs = [row.origin_seq for row in rows if row.origin_seq is not None]
            held.version = max([version, *seqs])
            held.removals = removals
            self._hold(origin, held)
        return held, unembedded

    def forget(self) -> None:
        """Let go of every origin held (the next match reads them again)."""
        with self._lock:
            self._origins.clear()
            self._held = 0

    def embed(self, texts: Sequence[str]) -> list[bytes] | None:
        """The vectors of ``texts`` as stored bytes, or None without an embedder."""
        if self.embedder is None or not texts:
            return None
        import numpy

        return [numpy.asarray(vector, dtype=numpy.float32).tobytes() for vector in self.embedder.embed(list(texts))]

    def vector(self, text: str) -> Any:
        """The vector of one text as an array, or None without an embedder."""
        stored = self.embed([text])
        return _array(stored[0]) if stored else None

    def _stored_goals(self, rows: Sequence[Any]) -> tuple[list[StoredGoal], list[tuple[str, bytes]]]:
        model = self.embedder.name if self.embedder is not None else None
        stale = [row for row in rows if model is not None and (row.goal_vector is None or row.goal_vector_model != model)]
        vectors = dict(zip([row.trajectory_id for row in stale], self.embed([row.goal for row in stale]) or []))
        goals = []
        for row in rows:
            sig = decode(row.goal_signature, row.goal_template) or signature(row.goal, row.goal_template)
            raw = vectors.get(row.trajectory_id, row.goal_vector if model is not None else None)
            goals.append(StoredGoal(
                id=row.trajectory_id, goal=row.goal, run_id=row.run_id, created_at=row.created_at,
                duration_ms=row.duration_ms, step_count=row.step_count or 0, verified_steps=row.verified_steps or 0,
                signature=sig, vector=_array(raw) if raw is not None else None,
            ))
        return goals, list(vectors.items())

    def _hold(self, origin: str, held: OriginGoals) -> None:
        previous = self._origins.pop(origin, None)
        self._held -= len(previous.goals) if previous is not None else 0
        self._origins[origin] = held
        self._held += len(held.goals)
        while self._held > self._max_goals and len(self._origins) > 1:
            _, dropped = self._origins.popitem(last=False)
            self._held -= len(dropped.goals)


def bump_origin(conn: Connection, namespace: str, origin: str, *, removed: int = 0) -> int:
    """Raise the origin's version (and its removals by ``removed``) in the caller's write transaction;
    returns the new version, which a trajectory saved now keeps as its ``origin_seq``."""
    insert_or_change(
        conn, trajectory_origins, {"namespace": namespace, "origin": origin, "version": 1, "removals": removed},
        keys=("namespace", "origin"),
        changes={"version": trajectory_origins.c.version + 1, "removals": trajectory_origins.c.removals + removed},
    )
    return int(conn.execute(_STAMP, {"ns": namespace, "origin": origin}).one().version)


def store_vectors(conn: Connection, namespace: str, model: str, vectors: Sequence[tuple[str, bytes]]) -> None:
    """Write goal vectors computed under ``model`` (a vector is not a change of the trajectory)."""
    statement = update(trajectories).where(
        trajectories.c.namespace == bindparam("ns"), trajectories.c.trajectory_id == bindparam("id")
    ).values(goal_vector=bindparam("vector"), goal_vector_model=model)
    conn.execute(statement, [{"ns": namespace, "id": id_, "vector": vector} for id_, vector in vectors])


def _array(raw: bytes) -> Any:
    import numpy

    return numpy.frombuffer(raw, dtype=numpy.float32)
