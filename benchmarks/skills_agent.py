"""The agent under test of ``bench_skills.py``: an MCP client of the recording proxy (``webmem mcp --browser
...``, a subprocess over stdio) whose scripted policy knows webmem only by the tools the proxy lists.

``ProxySession`` starts the proxy and counts the agent's tool calls. ``BrowserPolicy`` does a task with
Playwright MCP's tools itself (a plan of steps that pick elements from the snapshot, the demonstrator's
knowledge of the task, as a capable agent would). ``SkillPolicy`` reads the tools' descriptions: it aligns
each part of the goal with the ``Does:`` template of a ``skill_<name>`` tool, fills the template's
parameters from the goal by that alignment, calls the tool, and falls back on a ``BrowserPolicy`` when no
skill fits or a call hands over.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from webmem.agent import Action, Observation
from webmem.agent.observation import parse_snapshot

PLAYWRIGHT_MCP_FLAGS = ("--browser", "chromium", "--executable-path", "/usr/bin/chromium", "--headless",
                        "--isolated", "--no-sandbox", "--timeout-action", "3000")
#: Separators of the parts of a goal composed of two tasks' goals ("..., then ...").
PART_SEPARATORS = re.compile(r",? and then |, then |; then ", re.I)
_YAML = re.compile(r"```yaml\n(?P<body>.*?)```", re.S)
_PAGE_URL = re.compile(r"^- Page URL: (?P<url>\S+)", re.M)
_PAGE_TITLE = re.compile(r"^- Page Title: (?P<title>.+)$", re.M)
_SLOT = re.compile(r"\{(?P<name>[A-Za-z0-9_]+)\}")
_DOES = re.compile(r"^Does: (?P<template>.+)$", re.M)

#: A step of a plan: what to do next on the page seen, given the instance's values (raises to wait).
Step = Callable[[Observation, dict[str, str]], Action]


def playwright_mcp_cli() -> Path | None:
    """Playwright MCP's cli.js: $PLAYWRIGHT_MCP_CLI, else the one ``scripts/setup.sh`` installs under .cache/."""
    if os.environ.get("PLAYWRIGHT_MCP_CLI"):
        return Path(os.environ["PLAYWRIGHT_MCP_CLI"])
    found = Path(__file__).resolve().parent.parent / ".cache" / "node" / "node_modules" / "@playwright" / "mcp" / "cli.js"
    return found if found.is_file() else None


def text_of(result: Any) -> str:
    return "\n".join(item.text for item in result.content if hasattr(item, "text"))


@dataclass
class Calls:
    """The tool calls of one episode, by tool name, in order."""

    names: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.names)

    def of(self, prefix: str) -> int:
        return sum(name.startswith(prefix) for name in self.names)


class ProxySession:
    """An MCP client of ``webmem --memory-dir MEMORY mcp --browser "node cli.js ..."`` (one browser for the
    session). ``call`` counts every call in ``calls``; ``bookkeeping`` calls (webmem_start_run and
    webmem_finish_run while recording) are not counted."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.calls = Calls()
        self.page_url: str | None = None
        self.snapshot: str | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def started(cls, memory_dir: Path, workdir: Path, cli: Path) -> AsyncIterator[ProxySession]:
        browser = " ".join(["node", str(cli), *PLAYWRIGHT_MCP_FLAGS])
        workdir.mkdir(parents=True, exist_ok=True)  # Playwright MCP writes .playwright-mcp/ there
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "webmem", "--memory-dir", str(memory_dir), "mcp", "--browser", browser],
            cwd=str(workdir), env=dict(os.environ))
        with open(workdir / "proxy-stderr.log", "a") as errors:
            async with Client(stdio_client(params, errlog=errors), mode="legacy", cache=None,
                              read_timeout_seconds=120) as client:
                yield cls(client)

    def new_episode(self) -> Calls:
        self.calls = Calls()
        self.snapshot = None
        return self.calls

    async def call(self, tool: str, arguments: dict[str, Any] | None = None, *, counted: bool = True) -> Any:
        if counted:
            self.calls.names.append(tool)
        result = await self.client.call_tool(tool, arguments or {})
        text = text_of(result)
        if found := _PAGE_URL.search(text):
            self.page_url = found.group("url")
        structured = result.structured_content or {}
        if isinstance(structured, dict) and structured.get("page_url"):
            self.page_url = structured["page_url"]
        if found := _YAML.search(text):
            self.snapshot = found.group("body")
        elif tool.startswith("browser_") and tool != "browser_snapshot":
            self.snapshot = None  # the page changed: its snapshot is in a file or not given, look again
        return result

    async def tools(self) -> list[Any]:
        return list((await self.client.list_tools()).tools)

    async def observe(self) -> Observation:
        """The page as the agent sees it: the answer's snapshot, else a browser_snapshot call."""
        if self.snapshot is None:
            result = await self.call("browser_snapshot")
            if self.snapshot is None:
                raise RuntimeError(f"browser_snapshot answered no snapshot: {text_of(result)[:300]}")
        title = ""
        elements, texts = parse_snapshot(self.snapshot)
        return Observation(url=self.page_url or "", title=title, snapshot=self.snapshot, elements=elements,
                           texts=texts)


