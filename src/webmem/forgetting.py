"""Forgetting: delete a wrong lesson, a poisoned trajectory, a stale fact, a selector, a session, or a
run with everything it produced.

Each deletion is one write transaction and one ``forgotten`` event after it commits; a dry run reads
only, changes nothing and emits nothing. Everything happens within the memory's namespace: an id of
another namespace is not found there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any

from sqlalchemy import Connection, and_, delete, select

from .core.errors import InvalidInput, NotFound, RunNotFound, TrajectoryNotFound
from .core.models import FACT_TYPES
from .core.urls import check_domain
from .store.schema import (
    episode_entries,
    facts,
    lesson_domains,
    lesson_runs,
    lessons,
    run_steps,
    runs,
    selectors,
    sessions,
    trajectories,
    working_entries,
    working_state,
)
from .store.scope import Scope
from .store.statements import lock_rows, serialize_on
from .trajectories.store import TrajectoryStore

#: What a run leaves behind without saying which run it was: forgetting a run cannot find it.
UNLINKED_NOTE = "facts, selectors, patterns and replay gates record no run: whatever the run taught them stays"


@dataclass(frozen=True)
class ForgetReport:
    """What was deleted (or, with ``dry_run``, would be): rows per kind (``counts``) and the distinct
    ids of those rows (``ids``; several session rows can share one session id).

    ``kept`` names records that stay although they are tied to what was forgotten: the runs resumed
    or forked from a forgotten run (their ``parent_run_id`` still names it), lessons also learned
    from other runs. ``notes`` says what a deletion cannot reach.
    """

    kind: str
    target: str
    namespace: str
    dry_run: bool
    counts: Mapping[str, int]
    ids: Mapping[str, tuple[str, ...]]
    kept: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    notes: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        """How many rows went (or would go), of every kind."""
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready values."""
        return {
            "kind": self.kind, "target": self.target, "namespace": self.namespace, "dry_run": self.dry_run,
            "counts": dict(self.counts), "ids": {kind: list(ids) for kind, ids in self.ids.items()},
            "kept": {kind: list(ids) for kind, ids in self.kept.items()}, "notes": list(self.notes),
        }


@dataclass
class _Plan:
    """The deletions one forgetting makes, found in its transaction and run in order."""

    writing: bool  # False in a dry run: nothing is locked, nothing deleted
    counts: dict[str, int] = field(default_factory=dict)
    ids: dict[str, list[str]] = field(default_factory=dict)
    kept: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    actions: list[Callable[[Connection], Any]] = field(default_factory=list)

    def add(self, kind: str, ids: Sequence[str], rows: int, *actions: Callable[[Connection], Any]) -> None:
        """Delete ``rows`` rows of ``kind`` (identified as ``ids``) with ``actions``; nothing when there are none."""
        if rows:
            self.counts[kind] = self.counts.get(kind, 0) + rows
            self.ids[kind] = sorted({*self.ids.get(kind, ()), *ids})
            self.actions.extend(actions)

    def delete(self, kind: str, ids: Sequence[str], rows: int, table: Any, *where: Any) -> None:
        self.add(kind, ids, rows, _deleting(table, *where))

    def keep(self, kind: str, ids: Sequence[str]) -> None:
        if ids:
            self.kept[kind] = sorted(ids)

    def report(self, kind: str, target: str, namespace: str, dry_run: bool) -> ForgetReport:
        frozen = MappingProxyType
        return ForgetReport(
            kind=kind, target=target, namespace=namespace, dry_run=dry_run, counts=frozen(dict(self.counts)),
            ids=frozen({name: tuple(found) for name, found in self.ids.items()}),
            kept=frozen({name: tuple(found) for name, found in self.kept.items()}), notes=tuple(self.notes),
        )


_Collect = Callable[[Connection, _Plan], None]  # finds what to delete (raising NotFound) and plans it


