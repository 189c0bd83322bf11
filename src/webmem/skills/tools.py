"""A skill as a tool, as every surface offers it (the MCP proxy, the reference agent's LLM): its name, the parameters
a caller gives and their JSON schema, and its standing in one line."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.skill_records import Skill, SkillParameter

TOOL_PREFIX = "skill_"
#: The longest tool name MCP clients and OpenAI-compatible servers accept.
MAX_TOOL_NAME = 64
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def offered(skills: Sequence[Skill], most: int) -> list[Skill]:
    """The skills a surface offers as tools: the first ``most`` of those not withdrawn (``skills`` come most trusted
    first, as ``Skills.list`` gives them)."""
    return [skill for skill in skills if skill.status != "withdrawn"][:most]


def tool_name(skill: Skill) -> str:
    """``skill_<name>``, in the characters a tool's name may hold."""
    return (TOOL_PREFIX + _NOT_IN_NAME.sub("_", skill.name).strip("_"))[:MAX_TOOL_NAME]


def asked(skill: Skill) -> list[SkillParameter]:
    """The parameters a caller gives: all but the secrets webmem types itself."""
    return [parameter for parameter in skill.parameters if parameter.kind != "secret"]


def parameter_schema(parameter: SkillParameter) -> dict[str, Any]:
    """A parameter's JSON schema: a number or a string, one of its options for a choice, described by its kind,
    where its value goes and an example."""
    described = f"{parameter.kind}: {parameter.description}" if parameter.description else parameter.kind
    if parameter.example is not None:
        described += f" (for example {parameter.example})"
    schema: dict[str, Any] = {"type": "number" if parameter.kind == "number" else "string",
                              "description": described}
    if parameter.kind == "choice" and parameter.options:
        schema["enum"] = list(parameter.options)
    return schema


def input_schema(skill: Skill) -> dict[str, Any]:
    """The JSON schema of a call's arguments: one required property per parameter the caller gives, no other."""
    given = asked(skill)
    return {"type": "object", "properties": {parameter.name: parameter_schema(parameter) for parameter in given},
            "required": [parameter.name for parameter in given], "additionalProperties": False}


def standing_line(skill: Skill) -> str:
    """The skill's status and record in one line."""
    record = skill.record
    return (f"Status: {skill.status} ({skill.status_reason}). Record: recorded {record.recorded} times; "
            f"{record.replays} replays: {record.successes} done, {record.handovers} handed over, "
            f"{record.failures} failed.")
