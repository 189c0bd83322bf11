"""The recording proxy: webmem in front of a browser MCP server (Playwright MCP).

The proxy starts the browser server as a child process and offers its tools unchanged, beside webmem's
own. Every call that acts on the page is recorded as a step of the current run (the run that
``webmem_start_run`` began, or one the proxy starts on the first action), and its answer gains a short
``### Memory`` section when memory has something to say: the tips an error recalled, what memory knows
about a site the run just entered. ``webmem_replay`` performs a remembered run's steps through the
child's tools with no LLM turn. When the browser is on a site whose remembered tasks are skills, the most
trusted of them are tools too (``skill_<name>``, :mod:`webmem.mcp.skill_tools`): the tool list changes with the
page's origin, and the client is told. Registered secrets never appear in what the proxy answers.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import anyio.to_thread
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, Tool

from ..core.errors import InvalidInput, RunNotFound, WebmemError
from ..core.models import ElementSignals
from ..core.redaction import redact_tree
from ..core.skill_records import Skill
from ..core.urls import domain_of, origin_of
from ..core.version import __version__
from ..service import FinishedRun, MemoryService, SkillList, StartedRun
from ..skills.tools import TOOL_PREFIX as SKILL_TOOL_PREFIX
from ..skills.tools import tool_name
from ..trajectories.plans import ReplayPlan
from .child import browser_session
from .recording import ACTIONS, Answer, drafts, snapshot_options, snapshot_refs
from .replay import ReplayResult, replay_plan
from .server import READ_ONLY, WRITES, WebmemServer, build_server, register
from .skill_tools import (
    SKILL_CALL,
    SkillRun,
    announce_tools_changed,
    answer_text,
    declare_tools_change,
    find,
    offered,
    skill_run,
    skill_tool,
)

CONTEXT_BUDGET_TOKENS = 600
AUTO_GOAL = "Browse {host} (the agent did not call webmem_start_run)"
UNFINISHED = "The MCP session ended before webmem_finish_run was called"
PROXY_INSTRUCTIONS = """\
webmem records this browser session as it goes: every browser tool call is a step of the current run.
1. Call webmem_start_run(goal, start_url) before browsing: you get lessons, what memory knows about the
   site, and, when a remembered run fits the goal, a replay offer. webmem_replay(run_id) then performs it
   with no model turn and reports where it stopped if the page no longer fits; take over from there.
