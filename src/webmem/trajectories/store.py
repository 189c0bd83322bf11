"""The trajectory store: successful runs saved as step sequences and matched to new goals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select

from ..core.clock import as_utc, new_id, utcnow
from ..core.errors import InvalidInput, TrajectoryNotFound
from ..core.models import MatchCandidate, MatchReport, Step, Trajectory, positive_int, validated
from ..core.text import clean_for_prompt, jaccard, word_tokens
from ..core.urls import check_domain, domain_of, origin_of
from ..store.engine import retried
from ..store.schema import trajectories
from ..store.scope import Scope
from .slots import GOAL_VALUE, bind, fill, parameterise

RECENCY_HALF_LIFE_DAYS = 14.0  # the e-folding time of the recency score
SPEED_SCALE_MS = 60_000.0
MAX_CANDIDATES = 500
_STEP_TEXT_LIMIT = 160
_TRAJECTORY_COLUMNS = [column for column in trajectories.c if column.name != "namespace"]
_NOT_REPLAYED = frozenset({"finish"})
_TYPING = frozenset({"fill", "type", "select"})


@dataclass(frozen=True)
class ReplayPlan:
    """A stored trajectory bound to a new goal: the steps to execute, with the goal's values in them."""

    trajectory: Trajectory
    steps: list[Step]
    slots: dict[int, str]
    template: str | None

    @property
    def trajectory_id(self) -> str:
        """The id of the trajectory being replayed."""
        return self.trajectory.id


