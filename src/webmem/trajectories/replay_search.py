"""Finding a replay for a new goal, and saying why there is none.

A trajectory can be replayed for a goal when its goal template binds the goal (see :mod:`.slots`)
and every value it types comes from the goal; the same goal, then a template that binds it without
resizing a list (:mod:`.lists`), then the newest such trajectory wins, unless its followers
kept failing (demoted), the site changed since it was recorded, or replays of its shape failed too
often. Every miss has a reason, in the ``replay_not_found`` event and in :class:`ReplayLookup`;
:meth:`ReplaySearch.explain_replay` shows how the goal binds each of the closest candidates.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from ..core.clock import as_utc, utcnow
from ..core.errors import InvalidInput
from ..core.models import positive_int
from ..core.urls import domain_of, origin_of
from .binding import bind, bindings
from .plans import ReplayPlan, changed_after, fit, read_gate, shape_of, target_history
from .ranking import rank
from .recall import signature

if TYPE_CHECKING:
    from ..core.models import Step, Trajectory
    from ..store.scope import Scope
    from .held import OriginGoals, StoredGoal

MAX_PEERS = 8  # earlier runs of a task shape consulted when a replay starts
EXPLAINED = 5  # candidates explained by default
MAX_OTHER_PATHS = 2  # older recordings that went another way, offered beside the plan
MAX_OTHERS_TRIED = 20  # stored goals read looking for them


@dataclass(frozen=True)
class ReplayCandidate:
    """One stored trajectory weighed for replay: whether the goal fits it, the slot values it binds,
    and what the verdict rests on (how it binds, or why the goal does not fit)."""

    trajectory_id: str
    goal: str
    template: str | None
    created_at: datetime
    fits: bool
    reason: str
    values: dict[int, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The candidate as plain data (for JSON output)."""
        return {"trajectory_id": self.trajectory_id, "goal": self.goal, "template": self.template,
                "created_at": self.created_at.isoformat(), "fits": self.fits, "reason": self.reason,
                "values": {str(number): value for number, value in sorted(self.values.items())}}


@dataclass(frozen=True)
class ReplayLookup:
    """What a search for a replay found: the plan, or the reason there is none (``reason``), and the
    candidates it weighed (all that fit or nearly fit, newest first; with ``explain_replay``, the closest)."""

    goal: str
    origin: str
    plan: ReplayPlan | None
    reason: str | None
    candidates: tuple[ReplayCandidate, ...] = ()
    #: The same trajectory bound to the goal's other splits ("the issue {1} to {2}" on a title with "to" in
    #: it): the page at the start tells which one it shows (``agent.replay``'s choice).
    others: tuple[ReplayPlan, ...] = ()

    @property
    def offered(self) -> bool:
        """Whether a replay plan was found."""
        return self.plan is not None

    def to_dict(self) -> dict[str, Any]:
        """The lookup as plain data (for JSON output)."""
        plan = self.plan
        return {"goal": self.goal, "origin": self.origin, "offered": self.offered, "reason": self.reason,
                "trajectory_id": plan.trajectory_id if plan else None,
                "template": plan.template if plan else None,
                "values": {str(number): value for number, value in sorted(plan.slots.items())} if plan else {},
                "candidates": [candidate.to_dict() for candidate in self.candidates]}


