"""The report of a replay performed outside webmem's own agent (through Playwright MCP, on browser-use's
browser): what became of each step, kept with the run when it finishes (replay gates, site changes)."""

from __future__ import annotations

from ..core.models import ReplayedStep, ReplayReport, ReplayStepStatus
from ..core.text import clean_for_prompt
from ..trajectories.plans import ReplayPlan

MAX_REASON_CHARS = 1000


def step_hit(plan: ReplayPlan, number: int, reason: str | None = None) -> ReplayedStep:
    """Step ``number`` (from 1) of the plan, done as remembered."""
    step = plan.steps[number - 1]
    return ReplayedStep(step=number, action=step.action, target=step.target, status="hit", reason=reason, url=step.url)


def stopped(plan: ReplayPlan, done: list[ReplayedStep], number: int, why: str,
            status: ReplayStepStatus = "missed") -> ReplayReport:
    """The replay handed over at step ``number`` for ``why``, after the steps ``done``."""
    step = plan.steps[number - 1]
    reason = clean_for_prompt(why, MAX_REASON_CHARS)
    last = ReplayedStep(step=number, action=step.action, target=step.target, status=status, reason=reason, url=step.url)
    return ReplayReport(outcome="handed_over", trajectory_id=plan.trajectory_id, step=number, reason=reason,
                        steps=[*done, last])


def completed(plan: ReplayPlan, done: list[ReplayedStep]) -> ReplayReport:
    """Every step of the plan was done."""
    return ReplayReport(outcome="replayed", trajectory_id=plan.trajectory_id, step=len(plan.steps), steps=done)
