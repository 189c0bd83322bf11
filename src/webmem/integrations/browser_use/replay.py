"""Replaying a remembered run on browser-use's own browser session, with no LLM call.

Each step's element is looked up in browser-use's current page state by its role and accessible name
(and by its place among elements of that name when the recorded page had several) before anything is
done; then browser-use's own action performs it (``navigate``, ``click``, ``input``, ``select_dropdown``,
``send_keys``). The first step that does not fit (an element gone or ambiguous, an action that
failed, a value the goal does not give, a secret nobody registered) ends the replay there: the steps
before stay done, and :class:`ReplayResult` says where and why, for the agent that takes over. A replay
that does every step ends as a browser-use agent would: :func:`finished_history` gives browser-use's
history of the steps with a last ``done`` result that says what the page shows at the end.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ...core.models import ReplayedStep, ReplayReport, ReplayStepStatus, Step
from ...core.redaction import PLACEHOLDER, SecretRegistry
from ...core.text import clean_for_prompt
from ...run import Run
from ...service.replay_reports import completed, step_hit, stopped
from ...trajectories.evidence import parse_identity
from ...trajectories.plans import ReplayPlan
from .steps import element_role, element_selector

MAX_WAIT_SECONDS = 5
MAX_ANSWER_CHARS = 1000
#: The text of the page's visible live regions: where a page says what became of what was just done.
PAGE_SAYS = """() => Array.from(document.querySelectorAll(
    '[role=status], [role=alert], [aria-live=polite], [aria-live=assertive], output'))
  .filter(element => element.getClientRects().length > 0)
  .map(element => (element.innerText || element.textContent || '').trim()).filter(Boolean).join('\\n')"""
_ON_ELEMENT = {"click": "click", "check": "click", "fill": "input", "type": "input", "select": "select_dropdown"}


@dataclass
class ReplayResult:
    """What the replay did: ``done`` steps out of the plan's, and the report kept with the run."""

    report: ReplayReport
    done: list[Step] = field(default_factory=list)
    total: int = 0
    history: list[Any] = field(default_factory=list)  # browser-use's AgentHistory of each step done

    @property
    def complete(self) -> bool:
        return self.report.outcome == "replayed"

    def handover_note(self) -> str:
        """What the agent that takes over is told: the steps already done, and where the replay stopped."""
        lines = [f"{number}. {describe(step)}" for number, step in enumerate(self.done, start=1)]
        done = "\n".join(lines) if lines else "(none)"
        return (f"Memory replayed an earlier successful run of this task. Steps already done on this page:\n{done}\n"
                f"It stopped at step {self.report.step}: {self.report.reason}. Continue the task from here; do not "
                "repeat the steps already done.")


def describe(step: Step) -> str:
    value = f' "{step.value}"' if step.value is not None and step.action not in ("goto",) else ""
    where = step.target or step.selector or step.value or step.url or ""
    return clean_for_prompt(f"{step.action} {where}{value if step.action != 'goto' else ''}", 300)


async def replay_on_session(plan: ReplayPlan, run: Run, session: Any, tools: Any,
                            secrets: SecretRegistry) -> ReplayResult:
    """Perform ``plan`` on browser-use's ``session`` with its ``tools``, recording each step in ``run``;
    ``secrets`` gives the values of the plan's placeholders."""
    from browser_use.agent.views import AgentHistory

    replayed: list[ReplayedStep] = []
    done: list[Step] = []
    history: list[Any] = []
    total = len(plan.steps)
    for index, step in enumerate(plan.steps):
        number = index + 1
        why = _unfit(plan, index, step)
        typed = step.value
        if why is None and step.value and PLACEHOLDER.fullmatch(step.value):
            typed = secrets.value_for(step.value)
            if typed is None:
                why = f"the secret {step.value} is not registered (give it in sensitive_data)"
        if why is not None:
            return _stopped(plan, replayed, done, number, why)
        if step.action in ("wait", "scroll"):
            if step.action == "wait":
                await asyncio.sleep(min(MAX_WAIT_SECONDS, (step.duration_ms or 500) / 1000))
            replayed.append(step_hit(plan, number))
            continue
        found = await _element(session, step) if step.action in _ON_ELEMENT else None
        if step.action in _ON_ELEMENT and not isinstance(found, tuple):
            history = plan.history.get(index)
            status: ReplayStepStatus = "stale" if found is None and history is not None and history.established \
                else "missed"
            why = (f"{step.target} is not on the page any more" if found is None
                   else f"{step.target} matches {found} elements on the page now")
            return _stopped(plan, replayed, done, number, why, status=status)
        name, params = _browser_use_action(step, typed, found[0] if isinstance(found, tuple) else None)
        if name is None:
            return _stopped(plan, replayed, done, number, f"browser-use has no action for {step.action!r}")
        before = await session.get_browser_state_summary(include_screenshot=False, cached=True)
        url = getattr(before, "url", None)
        result = await tools.registry.execute_action(name, params, browser_session=session)
        error = getattr(result, "error", None)
        selector = found[1] if isinstance(found, tuple) else step.selector
        run.record_step(action=step.action, target=step.target, selector=selector, value=step.value,
                        url=url if isinstance(url, str) and url.startswith(("http://", "https://")) else None,
                        ok=error is None, error=str(error) if error else None,
                        target_index=step.target_index, target_count=step.target_count)
        if error:
            run.on_error(f"{step.action} {step.target or ''}".strip(), str(error))
            return _stopped(plan, replayed, done, number, f"{step.action} failed: {clean_for_prompt(str(error), 300)}")
        replayed.append(step_hit(plan, number))
        done.append(step)
        history.append(AgentHistory(model_output=None, result=[result], state=_state_history(before)))
    return ReplayResult(completed(plan, replayed), done, total, history)