class ReplaySearch:
    """The replay half of the trajectory store (a mixin: the store provides what is declared here)."""

    _scope: Scope
    _ns: str
    ttl_days: float
    _demoted: Callable[[Connection, list[str]], set[str]] | None
    _changed_pages: Callable[[Connection, str], dict[str, datetime]] | None

    def _held(self, conn: Connection, origin: str) -> OriginGoals:
        raise NotImplementedError

    def _load(self, conn: Connection, trajectory_id: str, *, cached: bool = True) -> Trajectory | None:
        raise NotImplementedError

    def find_replay(self, goal: str, origin: str, *, now: datetime | None = None) -> ReplayPlan | None:
        """The newest successful trajectory on ``origin`` that can be replayed for ``goal``, bound to it
        (``search_replay(...).plan``: that one also says why there is none)."""
        return self.search_replay(goal, origin, now=now).plan

    def search_replay(self, goal: str, origin: str, *, now: datetime | None = None,
                      run_id: str | None = None) -> ReplayLookup:
        """A replay plan for ``goal`` on ``origin``, or the reason there is none.

        Stricter than :meth:`match`: the goal must fit the trajectory's goal template (its values
        become the slots' values), or be the stored goal itself when the trajectory has no template.
        Emits ``replay_found`` or ``replay_not_found`` (with the reason).
        """
        wanted, origin_key, cutoff = self._lookup_args(goal, origin, now)
        with self._scope.store.read() as conn:
            held = self._held(conn, origin_key)
            with held.lock:
                lookup = self._search(conn, held, goal, wanted, origin_key, cutoff)
        if lookup.plan is not None:
            plan = lookup.plan
            self._scope.emit("replay_found", run_id=run_id, trajectory_id=plan.trajectory_id, goal=goal,
                             origin=origin_key, slots=len(plan.slots), steps=len(plan.steps), stop_step=plan.stop_step)
        else:
            self._scope.emit("replay_not_found", run_id=run_id, goal=goal, origin=origin_key, reason=lookup.reason)
        return lookup

    def explain_replay(self, goal: str, origin: str, *, limit: int = EXPLAINED,
                       now: datetime | None = None) -> ReplayLookup:
        """What :meth:`search_replay` finds, with the ``limit`` stored goals closest to ``goal`` on
        ``origin`` explained: how the goal binds each one's template, or why it does not. Reads only."""
        limit = positive_int(limit, field="limit")
        wanted, origin_key, cutoff = self._lookup_args(goal, origin, now)
        with self._scope.store.read() as conn:
            held = self._held(conn, origin_key)
            with held.lock:
                lookup = self._search(conn, held, goal, wanted, origin_key, cutoff)
                closest = self._closest(conn, held, wanted, cutoff, limit)
        fitting = [candidate for candidate in lookup.candidates if candidate.fits or candidate.values]
        shown = {candidate.trajectory_id for candidate in fitting}
        return replace(lookup, candidates=(*fitting, *(c for c in closest if c.trajectory_id not in shown)))

    def _lookup_args(self, goal: str, origin: str, now: datetime | None) -> tuple[str, str, datetime]:
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: expected a non-empty string")
        origin_key = origin_of(origin, field="origin")
        cutoff = (as_utc(now) if now else utcnow()) - timedelta(days=self.ttl_days)
        return self._scope.redact(goal), origin_key, cutoff

    def _search(self, conn: Connection, held: OriginGoals, goal: str, wanted: str, origin: str,
                cutoff: datetime) -> ReplayLookup:
        if not held.records:
            return ReplayLookup(goal, origin, None, "no successful run is recorded on this origin")
        if held.last_created is None or held.last_created < cutoff:  # no goal is newer than the newest not late
            return ReplayLookup(goal, origin, None, f"every run recorded on this origin is older than the TTL "
                                                    f"({self.ttl_days:g} days)")
        fitting = _in_order_of_trial(held, wanted, cutoff)
        pages: dict[str, datetime] | None = None  # where the site changed: read once a run fits
        weighed: list[ReplayCandidate] = []
        changed: datetime | None = None
        for stored in fitting:
            trajectory = self._load(conn, stored.id)
            found = fit(trajectory, wanted, secrets=self._scope.secrets) if trajectory is not None else \
                "deleted meanwhile"
            weighed.append(_candidate(stored, found))
            if not isinstance(found, ReplayPlan):
                continue
            if self._demoted and self._demoted(conn, [stored.id]):  # never replayed blind again
                weighed[-1] = replace(weighed[-1], fits=False, reason="demoted: runs that followed it kept failing")
                continue
            if pages is None:
                pages = self._changed_pages(conn, domain_of(origin)) if self._changed_pages else {}
            stale = changed_after(found.trajectory, pages)
            if stale is not None:  # the site changed since: explore until a run after the change succeeds
                changed = max(changed or stale, stale)
                weighed[-1] = replace(weighed[-1], fits=False,
                                      reason=f"recorded before the site changed ({stale.isoformat()})")
                continue
            gate = read_gate(conn, self._ns, origin, found.shape)
            if gate.closed:
                return ReplayLookup(goal, origin, None, f"its replays failed {gate.failures} times "
                                                        f"({stored.id}, template {found.template!r})", tuple(weighed))
            peers = self._peers(conn, found, fitting, pages)  # the goals tried after it
            plan = replace(found, stop_step=gate.stop_step, history=target_history(found, peers))
            others = [replace(other, stop_step=gate.stop_step, history=plan.history)
                      for split in (bindings(found.template, wanted)[1:] if found.template else [])
                      if isinstance(other := fit(found.trajectory, wanted, secrets=self._scope.secrets, split=split),
                                    ReplayPlan)]
            others += self._other_paths(conn, plan, peers, fitting, pages, wanted, origin)
            return ReplayLookup(goal, origin, plan, None, tuple(weighed), tuple(others))
        if changed is not None:
            reason = f"the site changed at {changed.isoformat()} since its fitting runs were recorded"
        elif any(candidate.values for candidate in weighed):
            reason = "every run that fits was demoted: runs that followed it kept failing"
        else:
            closest = self._closest(conn, held, wanted, cutoff, 1)
            reason = "no recorded run fits" + (
                f'; the closest, {closest[0].trajectory_id} ("{closest[0].goal}"): {closest[0].reason}'
                if closest else "")
        return ReplayLookup(goal, origin, None, reason, tuple(weighed))

    def _other_paths(self, conn: Connection, plan: ReplayPlan, peers: list[Trajectory], fitting: Iterator[StoredGoal],
                     pages: dict[str, datetime], wanted: str, origin: str) -> list[ReplayPlan]:
        """Up to :data:`MAX_OTHER_PATHS` older recordings that fit ``wanted`` as well but went another way
        (the plan's peers, then the next stored goals tried, at most :data:`MAX_OTHERS_TRIED`): replay follows
        one of them when the page shows its next target and not the plan's (an issue with an assignee, one
        without)."""
        found: list[ReplayPlan] = []
        paths = {_path(plan.steps)}
        later = (self._load(conn, stored.id) for stored in itertools.islice(fitting, MAX_OTHERS_TRIED))
        for trajectory in itertools.chain(peers, later):
            other = fit(trajectory, wanted, secrets=self._scope.secrets) if trajectory is not None else None
            if not isinstance(other, ReplayPlan) or _path(other.steps) in paths \
                    or (self._demoted and self._demoted(conn, [other.trajectory_id])) \
                    or changed_after(other.trajectory, pages) is not None:
                continue
            gate = read_gate(conn, self._ns, origin, other.shape)
            if gate.closed:
                continue
            paths.add(_path(other.steps))
            found.append(replace(other, stop_step=gate.stop_step))
            if len(found) >= MAX_OTHER_PATHS:
                break
        return found

    def _closest(self, conn: Connection, held: OriginGoals, wanted: str, cutoff: datetime,
                 limit: int) -> list[ReplayCandidate]:
        """The ``limit`` stored goals most like ``wanted``, each with how it binds or why it does not."""
        ranked = rank(held, signature(wanted), wanted, limit=limit,
                      competing=lambda stored: stored.created_at >= cutoff)
        found: list[ReplayCandidate] = []
        for item in ranked[:limit]:
            trajectory = self._load(conn, item.goal.id)
            if trajectory is not None:
                found.append(_candidate(item.goal, fit(trajectory, wanted, secrets=self._scope.secrets)))
        return found

    def _peers(self, conn: Connection, plan: ReplayPlan, older: Iterable[StoredGoal],
               pages: dict[str, datetime]) -> list[Trajectory]:
        """Up to ``MAX_PEERS`` earlier trajectories of the plan's task shape: what they did tells which
        of the plan's targets keep their name from run to run, and which do not."""
        peers: list[Trajectory] = []
        for stored in older:
            if len(peers) >= MAX_PEERS:
                break
            template = plan.trajectory.goal_template
            same = stored.signature.template == template if template else \
                stored.goal.split() == plan.trajectory.goal.split()
            trajectory = self._load(conn, stored.id) if same else None
            if trajectory is not None and shape_of(trajectory) == plan.shape \
                    and changed_after(trajectory, pages) is None:  # not what the site was before it changed
                peers.append(trajectory)
        return peers