class NotYet(Exception):
    """The element a step needs is not on the page (yet)."""


class BrowserPolicy:
    """Does a task with Playwright MCP's tools: each step of its plan picks an element from the snapshot and
    becomes one tool call; an element missing is looked for again (a snapshot) up to ``MAX_LOOKS`` times."""

    MAX_LOOKS = 3

    def __init__(self, session: ProxySession, not_on_page: type[Exception]) -> None:
        self.session = session
        self.not_on_page = not_on_page

    async def navigate(self, url: str) -> None:
        await self.session.call("browser_navigate", {"url": url})

    async def follow(self, plan: Sequence[Step], values: dict[str, str]) -> str | None:
        """Do the plan's steps on the page as it is; None when every one was done, else why it stopped."""
        for number, step in enumerate(plan, 1):
            for look in range(self.MAX_LOOKS + 1):
                seen = await self.session.observe()
                try:
                    action = step(seen, values)
                    break
                except self.not_on_page as exc:
                    if look == self.MAX_LOOKS:
                        return f"step {number}: {exc}"
                    self.session.snapshot = None
            result = await self.session.call(*tool_call(action))
            if result.is_error:
                return f"step {number} ({action.kind}) failed: {text_of(result)[:300]}"
        return None


def tool_call(action: Action) -> tuple[str, dict[str, Any]]:
    """The Playwright MCP call that performs ``action`` (its target found by snapshot ref)."""
    target = action.target
    element = f'{target.role} "{target.name}"' if target and target.name else (target.role if target else "")
    ref = target.ref if target else None
    if action.kind == "click":
        return "browser_click", {"element": element, "target": ref}
    if action.kind in ("fill", "type"):
        return "browser_type", {"element": element, "target": ref, "text": action.value or ""}
    if action.kind == "select":
        return "browser_select_option", {"element": element, "target": ref, "values": [action.value]}
    if action.kind == "goto":
        return "browser_navigate", {"url": action.value}
    raise ValueError(f"no Playwright MCP tool for {action.kind!r}")


