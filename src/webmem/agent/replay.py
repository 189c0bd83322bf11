"""Replay: execute a remembered successful run for a new goal without asking any policy, step by step,
handing the rest of the run to a fallback policy as soon as the page no longer fits the memory."""

from __future__ import annotations

import re

from ..core.models import Step
from ..trajectories.store import ReplayPlan
from .actions import MAX_WAIT_MS, Action, Target
from .policy import Policy, PolicyStats, Turn

DEFAULT_WAIT_MS = 500
_IDENTITY = re.compile(r'^(?P<role>[a-z]+) "(?P<name>(?:[^"\\]|\\.)*)"$', re.S)


def parse_identity(identity: str | None) -> tuple[str, str] | None:
    """``('button', 'Submit')`` from ``button "Submit"``; None for anything else."""
    match = _IDENTITY.match(identity or "")
    if match is None:
        return None
    return match.group("role"), match.group("name").replace('\\"', '"').replace("\\\\", "\\")


def step_action(step: Step) -> Action | None:
    """The action that replays a stored step, or None when the step does not say enough to act blind-free."""
    target = None
    if step.target or step.selector:
        identity = parse_identity(step.target)
        if identity is None:
            return None  # replay never acts on a selector alone: it could not check the element's role
        target = Target(role=identity[0], name=identity[1], selector=step.selector)
    value = step.value
    if step.action == "goto":
        value = value or step.url
    wait_ms = min(step.duration_ms or DEFAULT_WAIT_MS, MAX_WAIT_MS) if step.action == "wait" else None
    try:
        return Action(kind=step.action, target=target, value=value, wait_ms=wait_ms, reason="replay")
    except ValueError:
        return None


class ReplayPolicy:
    """Replays ``plan`` step by step; when a step's target is missing (or present only with another role),
    or a step that was verified before has no effect now, it hands over to ``fallback`` for the rest of
    the run. ``stats`` counts only the fallback's decisions: replayed steps cost none.
    """

    name = "replay"

    def __init__(self, plan: ReplayPlan, fallback: Policy) -> None:
        self.plan = plan
        self.fallback = fallback
        self.position = 0
        self.handed_over = False
        self.handover_reason: str | None = None
        self._expected: Step | None = None

    @property
    def stats(self) -> PolicyStats:
        """The fallback policy's decisions, tokens and calls: replayed steps add none."""
        return self.fallback.stats

    def start(self, goal: str) -> None:
        """Start the plan from its first step (the goal was bound when the plan was made)."""
        self.position = 0
        self.handed_over = False
        self.handover_reason = None
        self._expected = None

    @property
    def finished_steps(self) -> bool:
        """Whether every step of the plan has been replayed."""
        return self.position >= len(self.plan.steps)

    def decide(self, turn: Turn) -> Action:
        """The plan's next step as an action; a hand-over to the fallback policy when the page no longer fits."""
        if not self.handed_over:
            action = self._next(turn)
            if action is not None:
                return action
        return self.fallback.decide(turn)

    def _next(self, turn: Turn) -> Action | None:
        last = turn.history[-1] if turn.history else None
        if self._expected is not None and last is not None:
            if not last.ok:
                return self._hand_over(f"step {self.position} failed: {last.error}")
            if self._expected.verified and last.verified is False:
                return self._hand_over(f"step {self.position} had no effect ({last.effect or 'expected a change'})")
        if self.finished_steps:
            self._expected = None
            return Action(kind="finish", success=True, answer=None, reason="replayed every step")
        step = self.plan.steps[self.position]
        action = step_action(step)
        if action is None:
            return self._hand_over(f"step {self.position + 1} ({step.action}) cannot be replayed safely")
        if action.target is not None and action.target.role:
            present = turn.observation.find(action.target.role, action.target.name)
            if not present:
                others = turn.observation.find(None, action.target.name) if action.target.name else []
                why = (f"the page has a {others[0].role} named {action.target.name!r}, not a {action.target.role}"
                       if others else f"{action.target.describe()} is not on the page")
                return self._hand_over(f"step {self.position + 1}: {why}")
            if len(present) == 1 and present[0].ref:
                action = action.with_target(Target(
                    ref=present[0].ref, role=action.target.role, name=action.target.name, selector=action.target.selector,
                ))
        self.position += 1
        self._expected = step
        return action

    def _hand_over(self, reason: str) -> None:
        self.handed_over = True
        self.handover_reason = reason
        self._expected = None
        return None