def _path(steps: Sequence[Step]) -> tuple[tuple[str, str | None], ...]:
    return tuple((step.action, step.target) for step in steps)


def _in_order_of_trial(held: OriginGoals, goal: str, cutoff: datetime) -> Iterator[StoredGoal]:
    """The stored goals a replay may follow for ``goal``, in the order they are tried: the same goal, then
    those whose template binds it as it stands (not by resizing one of its lists), then the others whose
    template it may fit; the same goal bound first too, and each newest first, none older than ``cutoff``.
    Built as they are asked for: the first usually serves."""
    words = goal.split()

    def same(position: int) -> bool:
        return held.goal(position).goal.split() == words

    def binds(position: int) -> bool:
        stored = held.goal(position)
        template = stored.signature.template
        return bool(template) and bind(template, goal, like=stored.goal) is not None

    named, later = held.named(words), []
    first = _current_positions(held, held.newest_first(named, set(named).__contains__), cutoff)
    yield from _binding(held, (position for position in first if same(position)), binds, later)
    yield from map(held.goal, later)
    binding, others = [], []
    for number in held.fitting_templates(signature(goal)):
        binds_template = bind(held.templates[number], goal) is not None  # its fixed text reads as the goal
        (binding if binds_template else others).append(held.template_newest_first(number))
    later = []
    rest = _current_positions(held, heapq.merge(*binding, key=held.time_key, reverse=True), cutoff)
    yield from _binding(held, (position for position in rest if not same(position)), binds, later)
    others.append(iter(later))
    for position in _current_positions(held, heapq.merge(*others, key=held.time_key, reverse=True), cutoff):
        if not same(position):
            yield held.goal(position)


def _binding(held: OriginGoals, positions: Iterable[int], binds: Callable[[int], bool],
             later: list[int]) -> Iterator[StoredGoal]:
    """The goals at ``positions`` that ``binds``, in their order; the other positions go to ``later``."""
    for position in positions:
        if binds(position):
            yield held.goal(position)
        else:
            later.append(position)


def _current_positions(held: OriginGoals, newest_first: Iterator[int], cutoff: datetime) -> Iterator[int]:
    for position in newest_first:
        if held.goal(position).created_at < cutoff:
            return  # the rest are older still
        yield position


def _candidate(stored: StoredGoal, found: ReplayPlan | str) -> ReplayCandidate:
    if isinstance(found, ReplayPlan):
        bound = ", ".join('{%d}="%s"' % (number, value) for number, value in sorted(found.slots.items()))
        reason = f"fits: {bound}" if bound else "fits: the same goal"
        return ReplayCandidate(stored.id, stored.goal, stored.signature.template, stored.created_at, True, reason,
                               dict(found.slots))
    return ReplayCandidate(stored.id, stored.goal, stored.signature.template, stored.created_at, False, found)
