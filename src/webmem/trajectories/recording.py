"""The recording half of the trajectory store: a run's steps saved (redacted, with the goal template that makes
them replayable for other values, and the words they teach: :mod:`.acts`), trajectories imported as they are, and
the rows and goal index those writes keep in step."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection

from ..core.clock import as_utc, new_id, utcnow
from ..core.elements import compact_steps, redacted_signals
from ..core.errors import InvalidInput
from ..core.models import FieldOption, LearnedAct, Step, Trajectory, validated
from ..core.urls import domain_of, origin_of
from ..store.engine import retried
from ..store.prepared import Prepared
from ..store.schema import trajectories
from ..store.scope import Scope
from ..store.statements import new_keys
from . import acts, field_options
from .binding import bind, bound_spans, same_wording
from .held import OriginGoals
from .index import GoalIndex, bump_origin, saved_goal
from .plans import replayable
from .recall import signature
from .slots import GOAL_VALUE, parameterise

_INSERT_TRAJECTORY = Prepared(trajectories.insert())  # every column, each a parameter of its own name


class Recording:
    """Saving and importing trajectories (a mixin of the trajectory store, which provides what is declared here)."""

    _scope: Scope
    _ns: str
    _index: GoalIndex

    def _held(self, conn: Connection, origin: str) -> OriginGoals:
        raise NotImplementedError

    def _load(self, conn: Connection, trajectory_id: str, *, cached: bool = True) -> Trajectory | None:
        raise NotImplementedError

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
        template, learned = None, []
        if isinstance(stored_goal, str):
            path = replayable(stored_steps)
            template, learned = self._template_for(start_url, stored_goal, path) if success else (
                parameterise(stored_goal, path), [])
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
        shown = field_options.taught(stored_goal, stored_steps) if success and isinstance(stored_goal, str) else []
        with self._scope.store.write() as conn:
            self._insert(conn, trajectory)
            acts.record(conn, self._ns, trajectory.origin, trajectory.id, learned, trajectory.created_at)
            field_options.record(conn, self._ns, trajectory.origin, trajectory, shown, trajectory.created_at)
            if not learned and not shown:
                self._scope.store.after_commit(functools.partial(self._index.carry_learned_words, trajectory.origin))
        self._scope.emit(
            "trajectory_saved", run_id=run_id, trajectory_id=trajectory.id, goal=trajectory.goal,
            origin=trajectory.origin, steps=len(trajectory.steps), success=trajectory.success,
        )
        return trajectory

    def _template_for(self, start_url: str, goal: str, steps: list[Step]) -> tuple[
            tuple[str, list[Step]] | None, list[tuple[str, str, str]]]:
        """The goal template of a task recorded on this origin before that this run did again (its
        template binds the goal, and the run's steps with the values it binds are that task's steps),
        so that one task keeps one template however its values are worded; else the run's own, with the words
        it shows to name one act (:func:`acts.learn`)."""
        query = signature(goal)
        origin = origin_of(start_url, field="start_url")
        seen: set[str] = set()
        with self._scope.store.read() as conn:
            held = self._held(conn, origin)
            with held.lock:
                newest = [next(held.template_newest_first(number), None)  # of each template the goal may fit
                          for number in held.fitting_templates(query)]
                tried = sorted((held.goal(position) for position in newest if position is not None),
                               key=lambda stored: (stored.created_at, stored.id), reverse=True)
            for stored in tried:
                template = stored.signature.template
                if template is None or template in seen:
                    continue
                seen.add(template)
                spans = bound_spans(template, goal) if bind(template, goal, like=stored.goal) else None
                again = parameterise(goal, steps, spans=spans) if spans else None
                if again is None or not same_wording(again[0], template):
                    continue
                earlier = self._load(conn, stored.id)
                if earlier is not None and earlier.replay_steps is not None and _same_path(
                        again[1], replayable(earlier.replay_steps)):
                    return (template, again[1]), []
            made = parameterise(goal, steps)
            return made, acts.learn(held, *(made or (goal, steps)), functools.partial(self._load, conn))

    def import_trajectory(self, trajectory: Trajectory) -> bool:
        """Store a trajectory as it is (id and timestamp kept); False when its id is already here."""
        return self.import_trajectories([trajectory])[0]

    def import_trajectories(self, records: Sequence[Trajectory]) -> list[bool]:
        """Store trajectories as they are (ids and timestamps kept), in one transaction and few statements;
        for each, False when its id is already here (or came earlier in ``records``)."""
        if isinstance(records, Trajectory) or not all(isinstance(record, Trajectory) for record in records):
            raise InvalidInput("trajectory: expected a webmem.Trajectory")
        imported = [self._as_imported(record) for record in records]
        with self._scope.store.write() as conn:
            added = new_keys(conn, trajectories.c.trajectory_id, trajectories.c.namespace == self._ns,
                               [trajectory.id for trajectory in imported])
            fresh = [trajectory for trajectory, new in zip(imported, added) if new]
            taught = acts.taught_by(fresh, lambda origin: self._index.held_here(origin) or self._held(conn, origin),
                                    functools.partial(self._load, conn, cached=False))
            self._insert_many(conn, fresh)
            for origin, trajectory_id, learned in taught:
                acts.record(conn, self._ns, origin, trajectory_id, learned, utcnow())
            for trajectory in fresh:
                if trajectory.success:
                    field_options.record(conn, self._ns, trajectory.origin, trajectory,
                                         field_options.taught(trajectory.goal, trajectory.steps), utcnow())
        return added

    def _as_imported(self, trajectory: Trajectory) -> Trajectory:
        goal = self._scope.redact(trajectory.goal)
        steps = [_redacted_step(s, self._scope) for s in trajectory.steps]
        template = (trajectory.goal_template, trajectory.replay_steps) if trajectory.goal_template else (
            parameterise(goal, replayable(steps)) or (None, None)
        )
        return trajectory.model_copy(update={
            "goal": goal, "steps": steps, "goal_template": template[0], "replay_steps": template[1],
        })

    def _insert(self, conn: Connection, trajectory: Trajectory) -> None:
        self._insert_many(conn, [trajectory])

    def _insert_many(self, conn: Connection, saved: Sequence[Trajectory]) -> None:
        """Insert trajectories (one statement); each origin's version is raised once for all of its own."""
        by_origin: dict[str, list[Trajectory]] = {}
        for trajectory in saved:
            by_origin.setdefault(trajectory.origin, []).append(trajectory)
        successful = [trajectory for trajectory in saved if trajectory.success]
        vectors = dict(zip((trajectory.id for trajectory in successful),
                           self._index.embed([trajectory.goal for trajectory in successful]) or []))
        model = self._index.vector_model
        rows, held = [], {}
        for origin, group in by_origin.items():
            stamp = bump_origin(conn, self._ns, origin, saved=len(group))
            goals = [saved_goal(trajectory, vectors.get(trajectory.id)) for trajectory in group]
            held[origin] = (stamp, len(group), [goal for goal, trajectory in zip(goals, group) if trajectory.success])
            for seq, (trajectory, goal) in enumerate(zip(group, goals), start=stamp.version - len(group) + 1):
                rows.append({
                    "namespace": self._ns, "trajectory_id": trajectory.id, "created_at": trajectory.created_at,
                    **compact_steps(trajectory.model_dump(mode="json", exclude={"id", "created_at"})),
                    "goal_signature": goal.signature.encode(), "origin_seq": seq, "step_count": goal.step_count,
                    "verified_steps": goal.verified_steps, "goal_vector": vectors.get(trajectory.id),
                    "goal_vector_model": model if trajectory.id in vectors else None,
                })
        _INSERT_TRAJECTORY.execute_many(conn, rows)
        for origin in dict.fromkeys(trajectory.origin for trajectory in successful):
            self._index.extend_snapshot(conn, origin, held[origin][0])
        self._scope.store.after_commit(functools.partial(self._index.saved, held))  # then not read back

    def learned_acts(self, origin: str, *, relearn: bool = False) -> list[LearnedAct]:
        """The words this site's recordings showed to name one act (``trajectories.acts``), oldest first;
        ``relearn``: learn from all of them first (recordings saved before webmem learned acts)."""
        origin_key = origin_of(origin, field="origin")
        if relearn:
            with self._scope.store.write() as conn:
                acts.relearn(conn, self._ns, origin_key, functools.partial(self._load, conn, cached=False), utcnow())
        with self._scope.store.read() as conn:
            return acts.learned(conn, self._ns, origin_key)

    def field_options(self, origin: str) -> list[FieldOption]:
        """The options this site's recordings showed to be values of a task (``trajectories.field_options``): each
        other option of a field where a run chose the value its goal named, oldest first."""
        origin_key = origin_of(origin, field="origin")
        with self._scope.store.read() as conn:
            return field_options.listed(conn, self._ns, origin_key)


def _same_path(one: Sequence[Step], other: Sequence[Step]) -> bool:
    return [(step.action, step.target, step.value) for step in one] == [
        (step.action, step.target, step.value) for step in other]


def _redacted_step(step: Step, scope: Scope) -> Step:
    """The step with every registered secret in its text replaced by its placeholder, and a value
    typed into a password field (an imported trajectory may carry one) replaced by ``{password}``.
    """
    fields = ("url", "target", "selector", "error", "expected_effect", "label")
    value = step.value if step.value and GOAL_VALUE.match(step.value) else scope.secrets.redact_typed_value(
        step.value, target=step.target, selector=step.selector, secret=False
    )
    changes = {name: redacted for name in fields if (redacted := scope.redact(getattr(step, name))) != getattr(step, name)}
    if value != step.value:
        changes["value"] = value
    if step.element is not None and len(scope.secrets) \
            and (element := redacted_signals(step.element, scope.redact)) is not step.element:
        changes["element"] = element
    return step.model_copy(update=changes) if changes else step
