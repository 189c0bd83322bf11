"""Running a browser-use agent with webmem: one call, or its parts.

:func:`run_with_memory` starts a webmem run for the task, replays a remembered run when one fits
(no LLM call; its history reads as an agent's: done, with what the page says at the end), and
otherwise, or from where the replay stopped, runs a browser-use ``Agent`` whose chat model carries the
memory's context in every decision call, whose system message carries the tier-1 lessons, whose tools
offer the skills of the site it is on (``skill_actions``), and whose every step is recorded as it goes;
it finishes the run with the agent's result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...core.errors import InvalidInput
from ...core.models import ReplayReport
from ...core.text import clean_for_prompt
from ...core.urls import check_url, origin_of
from ...memory import Memory
from ...run import Run
from .chat import DEFAULT_BUDGET_TOKENS, MemoryChatModel
from .replay import ReplayResult, finished_history, replay_on_session
from .skill_actions import DEFAULT_MAX_SKILLS, SkillActions, checked_max_skills
from .steps import outcome_of, step_drafts

INSTALL_HINT = "the browser-use integration needs browser-use: pip install 'webmem[browser-use]'"


class StepRecorder:
    """Records a browser-use agent's history into a webmem run as it grows (``on_step_end`` hook)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.recorded = 0
        self.current_url: str | None = None

    async def on_step_end(self, agent: Any) -> None:
        self.record(agent.history)

    def record(self, history: Any) -> None:
        """Record the history items not recorded yet; a failed action recalls its tips for the next call."""
        items = list(getattr(history, "history", None) or [])
        for item in items[self.recorded:]:
            for draft in step_drafts(item):
                self.run.record_step(action=draft.action, target=draft.target, selector=draft.selector,
                                     value=draft.value, url=draft.url, ok=draft.ok, error=draft.error,
                                     duration_ms=draft.duration_ms)
                if not draft.ok:
                    self.run.on_error(f"{draft.action} {draft.target or draft.selector or ''}".strip(),
                                      draft.error or "failed")
            url = getattr(getattr(item, "state", None), "url", None)
            if isinstance(url, str) and url.startswith(("http://", "https://")):
                self.current_url = url
        self.recorded = len(items)


@dataclass(frozen=True)
class MemoryRunResult:
    """How a task went: the webmem run, what the replay did, the agent's history, and the LLM calls made:
    ``llm_calls`` the agent's decisions (each given the memory), ``other_llm_calls`` browser-use's other
    calls of the model (its judge, page extraction, message compaction). ``replay`` is the report the run
    finished with: the last skill action's the agent called, else the replay the run started with."""

    run_id: str
    success: bool
    final_result: str | None
    llm_calls: int
    replay: ReplayReport | None = None
    history: Any = None
    other_llm_calls: int = 0


def register_sensitive_data(memory: Memory, sensitive_data: Mapping[str, Any] | None) -> None:
    """Make every value of browser-use's ``sensitive_data`` a webmem secret named after its placeholder
    (domain-scoped values included), so that none is stored, logged or exported."""
    if sensitive_data is None:
        return
    if not isinstance(sensitive_data, Mapping):
        raise InvalidInput("sensitive_data: expected browser-use's mapping of placeholder -> value")
    for name, value in sensitive_data.items():
        if isinstance(value, Mapping):
            register_sensitive_data(memory, value)
        elif isinstance(value, str) and value:
            memory.secrets.add(value, name=_secret_name(str(name)))