class TrajectoryStore:
    """Save successful step sequences and find the best one for a new goal on the same origin."""

    def __init__(
        self, scope: Scope, *, ttl_days: float, similarity_threshold: float, trace_scoring: bool
    ) -> None:
        self._scope = scope
        self._ns = scope.namespace
        self.ttl_days = ttl_days
        self.similarity_threshold = similarity_threshold
        self.trace_scoring = trace_scoring

    @retried
    def save(
        self,
        *,
        goal: str,
        start_url: str,
        steps: Sequence[Step],
        success: bool = True,
        duration_ms: int = 0,
        model: str | None = None,
        run_id: str | None = None,
        created_at: datetime | None = None,
        trajectory_id: str | None = None,
    ) -> Trajectory:
        """Store a run's steps; only successful ones are ever offered as references."""
        if isinstance(steps, str | bytes) or not all(isinstance(step, Step) for step in steps):
            raise InvalidInput("steps: expected a list of webmem.Step records")
        stored_goal = self._scope.redact(goal) if isinstance(goal, str) else goal
        stored_steps = [_redacted_step(step, self._scope) for step in steps]
        template = parameterise(stored_goal, stored_steps) if isinstance(stored_goal, str) else None
        trajectory = validated(
            Trajectory,
            id=trajectory_id or new_id("traj"),
            goal=stored_goal,
            origin=origin_of(start_url, field="start_url"),
            domain=domain_of(start_url, field="start_url"),
            steps=stored_steps,
            goal_template=template[0] if template else None,
            replay_steps=template[1] if template else None,
            success=success,
            duration_ms=duration_ms,
            model=model,
            created_at=as_utc(created_at) if created_at else utcnow(),
            run_id=run_id,
        )
        with self._scope.store.write() as conn:
            self._insert(conn, trajectory)
        self._scope.emit(
            "trajectory_saved", run_id=run_id, trajectory_id=trajectory.id, goal=trajectory.goal,
            origin=trajectory.origin, steps=len(trajectory.steps), success=trajectory.success,
        )
        return trajectory

    def import_trajectory(self, trajectory: Trajectory) -> bool:
        """Store a trajectory as it is (id and timestamp kept); False when its id is already here."""
        if not isinstance(trajectory, Trajectory):
            raise InvalidInput("trajectory: expected a webmem.Trajectory")
        goal = self._scope.redact(trajectory.goal)
        steps = [_redacted_step(s, self._scope) for s in trajectory.steps]
        template = (trajectory.goal_template, trajectory.replay_steps) if trajectory.goal_template else (
            parameterise(goal, steps) or (None, None)
        )
        trajectory = trajectory.model_copy(update={
            "goal": goal, "steps": steps, "goal_template": template[0], "replay_steps": template[1],
        })
        with self._scope.store.write() as conn:
            if conn.execute(select(trajectories.c.trajectory_id).where(
                trajectories.c.namespace == self._ns, trajectories.c.trajectory_id == trajectory.id
            )).first() is not None:
                return False
            self._insert(conn, trajectory)
        return True

    def _insert(self, conn: Any, trajectory: Trajectory) -> None:
        row = trajectory.model_dump(mode="json", exclude={"id", "created_at"})
        conn.execute(trajectories.insert().values(
            namespace=self._ns, trajectory_id=trajectory.id, created_at=trajectory.created_at, **row
        ))

    def get(self, trajectory_id: str) -> Trajectory:
        """The trajectory with this id; ``TrajectoryNotFound`` when there is none in the namespace."""
        with self._scope.store.read() as conn:
            row = conn.execute(
                select(*_TRAJECTORY_COLUMNS).where(
                    trajectories.c.namespace == self._ns, trajectories.c.trajectory_id == trajectory_id
                )
            ).first()
        if row is None:
            raise TrajectoryNotFound(f"trajectory_id: no trajectory {trajectory_id!r} in namespace {self._ns!r}")
        return _trajectory(row)

    def match(
        self,
        goal: str,
        *,
        origin: str,
        exclude_run_id: str | None = None,
        trace_scoring: bool | None = None,
        now: datetime | None = None,
        run_id: str | None = None,
    ) -> MatchReport:
        """Score every successful trajectory on ``origin`` against ``goal`` and pick the best.

        Only candidates within the TTL whose similarity reaches the threshold are eligible; the
        winner is the eligible one with the highest score (the similarity, or with trace scoring
        a blend of similarity, recency, speed and verification rate).
        """
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: expected a non-empty string")
        origin_key = origin_of(origin, field="origin")
        scoring = self.trace_scoring if trace_scoring is None else trace_scoring
        moment = as_utc(now) if now else utcnow()
        cutoff = moment - timedelta(days=self.ttl_days)
        goal_tokens = word_tokens(goal)
        with self._scope.store.read() as conn:
            rows = conn.execute(
                select(*_TRAJECTORY_COLUMNS)
                .where(
                    trajectories.c.namespace == self._ns,
                    trajectories.c.origin == origin_key,
                    trajectories.c.success.is_(True),
                )
                .order_by(trajectories.c.created_at.desc())
                .limit(MAX_CANDIDATES)
            ).all()
        candidates = [
            self._candidate(_trajectory(row), goal_tokens, moment, cutoff, scoring, exclude_run_id)
            for row in rows
        ]
        candidates.sort(key=lambda c: (c.eligible, c.score, c.trajectory.created_at), reverse=True)
        best = candidates[0] if candidates and candidates[0].eligible else None
        report = MatchReport(
            goal=goal,
            origin=origin_key,
            threshold=self.similarity_threshold,
            trace_scoring=scoring,
            candidates=candidates,
            best=best.trajectory if best else None,
            reason=_verdict(best, candidates, self.similarity_threshold),
        )
        if best is not None:
            self._scope.emit(
                "trajectory_matched", run_id=run_id, trajectory_id=best.trajectory.id, goal=goal,
                origin=origin_key, similarity=round(best.similarity, 4), score=round(best.score, 4),
                candidates=len(candidates),
            )
        else:
            self._scope.emit(
                "trajectory_missed", run_id=run_id, goal=goal, origin=origin_key,
                candidates=len(candidates), reason=report.reason,
            )
        return report

    def find_replay(self, goal: str, origin: str, *, now: datetime | None = None) -> ReplayPlan | None:
        """The newest successful trajectory on ``origin`` that can be replayed for ``goal``, bound to it.

        Stricter than :meth:`match`: the goal must fit the trajectory's goal template (its values
        become the slots' values), or be the stored goal itself when the trajectory has no template.
        """
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: expected a non-empty string")
        origin_key = origin_of(origin, field="origin")
        wanted = self._scope.redact(goal)
        cutoff = (as_utc(now) if now else utcnow()) - timedelta(days=self.ttl_days)
        with self._scope.store.read() as conn:
            rows = conn.execute(
                select(*_TRAJECTORY_COLUMNS)
                .where(
                    trajectories.c.namespace == self._ns,
                    trajectories.c.origin == origin_key,
                    trajectories.c.success.is_(True),
                    trajectories.c.created_at >= cutoff,
                )
                .order_by(trajectories.c.created_at.desc(), trajectories.c.trajectory_id.desc())
                .limit(MAX_CANDIDATES)
            ).all()
        for row in rows:
            plan = _replay_plan(_trajectory(row), wanted)
            if plan is not None:
                self._scope.emit("replay_found", trajectory_id=plan.trajectory.id, goal=goal, origin=origin_key,
                                 slots=len(plan.slots), steps=len(plan.steps))
                return plan
        return None

    def find_best_match(
        self, goal: str, *, origin: str, exclude_run_id: str | None = None, trace_scoring: bool | None = None
    ) -> Trajectory | None:
        """The best trajectory ``match`` finds for ``goal`` on ``origin``, or None (``match(...).best``)."""
        return self.match(goal, origin=origin, exclude_run_id=exclude_run_id, trace_scoring=trace_scoring).best

    @staticmethod
    def format_reference(trajectory: Trajectory) -> str:
        """The trajectory as prompt text: the goal, then one numbered line per step."""
        lines = [
            f"Goal: {clean_for_prompt(trajectory.goal, 300)}",
            f"Steps ({len(trajectory.steps)} total):",
        ]
        lines += [f"  {number}. {_describe_step(step)}" for number, step in enumerate(trajectory.steps, start=1)]
        return "\n".join(lines)

    def prune(self, *, now: datetime | None = None) -> int:
        """Delete trajectories older than the TTL; returns how many went."""
        cutoff = (as_utc(now) if now else utcnow()) - timedelta(days=self.ttl_days)
        with self._scope.store.write() as conn:
            deleted = conn.execute(
                delete(trajectories).where(
                    trajectories.c.namespace == self._ns, trajectories.c.created_at < cutoff
                )
            ).rowcount
        if deleted:
            self._scope.emit("trajectories_pruned", count=deleted, ttl_days=self.ttl_days)
        return int(deleted)

    def _candidate(
        self,
        trajectory: Trajectory,
        goal_tokens: frozenset[str],
        now: datetime,
        cutoff: datetime,
        scoring: bool,
        exclude_run_id: str | None,
    ) -> MatchCandidate:
        similarity = jaccard(goal_tokens, word_tokens(trajectory.goal))
        age_days = max(0.0, (now - trajectory.created_at).total_seconds() / 86_400)
        recency = math.exp(-age_days / RECENCY_HALF_LIFE_DAYS)
        speed = 1.0 / (1.0 + trajectory.duration_ms / SPEED_SCALE_MS)
        verification = trajectory.verification_rate
        score = 0.6 * similarity + 0.2 * recency + 0.1 * speed + 0.1 * verification if scoring else similarity
        if exclude_run_id is not None and trajectory.run_id == exclude_run_id:
            reason = "this run's own trajectory"
        elif trajectory.created_at < cutoff:
            reason = f"expired: {age_days:.1f} days old, TTL is {self.ttl_days:g} days"
        elif similarity < self.similarity_threshold:
            reason = f"similarity {similarity:.2f} is below the threshold {self.similarity_threshold:.2f}"
        else:
            reason = "eligible"
        return MatchCandidate(
            trajectory=trajectory,
            similarity=similarity,
            score=score,
            recency=recency,
            speed=speed,
            verification_rate=verification,
            eligible=reason == "eligible",
            reason=reason,
        )

    def list(self, *, domain: str | None = None, limit: int | None = None) -> list[Trajectory]:  # noqa: A003
        """Stored trajectories, newest first, optionally only those of one domain."""
        query = select(*_TRAJECTORY_COLUMNS).where(trajectories.c.namespace == self._ns)
        if domain is not None:
            query = query.where(trajectories.c.domain == check_domain(domain))
        query = query.order_by(trajectories.c.created_at.desc())
        if limit is not None:
            query = query.limit(positive_int(limit, field="limit"))
        with self._scope.store.read() as conn:
            return [_trajectory(row) for row in conn.execute(query)]