2. Browse with the browser tools; read the ### Memory section that some answers end with.
3. Call webmem_finish_run(run_id, success) at the end.
On a site with remembered tasks, its skills are tools (skill_<name>): calling one does the task in this browser
with no model turn and says where it stopped if the page did not fit. webmem_find_skill(query) finds the site's
other skills, webmem_call_skill(skill_id, parameters) calls any of them."""


class BrowserProxy(WebmemServer):
    """An MCP server with webmem's tools and, passed through, the tools of a browser MCP server."""

    def __init__(self, service: MemoryService, browser: StdioServerParameters, **options: Any) -> None:
        super().__init__("webmem", version=__version__, instructions=PROXY_INSTRUCTIONS, **options)
        self.service = service
        self.browser = browser
        self.replay_reports: dict[str, Any] = {}
        self._child: Client | None = None
        self._child_tools: list[Tool] = []
        self._run_id: str | None = None
        self._page_url: str | None = None
        self._seen_domain: str | None = None
        self._refs: dict[str, str] = {}
        self._fingerprint: str | None = None  # of the page the latest snapshot showed
        self._options: dict[str, tuple[str, ...]] = {}
        self._browser_lock = anyio.Lock()
        self._skill_lock = anyio.Lock()
        self._skills_origin: str | None = None
        self._skills_stale = False
        self._skill_tools: dict[str, tuple[Skill, Tool]] = {}
        self._resume_after: dict[str, str | None] = {}  # a skill's handed-over run -> the run it interrupted
        declare_tools_change(self)
        register(self, service)
        self._register()

    @asynccontextmanager
    async def connected(self) -> AsyncIterator[BrowserProxy]:
        """Start the browser server and keep it for as long as the block runs; an unfinished run is then
        finished as failed (its steps are kept). Raises BrowserUnavailable when it cannot start."""
        async with browser_session(self.browser) as (child, tools):
            self._child = child
            self._child_tools = tools
            try:
                yield self
            finally:
                self._child = None
                await self._finish_open_run(UNFINISHED)

    async def list_tools(self) -> list[Tool]:
        own = [tool for tool in await super().list_tools() if tool.name != "webmem_record_step"]
        return [*own, *self._child_tools, *(tool for _, tool in self._skill_tools.values())]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        answered = await self._dispatch(name, arguments, context)
        await self._offer_skills(context)
        return answered

    async def _dispatch(self, name: str, arguments: dict[str, Any], context: Any) -> Any:
        if any(tool.name == name for tool in self._child_tools):
            async with self._browser_lock:
                before = _web(self._page_url), self._fingerprint
                answer, result = await self._forward(name, arguments)
                notes = await self._record(name, arguments, answer, *before)
            return self._answer(result, notes)
        if name in self._skill_tools:
            done = await self._call_skill(self._skill_tools[name][0].id, arguments)
            return CallToolResult(content=[TextContent(type="text", text=answer_text(done))],
                                  structured_content=done.model_dump(mode="json"))
        if name.startswith(SKILL_TOOL_PREFIX) and self._tool_manager.get_tool(name) is None:
            raise ToolError(f"NotFound: {name} is not a skill of the page the browser is on "
                            f"({_web(self._page_url) or 'no web page'}): webmem_find_skill finds its skills")
        if name == "webmem_record_step":
            raise ToolError("webmem_record_step: the proxy records browser tool calls itself")
        return await super().call_tool(name, arguments, context)

    # -- the child ----------------------------------------------------------------------------

    async def _forward(self, name: str, arguments: dict[str, Any]) -> tuple[Answer, CallToolResult]:
        if self._child is None:
            raise ToolError("the browser server is not running")
        result = await self._child.call_tool(name, arguments)
        text = "\n".join(item.text for item in result.content if isinstance(item, TextContent))
        answer = Answer(text=text, is_error=bool(result.is_error))
        refs = snapshot_refs(text)
        if refs:
            self._refs = refs
            self._options = snapshot_options(text)
        fingerprint = answer.fingerprint
        if fingerprint is not None or name in ACTIONS:  # a page acted on and not shown is not known
            self._fingerprint = fingerprint
        return answer, result

    def _answer(self, result: CallToolResult, notes: Sequence[str]) -> CallToolResult:
        """The child's answer with the memory's notes added, and no registered secret left in it."""
        redact = self.service.memory.secrets.redact
        content: list[Any] = [
            item.model_copy(update={"text": redact(item.text)}) if isinstance(item, TextContent) else item
            for item in result.content
        ]
        if notes:
            content.append(TextContent(type="text", text=redact("### Memory\n" + "\n\n".join(notes))))
        structured = result.structured_content
        return result.model_copy(update={
            "content": content,
            "structured_content": redact_tree(structured, lambda text: redact(text) or "") if structured else None,
        })

    # -- recording ----------------------------------------------------------------------------

    async def _record(self, name: str, arguments: dict[str, Any], answer: Answer, page_before: str | None,
                      seen_before: str | None) -> list[str]:
        """Record the call's steps in the current run (each with the fingerprint of the page it acted on,
        ``seen_before``); the notes for the ### Memory section."""
        if answer.page_url:
            self._page_url = answer.page_url
        steps = drafts(name, arguments, answer, self._refs)
        notes: list[str] = []
        if not steps:
            return notes
        if self._run_id is None:
            notes.append(await self._auto_start(answer.page_url or self._pending_url(arguments)))
        run_id = self._run_id
        if run_id is None:
            return notes
        for draft in steps:
            options = self._options.get(draft.target or "") if draft.action == "select" else None
            element = {"element": ElementSignals(options=options)} if options else {}
            recorded = await anyio.to_thread.run_sync(lambda draft=draft, element=element: (
                self.service.record_observed_step(
                    run_id, action=draft.action, target=draft.target, selector=draft.selector, value=draft.value,
                    url=page_before, ok=not answer.is_error, error=answer.error, duration_ms=draft.duration_ms,
                    snapshot_hash=seen_before, **element)))
            if recorded.tips:
                notes.append("Tips from earlier runs for this error:\n" + "\n".join(f"- {tip}" for tip in recorded.tips))
        entered = _web(answer.page_url)
        if entered is not None and domain_of(entered) != self._seen_domain:
            self._seen_domain = domain_of(entered)
            context = await anyio.to_thread.run_sync(lambda: self.service.get_context(
                run_id, url=entered, budget_tokens=CONTEXT_BUDGET_TOKENS))
            if context.text.strip():
                notes.append(f"What memory knows about {self._seen_domain}:\n{context.text}")
        return notes

    def _pending_url(self, arguments: dict[str, Any]) -> str | None:
        url = arguments.get("url")
        return url if isinstance(url, str) else self._page_url

    async def _auto_start(self, url: str | None) -> str:
        page = _web(url)
        if page is None:
            return "webmem records steps once the browser is on an http(s) page."
        goal = AUTO_GOAL.format(host=domain_of(page))
        started = await anyio.to_thread.run_sync(lambda: self.service.start_run(goal, page))
        self._begin(started)
        self._seen_domain = None  # nobody was told what memory knows about this site yet
        return (f"webmem is recording this session as run {started.run_id}. Call webmem_start_run(goal, start_url) "
                "before browsing to get lessons and replays of remembered runs.")

    def _begin(self, started: StartedRun) -> None:
        self._run_id = started.run_id
        self._seen_domain = started.domain

    async def _finish_open_run(self, outcome: str) -> None:
        """Finish the current run as failed, and the runs a skill's handed-over run interrupted."""
        while self._run_id is not None:
            run_id = self._run_id
            self._run_id = self._resume_after.pop(run_id, None)
            report = self.replay_reports.pop(run_id, None)
            self._skills_stale = True
            with suppress(RunNotFound):  # forgotten meanwhile: nothing is left to close (a finished run is kept)
                await anyio.to_thread.run_sync(lambda: self.service.finish_run(
                    run_id, success=False, outcome=outcome, replay=report))

    async def _replay(self, run_id: str, plan: ReplayPlan) -> ReplayResult:
        """Perform ``plan`` in the browser, each call recorded as a step of the current run."""

        async def call_and_record(tool: str, arguments: dict[str, Any], recorded_on: str | None) -> Answer:
            async with self._browser_lock:
                # unless an answer showed the page, the one the plan's step was recorded on stands in for it
                before = _web(self._page_url), self._fingerprint or recorded_on
                answer, _ = await self._forward(tool, arguments)
                await self._record(tool, arguments, answer, *before)
            return answer

        return await replay_plan(run_id, plan, call_and_record, self.service.memory.secrets)

    # -- skills as tools ----------------------------------------------------------------------------

    async def _offer_skills(self, context: Any) -> None:
        """Offer the skills of the page's origin as tools, and tell the client when the tools changed."""
        origin = _origin(self._page_url)
        if origin == self._skills_origin and not self._skills_stale:
            return
        self._skills_origin, self._skills_stale = origin, False
        skills: list[Skill] = []
        if origin is not None:
            with suppress(WebmemError):  # a memory that cannot list them offers none; browsing goes on
                skills = await anyio.to_thread.run_sync(lambda: self.service.memory.skills.list(origin))
        tools = {tool_name(skill): (skill, skill_tool(skill)) for skill in offered(skills)}
        if [tool for _, tool in tools.values()] == [tool for _, tool in self._skill_tools.values()]:
            return
        self._skill_tools = tools
        await announce_tools_changed(context)

    async def _call_skill(self, skill_id: str, values: Any) -> SkillRun:
        """Do a skill's task in the browser as a run of its own: done, or handed over where the page did not fit
        (the run then stays the current one, for the agent to carry on and finish)."""
        service = self.service
        offered_tool = self._skill_tools.get(skill_id) if isinstance(skill_id, str) else None
        wanted = offered_tool[0].id if offered_tool else skill_id
        site = None if isinstance(wanted, str) and wanted.startswith(SKILL_TOOL_PREFIX) else _origin(self._page_url)

        def prepare() -> tuple[Skill, str, ReplayPlan]:
            skills = service.memory.skills
            skill = skills.get(wanted, site)
            return skill, skills.goal(skill, values), skills.plan(skill, values)

        async with self._skill_lock:
            try:
                skill, goal, plan = await anyio.to_thread.run_sync(prepare)
                page = _web(self._page_url)
                start_url = page if page is not None and _origin(page) == skill.origin else skill.origin
                started = await anyio.to_thread.run_sync(lambda: service.start_run(goal, start_url))
            except WebmemError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
            self._resume_after[started.run_id] = self._run_id
            self._begin(started)
            result = await self._replay(started.run_id, plan)
            self.replay_reports[started.run_id] = result.report
            run = skill_run(skill, goal, result, await self._look())
            if result.outcome == "replayed":
                try:
                    await anyio.to_thread.run_sync(lambda: service.finish_run(
                        started.run_id, success=True, outcome=f"Done by skill {skill.name}, with no LLM turn",
                        final_url=_web(self._page_url), replay=self.replay_reports.pop(started.run_id, None)))
                except WebmemError as exc:
                    raise ToolError(f"{type(exc).__name__}: {exc}") from exc
                finally:
                    if self._run_id == started.run_id:
                        self._run_id = self._resume_after.pop(started.run_id, None)
                    self._skills_stale = True
                if self._run_id is not None:  # the run the call was made in did these steps too
                    await anyio.to_thread.run_sync(lambda: self._carry_steps(started.run_id, self._run_id))
        redact = service.memory.secrets.redact
        return run.model_copy(update={key: redact(getattr(run, key)) for key in ("goal", "reason", "snapshot", "summary")
                                      if getattr(run, key) is not None})

    def _carry_steps(self, done_run: str, into: str) -> None:
        """Record in run ``into`` the steps a skill's run did for it: a goal composed of skills, done by calling
        them, is recorded with every step it took, and may become a skill of its own."""
        for step in self.service.memory.runs.steps(done_run):
            self.service.record_observed_step(
                into, action=step.action, target=step.target, selector=step.selector, value=step.value, url=step.url,
                ok=step.ok, error=step.error, duration_ms=step.duration_ms, snapshot_hash=step.snapshot_hash,
                element=step.element, verified=step.verified)

    async def _look(self) -> Answer | None:
        """The page as the browser server shows it now (its snapshot), when it has a tool for that."""
        if not any(tool.name == "browser_snapshot" for tool in self._child_tools):
            return None
        async with self._browser_lock:
            answer, _ = await self._forward("browser_snapshot", {})
        if answer.page_url:
            self._page_url = answer.page_url
        return None if answer.is_error else answer

    # -- webmem's tools in the proxy ----------------------------------------------------------------

    def _register(self) -> None:
        service = self.service
        self.remove_tool("webmem_start_run")  # the proxy's own, which also make the run the one it records
        self.remove_tool("webmem_finish_run")

        @self.tool(annotations=WRITES)
        async def webmem_start_run(goal: str, start_url: str, session_id: str | None = None,
                                   resume_run_id: str | None = None) -> StartedRun:
            """Start a run before browsing: the browser calls that follow are recorded as its steps. Returns
            its run_id, lessons for your system prompt, what memory knows about the start page, and a replay
            offer when a remembered run fits the goal (then call webmem_replay(run_id))."""
            if self._run_id is not None:
                await self._finish_open_run("Another run was started before this one was finished")
            try:
                started = await anyio.to_thread.run_sync(lambda: service.start_run(
                    goal, start_url, session_id=session_id, resume_run_id=resume_run_id))
            except WebmemError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
            self._begin(started)
            return started

        @self.tool(annotations=WRITES)
        async def webmem_finish_run(run_id: str, success: bool, outcome: str | None = None,
                                    final_url: str | None = None) -> FinishedRun:
            """End the run: success true or false, a one-line outcome. Memory learns from it (a successful run
            can be replayed for the same task later). Finishing twice changes nothing."""
            report = self.replay_reports.pop(run_id, None)
            try:
                finished = await anyio.to_thread.run_sync(lambda: service.finish_run(
                    run_id, success=success, outcome=outcome, final_url=final_url or _web(self._page_url),
                    replay=report))
            except WebmemError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
            if self._run_id == run_id:
                self._run_id = self._resume_after.pop(run_id, None)
            self._skills_stale = True
            return finished

        @self.tool(annotations=WRITES)
        async def webmem_replay(run_id: str) -> ReplayResult:
            """Perform the replay offered by webmem_start_run through the browser tools, with no model turn.
            Stops at the first step the page does not fit and says where and why: take over from there."""
            try:
                plan = await anyio.to_thread.run_sync(lambda: service.plan(run_id))
            except WebmemError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
            if plan is None:
                raise ToolError(f"NoReplay: run {run_id} was offered no replay when it started "
                                "(webmem_start_run says why under replay_unavailable)")
            if self._run_id != run_id:
                raise ToolError(f"InvalidInput: run_id: {run_id} is not the run this browser session records")
            result = await self._replay(run_id, plan)
            self.replay_reports[run_id] = result.report
            return result

        @self.tool(annotations=READ_ONLY)
        async def webmem_find_skill(query: str, site: str | None = None) -> SkillList:
            """The skills of the site the browser is on (or of site: its URL or domain) whose name or description
            share a word of query, with their parameters, record and status; an empty query lists them all.
            The first few are tools of their own (skill_<name>); call any of them with webmem_call_skill."""
            where = site or _origin(self._page_url)
            if where is None:
                raise ToolError("InvalidInput: site: the browser is on no web page: give the site's URL or domain")
            try:
                skills = await anyio.to_thread.run_sync(lambda: service.memory.skills.list(where))
            except WebmemError as exc:
                raise ToolError(f"{type(exc).__name__}: {exc}") from exc
            return SkillList(site=where, skills=find([s for s in skills if s.status != "withdrawn"], query))

        @self.tool(annotations=SKILL_CALL)
        async def webmem_call_skill(skill_id: str, parameters: dict[str, Any]) -> SkillRun:
            """Do a skill's task (skill_id: its id from webmem_find_skill) in this browser with parameters (name ->
            value), with no model turn. Answers done with the page at the end, or handed_over at the step the page
            did not fit, with why: carry on from there, then call webmem_finish_run(run_id, success)."""
            return await self._call_skill(skill_id, parameters)


def build_proxy(service: MemoryService, command: Sequence[str], *, cwd: str | None = None,
                env: dict[str, str] | None = None, **options: Any) -> BrowserProxy:
    """A proxy in front of the browser MCP server that ``command`` starts (``npx @playwright/mcp ...``)."""
    if not command or not all(isinstance(part, str) and part for part in command):
        raise InvalidInput("browser: expected the command that starts the browser MCP server")
    parameters = StdioServerParameters(command=command[0], args=list(command[1:]), cwd=cwd,
                                       env={**os.environ, **(env or {})})
    proxy = BrowserProxy(service, parameters, **options)
    return proxy


def _web(url: str | None) -> str | None:
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


def _origin(url: str | None) -> str | None:
    page = _web(url)
    if page is None:
        return None
    try:
        return origin_of(page)
    except InvalidInput:
        return None


__all__ = ["BrowserProxy", "build_proxy", "build_server"]