# -- the skill policy -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillTool:
    """What the policy reads of a ``skill_<name>`` tool: its name, the ``Does:`` template of its description,
    and each parameter's options (an enum)."""

    name: str
    template: str
    options: dict[str, tuple[str, ...]]

    @classmethod
    def read(cls, tool: Any) -> SkillTool | None:
        found = _DOES.search(tool.description or "")
        if not tool.name.startswith("skill_") or found is None:
            return None
        properties = (tool.input_schema or {}).get("properties", {})
        return cls(tool.name, found.group("template").strip(),
                   {name: tuple(schema.get("enum", ())) for name, schema in properties.items()})

    def pattern(self, greedy: bool) -> re.Pattern[str]:
        """The template as a pattern: its words as they are, each ``{parameter}`` a group (``greedy``: as long
        as the rest allows, so "the ticket Export to CSV to minor" gives the ticket "Export to CSV")."""
        parts, last = [], 0
        for slot in _SLOT.finditer(self.template):
            parts.append(re.escape(self.template[last:slot.start()]))
            parts.append(f"(?P<{slot.group('name')}>.+{'' if greedy else '?'})")
            last = slot.end()
        parts.append(re.escape(self.template[last:].rstrip(".")))
        return re.compile("".join(parts), re.I)

    def fill(self, part: str) -> dict[str, str] | None:
        """The parameters ``part`` of a goal gives this skill (the goal aligned with its template), or None
        when it does not fit the template (or names no option of a choice): the longest first values, else
        the shortest."""
        for greedy in (True, False):
            if (values := self._aligned(self.pattern(greedy).fullmatch(part.strip().rstrip(".")))) is not None:
                return values
        return None

    def _aligned(self, found: re.Match[str] | None) -> dict[str, str] | None:
        if found is None:
            return None
        values = {}
        for name, value in found.groupdict().items():
            options = self.options.get(name) or ()
            if options:
                chosen = [option for option in options if option.casefold() == value.casefold()]
                if len(chosen) != 1:
                    return None
                value = chosen[0]
            values[name] = value
        return values

    @property
    def fixed_chars(self) -> int:
        return len(_SLOT.sub("", self.template))


def goal_parts(goal: str) -> list[str]:
    """The parts of a goal: itself, or the goals a composed goal joins ("A, then B")."""
    return [part.strip() for part in PART_SEPARATORS.split(goal) if part.strip()]


def match_skill(part: str, skills: Sequence[SkillTool]) -> tuple[SkillTool, dict[str, str]] | None:
    """The skill whose template fits ``part``, with its parameters; of several, the one with the most words
    of its own (the most specific)."""
    fits = [(skill, values) for skill in skills if (values := skill.fill(part)) is not None]
    fits.sort(key=lambda fit: -fit[0].fixed_chars)
    return fits[0] if fits else None


@dataclass
class SkillEpisode:
    """What the skill policy did in one episode: the skills it called (name, parameters, outcome), the parts
    of the goal it did with its own browser calls, and why."""

    called: list[tuple[str, dict[str, str], str]] = field(default_factory=list)
    by_hand: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class SkillPolicy:
    """Navigates to the site (``start_url``; None: it is there), lists the tools, and does each part of the
    goal with the skill whose description fits it; a part no skill fits, or whose call hands over, it does
    itself with ``fallback(part_index)`` (a plan and its values for that part), from the start page."""

    def __init__(self, session: ProxySession, browser: BrowserPolicy) -> None:
        self.session = session
        self.browser = browser

    async def run(self, goal: str, start_url: str | None,
                  fallback: Callable[[int], tuple[Sequence[Step], dict[str, str]]]) -> SkillEpisode:
        episode = SkillEpisode()
        if start_url:  # else the agent is on the page already
            await self.browser.navigate(start_url)
        skills = [skill for tool in await self.session.tools() if (skill := SkillTool.read(tool))]
        for index, part in enumerate(goal_parts(goal)):
            fit = match_skill(part, skills)
            if fit is not None:
                skill, values = fit
                result = await self.session.call(skill.name, values)
                outcome = (result.structured_content or {}).get("outcome") if not result.is_error else "error"
                episode.called.append((skill.name, values, outcome or "error"))
                if outcome == "done":
                    continue
                answered = result.structured_content or {}
                episode.notes.append(f"{skill.name}: {outcome}: {answered.get('reason') or text_of(result)[:200]}")
                handed_run = answered.get("run_id") if outcome == "handed_over" else None
            else:
                handed_run = None
                episode.notes.append(f"no skill fits {part!r} (skills: {', '.join(s.template for s in skills)})")
            episode.by_hand.append(part)
            plan, values = fallback(index)
            if start_url:
                await self.browser.navigate(start_url)
            why = await self.browser.follow(plan, values)
            if why:
                episode.notes.append(f"by hand: {why}")
            if handed_run:  # the proxy asks the agent to finish the run the skill handed over
                await self.session.call("webmem_finish_run", {"run_id": handed_run, "success": why is None})
        return episode
