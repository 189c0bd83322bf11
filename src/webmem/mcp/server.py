"""The MCP server: webmem's operations as tools, what it learned as resources, and a prompt.

Every tool calls :class:`webmem.service.MemoryService`; webmem's errors reach the client as a tool
error that starts with the error's name (``RunNotFound: ...``), never as a traceback.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from ..core.errors import InvalidInput, WebmemError
from ..core.version import __version__
from ..core.vocabulary import DEFAULT_MATCH_LIMIT
from ..service.models import (
    FinishedRun,
    Lessons,
    RecordedStep,
    RunContext,
    RunDetail,
    RunList,
    SkillCall,
    SkillList,
    StartedRun,
    TrajectorySearch,
)

if TYPE_CHECKING:
    from ..service import MemoryService

T = TypeVar("T")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
#: The longest argument value an error shows back (a longer one is cut).
MAX_SHOWN_VALUE = 80
#: What an argument should have been, by pydantic's error type (others say it in pydantic's words).
EXPECTED = {"string_type": "a string", "bool_type": "true or false", "bool_parsing": "true or false",
            "int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number"}
FINISHES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

INSTRUCTIONS = """\
webmem is this agent's memory of earlier browser runs.
1. Before browsing, call webmem_start_run(goal, start_url). Put its system_prompt lessons and its context
   into your instructions. When it returns a replay plan, its steps are ready browser tool calls: perform
   them in order, checking the page, and take over where a step does not fit.
2. After each browser action, call webmem_record_step with what you did and whether it worked; after a
   failure, read the tips it returns before trying again.
3. Call webmem_get_context when you reach a new page, and webmem_finish_run(success) at the end."""

BROWSE_PROMPT = """\
Goal: {goal}
Start page: {start_url}

Use your memory of earlier runs while you browse:
1. Call webmem_start_run with goal {goal_json} and start_url {url_json}. Follow its lessons. If it offers a
   replay plan, perform its steps in order with the browser tools (each step gives the tool and its
   arguments; a {{name}} value is a secret you type yourself), and check the page after each one.
2. Record every browser action with webmem_record_step (run_id, action, target as role and name such as
   'button "Search"', selector, value, url, ok, error). When an action fails, read the tips it returns.
3. On a new page, call webmem_get_context for what memory knows about it.
4. When done, call webmem_finish_run with success true or false and a one-line outcome."""


def tool_errors(function: Callable[..., T]) -> Callable[..., T]:
    """webmem's errors as tool errors named after the error (``InvalidInput: url: ...``)."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> T:
        try:
            return function(*args, **kwargs)
        except WebmemError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    return call


