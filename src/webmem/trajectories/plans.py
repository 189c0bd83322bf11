"""Replay plans: a stored trajectory bound to a new goal, and what earlier replays of its shape taught.

A plan holds the steps to execute with the new goal's values in them. A step whose value cannot be
derived from the new goal (the conversions that reproduced the recorded value disagree on the new
one) is marked unresolved: replay hands over there. Replay gates remember, per origin and task
shape, how replays went: a replay that failed without handing over stops later replays before the
step where it failed, and a shape whose replays failed repeatedly is not replayed at all.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, case, or_

from ..core.clock import utcnow
from ..core.models import ReplayOutcome, Step, Trajectory
from ..core.redaction import PLACEHOLDER, SecretRegistry
from ..core.urls import domain_of, page_path
from ..store.schema import replay_gates
from ..store.statements import insert_or_change, plain_select
from .binding import bind, in_recorded_form, misfit, unbound
from .evidence import key
from .lists import resize_lists
from .places import placed
from .slots import SLOT_REFERENCE, fill_checked
from .value_forms import count_digits, value_spans

#: Replays of a shape that failed this many times (and more often than they succeeded) are not tried again.
MAX_REPLAY_FAILURES = 2
_NOT_REPLAYED = frozenset({"finish"})
_TYPING = frozenset({"fill", "type", "select"})
_SETTING = frozenset({"fill", "select"})  # a later one of these on the same field replaces the value
#: Steps that cannot have used a field's value before it was set again (no click, press or navigation).
_USES_NOTHING = frozenset({"fill", "type", "select", "hover", "scroll", "wait"})
_SLOTTED_IDENTITY = re.compile(r'^(?P<role>[a-z]+|\{\d{1,3}\}) "(?P<name>(?:[^"\\]|\\.)*)"$', re.S)
_GATE = plain_select(
    [replay_gates.c.successes, replay_gates.c.failures, replay_gates.c.stop_step],
    "namespace = :ns AND origin = :origin AND shape = :shape",
)


@dataclass(frozen=True)
class TargetHistory:
    """The names one step's target had in the recorded runs of its task shape (the replayed one included)."""

    names: frozenset[str]
    runs: int

    @property
    def established(self) -> bool:
        """Whether at least two runs found the target under the same one name: its absence is news."""
        return self.runs >= 2 and len(self.names) == 1

    @property
    def varies(self) -> bool:
        """Whether runs found this step's target under different names: its name is no part of the task."""
        return len(self.names) >= 2


@dataclass(frozen=True)
class ReplayPlan:
    """A stored trajectory bound to a new goal: the steps to execute, with the goal's values in them.

    ``unresolved`` maps a step's index in ``steps`` to why its value could not be derived from the
    goal; ``stop_step`` (from 1) is where an earlier replay of this shape failed: replay hands over
    before it. ``shape`` names the task shape whose replay gate the plan's outcome updates.
    ``goal_targets`` are the steps whose target the goal's own words name (in its name or its role);
    ``history`` says, for the targeted steps whose name the goal does not give, which names earlier
    runs of the shape found their target under.
    """

    trajectory: Trajectory
    steps: list[Step]
    slots: dict[int, str]
    template: str | None
    unresolved: dict[int, str] = field(default_factory=dict)
    stop_step: int | None = None
    shape: str = ""
    goal_targets: frozenset[int] = frozenset()
    history: Mapping[int, TargetHistory] = field(default_factory=dict)

    @property
    def trajectory_id(self) -> str:
        """The id of the trajectory being replayed."""
        return self.trajectory.id


@dataclass(frozen=True)
class ReplayGate:
    """How replays of one shape on one origin went."""

    successes: int = 0
    failures: int = 0
    stop_step: int | None = None

    @property
    def closed(self) -> bool:
        """Whether the shape's replays failed too often to be tried again."""
        return self.failures >= MAX_REPLAY_FAILURES and self.failures > self.successes


def shape_of(trajectory: Trajectory) -> str:
    """The key of a trajectory's task shape: its goal template, or its goal without one (hashed)."""
    text = trajectory.goal_template if trajectory.goal_template else " ".join(trajectory.goal.split())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


def plan_for(trajectory: Trajectory, goal: str, *, secrets: SecretRegistry | None = None) -> ReplayPlan | None:
    """The trajectory's plan for ``goal``, or None when the goal does not fit it (see :func:`fit`)."""
    found = fit(trajectory, goal, secrets=secrets)
    return found if isinstance(found, ReplayPlan) else None


