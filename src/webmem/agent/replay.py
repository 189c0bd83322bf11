"""Replay: execute a remembered successful run for a new goal without asking any policy, step by step,
handing the rest of the run to a fallback policy as soon as the page no longer fits the memory."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..core.models import Step
from ..trajectories.plans import ReplayPlan
from .actions import MAX_WAIT_MS, Action, Target
from .observation import Element
from .policy import Policy, PolicyStats, Turn

DEFAULT_WAIT_MS = 500
#: Finds the snapshot ref of the one element a selector matches, if it has this role and name.
Locate = Callable[[str, str, str], "str | None"]
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
    """Replays ``plan`` step by step, and hands the rest of the run over to ``fallback`` as soon as the
    plan no longer fits: a step failed, a step verified before has no verified effect now, a target is
    missing or present only with another role, several elements fit a target and the step's evidence
    does not single one out, a value cannot be derived from the goal, or an earlier replay of this task
    shape failed at the next step. The loop hands over too (``hand_over``) instead of ending the run on
    one of its guardrails. ``stats`` counts only the fallback's decisions: replayed steps cost none.
    """

    name = "replay"

    def __init__(self, plan: ReplayPlan, fallback: Policy, *, locate: Locate | None = None) -> None:
        self.plan = plan
        self.fallback = fallback
        self.locate = locate
        self.position = 0
        self.handed_over = False
        self.handover_reason: str | None = None
        self.handover_step: int | None = None
        self._expected: Step | None = None

    @property
    def stats(self) -> PolicyStats:
        """The fallback policy's decisions, tokens and calls: replayed steps add none."""
        return self.fallback.stats

    @property
    def active(self) -> bool:
        """Whether the plan still drives the run (it has not handed over)."""
        return not self.handed_over

    def start(self, goal: str) -> None:
        """Start the plan from its first step (the goal was bound when the plan was made)."""
        self.position = 0
        self.handed_over = False
        self.handover_reason = None
        self.handover_step = None
        self._expected = None

    @property
    def finished_steps(self) -> bool:
        """Whether every step of the plan has been replayed."""
        return self.position >= len(self.plan.steps)

    def decide(self, turn: Turn) -> Action:
        """The plan's next step as an action; the fallback policy's decision once the plan handed over."""
        if not self.handed_over:
            action = self._next(turn)
            if action is not None:
                return action
        return self.fallback.decide(turn)

    def hand_over(self, reason: str, *, step: int | None = None) -> None:
        """Give the rest of the run to the fallback policy; ``step`` (from 1) is where, by default the
        step last handed out."""
        if self.handed_over:
            return
        self.handed_over = True
        self.handover_reason = reason
        self.handover_step = step if step is not None else max(self.position, 1)
        self._expected = None

    def _next(self, turn: Turn) -> Action | None:
        last = turn.history[-1] if turn.history else None
        if self._expected is not None and last is not None:
            if not last.ok:
                return self._stop(f"step {self.position} failed: {last.error}", self.position)
            if self._expected.verified and last.verified is not True:
                effect = "no effect" if last.verified is False else "an effect that could not be checked"
                return self._stop(f"step {self.position} had {effect} ({last.effect or 'expected a change'})",
                                  self.position)
        if self.finished_steps:
            self._expected = None
            return Action(kind="finish", success=True, answer=None, reason="replayed every step")
        number = self.position + 1
        step = self.plan.steps[self.position]
        if self.plan.stop_step is not None and number >= self.plan.stop_step:
            return self._stop(f"step {number}: an earlier replay of this task failed here", number)
        if self.position in self.plan.unresolved:
            return self._stop(f"step {number}: {self.plan.unresolved[self.position]}", number)
        action = step_action(step)
        if action is None:
            return self._stop(f"step {number} ({step.action}) cannot be replayed safely", number)
        if action.target is not None and action.target.role:
            element, why = _single_element(turn, action.target, step, self.locate)
            if element is None:
                return self._stop(f"step {number}: {why}", number)
            if element.ref:
                action = action.with_target(Target(
                    ref=element.ref, role=action.target.role, name=action.target.name, selector=action.target.selector,
                ))
        self.position = number
        self._expected = step
        return action

    def _stop(self, reason: str, step: int) -> None:
        self.hand_over(reason, step=step)
        return None


def _single_element(
    turn: Turn, target: Target, step: Step, locate: Locate | None
) -> tuple[Element | None, str]:
    """The one element of the page the step's target and evidence fit, or None and why there is none.

    Of several elements with the target's role and name, the evidence is the step's stored selector,
    when it matches exactly one element of the page and that is one of them (an id outlives a layout
    that moved the elements around), or else the step's place among them, when the page has as many
    as the earlier run saw."""
    present = turn.observation.find(target.role, target.name)
    if not present:
        others = turn.observation.find(None, target.name) if target.name else []
        if others:
            return None, f"the page has a {others[0].role} named {target.name!r}, not a {target.role}"
        return None, f"{target.describe()} is not on the page"
    if len(present) == 1:
        return present[0], ""
    if step.selector and locate is not None and target.role is not None:
        ref = locate(step.selector, target.role, target.name or "")
        chosen = next((element for element in present if ref is not None and element.ref == ref), None)
        if chosen is not None:
            return chosen, ""
    if step.target_index is not None and step.target_count == len(present):
        return present[step.target_index - 1], ""
    if step.target_count is not None:
        return None, (f"{len(present)} elements are {target.describe()} where the earlier run saw "
                      f"{step.target_count}: which one is meant is not certain")
    return None, f"{len(present)} elements are {target.describe()} and the earlier run did not say which one"