def _trajectory(row: Any) -> Trajectory:
    data = dict(row._mapping)
    data["id"] = data.pop("trajectory_id")
    data["steps"] = [Step.model_validate(step) for step in data["steps"]]
    if data.get("replay_steps") is not None:
        data["replay_steps"] = [Step.model_validate(step) for step in data["replay_steps"]]
    return Trajectory.model_validate(data)


def _replay_plan(trajectory: Trajectory, goal: str) -> ReplayPlan | None:
    if trajectory.goal_template and trajectory.replay_steps is not None:
        values = bind(trajectory.goal_template, goal)
        if values is None:
            return None
        steps = fill(_replayable(trajectory.replay_steps), values)
        plan = ReplayPlan(trajectory, steps, values, trajectory.goal_template)
    elif trajectory.goal.split() == goal.split():
        plan = ReplayPlan(trajectory, _replayable(trajectory.steps), {}, None)
    else:
        return None
    # A value typed into the page must come from the goal: a value the earlier run read off the page
    # (or a secret, whose value is not stored) would be typed blind.
    typed = [step.value for step in plan.steps if step.action in _TYPING and step.value]
    return plan if all(value in goal for value in typed) else None


def _replayable(steps: list[Step]) -> list[Step]:
    """The steps that did something, without the repeats of a step that was retried in place."""
    kept: list[Step] = []
    for step in steps:
        if not step.ok or step.action in _NOT_REPLAYED:
            continue
        if kept and (kept[-1].action, kept[-1].target, kept[-1].selector, kept[-1].value) == (
            step.action, step.target, step.selector, step.value
        ):
            continue
        kept.append(step)
    return kept


