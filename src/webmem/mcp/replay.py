"""Replaying a remembered run through Playwright MCP's tools, with no LLM turn.

Each step of the plan becomes the tool call that performs it (:mod:`webmem.service.tool_calls`); its
element is found by role and accessible name. The replay stops at the first step that does not fit:
a value the goal does not give, a secret nobody registered, an element the page no longer has, an
error; what was done up to there stays done, and the report says where and why it stopped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..core.models import ReplayedStep, ReplayReport, ReplayStepStatus
from ..core.redaction import PLACEHOLDER, SecretRegistry
from ..core.text import clean_for_prompt
from ..service.replay_reports import completed, step_hit, stopped
from ..service.tool_calls import planned_call
from ..trajectories.plans import ReplayPlan
from .recording import Answer

#: Sends one tool call to the browser server and records it as the run's step: the answer. Its third argument
#: is the fingerprint of the page the plan's step was recorded on (``Step.snapshot_hash``), for the step
#: recorded when the browser's answer does not show the page.
CallAndRecord = Callable[[str, dict[str, Any], str | None], Awaitable[Answer]]
_MISSING = ("does not match any elements", "not found in the current page snapshot", "no element", "not found")
_AMBIGUOUS = ("strict mode violation", "resolved to")


class ReplayResult(BaseModel):
    """What a replay did: every step done (``replayed``), or where it stopped and why (``handed_over``)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    outcome: str
    steps_done: int
    steps_total: int
    stopped_at: int | None = None
    reason: str | None = None
    page_url: str | None = None
    report: ReplayReport
    summary: str


async def replay_plan(run_id: str, plan: ReplayPlan, call: CallAndRecord, secrets: SecretRegistry) -> ReplayResult:
    """Perform ``plan``'s steps one by one through ``call``; stop at the first that does not fit."""
    steps: list[ReplayedStep] = []
    page_url: str | None = None
    total = len(plan.steps)
    for index, step in enumerate(plan.steps):
        number = index + 1
        planned = planned_call(number, step, plan.unresolved.get(index))
        why: str | None = None
        if plan.stop_step is not None and number >= plan.stop_step:
            why = f"an earlier replay of this task failed at step {plan.stop_step}"
        elif index in plan.unresolved:
            why = plan.unresolved[index]
        elif planned.tool is None:
            if step.action in ("scroll",):
                steps.append(step_hit(plan, number, "not needed: Playwright scrolls to an element when acting"))
                continue
            why = planned.note or f"no tool performs {step.action!r}"
        arguments = planned.arguments
        if why is None and step.value and PLACEHOLDER.fullmatch(step.value):
            secret = secrets.value_for(step.value)
            if secret is None:
                why = f"step {number} types the secret {step.value}, which is not registered with this server"
            else:
                arguments = {**arguments, "text": secret} if "text" in arguments else arguments
        if why is not None:
            return _stopped(run_id, plan, steps, number, why, page_url, status="missed")
        answer = await call(planned.tool or "", arguments, step.snapshot_hash)
        page_url = answer.page_url or page_url
        if answer.is_error:
            error = answer.error or "failed"
            lowered = error.lower()
            missing = any(marker in lowered for marker in _MISSING)
            history = plan.history.get(index)
            status: ReplayStepStatus = "stale" if missing and history is not None and history.established else "missed"
            if missing:
                why = f"{step.target or step.selector} is not on the page any more ({_first_line(error)})"
            elif any(marker in lowered for marker in _AMBIGUOUS):
                why = f"{step.target or step.selector} now matches several elements ({_first_line(error)})"
            else:
                why = f"{step.action} failed: {_first_line(error)}"
            return _stopped(run_id, plan, steps, number, why, page_url, status=status)
        steps.append(step_hit(plan, number))
    report = completed(plan, steps)
    summary = (f"Replayed all {total} steps of {plan.trajectory_id} with no LLM turn. Check that the page shows "
               "the goal done, then call webmem_finish_run.")
    return ReplayResult(run_id=run_id, outcome="replayed", steps_done=total, steps_total=total, page_url=page_url,
                        report=report, summary=summary)


def _stopped(run_id: str, plan: ReplayPlan, steps: list[ReplayedStep], number: int, why: str,
             page_url: str | None, *, status: ReplayStepStatus) -> ReplayResult:
    step = plan.steps[number - 1]
    report = stopped(plan, steps, number, why, status)
    reason = report.reason or why
    done = number - 1
    summary = (f"Replay stopped at step {number} of {len(plan.steps)} ({step.action} "
               f"{step.target or step.selector or step.value or ''}): {reason}. Steps 1-{done} were done; "
               "take over from here." if done else
               f"Replay stopped at step 1 of {len(plan.steps)}: {reason}. Nothing was done; take over.")
    return ReplayResult(run_id=run_id, outcome="handed_over", steps_done=done, steps_total=len(plan.steps),
                        stopped_at=number, reason=reason, page_url=page_url, report=report, summary=summary)


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), text)
    return clean_for_prompt(line.removeprefix("Error: "), 300)