class Forgetting:
    """Delete records of one namespace: ``lesson``, ``trajectory``, ``fact``, ``selector``, ``session``
    and ``run``. Get it as :attr:`webmem.Memory.forget`.

    Every method takes ``dry_run`` (report what would go, change nothing) and returns a
    :class:`ForgetReport`; an unknown id raises :class:`~webmem.NotFound` naming it and the namespace.
    """

    def __init__(self, scope: Scope, trajectory_store: TrajectoryStore) -> None:
        self._scope = scope
        self._ns = scope.namespace
        self._trajectories = trajectory_store

    def lesson(self, lesson_id: str, *, dry_run: bool = False) -> ForgetReport:
        """Delete a lesson with its links to sites and runs (built-in lessons too: they are not added again)."""
        lesson_id = _text(lesson_id, "lesson_id")
        return self._forget("lesson", lesson_id, dry_run, partial(self._lesson, lesson_id=lesson_id))

    def trajectory(self, trajectory_id: str, *, dry_run: bool = False) -> ForgetReport:
        """Delete a trajectory: no later match or replay offers it, in this process or any other."""
        trajectory_id = _text(trajectory_id, "trajectory_id")
        return self._forget("trajectory", trajectory_id, dry_run,
                            partial(self._trajectory, trajectory_id=trajectory_id))

    def fact(
        self, domain: str, key: str, *, type: str | None = None, value: str | None = None,  # noqa: A002
        dry_run: bool = False,
    ) -> ForgetReport:
        """Delete the facts about ``domain`` with this key: every value it has, of every type, unless
        ``type`` or ``value`` narrow it down."""
        site = check_domain(domain)
        wanted = [facts.c.namespace == self._ns, facts.c.domain == site, facts.c.key == self._redacted(key, "key")]
        if type is not None:
            if type not in FACT_TYPES:
                raise InvalidInput(f"type: {type!r} is not one of {', '.join(FACT_TYPES)}")
            wanted.append(facts.c.type == type)
        if value is not None:
            wanted.append(facts.c.value == self._redacted(value, "value"))
        return self._forget("fact", f"{site} {key}", dry_run,
                            partial(self._facts, wanted=wanted, described=f"{key!r} on {site!r}"))

    def selector(self, domain: str, element: str, *, dry_run: bool = False) -> ForgetReport:
        """Delete what the selector cache knows about one element (``button "Search"``) on ``domain``."""
        site = check_domain(domain)
        identity = self._redacted(element, "element")
        return self._forget("selector", f"{site} {identity}", dry_run,
                            partial(self._selector, site=site, element=identity))

    def session(self, session_id: str, *, domain: str | None = None, dry_run: bool = False) -> ForgetReport:
        """Delete a session from the site histories (on every domain it was recorded on, or on ``domain``)."""
        session_id = _text(session_id, "session_id")
        wanted = [sessions.c.namespace == self._ns, sessions.c.session_id == session_id]
        if domain is not None:
            wanted.append(sessions.c.domain == check_domain(domain))
        return self._forget("session", session_id, dry_run,
                            partial(self._sessions, wanted=wanted, session_id=session_id))

    def run(self, run_id: str, *, dry_run: bool = False) -> ForgetReport:
        """Delete a run and what it produced: its steps, the trajectory saved from it, its session record,
        its episode steps and working memory, and the lessons learned from it alone (a lesson also learned
        from other runs stays, without its link to this one). Runs resumed or forked from it stay.
        """
        run_id = _text(run_id, "run_id")
        return self._forget("run", run_id, dry_run, partial(self._run, run_id=run_id))

    # -- the transaction ---------------------------------------------------------------------------

    def _forget(self, kind: str, target: str, dry_run: bool, collect: _Collect) -> ForgetReport:
        if not isinstance(dry_run, bool):
            raise InvalidInput(f"dry_run: expected True or False, got {dry_run!r}")
        if dry_run:
            plan = _Plan(writing=False)
            with self._scope.store.read() as conn:
                collect(conn, plan)
            return plan.report(kind, target, self._ns, dry_run=True)
        return self._scope.store.retrying(lambda: self._delete(kind, target, collect))

    def _delete(self, kind: str, target: str, collect: _Collect) -> ForgetReport:
        plan = _Plan(writing=True)
        with self._scope.store.write() as conn:
            collect(conn, plan)
            for action in plan.actions:
                action(conn)
            self._scope.emit("forgotten", run_id=target if kind == "run" else None, kind=kind, id=target,
                             counts=dict(plan.counts))
        return plan.report(kind, target, self._ns, dry_run=False)

    # -- what each kind deletes --------------------------------------------------------------------

    def _lesson(self, conn: Connection, plan: _Plan, *, lesson_id: str) -> None:
        if plan.writing:
            serialize_on(conn, f"webmem.lessons.{self._ns}")  # as the writers of lessons do
        found = conn.execute(select(lessons.c.lesson_id).where(
            lessons.c.namespace == self._ns, lessons.c.lesson_id == lesson_id
        )).first()
        if found is None:
            raise NotFound(f"lesson_id: no lesson {lesson_id!r} in namespace {self._ns!r}")
        self._delete_lessons(plan, [lesson_id])

    def _delete_lessons(self, plan: _Plan, lesson_ids: Sequence[str]) -> None:
        """The lessons with their links to sites and runs (named, not left to the foreign keys' cascade)."""
        chosen = list(lesson_ids)
        plan.add("lessons", chosen, len(chosen), *(
            _deleting(table, table.c.namespace == self._ns, table.c.lesson_id.in_(chosen))
            for table in (lesson_domains, lesson_runs, lessons)
        ))

    def _trajectory(self, conn: Connection, plan: _Plan, *, trajectory_id: str) -> None:
        found = conn.execute(select(trajectories.c.trajectory_id).where(
            trajectories.c.namespace == self._ns, trajectories.c.trajectory_id == trajectory_id
        )).first()
        if found is None:
            raise TrajectoryNotFound(f"trajectory_id: no trajectory {trajectory_id!r} in namespace {self._ns!r}")
        self._delete_trajectories(plan, [trajectory_id])

    def _delete_trajectories(self, plan: _Plan, trajectory_ids: Sequence[str]) -> None:
        chosen = list(trajectory_ids)
        plan.add("trajectories", chosen, len(chosen), lambda conn: self._trajectories.delete(conn, chosen))

    def _facts(self, conn: Connection, plan: _Plan, *, wanted: list[Any], described: str) -> None:
        rows = conn.execute(select(facts.c.pk, facts.c.type, facts.c.key, facts.c.value).where(*wanted)).all()
        if not rows:
            raise NotFound(f"fact: no fact {described} in namespace {self._ns!r}")
        pks = [row.pk for row in rows]
        plan.delete("facts", [f"{row.type}:{row.key}={row.value}" for row in rows], len(rows), facts,
                    facts.c.namespace == self._ns, facts.c.pk.in_(pks))

    def _selector(self, conn: Connection, plan: _Plan, *, site: str, element: str) -> None:
        key = and_(selectors.c.namespace == self._ns, selectors.c.domain == site, selectors.c.element == element)
        if conn.execute(select(selectors.c.element).where(key)).first() is None:
            raise NotFound(f"selector: no selector for {element!r} on {site!r} in namespace {self._ns!r}")
        plan.delete("selectors", [element], 1, selectors, key)

    def _sessions(self, conn: Connection, plan: _Plan, *, wanted: list[Any], session_id: str) -> None:
        rows = conn.execute(select(sessions.c.pk, sessions.c.session_id).where(*wanted)).all()
        if not rows:
            raise NotFound(f"session_id: no session {session_id!r} in namespace {self._ns!r}")
        self._delete_sessions(plan, rows)

    def _delete_sessions(self, plan: _Plan, rows: Sequence[Any]) -> None:
        pks = [row.pk for row in rows]
        plan.delete("sessions", [row.session_id for row in rows], len(rows), sessions,
                    sessions.c.namespace == self._ns, sessions.c.pk.in_(pks))

    def _run(self, conn: Connection, plan: _Plan, *, run_id: str) -> None:
        key = and_(runs.c.namespace == self._ns, runs.c.run_id == run_id)
        if plan.writing:
            lock_rows(conn, runs, key)  # a concurrent step or finish of this run waits, then finds it gone
            serialize_on(conn, f"webmem.lessons.{self._ns}")
        if conn.execute(select(runs.c.run_id).where(key)).first() is None:
            raise RunNotFound(f"run_id: no run {run_id!r} in namespace {self._ns!r}")
        seqs = conn.execute(select(run_steps.c.seq).where(*self._of_run(run_steps, run_id))).scalars().all()
        plan.delete("steps", [f"{run_id}.{seq}" for seq in seqs], len(seqs), run_steps,
                    *self._of_run(run_steps, run_id))
        saved = conn.execute(select(trajectories.c.trajectory_id).where(*self._of_run(trajectories, run_id)))
        self._delete_trajectories(plan, saved.scalars().all())
        self._run_lessons(conn, plan, run_id)
        self._delete_sessions(plan, conn.execute(
            select(sessions.c.pk, sessions.c.session_id).where(*self._of_run(sessions, run_id))
        ).all())
        self._run_working_memory(conn, plan, run_id)
        plan.delete("runs", [run_id], 1, runs, key)
        plan.keep("child_runs", conn.execute(select(runs.c.run_id).where(
            runs.c.namespace == self._ns, runs.c.parent_run_id == run_id
        )).scalars().all())
        plan.notes.append(UNLINKED_NOTE)

    def _run_lessons(self, conn: Connection, plan: _Plan, run_id: str) -> None:
        """Lessons learned from this run alone go; the others lose their links to it (learned or recalled)."""
        links = conn.execute(select(lesson_runs.c.lesson_id, lesson_runs.c.role).where(
            lesson_runs.c.namespace == self._ns, lesson_runs.c.run_id == run_id
        )).all()
        learned = sorted({link.lesson_id for link in links if link.role == "learned"})
        elsewhere = set(conn.execute(select(lesson_runs.c.lesson_id).where(
            lesson_runs.c.namespace == self._ns, lesson_runs.c.role == "learned", lesson_runs.c.run_id != run_id,
            lesson_runs.c.lesson_id.in_(learned),
        )).scalars()) if learned else set()
        alone = [lesson_id for lesson_id in learned if lesson_id not in elsewhere]
        unlinked = [link.lesson_id for link in links if link.lesson_id not in alone]
        plan.delete("lesson_links", unlinked, len(unlinked), lesson_runs, lesson_runs.c.namespace == self._ns,
                    lesson_runs.c.run_id == run_id, lesson_runs.c.lesson_id.not_in(alone))
        if alone:
            self._delete_lessons(plan, alone)
        plan.keep("lessons", sorted(elsewhere))

    def _run_working_memory(self, conn: Connection, plan: _Plan, run_id: str) -> None:
        """The run's episode steps and its working memory (entries and state)."""
        graded = conn.execute(select(episode_entries.c.session_id, episode_entries.c.rep, episode_entries.c.step_num)
                              .where(*self._of_run(episode_entries, run_id))).all()
        plan.delete("episode_entries", [f"{row.session_id}#{row.rep}.{row.step_num}" for row in graded], len(graded),
                    episode_entries, *self._of_run(episode_entries, run_id))
        entries = conn.execute(select(working_entries.c.entry_id).where(*self._of_run(working_entries, run_id)))
        numbers = entries.scalars().all()
        plan.delete("working_entries", [f"{run_id}.{number}" for number in numbers], len(numbers), working_entries,
                    *self._of_run(working_entries, run_id))
        state = conn.execute(select(working_state.c.run_id).where(*self._of_run(working_state, run_id))).first()
        plan.delete("working_state", [run_id], 1 if state else 0, working_state, *self._of_run(working_state, run_id))

    def _of_run(self, table: Any, run_id: str) -> tuple[Any, Any]:
        """The rows of ``table`` that belong to the run."""
        return table.c.namespace == self._ns, table.c.run_id == run_id

    def _redacted(self, value: object, name: str) -> str:
        """What a text is stored as: secrets in it were replaced by their placeholders when it was written."""
        return self._scope.redact(_text(value, name)) or ""


def _deleting(table: Any, *where: Any) -> Callable[[Connection], Any]:
    return lambda conn: conn.execute(delete(table).where(*where))


def _text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name}: expected a non-empty string, got {value!r}")
    return value