def fit(trajectory: Trajectory, goal: str, *, secrets: SecretRegistry | None = None,
        split: dict[int, str] | None = None) -> ReplayPlan | str:
    """The trajectory's plan for ``goal``, or why the goal does not fit it. It fits when its template
    binds the goal with values of the kinds its slots held (or, without a template, the goal is the
    trajectory's own) and every value the plan types comes from the goal, or is the placeholder of a
    secret registered in ``secrets`` (the plan keeps the placeholder; replay types the value). ``split``:
    the values to bind, one of the goal's splits (``binding.bindings``), instead of the first."""
    if trajectory.goal_template and trajectory.replay_steps is not None:
        template = trajectory.goal_template
        slotted = replayable(trajectory.replay_steps)
        values = bind(template, goal) if split is None else split
        wrong = unbound(template, goal) if values is None else misfit(template, values, trajectory.goal,
                                                                      typed=_typed_only(slotted))
        if wrong is not None:
            resized = resize_lists(template, slotted, goal, trajectory.goal)
            if resized is None:
                return wrong
            template, slotted, values = resized.template, resized.steps, resized.values
        else:
            values = in_recorded_form(template, values, trajectory.goal)
        steps, unresolved = fill_checked(slotted, values)
        placed_steps = placed(slotted, steps, values)
        if isinstance(placed_steps, str):
            return placed_steps
        steps = placed_steps
        named = frozenset(index for index, step in enumerate(slotted)
                          if step.target and SLOT_REFERENCE.search(step.target))
        plan = ReplayPlan(trajectory, steps, values, template, unresolved, shape=shape_of(trajectory),
                          goal_targets=named)
    elif trajectory.goal.split() == goal.split():
        slotted = steps = replayable(trajectory.steps)
        plan = ReplayPlan(trajectory, steps, {}, None, shape=shape_of(trajectory))
    else:
        return ("the goal is worded otherwise than the recorded one, which has no goal template "
                "(no value of its goal recurs in its steps)")
    # A value typed into the page must come from the goal: a value the earlier run read off the page
    # (or a secret, whose value is not stored) would be typed blind.
    for index, (source, step) in enumerate(zip(slotted, steps)):
        if step.action in _TYPING and index not in plan.unresolved and not _from_goal(source.value, step.value, goal):
            if step.value and PLACEHOLDER.fullmatch(step.value):
                if secrets is not None and secrets.value_for(step.value) is not None:
                    continue
                return (f"step {index + 1} types a secret ({step.value}) that the goal does not give and no "
                        "registered secret stands for")
            return f'step {index + 1} types "{_clip(step.value or "")}", which the goal does not give'
    return plan


def _typed_only(steps: Sequence[Step]) -> frozenset[int]:
    """The slots the steps only type (into a field), never name an element or a page by."""
    typed = {int(found.group(1)) for step in steps if step.action in _TYPING and step.value
             for found in SLOT_REFERENCE.finditer(step.value)}
    named = {int(found.group(1)) for step in steps for text in (step.target, step.url, step.selector) if text
             for found in SLOT_REFERENCE.finditer(text)}
    return frozenset(typed - named)


def replayable(steps: Sequence[Step]) -> list[Step]:
    """The steps that did something: without failed steps, without the repeats of a step retried in
    place, and without a value that a later fill or selection of the same field replaced."""
    return [steps[index] for index in path_taken(steps)]


def target_history(plan: ReplayPlan, peers: Sequence[Trajectory]) -> dict[int, TargetHistory]:
    """For each targeted step of the plan whose target the goal does not name: the names its target had
    in the plan's own run and in ``peers`` (earlier runs of the same shape whose steps line up with the
    plan's: the same actions on targets of the same roles)."""
    own = _slotted(plan.trajectory)
    lined_up = [steps for steps in map(_slotted, peers) if len(steps) == len(own) and all(
        mine.action == theirs.action and _role(mine.target) == _role(theirs.target)
        for mine, theirs in zip(own, steps))]
    history: dict[int, TargetHistory] = {}
    for index, step in enumerate(own):
        identity = _slotted_identity(step.target)
        if identity is None or SLOT_REFERENCE.search(identity[1]):  # the goal names it: its name is no news
            continue
        names = {identity[1], *(found[1] for steps in lined_up if (found := _slotted_identity(steps[index].target)))}
        history[index] = TargetHistory(frozenset(names), 1 + len(lined_up))
    return history


def _slotted_identity(target: str | None) -> tuple[str, str] | None:
    """The role and name of a slotted target, whose role may itself be a slot (``{1} "Send"``)."""
    match = _SLOTTED_IDENTITY.match(target or "")
    return (match.group("role"), match.group("name")) if match else None


def _slotted(trajectory: Trajectory) -> list[Step]:
    if trajectory.goal_template and trajectory.replay_steps is not None:
        return replayable(trajectory.replay_steps)
    return replayable(trajectory.steps)