async def run_with_memory(
    memory: Memory,
    task: str,
    *,
    llm: Any,
    start_url: str,
    browser_session: Any = None,
    sensitive_data: Mapping[str, Any] | None = None,
    max_steps: int = 50,
    replay: bool = True,
    budget_tokens: int = DEFAULT_BUDGET_TOKENS,
    max_skills: int = DEFAULT_MAX_SKILLS,
    **agent_options: Any,
) -> MemoryRunResult:
    """Do ``task`` from ``start_url`` with a browser-use agent and this memory.

    A remembered run that fits the task is replayed first on the browser session with no LLM call; at
    the first step the page no longer fits, the rest goes to a browser-use ``Agent`` on the same session,
    told which steps are done. The agent's tools offer up to ``max_skills`` skills of the site it is on as
    actions (``skill_<name>``; 0 offers none). ``agent_options`` go to ``Agent`` (``use_vision``, ``tools``, ...).
    """
    try:
        from browser_use import Agent, BrowserSession, Tools
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    page = check_url(start_url, field="start_url")
    checked_max_skills(max_skills)
    register_sensitive_data(memory, sensitive_data)
    session = browser_session if browser_session is not None else BrowserSession()
    run = memory.start_run(goal=task, start_url=page)
    recorder = StepRecorder(run)
    chat = MemoryChatModel(llm, run, current_url=lambda: recorder.current_url or page, budget_tokens=budget_tokens)
    replayed: ReplayResult | None = None
    skills: SkillActions | None = None
    try:
        if replay:
            plan = memory.trajectories.search_replay(task, origin_of(page), run_id=run.id).plan
            if plan is not None:
                await session.start()
                replayed = await replay_on_session(plan, run, session, agent_options.get("tools") or Tools(),
                                                   memory.secrets)
                if replayed.complete:
                    history = await finished_history(session, replayed)
                    final = history.final_result()
                    run.finish(success=True, outcome=final, replay=replayed.report)
                    return MemoryRunResult(run.id, True, final, chat.calls, replayed.report, history, chat.other_calls)
                run.on_handover(replayed.report)
        options = dict(agent_options)
        lessons = run.system_prompt()
        if lessons:
            options["extend_system_message"] = "\n\n".join(
                part for part in (options.get("extend_system_message"), lessons) if part)
        if replayed is None:
            options.setdefault("initial_actions", [{"navigate": {"url": page}}])
        else:
            options["directly_open_url"] = False  # the page is where the replay left it: no reload
        agent = Agent(task=task if replayed is None else f"{task}\n\n{replayed.handover_note()}", llm=chat,
                      browser_session=session, sensitive_data=dict(sensitive_data) if sensitive_data else None,
                      **options)
        skills = SkillActions(memory, run, agent.tools, max_skills=max_skills,
                              before_call=lambda: recorder.record(agent.history))
        skills.offer(page)
        recorder.recorded = 0
        history = await agent.run(max_steps=max_steps, on_step_start=skills.on_step_start,
                                  on_step_end=recorder.on_step_end)
        recorder.record(history)
    except BaseException as exc:
        run.finish(success=False, outcome=clean_for_prompt(f"{type(exc).__name__}: {exc}", 1000),
                   replay=_last_report(skills, replayed))
        raise
    finally:
        if skills is not None:
            skills.remove()
    success, final = _ending(history)
    report = _last_report(skills, replayed)
    run.finish(success=success, outcome=final or _failure(history), replay=report)
    return MemoryRunResult(run.id, success, final, chat.calls, report, history, chat.other_calls)


def _last_report(skills: SkillActions | None, replayed: ReplayResult | None) -> ReplayReport | None:
    """The replay a run finishes with: its last skill call's, else the one it started with."""
    if skills is not None and skills.last_report is not None:
        return skills.last_report
    return replayed.report if replayed else None


def _ending(history: Any) -> tuple[bool, str | None]:
    items = list(getattr(history, "history", None) or [])
    ending = outcome_of(items[-1]) if items else None
    if ending is None or not ending.done:
        return False, None
    return ending.success is not False, ending.text


def _failure(history: Any) -> str:
    errors = [error for error in (history.errors() if hasattr(history, "errors") else []) if error]
    return clean_for_prompt(f"The agent did not finish the task: {errors[-1]}" if errors
                            else "The agent did not finish the task", 1000)


def _secret_name(name: str) -> str:
    cleaned = "".join(char if char.isalnum() or char == "_" else "_" for char in name)[:40]
    return cleaned if cleaned and not cleaned[0].isdigit() else f"secret_{cleaned}"[:40]


__all__ = ["MemoryRunResult", "StepRecorder", "register_sensitive_data", "run_with_memory"]
