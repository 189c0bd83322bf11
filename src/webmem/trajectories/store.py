"""The trajectory store: successful runs saved as step sequences (:mod:`.recording`) and matched to new goals."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, bindparam, delete, select, update

from ..core.clock import as_utc, utcnow
from ..core.elements import stored_signals
from ..core.embeddings import Embedder
from ..core.errors import InvalidInput, TrajectoryNotFound
from ..core.models import (
    MatchReport,
    ReplayReport,
    Step,
    Trajectory,
    positive_int,
)
from ..core.records import stored_mapping
from ..core.text import storable_field
from ..core.urls import check_domain, origin_of
from ..store.prepared import Prepared, Read
from ..store.schema import trajectories
from ..store.scope import Scope
from ..store.statements import plain_select
from . import acts, field_options
from .acts import read_by_acts
from .held import OriginGoals, StoredGoal
from .index import ORIGINS_TOPIC, GoalIndex, bump_origin
from .leads import clear_lead
from .plans import record_outcome, shape_of
from .ranking import rank, rescue
from .recall import signature
from .recording import Recording
from .reference import format_reference as reference_text
from .replay_search import ReplaySearch
from .verdicts import Judge, candidate, verdict
from .verdicts import report as match_report

DECODED_WINNERS = 256  # trajectories kept decoded after they won a match (they never change)
_TRAJECTORY_FIELDS = (
    "trajectory_id", "run_id", "goal", "origin", "domain", "success", "duration_ms", "model", "created_at",
    "steps", "goal_template", "replay_steps",
)
_TRAJECTORY_COLUMNS = [trajectories.c[name] for name in _TRAJECTORY_FIELDS]
_BY_ID = Prepared(plain_select(_TRAJECTORY_COLUMNS, "namespace = :ns AND trajectory_id = :id"))
_TRAJECTORY_EXISTS = Prepared(select(trajectories.c.trajectory_id).where(
    trajectories.c.namespace == bindparam("namespace"), trajectories.c.trajectory_id == bindparam("trajectory_id")
))


class TrajectoryStore(Recording, ReplaySearch):
    """Save successful step sequences and find the best one for a new goal on the same origin."""

    def __init__(
        self, scope: Scope, *, ttl_days: float, similarity_threshold: float, trace_scoring: bool,
        goal_embedder: Embedder | None = None, demoted: Callable[[Connection, list[str]], set[str]] | None = None,
        changed_pages: Callable[[Connection, str], dict[str, datetime]] | None = None,
    ) -> None:
        self._scope = scope
        self._demoted = demoted  # trajectories whose followers kept failing: never replayed
        self._changed_pages = changed_pages  # pages of a domain that changed, and when: not replayed from before
        self._ns = scope.namespace
        self.ttl_days = ttl_days
        self.similarity_threshold = similarity_threshold
        self.trace_scoring = trace_scoring
        self._index = GoalIndex(scope.namespace, embedder=goal_embedder)
        self._decoded: OrderedDict[str, Trajectory] = OrderedDict()

    @property
    def goal_embedder(self) -> Embedder | None:
        """The embedder that recognises reworded goals, or None (lexical matching only)."""
        return self._index.embedder

    def index_legacy(self) -> int:
        """Give trajectories stored before the goal index (webmem < 0.2) their place in it; returns
        how many there were. ``Memory.open`` calls it; it reads nothing when there are none."""
        unindexed = select(*_TRAJECTORY_COLUMNS).where(
            trajectories.c.namespace == self._ns, trajectories.c.origin_seq.is_(None)
        ).order_by(trajectories.c.created_at)
        with self._scope.store.read() as conn:
            if conn.execute(unindexed.limit(1)).first() is None:
                return 0
        with self._scope.store.write() as conn:
            rows = conn.execute(unindexed).all()
            for row in rows:
                trajectory = _trajectory(dict(row._mapping))
                conn.execute(update(trajectories).where(
                    trajectories.c.namespace == self._ns, trajectories.c.trajectory_id == trajectory.id
                ).values(
                    goal_signature=signature(trajectory.goal, trajectory.goal_template).encode(),
                    origin_seq=bump_origin(conn, self._ns, trajectory.origin).version, step_count=len(trajectory.steps),
                    verified_steps=sum(1 for step in trajectory.steps if step.verified),
                ))
        return len(rows)

    def get(self, trajectory_id: str) -> Trajectory:
        """The trajectory with this id; ``TrajectoryNotFound`` when there is none in the namespace."""
        with self._scope.store.read() as conn:
            found = self._load(conn, trajectory_id, cached=False)
        if found is None:
            raise TrajectoryNotFound(f"trajectory_id: no trajectory {trajectory_id!r} in namespace {self._ns!r}")
        return found

    def _load(self, conn: Connection, trajectory_id: str, *, cached: bool = True) -> Trajectory | None:
        """``cached``: the id comes from the goal index read in this transaction, so a decoded copy is
        current; any other id is read again (another process may have deleted it)."""
        known = self._decoded.get(trajectory_id) if cached else None
        if known is not None:
            with suppress(KeyError):  # let go meanwhile by another thread
                self._decoded.move_to_end(trajectory_id)
            return known
        found = _BY_ID.rows(conn, {"ns": self._ns, "id": trajectory_id})
        if not found:
            return None
        trajectory = _trajectory(dict(zip(_TRAJECTORY_FIELDS, found[0])))
        self._decoded[trajectory_id] = trajectory
        if len(self._decoded) > DECODED_WINNERS:
            self._decoded.popitem(last=False)
        return trajectory

    def context_reads(self, origin: str) -> list[Read]:
        """The first read of a match on ``origin``, to be read ahead."""
        return [self._index.stamp_read(origin_of(origin, field="origin"))]

    def _held(self, conn: Connection, origin: str) -> OriginGoals:
        held, stale = self._index.goals(conn, origin, self._scope.store.read_mark(ORIGINS_TOPIC))
        if stale.signatures or stale.vectors:  # vectors are made only with an embedder
            # written back once the read is over, unless another writer holds the origin: a later read does it then
            self._scope.store.after_commit(
                lambda: self._scope.store.write_if_free(lambda writer: self._index.write_back(writer, origin, stale))
            )
        return held

    def match(
        self,
        goal: str,
        *,
        origin: str,
        exclude_run_id: str | None = None,
        trace_scoring: bool | None = None,
        now: datetime | None = None,
        run_id: str | None = None,
        limit: int | None = None,
    ) -> MatchReport:
        """Score the successful trajectories on ``origin`` against ``goal`` and pick the best.

        Only candidates within the TTL whose similarity reaches the threshold are eligible; the
        winner is the eligible one with the highest score (the similarity, or with trace scoring
        a blend of similarity, recency, speed and verification rate). The report lists every
        candidate scored, or with ``limit`` the closest ``limit`` (``scored`` says how many there were).
        """
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: expected a non-empty string")
        storable_field(goal, field="goal")  # nothing stored holds what cannot be stored
        if limit is not None:
            limit = positive_int(limit, field="limit")
        origin_key = origin_of(origin, field="origin")
        scoring = self.trace_scoring if trace_scoring is None else trace_scoring
        moment = as_utc(now) if now else utcnow()
        cutoff = moment - timedelta(days=self.ttl_days)
        query = signature(goal)
        threshold = self.similarity_threshold
        judge = Judge(moment, cutoff, self.ttl_days, threshold, scoring, exclude_run_id)

        def competing(stored: StoredGoal) -> bool:
            return stored.created_at >= cutoff and (exclude_run_id is None or stored.run_id != exclude_run_id)

        with self._scope.store.read() as conn:
            held = self._held(conn, origin_key)
            ranked = rank(held, query, goal, limit=None if scoring else limit,
                          competing=competing)
            nearest = None
            if self._index.embedder is not None and not any(
                item.similarity >= threshold and competing(item.goal) for item in ranked
            ):
                if getattr(self._index.embedder, "recall", "cosine") == "nearest":
                    nearest = self._index.vector(goal)
                else:
                    ranked = rescue(held, query, goal, self._index.vector(goal), ranked, threshold=threshold)
            ranked = clear_lead(held, query, goal, ranked, threshold=threshold, competing=competing,
                                query_vector=nearest)
            ranked = read_by_acts(held, goal, ranked, lambda: (acts.known(conn, self._ns, origin_key),
                                                               field_options.known(conn, self._ns, origin_key)),
                                  threshold=threshold, competing=competing)
            judged = [judge(item) for item in ranked]
            judged.sort(key=lambda j: (j.eligible, j.score, j.item.agree, j.item.goal.created_at), reverse=True)
            listed = judged if limit is None else judged[:limit]
            candidates = [candidate(j, origin_key, query, goal) for j in listed]
            winner = candidates[0] if candidates and candidates[0].eligible else None
            best = self._load(conn, winner.trajectory.id) if winner else None
            closest = max(judged, key=lambda j: j.item.similarity) if judged else None
        reason = verdict(winner, (closest, closest.item.why(query, goal)) if closest and winner is None else None,
                         sum(1 for j in judged if j.eligible), threshold, len(held.goals))
        read_as = listed[0].item.read_as if winner is not None else None
        report = match_report(goal, origin_key, threshold, scoring, candidates, len(held.goals), best, reason,
                              option=read_as[0] if read_as and read_as[4] is not None else None)
        if winner is not None:
            self._scope.emit(
                "trajectory_matched", run_id=run_id, trajectory_id=winner.trajectory.id, goal=goal,
                origin=origin_key, similarity=round(winner.similarity, 4), score=round(winner.score, 4),
                candidates=len(held.goals),
            )
        else:
            self._scope.emit(
                "trajectory_missed", run_id=run_id, goal=goal, origin=origin_key,
                candidates=len(held.goals), reason=report.reason,
            )
        return report

    def record_replay(self, report: ReplayReport, *, run_id: str | None = None, success: bool | None = None) -> None:
        """Count what became of a replay in the replay gate of its trajectory's shape (inside the
        caller's transaction, if any): after a failure later replays hand over before the step where
        it failed; repeated failures stop its replays (a run that handed over there and still failed,
        ``success=False``, counts as one). A trajectory deleted since changes nothing."""
        if not isinstance(report, ReplayReport):
            raise InvalidInput("report: expected a webmem.ReplayReport")
        with self._scope.store.write() as conn:
            trajectory = self._load(conn, report.trajectory_id, cached=False)
            if trajectory is not None:
                record_outcome(conn, self._ns, trajectory.origin, shape_of(trajectory), report.outcome, report.step,
                               run_succeeded=success)
        self._scope.emit("replay_outcome", run_id=run_id, trajectory_id=report.trajectory_id, outcome=report.outcome,
                         step=report.step, reason=report.reason,
                         steps=[step.model_dump(mode="json", exclude_none=True) for step in report.steps])

    def find_best_match(
        self, goal: str, *, origin: str, exclude_run_id: str | None = None, trace_scoring: bool | None = None
    ) -> Trajectory | None:
        """The best trajectory ``match`` finds for ``goal`` on ``origin``, or None: ``match(...).best``, from the pruned
        ranking (``limit=1``: only the goals that can still win are scored, and only the winner is explained). With
        trace scoring every goal is scored (its recency, speed and verification may lift any of them)."""
        return self.match(goal, origin=origin, exclude_run_id=exclude_run_id, trace_scoring=trace_scoring,
                          limit=1).best

    @staticmethod
    def format_reference(trajectory: Trajectory, *, goal: str | None = None) -> str:
        """The trajectory as prompt text, for the current ``goal`` when given (see :mod:`.reference`)."""
        return reference_text(trajectory, goal=goal)

    def prune(self, *, now: datetime | None = None) -> int:
        """Delete trajectories older than the TTL; returns how many went."""
        cutoff = (as_utc(now) if now else utcnow()) - timedelta(days=self.ttl_days)
        expired = (trajectories.c.namespace == self._ns, trajectories.c.created_at < cutoff)
        with self._scope.store.write() as conn:
            origins = conn.execute(
                select(trajectories.c.origin, trajectories.c.trajectory_id).where(*expired)
            ).all()
            deleted = conn.execute(delete(trajectories).where(*expired)).rowcount
            acts.forget(conn, self._ns, [row.trajectory_id for row in origins])
            field_options.forget(conn, self._ns, [row.trajectory_id for row in origins])
            for origin in sorted({row.origin for row in origins}):
                bump_origin(conn, self._ns, origin, removed=1)
        for row in origins:
            self._decoded.pop(row.trajectory_id, None)
        if deleted:
            self._scope.emit("trajectories_pruned", count=deleted, ttl_days=self.ttl_days)
        return int(deleted)

    def delete(self, conn: Connection, trajectory_ids: Sequence[str]) -> int:
        """Internal (``Memory.forget``): delete these trajectories in the caller's write transaction,
        raising their origins' removals so that recall in every process reads those origins again."""
        chosen = (trajectories.c.namespace == self._ns, trajectories.c.trajectory_id.in_(list(trajectory_ids)))
        origins = conn.execute(select(trajectories.c.origin).where(*chosen).distinct()).scalars().all()
        deleted = conn.execute(delete(trajectories).where(*chosen)).rowcount
        acts.forget(conn, self._ns, trajectory_ids)
        field_options.forget(conn, self._ns, trajectory_ids)
        for origin in sorted(origins):
            bump_origin(conn, self._ns, origin, removed=1)
        for trajectory_id in trajectory_ids:
            self._decoded.pop(trajectory_id, None)
        return int(deleted)

    def list(self, *, domain: str | None = None, limit: int | None = None) -> list[Trajectory]:  # noqa: A003
        """Stored trajectories, newest first, optionally only those of one domain."""
        query = select(*_TRAJECTORY_COLUMNS).where(trajectories.c.namespace == self._ns)
        if domain is not None:
            query = query.where(trajectories.c.domain == check_domain(domain))
        query = query.order_by(trajectories.c.created_at.desc())
        if limit is not None:
            query = query.limit(positive_int(limit, field="limit"))
        with self._scope.store.read() as conn:
            return [_trajectory(dict(row._mapping)) for row in conn.execute(query)]

    def origins(self, domain: str) -> list[str]:
        """The origins of ``domain`` that have stored trajectories, sorted."""
        query = select(trajectories.c.origin).where(
            trajectories.c.namespace == self._ns, trajectories.c.domain == check_domain(domain)).distinct()
        with self._scope.store.read() as conn:
            return sorted(row[0] for row in conn.execute(query))

    def templated(self, *, domain: str) -> list[Trajectory]:
        """The trajectories of ``domain`` recorded with a goal template, newest first: the tasks this memory can
        replay there for new values (one template per task)."""
        query = select(*_TRAJECTORY_COLUMNS).where(
            trajectories.c.namespace == self._ns, trajectories.c.domain == check_domain(domain),
            trajectories.c.goal_template.is_not(None),
        ).order_by(trajectories.c.created_at.desc(), trajectories.c.trajectory_id.desc())
        with self._scope.store.read() as conn:
            return [_trajectory(dict(row._mapping)) for row in conn.execute(query)]

    def templates(self) -> list[tuple[str, str, str]]:
        """Every (domain, origin, goal template) with recorded trajectories, sorted: the tasks this memory can
        replay for new values, without reading their steps."""
        column = trajectories.c
        query = select(column.domain, column.origin, column.goal_template).where(
            column.namespace == self._ns, column.goal_template.is_not(None)).distinct()
        with self._scope.store.read() as conn:
            return sorted((row[0], row[1], row[2]) for row in conn.execute(query))

def _trajectory(data: dict[str, Any]) -> Trajectory:
    """A trajectory from its row's values by column name (validated when it was written: not again)."""
    data["id"] = data.pop("trajectory_id")
    data["steps"] = [_step(step) for step in data["steps"]]
    if data.get("replay_steps") is not None:
        data["replay_steps"] = [_step(step) for step in data["replay_steps"]]
    return stored_mapping(Trajectory, data)


def _step(data: dict[str, Any]) -> Step:
    if data.get("element") is not None:
        data["element"] = stored_signals(data["element"])
    return stored_mapping(Step, data)