class WebmemServer(MCPServer):
    """An MCP server whose tools' arguments, when they do not fit the tool, are refused as webmem refuses
    any other input (``InvalidInput: goal: required, but not given``), not as pydantic's report."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                raise
            refused = InvalidInput(argument_problems(exc.__cause__))
            raise ToolError(f"Error executing tool {name}: {type(refused).__name__}: {refused}") from refused


def argument_problems(exc: ValidationError) -> str:
    """What is wrong with each argument, as ``field: problem`` (``goal: expected a string, got 5``)."""
    problems = []
    for error in exc.errors(include_url=False):
        field = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "missing":
            problem = "required, but not given"
        else:
            message = EXPECTED.get(error["type"]) or error["msg"].removeprefix("Input should be ")
            given = repr(error.get("input"))
            shown = given if len(given) <= MAX_SHOWN_VALUE else given[: MAX_SHOWN_VALUE - 3] + "..."
            problem = f"expected {message}, got {shown}"
        problems.append(f"{field}: {problem}")
    return "; ".join(problems)


def build_server(service: MemoryService, *, name: str = "webmem", **options: Any) -> MCPServer:
    """An MCP server over ``service``: the tools, resources and prompt of webmem."""
    server = WebmemServer(name, version=__version__, instructions=INSTRUCTIONS, **options)
    register(server, service)
    return server


def register(server: MCPServer, service: MemoryService) -> None:
    """Add webmem's tools, resources and prompt to ``server``."""

    @server.tool(annotations=WRITES)
    @tool_errors
    def webmem_start_run(goal: str, start_url: str, session_id: str | None = None,
                         resume_run_id: str | None = None) -> StartedRun:
        """Start a run before browsing: returns its run_id, the lessons for your system prompt, what memory
        knows about the start page, and a replay plan (ready browser tool calls) when a remembered run fits
        the goal. With resume_run_id, the run continues that one (same session, from where it ended)."""
        return service.start_run(goal, start_url, session_id=session_id, resume_run_id=resume_run_id)

    @server.tool(annotations=WRITES)
    @tool_errors
    def webmem_record_step(run_id: str, action: str, target: str | None = None, selector: str | None = None,
                           value: str | None = None, url: str | None = None, ok: bool = True,
                           error: str | None = None, secret: bool = False) -> RecordedStep:
        """Record one browser action of the run: action (goto, click, fill, type, select, check, uncheck, press,
        hover, scroll, wait, back), target as role and accessible name ('button "Search"'), the selector used, the value
        typed or chosen, the page URL, whether it worked and its error. secret=true stores the value as a
        placeholder. Returns the step as stored and, after a failure, the tips memory has for that error."""
        return service.record_step(run_id, action=action, target=target, selector=selector, value=value, url=url,
                                   ok=ok, error=error, secret=secret)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def webmem_get_context(run_id: str, url: str | None = None, budget_tokens: int | None = None) -> RunContext:
        """What memory knows for the run's next step on url (default: the run's current page), fitted into
        budget_tokens (default 2000): the last error's tips, site tips, a reference run, session history,
        facts and known selectors."""
        return service.get_context(run_id, url=url, budget_tokens=budget_tokens)

    @server.tool(annotations=FINISHES)
    @tool_errors
    def webmem_finish_run(run_id: str, success: bool, outcome: str | None = None,
                          final_url: str | None = None) -> FinishedRun:
        """End the run: success true or false, a one-line outcome, the final page. Memory learns from it
        (a successful run becomes a reference and a replay plan for the same task). Finishing twice
        changes nothing."""
        return service.finish_run(run_id, success=success, outcome=outcome, final_url=final_url)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def webmem_recall_lessons(error: str | None = None, command: str | None = None,
                              domain: str | None = None) -> Lessons:
        """Lessons learned from earlier failures: for an error (with the command that failed), for a site
        (domain), or with neither the general ones."""
        return service.recall_lessons(error=error, command=command, domain=domain)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def webmem_search_trajectories(goal: str, url: str, limit: int = DEFAULT_MATCH_LIMIT,
                                   all: bool = False) -> TrajectorySearch:
        """Earlier successful runs on url's site that match goal, best first with why (the closest limit of
        them, or with all every one: slower on a large memory; scored says how many there were), the reference a
        run with this goal would get, and the replay plan that fits when one does."""
        return service.search_trajectories(goal, url, limit=limit, all=all)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def webmem_list_runs(domain: str | None = None, session_id: str | None = None, status: str | None = None,
                         limit: int = 20) -> RunList:
        """Runs newest first, filtered by domain, session_id and status (running, completed, failed)."""
        return service.list_runs(domain=domain, session_id=session_id, status=status, limit=limit)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def webmem_get_run(run_id: str) -> RunDetail:
        """One run's manifest and its steps as stored (secrets as placeholders)."""
        return service.get_run(run_id)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def webmem_list_skills(site: str) -> SkillList:
        """The tasks memory can do on a site (site: its URL or domain) as skills, most trusted first: each one's
        name, what it does with an example, its parameters (text, number, date, time, or a choice among the options
        the page offered; secrets are filled by memory, never asked), its record and whether a replay verified it.
        Call one with webmem_plan_skill."""
        return service.list_skills(site)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    def webmem_plan_skill(skill_id: str, parameters: dict[str, Any], site: str | None = None) -> SkillCall:
        """A call of a skill (its id, or its name with site) with parameters (name -> value): the goal it
        stands for and the replay plan's steps as ready browser tool calls. Perform them in order; a step whose
        element is not there means the page differs: carry on yourself from there."""
        return service.plan_skill(skill_id, parameters, site=site)

    @server.resource("webmem://runs", name="runs", mime_type="application/json",
                     description="The 20 newest runs.")
    def runs_resource() -> str:
        return _resource(lambda: service.list_runs().model_dump_json(indent=1))

    @server.resource("webmem://runs/{run_id}", name="run", mime_type="application/json",
                     description="A run's manifest and steps.")
    def run_resource(run_id: str) -> str:
        return _resource(lambda: service.get_run(run_id).model_dump_json(indent=1))

    @server.resource("webmem://sites/{domain}/facts", name="site-facts", mime_type="application/json",
                     description="Facts learned about a site, with their confidence.")
    def facts_resource(domain: str) -> str:
        return _resource(lambda: service.site_facts(domain).model_dump_json(indent=1))

    @server.resource("webmem://sites/{domain}/selectors", name="site-selectors", mime_type="application/json",
                     description="Selectors known to work on a site, per element.")
    def selectors_resource(domain: str) -> str:
        return _resource(lambda: service.site_selectors(domain).model_dump_json(indent=1))

    @server.resource("webmem://sites/{domain}/wording", name="site-wording", mime_type="application/json",
                     description="How a site's tasks may be worded, as its recordings taught: words that name one "
                                 "act there, and options of a field that are values of a task.")
    def wording_resource(domain: str) -> str:
        return _resource(lambda: service.site_wording(domain).model_dump_json(indent=1))

    @server.resource("webmem://lessons/tier1", name="tier1-lessons", mime_type="application/json",
                     description="The lessons given to every run's system prompt.")
    def lessons_resource() -> str:
        return _resource(lambda: service.tier1_lessons().model_dump_json(indent=1))

    @server.prompt(name="browse_with_memory", description="Browse towards a goal, using and feeding webmem.")
    def browse_with_memory(goal: str, start_url: str) -> str:
        return BROWSE_PROMPT.format(goal=goal, start_url=start_url, goal_json=json.dumps(goal),
                                    url_json=json.dumps(start_url))


def _resource(read: Callable[[], str]) -> str:
    try:
        return read()
    except WebmemError as exc:
        raise ResourceError(f"{type(exc).__name__}: {exc}") from exc