async def finished_history(session: Any, replayed: ReplayResult) -> Any:
    """browser-use's ``AgentHistoryList`` of a replay that did every step: the steps, then a ``done`` result
    whose text is what the page's live regions say now (a status line, an alert), else which page it is on."""
    from browser_use.agent.views import ActionResult, AgentHistory, AgentHistoryList

    state = await session.get_browser_state_summary(include_screenshot=False)
    answer = await page_answer(session, replayed, state)
    done = ActionResult(is_done=True, success=True, extracted_content=answer, long_term_memory=answer)
    return AgentHistoryList(history=[*replayed.history, AgentHistory(model_output=None, result=[done],
                                                                     state=_state_history(state))])


async def page_answer(session: Any, replayed: ReplayResult, state: Any = None) -> str:
    """What the page shows after a replay: its live regions' text, else which page it is on."""
    says = clean_for_prompt(await _page_says(session), MAX_ANSWER_CHARS)
    if says:
        return says
    if state is None:
        state = await session.get_browser_state_summary(include_screenshot=False)
    return clean_for_prompt(
        f'Replayed a remembered run of this task ({len(replayed.done)} steps, no LLM call); the page is now '
        f'"{getattr(state, "title", "")}" ({getattr(state, "url", "")})', MAX_ANSWER_CHARS)


async def _page_says(session: Any) -> str:
    page = await session.get_current_page()
    try:
        return str(await page.evaluate(PAGE_SAYS) or "") if page is not None else ""
    except Exception:  # a page that runs no script (a PDF, a crashed tab) says nothing: the answer names the page
        return ""


def _state_history(state: Any) -> Any:
    from browser_use.browser.views import BrowserStateHistory

    return BrowserStateHistory(url=str(getattr(state, "url", "") or ""), title=str(getattr(state, "title", "") or ""),
                               tabs=list(getattr(state, "tabs", None) or []), interacted_element=[None])


def _unfit(plan: ReplayPlan, index: int, step: Step) -> str | None:
    if plan.stop_step is not None and index + 1 >= plan.stop_step:
        return f"an earlier replay of this task failed at step {plan.stop_step}"
    if index in plan.unresolved:
        return plan.unresolved[index]
    return None


async def _element(session: Any, step: Step) -> tuple[int, str | None] | int | None:
    """The index browser-use gives the step's element now, with a selector for it; else how many elements
    have its role and name (0 as None)."""
    identity = parse_identity(step.target)
    if identity is None:
        return None
    role, name = identity
    state = await session.get_browser_state_summary(include_screenshot=False)
    matching = []
    for index, node in sorted(state.dom_state.selector_map.items()):
        ax = getattr(node, "ax_node", None)
        node_role = (getattr(ax, "role", None) or element_role(node.node_name.lower(), node.attributes or {}) or "")
        node_name = " ".join(str(getattr(ax, "name", "") or "").split())
        if node_role.lower() == role and node_name == name:
            matching.append((index, node))
    if step.target_index is not None and step.target_count == len(matching):
        matching = [matching[step.target_index - 1]]
    if len(matching) != 1:
        return len(matching) or None
    index, node = matching[0]
    return index, element_selector(node.node_name.lower(), node.attributes or {}, getattr(node, "xpath", None))


def _browser_use_action(step: Step, typed: str | None, index: int | None) -> tuple[str | None, dict[str, Any]]:
    if step.action == "goto":
        return "navigate", {"url": step.value or step.url}
    if step.action == "back":
        return "go_back", {}
    if step.action == "press":
        return "send_keys", {"keys": typed or "Enter"}
    action = _ON_ELEMENT.get(step.action)
    if action is None or index is None:
        return None, {}
    if action == "input":
        return action, {"index": index, "text": typed or ""}
    if action == "select_dropdown":
        return action, {"index": index, "text": typed or ""}
    return action, {"index": index}


def _stopped(plan: ReplayPlan, replayed: list[ReplayedStep], done: list[Step], number: int, why: str, *,
             status: ReplayStepStatus = "missed") -> ReplayResult:
    return ReplayResult(stopped(plan, replayed, number, why, status), done, len(plan.steps))
