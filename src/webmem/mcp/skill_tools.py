"""A site's skills as the recording proxy's tools: which of them it offers, each one's MCP tool, and what a call answers.

When the browser is on a site, the proxy offers its most trusted skills (``mem.skills.list`` orders them) as tools
named ``skill_<name>``, whose input schema has one property per parameter the agent gives (a secret is typed by
webmem, never asked). The site's other skills are found by ``webmem_find_skill`` and called by
``webmem_call_skill``. A call is a replay in the agent's browser: it answers ``done`` with what the page shows at
the end, or ``handed_over`` at the step that did not fit, so that the agent carries on from there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from mcp.server import MCPServer, NotificationOptions
from mcp.types import Tool, ToolAnnotations
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict

from ..core.skill_records import Skill
from ..core.terms import STOP_WORDS, stem, words
from ..skills.tools import input_schema, standing_line, tool_name
from ..skills.tools import offered as offered_of
from .recording import Answer
from .replay import ReplayResult

#: The skills of a site offered as tools of their own; the others are found with webmem_find_skill.
MAX_SKILL_TOOLS = 8
#: How much of the page's snapshot a skill call's answer shows.
MAX_SNAPSHOT_CHARS = 3000
SKILL_CALL = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                             open_world_hint=True)
_PAGE_TITLE = re.compile(r"^- Page Title: (?P<title>.+)$", re.M)
_YAML = re.compile(r"```yaml\n(?P<body>.*?)```", re.S)


class SkillRun(BaseModel):
    """What a call of a skill did in the browser: ``done`` (every step of its replay) or ``handed_over`` at step
    ``stopped_at`` for ``reason``; the run that recorded it, and the page at the end."""

    model_config = ConfigDict(frozen=True)

    outcome: Literal["done", "handed_over"]
    skill: str
    goal: str
    run_id: str
    steps_done: int
    steps_total: int
    stopped_at: int | None = None
    reason: str | None = None
    page_url: str | None = None
    page_title: str | None = None
    snapshot: str | None = None
    summary: str


def offered(skills: Sequence[Skill]) -> list[Skill]:
    """The skills offered as tools of their own: the ``MAX_SKILL_TOOLS`` most trusted not withdrawn."""
    return offered_of(skills, MAX_SKILL_TOOLS)


def skill_tool(skill: Skill) -> Tool:
    """The MCP tool that calls ``skill``: its description and record, and one required property per parameter."""
    description = f"{skill.description}\n{standing_line(skill)}"
    return Tool(name=tool_name(skill), title=skill.template, description=description, input_schema=input_schema(skill),
                output_schema=SkillRun.model_json_schema(), annotations=SKILL_CALL)


def find(skills: Sequence[Skill], query: str) -> list[Skill]:
    """The skills whose name, description or template share a word of ``query`` (by stem), the most shared first;
    every skill when the query has no word of meaning."""
    wanted = {stem(word) for word in words(query) if word not in STOP_WORDS}
    if not wanted:
        return list(skills)
    scored = []
    for index, skill in enumerate(skills):
        text = " ".join((skill.name.replace("_", " "), skill.template, skill.description))
        shared = len(wanted & {stem(word) for word in words(text)})
        if shared:
            scored.append((-shared, index, skill))
    return [skill for _, _, skill in sorted(scored, key=lambda item: item[:2])]


def page_title(text: str) -> str | None:
    """The page title a Playwright MCP answer gives."""
    found = _PAGE_TITLE.search(text)
    return found.group("title").strip() if found else None


def snapshot_excerpt(text: str) -> str | None:
    """The aria snapshot of a Playwright MCP answer, cut to ``MAX_SNAPSHOT_CHARS``."""
    found = _YAML.search(text)
    if found is None:
        return None
    body = found.group("body").rstrip()
    if len(body) <= MAX_SNAPSHOT_CHARS:
        return body
    return body[:MAX_SNAPSHOT_CHARS].rsplit("\n", 1)[0] + "\n... (cut: browser_snapshot shows the whole page)"


def answer_text(run: SkillRun) -> str:
    """The answer's text for the agent: the summary, then the page as Playwright MCP shows it."""
    lines = [run.summary, "### Page", f"- Page URL: {run.page_url or 'unknown'}"]
    if run.page_title:
        lines.append(f"- Page Title: {run.page_title}")
    if run.snapshot:
        lines += ["### Snapshot", "```yaml", run.snapshot, "```"]
    return "\n".join(lines)


def skill_run(skill: Skill, goal: str, result: ReplayResult, page: Answer | None) -> SkillRun:
    """What a call of ``skill`` answers, from its replay's result and the page at the end."""
    url = (page.page_url if page else None) or result.page_url
    if result.outcome == "replayed":
        summary = (f"Done: {goal} (skill {skill.name}: all {result.steps_total} steps replayed with no LLM turn, "
                   f"recorded as run {result.run_id}, a success). The page at the end is below.")
        outcome = "done"
    else:
        done = f"Steps 1-{result.steps_done} were done" if result.steps_done else "Nothing was done"
        summary = (f"Handed over: skill {skill.name} stopped at step {result.stopped_at} of {result.steps_total}: "
                   f"{result.reason}. {done}; carry on from the page below in this browser. Your browser calls "
                   f"are recorded in run {result.run_id}: call webmem_finish_run(run_id, success) when the task "
                   "is done.")
        outcome = "handed_over"
    return SkillRun(outcome=outcome, skill=skill.name, goal=goal, run_id=result.run_id, steps_done=result.steps_done,
                    steps_total=result.steps_total, stopped_at=result.stopped_at, reason=result.reason, page_url=url,
                    page_title=page_title(page.text) if page else None,
                    snapshot=snapshot_excerpt(page.text) if page else None, summary=summary)


def declare_tools_change(server: MCPServer) -> None:
    """Make the server declare ``tools.listChanged`` to clients of the handshake era (those of 2026-07-28 are
    told through ``subscriptions/listen``, which the SDK serves): the SDK's transports ask for the
    initialization options without saying which notifications the server sends."""
    lowlevel = server._lowlevel_server
    create = lowlevel.create_initialization_options

    def with_tools_changed(notification_options: NotificationOptions | None = None, *args: Any,
                           **kwargs: Any) -> Any:
        return create(notification_options or NotificationOptions(tools_changed=True), *args, **kwargs)

    lowlevel.create_initialization_options = with_tools_changed  # type: ignore[method-assign]


async def announce_tools_changed(context: Any) -> None:
    """Send ``notifications/tools/list_changed``: on the subscription streams of 2026-07-28 clients, and on the
    session of a handshake-era client."""
    if context is None:
        return
    await context.notify_tools_changed()
    try:
        request = context.request_context
    except ValueError:  # called from inside the process, outside any request
        return
    if request.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
        await request.session.send_tool_list_changed()