def _redacted_step(step: Step, scope: Scope) -> Step:
    """The step with every registered secret in its text replaced by its placeholder, and a value
    typed into a password field (an imported trajectory may carry one) replaced by ``{password}``.
    """
    fields = ("url", "target", "selector", "error", "expected_effect")
    value = step.value if step.value and GOAL_VALUE.match(step.value) else scope.secrets.redact_typed_value(
        step.value, target=step.target, selector=step.selector, secret=False
    )
    return step.model_copy(update={"value": value, **{name: scope.redact(getattr(step, name)) for name in fields}})


def _describe_step(step: Step) -> str:
    target = step.target or step.selector or ""
    words = [step.action, clean_for_prompt(target, _STEP_TEXT_LIMIT)]
    if step.value is not None:
        words.append(f'"{clean_for_prompt(step.value, _STEP_TEXT_LIMIT)}"')
    line = " ".join(word for word in words if word)
    if step.url:
        line += f" (on {clean_for_prompt(step.url, _STEP_TEXT_LIMIT)})"
    if step.verified:
        line += " [verified]"
    return line


def _verdict(best: MatchCandidate | None, candidates: list[MatchCandidate], threshold: float) -> str:
    if best is not None:
        how = "highest score" if len([c for c in candidates if c.eligible]) > 1 else "only eligible candidate"
        return f"{best.trajectory.id} won: similarity {best.similarity:.2f} >= {threshold:.2f}, {how} ({best.score:.3f})"
    if not candidates:
        return "no successful trajectory on this origin"
    top = max(candidates, key=lambda c: c.similarity)
    return f"no eligible candidate among {len(candidates)}; closest: {top.trajectory.id} ({top.reason})"
