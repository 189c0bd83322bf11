"""Replay: execute a remembered successful run for a new goal without asking any policy, step by step,
handing the rest of the run to a fallback policy as soon as the page no longer fits the memory, and
saying for each step what became of it (hit, healed, stale, missed)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from ..core.models import ReplayedStep, ReplayStepStatus, Step
from ..core.redaction import PLACEHOLDER, SecretRegistry
from ..core.text import clean_for_prompt
from ..core.urls import MAX_URL_LENGTH
from ..trajectories.evidence import parse_identity
from ..trajectories.plans import ReplayPlan
from .actions import MAX_WAIT_MS, REPLAYED, Action, Target
from .observation import Element, Observation
from .policy import Policy, PolicyStats, StepOutcome, Turn
from .replay_targets import Found, Identify, Locate, Reaches, TargetFinder
from .suggestions import Shown, Suggestions

DEFAULT_WAIT_MS = 500
#: Marks replay's wait for a target the page may still be drawing: it serves a step and is no step of the run.
LOOKING_AGAIN = "looking_again"
LOOKS_AGAIN = 2  # times replay looks again for a target the page does not show, before handing over
#: Steps a replay may skip on its way to a target the goal names that the page already shows: looking
#: around (a tab, a link, a section of a tree or menu opened) and waiting, never a button or a field.
_LOOKING_ROLES = frozenset({"link", "tab", "treeitem", "menuitem"})
_PASSIVE = frozenset({"wait", "scroll"})
#: Where replay looks for a target the goal names that the page does not show: behind the page's tabs (a tab
#: or an accordion's section only reveals content). A link is clicked only as the control of an unnamed tab.
SEARCHED_ROLE = "tab"
MAX_TABS_SEARCHED = 10

__all__ = ["DEFAULT_WAIT_MS", "LOOKING_AGAIN", "MAX_TABS_SEARCHED", "Identify", "Locate", "Reaches", "ReplayPolicy",
           "Shown", "parse_identity", "step_action"]


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
        return Action(kind=step.action, target=target, value=value, wait_ms=wait_ms, reason=REPLAYED)
    except ValueError:
        return None


class ReplayPolicy:
    """Replays ``plan`` step by step, and hands the rest of the run over to ``fallback`` as soon as the
    plan no longer fits: a step failed, a step verified before has no verified effect now, a target is
    missing or present only with another role, several elements fit a target and the step's evidence
    does not single one out, a value cannot be derived from the goal, or an earlier replay of this task
    shape failed at the next step. The loop hands over too (``hand_over``) instead of ending the run on
    one of its guardrails. ``stats`` counts only the fallback's decisions: replayed steps cost none.

    Each target's role and name are checked on the page before acting. A target is found by its
    label when several fields share its role and name and the page put them in another order, and by
    its role alone only when earlier runs found it under a different name each time and the page has
    one such element. ``steps`` says what became of each step reached.
    """

    name = "replay"

    def __init__(self, plan: ReplayPlan, fallback: Policy, *, locate: Locate | None = None,
                 reaches: Reaches | None = None, shown: Shown | None = None,
                 secrets: SecretRegistry | None = None, identify: Identify | None = None,
                 others: Sequence[ReplayPlan] = ()) -> None:
        self.plan = plan
        self.others = list(others)
        self._switched: str | None = None  # why the plan became another (a split, a recording), until a step says it
        self.secrets = secrets
        self.fallback = fallback
        self.shown = shown
        self._targets = TargetFinder(plan, locate=locate, reaches=reaches, shown=shown, identify=identify)
        self.position = 0
        self.handed_over = False
        self.handover_reason: str | None = None
        self.handover_step: int | None = None
        self.steps: list[ReplayedStep] = []
        self._expected: Step | None = None
        self._pending: ReplayedStep | None = None
        self._tabs_opened: set[str] = set()  # what this replay clicked to look around, as plan steps or searching
        self._searched: list[str] = []  # the tabs opened looking for the current step's target
        self._aside: tuple[int, str] | None = None  # an action taken for a step outside the plan, until judged
        self._suggestions = Suggestions(plan, shown)
        self._looks: Counter[int] = Counter()  # how often replay looked again for each step's target

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
        self.steps = []
        self._expected = None
        self._pending = None
        self._tabs_opened = set()
        self._searched = []
        self._aside = None
        self._suggestions = Suggestions(self.plan, self.shown)
        self._looks = Counter()

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
        if self._pending is not None:  # handed out but not acted on: the loop took it back
            self.steps.append(self._pending.model_copy(update={"status": "missed", "reason": _short(reason)}))
            self._pending = None
        self.handed_over = True
        self.handover_reason = reason
        self.handover_step = step if step is not None else max(self.position, 1)
        self._expected = None

    def step_report(self, last: StepOutcome | None) -> list[ReplayedStep]:
        """What became of each step reached, the last one handed out judged by ``last`` (the run's last
        executed action, when the run ended after it)."""
        if self._pending is not None:
            self._settle(last)
        return list(self.steps)

    def _settle(self, last: StepOutcome | None) -> str | None:
        """Close the pending step with how its action went; the reason to hand over, if it went wrong."""
        pending, expected = self._pending, self._expected
        self._pending = None
        if pending is None or last is None:
            return None
        problem = None
        if not last.ok:
            problem = f"step {pending.step} failed: {last.error}"
        elif expected is not None and expected.verified and last.verified is not True:
            effect = "no effect" if last.verified is False else "an effect that could not be checked"
            problem = f"step {pending.step} had {effect} ({last.effect or 'expected a change'})"
        if problem is not None:
            pending = pending.model_copy(update={"status": "missed", "reason": _short(problem)})
        self.steps.append(pending)
        return problem

    def _next(self, turn: Turn) -> Action | None:
        last = turn.history[-1] if turn.history else None
        if self._pending is not None and last is not None:
            problem = self._settle(last)
            if problem is not None:
                return self._stop(problem, self.position)
        elif self._aside is not None and last is not None and not last.ok:
            number, what = self._aside
            return self._stop(f"step {number}: {what} failed: {last.error}", number)
        self._aside = None
        repair = self._suggestions.after_pick(turn)
        if repair is not None:
            if repair.healed is not None and self.steps:
                self.steps[-1] = self.steps[-1].model_copy(update={"status": "healed", "reason": _short(repair.healed)})
            self._aside = (self.position, repair.doing)
            return repair.action
        if self.finished_steps:
            self._expected = None
            return Action(kind="finish", success=True, answer=None, reason="replayed every step")
        self._skip_detour(turn)
        number = self.position + 1
        step = self.plan.steps[self.position]
        if self.plan.stop_step is not None and number >= self.plan.stop_step:
            return self._miss(turn, step, number, "an earlier replay of this task failed here")
        if self.position in self.plan.unresolved:
            return self._miss(turn, step, number, self.plan.unresolved[self.position])
        action = step_action(step)
        if action is None:
            return self._miss(turn, step, number, f"{step.action} cannot be replayed safely")
        if action.value is not None and PLACEHOLDER.fullmatch(action.value):
            secret = self.secrets.value_for(action.value) if self.secrets is not None else None
            if secret is None:
                return self._miss(turn, step, number, f"no registered secret stands for {action.value}")
            action = replace(action, value=secret, secret=True)  # typed, never shown, stored as the placeholder
        status: ReplayStepStatus = "hit"
        reason = None
        pattern = (action.target.name or "") if step.completes and action.target is not None else None
        needless = self._suggestions.needless(step, number, pattern) if pattern is not None else None
        if needless is not None:
            self.steps.append(self._record(turn, step, number, "missed", f"skipped: {needless}"))
            self.position = number
            return self._next(turn)
        if action.target is not None and action.target.role:
            found = self._find(turn.observation, action.target, step, self.position)
            if found.target is None and step.completes and self._suggestions.waited != number:
                self._suggestions.waited, self._aside = number, (number, "waiting for the page to offer a completion")
                return Action(kind="wait", wait_ms=DEFAULT_WAIT_MS, reason=REPLAYED)
            if found.target is None and self._other_plan(turn.observation) is not None:
                return self._next(turn)
            if found.target is None:
                return self._look_behind_tabs(turn, step, number, found)
            action = action.with_target(found.target)
            status, reason = found.status, found.reason
            if self._switched is not None:
                status, reason, self._switched = "healed", self._switched, None
            if self._searched:
                status, reason = "healed", (f"found behind tab {self._searched[-1]!r}, the {_nth(len(self._searched))} "
                                            f"tab opened looking for it")
        if action.kind == "click" and action.target is not None and action.target.role in _LOOKING_ROLES:
            self._tabs_opened.add(action.target.identity or "")
        if pattern is not None and action.kind == "click" and action.target is not None:
            self._suggestions.picked(pattern, action.target.name or "", self.position)
        self.position = number
        self._searched = []
        self._expected = step
        self._pending = self._record(turn, step, number, status, reason)
        return action

    def _other_plan(self, observation: Observation) -> ReplayPlan | None:
        """When this step's target is not on the page, another plan whose steps so far are these and whose
        target here the page shows: it becomes the plan. Another split of the goal into the template's
        values ("the issue {1} to {2}" read with the title that has "to" in it) where the goal names the
        target; another recording that went another way from here (a filter row with a select where the
        plan's had a text box)."""
        done = [(step.action, step.target, step.value) for step in self.plan.steps[:self.position]]
        for other in self.others:
            split = other.trajectory_id == self.plan.trajectory_id
            if len(other.steps) <= self.position or (split and self.position not in self.plan.goal_targets) or [
                (step.action, step.target, step.value) for step in other.steps[:self.position]
            ] != done:
                continue
            action = step_action(other.steps[self.position])
            finder = self._targets.for_plan(other)
            if action is None or action.target is None or not action.target.role or finder.find(
                    observation, action.target, other.steps[self.position], self.position).target is None:
                continue
            self.others.remove(other)
            self.others.append(self.plan)
            self.plan, self._targets = other, finder
            self._suggestions = Suggestions(other, self.shown)
            values = ", ".join(f"{{{slot}}} = {value!r}" for slot, value in sorted(other.slots.items()))
            self._switched = f"the goal read as {values}: the page shows {action.target.describe()}" if split else \
                f"followed {other.trajectory_id}, another recording, whose target the page shows: " \
                f"{action.target.describe()}"
            return other
        return None

    def _look_behind_tabs(self, turn: Turn, step: Step, number: int, found: Found) -> Action | None:
        """The target of step ``number`` is not on the page. When the goal names it, open the page's tabs
        one by one (those this replay has not opened, at most ``MAX_TABS_SEARCHED``) until it shows; when
        the step only looked around on the way to such a target (a tab or link the goal does not name),
        skip it and look for that target. Else, or once no tab is left, hand over."""
        ahead = self._detour_end() if _looks_around(step) and found.status != "stale" else None
        if ahead is not None and self._tab_to_open(turn.observation) is not None:
            why = f"skipped: {found.reason}; looking behind the page's tabs for what step {ahead + 1} acts on"
            for skipped in range(number, ahead + 1):
                self.steps.append(self._record(turn, self.plan.steps[skipped - 1], skipped, "missed", why))
            self.position = ahead
            return self._next(turn)
        tab = self._tab_to_open(turn.observation) if self.position in self.plan.goal_targets else None
        if tab is not None:
            self._searched.append(tab.name)
            self._tabs_opened.add(tab.identity)
            self._aside = (number, f"opening tab {tab.name!r}")
            return Action(kind="click", target=Target(ref=tab.ref, role=tab.role, name=tab.name), reason=REPLAYED)
        identity = parse_identity(step.target)
        elsewhere = bool(identity and identity[1] and turn.observation.find(None, identity[1]))  # another role
        if found.status != "stale" and not elsewhere and self._looks[number] < LOOKS_AGAIN:  # still being drawn?
            self._looks[number] += 1
            self._aside = (number, f"waiting for the page to show {step.target or 'its target'}")
            return Action(kind="wait", wait_ms=DEFAULT_WAIT_MS, reason=REPLAYED, extra={LOOKING_AGAIN: True})
        reason = found.reason or "not on the page"
        opened = [control for control, _ in _tab_controls(turn.observation) if control.identity in self._tabs_opened]
        if self.position in self.plan.goal_targets and opened:
            reason = f"{reason}, nor behind any of the {len(opened)} tabs this replay opened"
        self.steps.append(self._record(turn, step, number, found.status, reason))
        return self._stop(f"step {number}: {reason}", number)

    def _tab_to_open(self, observation: Observation) -> Element | None:
        """The first tab the page shows closed that this replay has not opened, if the search may go on."""
        if len(self._searched) >= MAX_TABS_SEARCHED:
            return None
        return next((control for control, opened in _tab_controls(observation)
                     if not opened and not control.disabled and control.identity not in self._tabs_opened), None)

    def _detour_end(self) -> int | None:
        """The next step whose target the goal names, when every step before it from the current one only
        looks around (clicks on links, tabs, tree or menu items the goal does not name, or waits) and it
        may be replayed."""
        ahead = min((index for index in self.plan.goal_targets if index > self.position), default=None)
        if ahead is None or ahead in self.plan.unresolved or (
            self.plan.stop_step is not None and ahead + 1 >= self.plan.stop_step
        ) or not all(_looks_around(self.plan.steps[index]) and index not in self.plan.goal_targets
                     for index in range(self.position, ahead)):
            return None
        return ahead

    def _skip_detour(self, turn: Turn) -> None:
        """Jump to the next step whose target the goal names when the page already shows it, over the
        clicks in between on links, tabs and tree or menu items the goal does not name (the way the earlier
        run went looking for it). Nothing that types, selects, checks or presses a button is skipped."""
        ahead = self._detour_end()
        if ahead is None:
            return
        action = step_action(self.plan.steps[ahead])
        if action is None or action.target is None or not action.target.role:
            return
        found = self._find(turn.observation, action.target, self.plan.steps[ahead], ahead)
        if found.target is None:
            return
        for number in range(self.position + 1, ahead + 1):
            why = f"skipped: the page already shows {action.target.describe()}, which step {ahead + 1} acts on"
            self.steps.append(self._record(turn, self.plan.steps[number - 1], number, "missed", why))
        self.position = ahead

    def _find(self, observation: Observation, target: Target, step: Step, index: int) -> Found:
        if step.completes:
            found, why = self._suggestions.find(observation, target.role or "", target.name or "")
            return Found(found, "hit" if found is not None else "missed", why)
        return self._targets.find(observation, target, step, index)

    def _miss(self, turn: Turn, step: Step, number: int, why: str) -> None:
        self.steps.append(self._record(turn, step, number, "missed", why))
        return self._stop(f"step {number}: {why}", number)

    def _record(self, turn: Turn, step: Step, number: int, status: ReplayStepStatus,
                reason: str | None) -> ReplayedStep:
        url = turn.observation.url
        url = url if url.startswith(("http://", "https://")) and len(url) <= MAX_URL_LENGTH else None
        return ReplayedStep(step=number, action=step.action, target=step.target, status=status,
                            reason=_short(reason) if reason else None, url=url)

    def _stop(self, reason: str, step: int) -> None:
        self.hand_over(reason, step=step)
        return None


def _tab_controls(observation: Observation) -> list[tuple[Element, bool]]:
    """What opens each of the page's tabs, and whether the tab is open: the tab itself when it has a name,
    else the link inside it (as jQuery UI draws its tabs)."""
    elements, controls = observation.elements, []
    for index, element in enumerate(elements):
        if element.role != SEARCHED_ROLE:
            continue
        inner = elements[index + 1] if index + 1 < len(elements) else None
        if element.name:
            controls.append((element, element.open))
        elif inner is not None and inner.role == "link" and inner.name and inner.depth > element.depth:
            controls.append((inner, element.open))
    return controls


def _looks_around(step: Step) -> bool:
    identity = parse_identity(step.target)
    return step.action in _PASSIVE or (
        step.action in ("click", "hover") and identity is not None and identity[0] in _LOOKING_ROLES)


def _nth(count: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(count, f"{count}th")


def _short(text: str) -> str:
    return clean_for_prompt(text, 500)
