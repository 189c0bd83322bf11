"""A site's skills as actions of a browser-use agent's ``Tools``.

Each skill of the site the agent is on (``webmem.skills``: one remembered task template of an origin) that is not
withdrawn becomes one action, ``skill_<name>``, the most trusted first and at most a few per site: described by what
it does, an example, its parameters and its status, with one string field per parameter the agent gives (a choice's
options as the field's enum; a secret is no field: webmem types it). browser-use offers the action only on pages of
its site (its ``domains`` filter, which matches the scheme and host).

Calling the action replays the skill's newest recording with the values on the agent's browser, as the replay at the
start of a run does (each element found by its role and name before anything is done; the first step that does not
fit hands over). Done, the result says so, with the values and what the page shows; handed over, it says at which
step and why, for the agent to carry on from there; values that do not fit a parameter are an error result naming
it. The replayed steps are recorded in the webmem run, and the last call's replay report is the one the run
finishes with (a call that did a new instance of the skill is what verifies it).
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from ...core.errors import InvalidInput, NotFound
from ...core.models import ReplayReport
from ...core.skill_records import Skill, SkillParameter
from ...core.text import clean_for_prompt
from ...core.urls import origin_of
from ...memory import Memory
from ...run import Run
from ...skills.tools import offered, tool_name
from .replay import ReplayResult, describe, page_answer, replay_on_session

DEFAULT_MAX_SKILLS = 8
MAX_RESULT_CHARS = 2000
#: browser-use shows the model a longer error's first and last 100 characters only.
MAX_ERROR_CHARS = 200
_KIND_HINTS = {"number": "a number", "date": "a date", "time": "a time of day"}


class SkillActions:
    """The skill actions of one webmem run on a browser-use agent's ``tools``: :meth:`offer` a site's skills,
    :meth:`remove` them when the run ends. ``last_report`` is the replay report of the last call, if any;
    ``before_call`` records the agent's earlier steps, so that the run's steps stay in the order they were done."""

    def __init__(self, memory: Memory, run: Run, tools: Any, *, max_skills: int = DEFAULT_MAX_SKILLS,
                 before_call: Callable[[], None] = lambda: None) -> None:
        self.memory = memory
        self.run = run
        self.tools = tools
        self.max_skills = checked_max_skills(max_skills)
        self.before_call = before_call
        self.actions: dict[str, Skill] = {}
        self.last_report: ReplayReport | None = None
        self._origins: set[str] = set()

    def offer(self, url: str) -> list[str]:
        """Register the skills of ``url``'s origin as actions (once per origin); the names of the actions added."""
        if self.max_skills == 0 or not self.memory.enabled or not url.startswith(("http://", "https://")):
            return []
        origin = origin_of(url)
        if origin in self._origins:
            return []
        self._origins.add(origin)
        return [self._register(skill) for skill in offered(self.memory.skills.list(origin), self.max_skills)]

    async def on_step_start(self, agent: Any) -> None:
        """browser-use's hook before each step: the skills of the site the agent is on join its actions."""
        self.offer(await agent.browser_session.get_current_page_url())

    def remove(self) -> None:
        """Take this run's actions out of the tools again (tools given by the caller outlive the run)."""
        registered = self.tools.registry.registry.actions
        for name in self.actions:
            registered.pop(name, None)
        self.actions.clear()

    def _register(self, skill: Skill) -> str:
        registered = self.tools.registry.registry.actions
        base = name = tool_name(skill)
        number = 2
        while name in registered or name in self.actions:  # a skill of the same name on another site, or a tool's
            name, number = f"{base}_{number}", number + 1

        # browser_session has no annotation: browser-use compares an injected argument's annotation with its own
        # class, and this module's annotations are strings
        async def call(params: BaseModel, browser_session) -> Any:
            return await self._call(name, skill, params, browser_session)

        call.__name__ = name
        self.tools.registry.action(action_description(skill), param_model=parameter_model(name, skill),
                                   domains=[skill.origin], terminates_sequence=True)(call)
        self.actions[name] = skill
        return name

    async def _call(self, name: str, skill: Skill, params: BaseModel, session: Any) -> Any:
        from browser_use.agent.views import ActionResult

        values = {key: value for key, value in params.model_dump(by_alias=True).items() if value is not None}
        try:
            goal = self.memory.skills.goal(skill, values)
            plan = self.memory.skills.plan(skill, values)
        except (InvalidInput, NotFound) as exc:
            return ActionResult(error=self._told(f"{name} was not called: {exc}", MAX_RESULT_CHARS))
        self.before_call()
        replayed = await replay_on_session(plan, self.run, session, self.tools, self.memory.secrets)
        self.last_report = replayed.report
        if replayed.complete:
            done = self._told(f"{name} done: {goal}. The page shows: {await page_answer(session, replayed)}",
                              MAX_RESULT_CHARS)
            return ActionResult(extracted_content=done, long_term_memory=done)
        self.run.on_handover(replayed.report)
        stop, carry_on = handover_text(name, goal, replayed)
        return ActionResult(error=self._told(stop, MAX_ERROR_CHARS), long_term_memory=self._told(carry_on,
                                                                                                MAX_RESULT_CHARS))

    def _told(self, text: str, limit: int) -> str:
        """``text`` as the model may read it: no registered secret in it (browser-use puts the values of its
        ``sensitive_data`` into any action's parameters), and not past ``limit`` characters."""
        return clean_for_prompt(self.memory.secrets.redact(text) or "", limit)


