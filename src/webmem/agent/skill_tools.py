"""A site's skills as an LLM's tools: one function tool ``skill_<name>`` per skill offered, its parameters as a JSON
schema, and a call of one read back as a ``skill`` action (what the loop replays)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import InvalidInput
from ..core.skill_records import Skill
from ..core.text import clean_for_prompt
from ..skills.tools import TOOL_PREFIX, asked, input_schema, tool_name
from .actions import SKILL, Action, SkillCall

MAX_DESCRIPTION_CHARS = 1_000

#: What the system prompt says when skills are offered.
SKILLS_PROMPT = (
    "Tools whose names start with skill_ are tasks this site's memory knows how to do: a call replays a recorded "
    "run of the task with your values, checking each element before acting, and hands the page back to you when "
    "it no longer fits. When a skill does the goal, or part of it, call it with the goal's values, then go on "
    "with the rest of the goal (another skill, or actions) and finish when the goal is reached."
)


def described(skill: Skill) -> str:
    """The tool's description: what the skill does, and how far it is trusted."""
    reason = f" ({skill.status_reason})" if skill.status_reason else ""
    lines = [clean_for_prompt(line, MAX_DESCRIPTION_CHARS) for line in skill.description.splitlines()]
    text = "\n".join([*filter(None, lines), f"Status: {skill.status}{reason}"])
    return text if len(text) <= MAX_DESCRIPTION_CHARS else text[:MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"


def properties(skill: Skill) -> dict[str, dict[str, Any]]:
    """Each asked parameter's JSON schema: a string, a number, or one of a choice's options."""
    return input_schema(skill)["properties"]


def skill_tools(skills: Sequence[Skill]) -> list[dict[str, Any]]:
    """The function tools of ``skills``, one each."""
    return [{"type": "function", "function": {
        "name": tool_name(skill), "description": described(skill),
        "parameters": input_schema(skill),
    }} for skill in skills]


def skill_specs(skills: Sequence[Skill]) -> dict[str, tuple[str, dict[str, Any], tuple[str, ...]]]:
    """The skills as the text protocol lists actions: name -> (description, arguments, required ones)."""
    return {tool_name(skill): (" ".join(described(skill).split()), properties(skill),
                               tuple(p.name for p in asked(skill))) for skill in skills}


def is_skill_tool(name: str) -> bool:
    return name.startswith(TOOL_PREFIX)


def skill_action(name: str, data: Mapping[str, Any], skills: Sequence[Skill]) -> Action:
    """The ``skill`` action a call of tool ``name`` with ``data`` stands for; the values are checked when the
    loop plans the call. :class:`InvalidInput` when no skill offered has that tool name."""
    skill = next((skill for skill in skills if tool_name(skill) == name), None)
    if skill is None:
        offered = ", ".join(tool_name(skill) for skill in skills) or "none on this page"
        raise InvalidInput(f"{name}: no such skill is offered (the skills: {offered})")
    values = dict(data)
    reason = values.pop("reason", None)
    return Action(kind=SKILL, skill=SkillCall(id=skill.id, name=skill.name, values=values),
                  reason=reason if isinstance(reason, str) else None)
