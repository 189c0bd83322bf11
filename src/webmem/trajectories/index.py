"""The goals of each origin's successful trajectories, held in memory and kept in step with the database.

Recall never scans full trajectory rows: it reads an origin's goals (id, goal, signature, counts,
vector) once, then on every match asks the origin's row in ``trajectory_origins`` whether anything
changed. Saves raise the origin's ``version`` (each trajectory keeps the version it was saved
under as ``origin_seq``), so another process's new trajectories are read alone; deletes raise
``removals``, and the origin is read again whole. Only the winner's steps are ever decoded.

Once an origin has many goals, saves keep a snapshot of the origin's index (in ``trajectory_snapshots``,
valid for the origin's ``snapshot_seq`` and ``snapshot_removals``), rewritten once the goals saved
after it reach a sixteenth of the origin's: a new process reads that one value and the few rows newer
than it instead of every row; a deletion makes it invalid until the next save.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Connection, and_, bindparam, delete, update

from ..core.embeddings import Embedder
from ..core.models import Trajectory
from ..store.engine import Store
from ..store.prepared import Prepared, Read
from ..store.schema import trajectories, trajectory_origins, trajectory_snapshots
from ..store.statements import dialect_insert, lock_rows, plain_select
from .held import OriginGoals, StoredGoal
from .recall import decode, signature
from .snapshots import pack, unpack
from .spans import embedding_text

ORIGINS_TOPIC = "webmem_trajectory_origins"  # what bump_origin changes, for the store's read marks
MAX_HELD_GOALS = 200_000  # across origins; the least recently matched origins are let go first
_GOAL_COLUMNS = (
    trajectories.c.trajectory_id, trajectories.c.goal, trajectories.c.run_id, trajectories.c.created_at,
    trajectories.c.duration_ms, trajectories.c.step_count, trajectories.c.verified_steps,
    trajectories.c.goal_template, trajectories.c.goal_signature, trajectories.c.origin_seq,
)
_VECTOR_COLUMNS = (trajectories.c.goal_vector, trajectories.c.goal_vector_model)
#: Marks goal vectors made of a goal's ``embedding_text`` (the goal read for what identifies its task), not of the goal
#: as written.
_EMBEDDED = "|read"
_SEQ, _VECTOR = len(_GOAL_COLUMNS) - 1, len(_GOAL_COLUMNS)  # where origin_seq and the vector are in a row read
_STAMP_AND_SNAPSHOT = Prepared(plain_select(
    (trajectory_origins.c.version, trajectory_origins.c.removals, trajectory_origins.c.snapshot_seq,
     trajectory_origins.c.snapshot_removals), "namespace = :ns AND origin = :origin",
))
_SNAPSHOT = Prepared(plain_select((trajectory_snapshots.c.snapshot,), "namespace = :ns AND origin = :origin"))
_SNAPSHOT_MADE = Prepared(update(trajectory_origins).where(
    trajectory_origins.c.namespace == bindparam("snapshot_ns"),
    trajectory_origins.c.origin == bindparam("snapshot_origin"),
    trajectory_origins.c.removals == bindparam("held_removals"),
    trajectory_origins.c.version >= bindparam("held_version"),
).values(snapshot_seq=bindparam("held_version"), snapshot_removals=bindparam("held_removals")))
_STORE_SIGNATURE = Prepared(update(trajectories).where(
    trajectories.c.namespace == bindparam("ns"), trajectories.c.trajectory_id == bindparam("id"),
).values(goal_signature=bindparam("signature")))
_DROP_SNAPSHOT = Prepared(delete(trajectory_snapshots).where(
    trajectory_snapshots.c.namespace == bindparam("ns"), trajectory_snapshots.c.origin == bindparam("origin")))


def _write_snapshot_statement(dialect: str) -> Any:
    statement = dialect_insert(dialect)(trajectory_snapshots).values(
        namespace=bindparam("ns"), origin=bindparam("origin"), snapshot=bindparam("snapshot"))
    return statement.on_conflict_do_update(index_elements=["namespace", "origin"],
                                           set_={"snapshot": statement.excluded.snapshot})


_WRITE_SNAPSHOT = Prepared(_write_snapshot_statement)
SNAPSHOT_MIN_GOALS = 32  # smaller origins are read from their rows as fast as from a snapshot
SNAPSHOT_MAX_GOALS = 5_000  # larger ones are read from their rows: rewriting a snapshot takes 20 ms at 2,000
#: A snapshot is rewritten once the goals saved after it are this share of the origin's (1/16), so that a
#: save costs the same at any size and a new reader reads at most a sixteenth of the goals from their rows
#: (each ~15 us to index: at 500 goals, 0.45 ms less for a first match than with 1/8; a rewrite, ~2 ms at
#: 500 goals, comes every 31 saves instead of 62).
SNAPSHOT_REFRESH_SHARE = 16



def _goals_query(*, with_vectors: bool, newer: bool) -> Any:
    columns = _GOAL_COLUMNS + (_VECTOR_COLUMNS if with_vectors else ())
    where = "namespace = :ns AND origin = :origin AND success"
    if newer:
        return Prepared(plain_select(columns, where + " AND origin_seq > :after", order_by="origin_seq"))
    return Prepared(plain_select(columns, where))


_GOAL_QUERIES = {(vectors, newer): _goals_query(with_vectors=vectors, newer=newer)
                 for vectors in (False, True) for newer in (False, True)}


class GoalIndex:
    """Per-origin goals of one namespace, read lazily and refreshed by version."""

    def __init__(self, namespace: str, *, embedder: Embedder | None = None, max_goals: int = MAX_HELD_GOALS) -> None:
        self._ns = namespace
        self.embedder = embedder
        self._max_goals = max_goals
        self._origins: OrderedDict[str, OriginGoals] = OrderedDict()
        self._held = 0  # the goals of the origins held, as last counted (``_counted``, per origin)
        self._counted: dict[str, int] = {}
        self._lock = threading.Lock()

    def goals(self, conn: Connection, origin: str, mark: Any = None) -> tuple[OriginGoals, Stale]:
        """The origin's goals as the database holds them now (read inside the caller's transaction),
        and what its rows hold stale, made anew to be written back (:meth:`write_back`).
        ``mark``: the store's read mark (:meth:`webmem.store.Store.read_mark`); goals found current at the
        same mark are current without asking the database.
        """
        if mark is not None:
            with self._lock:
                held = self._origins.get(origin)
                if held is not None and held.checked == mark:
                    self._origins.move_to_end(origin)
                    return held, NOTHING_STALE
        statement, params = self.stamp_read(origin)  # one set of parameters: what was read ahead is taken
        found = statement.first(conn, params)
        stamp = Stamp(*found) if found is not None else None
        version, removals = (stamp.version, stamp.removals) if stamp is not None else (0, 0)
        with self._lock:
            held = self._origins.get(origin)
            if held is not None and (held.version, held.removals) == (version, removals):
                self._origins.move_to_end(origin)
                held.checked = mark
                return held, NOTHING_STALE
        if held is None or held.removals != removals or held.version > version:
            held = self._snapshot(conn, origin, stamp) if stamp is not None and self.embedder is None else None
        newer = stamp is not None and (held is None or held.version < version)  # else no row is newer than held
        held, stale = self._read_rows(conn, origin, held, any_newer=newer, embed=True)
        with self._lock:
            held.version = max(held.version, version)
            held.removals = removals
            held.checked = mark
            self._hold(origin, held)
        return held, stale

    def write_back(self, conn: Connection, origin: str, stale: Stale) -> None:
        """Write what :meth:`goals` found stale in the origin's rows, in a write transaction: the vectors made,
        and the signatures of goals stored under another version of the matcher (whose snapshot is of that
        version too: it is made again from the rows). The origin's row is locked first, as a save locks it before
        its trajectories: a write-back run by ``Store.write_if_free`` that finds it held by a save gives way before
        it touches any trajectory of the origin."""
        lock_rows(conn, trajectory_origins, and_(trajectory_origins.c.namespace == self._ns,
                                                 trajectory_origins.c.origin == origin))
        if stale.vectors and self.embedder is not None:
            store_vectors(conn, self._ns, self.vector_model, stale.vectors)
        if stale.signatures:
            self._store_signatures(conn, stale.signatures)
            self.extend_snapshot(conn, origin, anew=True)

    def saved(self, saved: Mapping[str, tuple[Stamp, int, Sequence[StoredGoal]]]) -> None:
        """Once a transaction that saved trajectories has committed (for each origin: the stamp its save raised
        the version to, how many it saved, and the successful ones as held goals): add them to the origin's
        goals when those were current just before, so that the next match does not read them back. A save
        holds the origin's row (PostgreSQL) or the write lock (SQLite) from raising the version to the commit:
        no other save comes in between."""
        with self._lock:
            for origin, (stamp, count, goals) in saved.items():
                held = self._origins.get(origin)
                if held is None or held.removals != stamp.removals or held.version != stamp.version - count:
                    continue
                held.add_new(goals)
                held.version = stamp.version
                self._hold(origin, held)

    def held_here(self, origin: str) -> OriginGoals | None:
        """The origin's goals as this process last read them (without asking the database), if it has."""
        with self._lock:
            return self._origins.get(origin)

    def carry_learned_words(self, origin: str) -> None:
        """Once a save that taught no words (``acts``) has committed and :meth:`saved` added it: the origin's learned
        words, read before it, hold for the version it raised (the next match does not read them again)."""
        with self._lock:
            held = self._origins.get(origin)
            if held is not None and held.act_words is not None and held.act_words[0] == (held.version - 1,
                                                                                          held.removals):
                held.act_words = ((held.version, held.removals), held.act_words[1])

    def stamp_read(self, origin: str) -> Read:
        """The first read of :meth:`goals` outside a SQLite read mark (the origin's stamp), to be read ahead."""
        return _STAMP_AND_SNAPSHOT, {"ns": self._ns, "origin": origin}

    def extend_snapshot(self, conn: Connection, origin: str, stamp: Stamp | None = None, *, anew: bool = False) -> None:
        """Bring the origin's snapshot up to date with what this write transaction saved once it lags by a
        sixteenth of the origin's goals (or at once with ``anew``): add the goals saved since it was made, or make
        it from the rows once the origin has enough goals."""
        if stamp is None:
            found = _STAMP_AND_SNAPSHOT.first(conn, {"ns": self._ns, "origin": origin})
            if found is None:
                return
            stamp = Stamp(*found)
        if not anew and stamp.snapshot_seq is not None and stamp.snapshot_removals == stamp.removals and \
                stamp.version - stamp.snapshot_seq < max(1, stamp.version // SNAPSHOT_REFRESH_SHARE):
            return  # recent enough: a reader reads the few goals saved after it from their rows
        held = self._snapshot(conn, origin, stamp)
        if held is None and not SNAPSHOT_MIN_GOALS <= stamp.version <= SNAPSHOT_MAX_GOALS:
            return
        held, stale = self._read_rows(conn, origin, held, any_newer=True, embed=False)
        if stale.signatures:  # this transaction writes: they are stored at once
            self._store_signatures(conn, stale.signatures)
        held.version, held.removals = stamp.version, stamp.removals
        made = _SNAPSHOT_MADE.rowcount(conn, {"snapshot_ns": self._ns, "snapshot_origin": origin,
                                              "held_version": held.version, "held_removals": held.removals})
        if not made:
            return
        key = {"ns": self._ns, "origin": origin}
        if len(held.records) <= SNAPSHOT_MAX_GOALS:
            _WRITE_SNAPSHOT.execute(conn, {**key, "snapshot": pack(held)}).close()
        else:  # too large to pay: read from the rows
            _DROP_SNAPSHOT.execute(conn, key).close()

    def _store_signatures(self, conn: Connection, signatures: Sequence[tuple[str, str]]) -> None:
        """Store signatures made anew, by id (in the order of the ids, as every writer does: no two wait on each
        other's rows)."""
        _STORE_SIGNATURE.execute_many(conn, [{"ns": self._ns, "id": id_, "signature": encoded}
                                             for id_, encoded in sorted(signatures)])

    def _snapshot(self, conn: Connection, origin: str, stamp: Any) -> OriginGoals | None:
        """The origin's snapshot when it is valid for the origin's removals, else None."""
        if stamp.snapshot_seq is None or stamp.snapshot_removals != stamp.removals:
            return None
        held = unpack(_SNAPSHOT.scalar(conn, {"ns": self._ns, "origin": origin}))
        if held is None or held.removals != stamp.removals or held.version != stamp.snapshot_seq:
            return None
        return held

    def _read_rows(
        self, conn: Connection, origin: str, held: OriginGoals | None, *, any_newer: bool, embed: bool,
    ) -> tuple[OriginGoals, Stale]:
        """``held`` with the goals saved after it (all of them when ``held`` is None), and what their rows hold
        stale; without ``any_newer`` (the origin's version says none can be) nothing is read."""
        vectors = embed and self.embedder is not None
        rows = _GOAL_QUERIES[vectors, held is not None].rows(
            conn, {"ns": self._ns, "origin": origin, "after": held.version if held is not None else 0},
        ) if any_newer else []
        new_goals, stale = self._stored_goals(rows, embed=vectors)
        held = held if held is not None else OriginGoals()
        with self._lock:
            held.add_new(new_goals)
            held.version = max([held.version, *(row[_SEQ] for row in rows if row[_SEQ] is not None)])
        return held, stale

    def forget(self) -> None:
        """Let go of every origin held (the next match reads them again)."""
        with self._lock:
            self._origins.clear()
            self._counted.clear()
            self._held = 0

    @property
    def vector_model(self) -> str | None:
        """What goal vectors are stored under: the embedder's name and what of a goal it is given
        (``spans.embedding_text``); vectors stored under another are made anew."""
        return None if self.embedder is None else self.embedder.name[:200 - len(_EMBEDDED)] + _EMBEDDED

    def embed(self, goals: Sequence[str]) -> list[bytes] | None:
        """The vectors of ``goals`` (of their ``embedding_text``) as stored bytes, or None without an embedder."""
        if self.embedder is None or not goals:
            return None
        import numpy

        texts = [embedding_text(goal) for goal in goals]
        return [numpy.asarray(vector, dtype=numpy.float32).tobytes() for vector in self.embedder.embed(texts)]

    def vector(self, text: str) -> Any:
        """The vector of one text as an array, or None without an embedder."""
        stored = self.embed([text])
        return _array(stored[0]) if stored else None

    def _stored_goals(self, rows: Sequence[Any], *, embed: bool) -> tuple[list[StoredGoal], Stale]:
        model = self.vector_model if embed else None
        unembedded = [row for row in rows if model is not None and (row[_VECTOR] is None or row[_VECTOR + 1] != model)]
        vectors = dict(zip([row[0] for row in unembedded], self.embed([row[1] for row in unembedded]) or []))
        goals = []
        signatures = []
        for row in rows:  # the columns of _GOAL_COLUMNS, then those of _VECTOR_COLUMNS when read
            id_, goal, run_id, created_at, duration_ms, step_count, verified_steps, template, encoded = row[:_SEQ]
            raw = vectors.get(id_, row[_VECTOR] if model is not None else None)
            decoded = decode(encoded, template)
            if decoded is None:  # stored by another version of the matcher (or before signatures were)
                decoded = signature(goal, template)
                signatures.append((id_, decoded.encode()))
            goals.append(StoredGoal(
                id=id_, goal=goal, run_id=run_id, created_at=created_at, duration_ms=duration_ms,
                step_count=step_count or 0, verified_steps=verified_steps or 0, signature=decoded,
                vector=_array(raw) if raw is not None else None,
            ))
        return goals, Stale(list(vectors.items()), signatures)

    def _hold(self, origin: str, held: OriginGoals) -> None:
        """Hold ``held`` as the origin's goals (it may be the object held already, with goals added), most
        recently used; let go of the least recently used origins while more goals than the bound are held."""
        self._held += len(held.goals) - self._counted.get(origin, 0)
        self._counted[origin] = len(held.goals)
        self._origins[origin] = held
        self._origins.move_to_end(origin)
        while self._held > self._max_goals and len(self._origins) > 1:
            dropped, _ = self._origins.popitem(last=False)
            self._held -= self._counted.pop(dropped)


class Stale(NamedTuple):
    """What an origin's rows were found to hold stale, made anew: vectors of goals stored without one or under
    another model, and signatures (encoded) of goals stored under another version of the matcher, by id."""

    vectors: Sequence[tuple[str, bytes]]
    signatures: Sequence[tuple[str, str]]


NOTHING_STALE = Stale((), ())


class Stamp(NamedTuple):
    """An origin's version and removals, and what its snapshot is valid for."""

    version: int
    removals: int
    snapshot_seq: int | None
    snapshot_removals: int | None


def bump_origin(conn: Connection, namespace: str, origin: str, *, saved: int = 1, removed: int = 0) -> Stamp:
    """Raise the origin's version by ``saved`` (and its removals by ``removed``) in the caller's write
    transaction; returns the origin's stamp after it: trajectories saved now keep the last ``saved``
    versions up to ``version`` as their ``origin_seq``."""
    Store.note_change(conn, ORIGINS_TOPIC)
    return Stamp(*_BUMP_ORIGIN.first(conn, {"namespace": namespace, "origin": origin, "version": saved,
                                             "removals": removed}))


def _bump_origin_statement(dialect: str) -> Any:
    statement = dialect_insert(dialect)(trajectory_origins).values(
        namespace=bindparam("namespace"), origin=bindparam("origin"), version=bindparam("version"),
        removals=bindparam("removals"),
    )
    return statement.on_conflict_do_update(
        index_elements=["namespace", "origin"],
        set_={"version": trajectory_origins.c.version + statement.excluded.version,
              "removals": trajectory_origins.c.removals + statement.excluded.removals},
    ).returning(trajectory_origins.c.version, trajectory_origins.c.removals, trajectory_origins.c.snapshot_seq,
                trajectory_origins.c.snapshot_removals)


_BUMP_ORIGIN = Prepared(_bump_origin_statement)


def store_vectors(conn: Connection, namespace: str, model: str, vectors: Sequence[tuple[str, bytes]]) -> None:
    """Write goal vectors computed under ``model`` (a vector is not a change of the trajectory)."""
    statement = update(trajectories).where(
        trajectories.c.namespace == bindparam("ns"), trajectories.c.trajectory_id == bindparam("id")
    ).values(goal_vector=bindparam("vector"), goal_vector_model=model)
    conn.execute(statement, [{"ns": namespace, "id": id_, "vector": vector} for id_, vector in vectors])


def saved_goal(trajectory: Trajectory, vector: bytes | None) -> StoredGoal:
    """A trajectory being saved as recall holds it (as :meth:`GoalIndex.goals` reads it back)."""
    return StoredGoal(
        id=trajectory.id, goal=trajectory.goal, run_id=trajectory.run_id, created_at=trajectory.created_at,
        duration_ms=trajectory.duration_ms, step_count=len(trajectory.steps),
        verified_steps=sum(1 for step in trajectory.steps if step.verified),
        signature=signature(trajectory.goal, trajectory.goal_template),
        vector=_array(vector) if vector is not None else None,
    )


def _array(raw: bytes) -> Any:
    import numpy

    return numpy.frombuffer(raw, dtype=numpy.float32)