def checked_max_skills(max_skills: object) -> int:
    if isinstance(max_skills, bool) or not isinstance(max_skills, int) or max_skills < 0:
        raise InvalidInput(f"max_skills: expected a whole number of 0 or more, got {max_skills!r}")
    return max_skills


def action_description(skill: Skill) -> str:
    """What the agent reads of a skill: what it does, an example, its parameters, and how far to trust it."""
    return (f"A task remembered on {skill.origin}, replayed step by step with your values (no LLM call; webmem "
            f"types any secret).\n{skill.description}\nStatus: {skill.status}: {skill.status_reason}")


def parameter_model(name: str, skill: Skill) -> type[BaseModel]:
    """The action's parameters: one string field per parameter the agent gives, a choice's options as its enum."""
    fields: dict[str, Any] = {}
    for parameter in skill.parameters:
        if parameter.kind == "secret":
            continue
        extra = {"enum": list(parameter.options)} if parameter.kind == "choice" and parameter.options else None
        field_name = parameter.name if _plain_field(parameter.name) else f"value_{parameter.slot}"
        fields[field_name] = (str, Field(alias=parameter.name, description=_parameter_text(parameter),
                                         json_schema_extra=extra))
    return create_model(f"{name}_params", __config__=ConfigDict(extra="forbid", populate_by_name=True), **fields)


def handover_text(name: str, goal: str, replayed: ReplayResult) -> tuple[str, str]:
    """What the agent is told of a call that stopped: where and why (short: browser-use shows the model only the
    ends of a long error), and the steps it did, to carry on from."""
    report = replayed.report
    stop = clean_for_prompt(f"{name} stopped at its step {report.step} of {replayed.total}: {report.reason}",
                            MAX_ERROR_CHARS)
    done = "; ".join(f"{number}. {describe(step)}" for number, step in enumerate(replayed.done, start=1))
    return stop, clean_for_prompt(
        f"{name} ({goal}) did {len(replayed.done)} of its {replayed.total} steps on this page"
        f"{': ' + done if done else ''}. Carry on the task from here yourself; do not repeat those steps.",
        MAX_RESULT_CHARS)


def _parameter_text(parameter: SkillParameter) -> str:
    hint = _KIND_HINTS.get(parameter.kind)
    parts = [part for part in (hint, parameter.description) if part]
    if parameter.kind == "choice" and parameter.options:
        parts.append("one of " + ", ".join(parameter.options))
    elif parameter.example:
        parts.append(f"e.g. {parameter.example}")
    return "; ".join(parts)


def _plain_field(name: str) -> bool:
    return (name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("model_")
            and not hasattr(BaseModel, name))