def _role(target: str | None) -> str | None:
    identity = _slotted_identity(target)
    return identity[0] if identity else None


def changed_after(trajectory: Trajectory, changed_pages: Mapping[str, datetime]) -> datetime | None:
    """When a page the trajectory went through changed after it was recorded (None if none did), given
    when each changed page of its domain last changed (path -> time)."""
    times = [changed_pages[page] for page in
             {page_path(step.url) for step in trajectory.steps if step.url and domain_of(step.url) == trajectory.domain}
             if page in changed_pages and changed_pages[page] > trajectory.created_at]
    return max(times) if times else None


def path_taken(steps: Sequence[Step]) -> list[int]:
    """The indices of the steps that :func:`replayable` keeps, in order."""
    kept: list[int] = []
    for index, step in enumerate(steps):
        if not step.ok or step.action in _NOT_REPLAYED or _superseded(steps, index):
            continue
        if kept and _same_act(steps[kept[-1]], step):
            continue
        kept.append(index)
    return kept


def instructive_failures(steps: Sequence[Step]) -> list[int]:
    """The indices of the failed steps the run learned from: each one directly followed by a different
    action that succeeded (a failed step followed by its own successful retry taught nothing)."""
    return [
        index for index, (step, following) in enumerate(zip(steps, steps[1:]))
        if not step.ok and following.ok and not _same_act(step, following)
    ]


def read_gate(conn: Connection, namespace: str, origin: str, shape: str) -> ReplayGate:
    row = conn.execute(_GATE, {"ns": namespace, "origin": origin, "shape": shape}).first()
    return ReplayGate(row.successes, row.failures, row.stop_step) if row is not None else ReplayGate()


def record_outcome(
    conn: Connection, namespace: str, origin: str, shape: str, outcome: ReplayOutcome, step: int | None,
    *, run_succeeded: bool | None = None,
) -> None:
    """Count one replay's outcome in the shape's gate. A failure also moves the gate's stop to ``step``
    when that is earlier. A run that handed over at the gate's stop and still failed counts as a
    failure too: what the replay did before the stop may be what went wrong, so after enough of them
    the shape is not replayed at all. Any other hand-over teaches the gate nothing."""
    failed = outcome == "replay_failed"
    if outcome == "handed_over":
        stop = read_gate(conn, namespace, origin, shape).stop_step
        if run_succeeded is not False or step is None or stop is None or step < stop:
            return
        failed, step = True, None
    now = utcnow()
    gate = replay_gates.c
    changes: dict[str, Any] = {"successes": gate.successes + int(not failed), "failures": gate.failures + int(failed),
                               "updated_at": now}
    if failed and step is not None:
        changes["stop_step"] = case((or_(gate.stop_step.is_(None), gate.stop_step > step), step), else_=gate.stop_step)
    insert_or_change(conn, replay_gates, {
        "namespace": namespace, "origin": origin, "shape": shape, "successes": int(not failed),
        "failures": int(failed), "stop_step": step if failed else None, "updated_at": now,
    }, keys=("namespace", "origin", "shape"), changes=changes)


def _from_goal(source: str | None, value: str | None, goal: str) -> bool:
    """Whether a typed value comes from the goal: its text is in the goal (in any letter case), or it
    was derived from the goal's slots by a recorded conversion and whatever literal text it has besides
    is in the goal."""
    if not value or key(value) in key(goal):
        return True
    if value.isdigit() and any(span.value == value and count_digits(span.written) for span in value_spans(goal)):
        return True  # a count the goal writes as a word ("five"), typed in digits
    if source is None or SLOT_REFERENCE.search(source) is None:
        return False
    literal = SLOT_REFERENCE.sub(" ", source)
    return all(part.casefold() in goal.casefold() for part in literal.split())


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _same_act(one: Step, other: Step) -> bool:
    return (one.action, one.target, one.selector, one.value, one.target_index) == (
        other.action, other.target, other.selector, other.value, other.target_index)


def _same_field(one: Step, other: Step) -> bool:
    return (one.target, one.selector, one.target_index) == (other.target, other.selector, other.target_index)


def _superseded(steps: Sequence[Step], index: int) -> bool:
    step = steps[index]
    if step.action not in _SETTING or not (step.target or step.selector):
        return False
    for later in steps[index + 1:]:
        if not later.ok:
            continue
        if _same_field(later, step):  # replaced, unless setting it changed what the page offers (added a row)
            return later.action in _SETTING and not (
                step.snapshot_hash and later.snapshot_hash and later.snapshot_hash != step.snapshot_hash)
        if later.action not in _USES_NOTHING:
            return False
    return False
