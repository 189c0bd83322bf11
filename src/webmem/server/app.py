"""The HTTP API: the service layer's operations under ``/v1``, with a bearer token and namespaces.

Each request names its namespace in ``X-Webmem-Namespace`` (default ``default``); on PostgreSQL row-level
security holds it. With a token, every request but ``/v1/health`` needs ``Authorization: Bearer <token>``.
"""


import inspect
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException

from ..core.errors import WebmemError
from ..core.version import __version__
from ..service import (
    DEFAULT_MATCH_LIMIT,
    FinishedRun,
    Lessons,
    MemoryService,
    RecordedStep,
    RunContext,
    RunDetail,
    RunList,
    SiteFacts,
    SiteSelectors,
    SiteWording,
    SkillCall,
    SkillList,
    StartedRun,
    TrajectorySearch,
)
from ..service.overview import SiteHistory, Sites, TrajectoryList
from . import problems
from .api_docs import mount_api_docs
from .bodies import FinishBody, ForkBody, ResumeBody, SkillCallBody, StartBody, StepBody
from .hot_path import HotPath, TokenCheck
from .namespaces import NAMESPACE_HEADER, Namespaces
from .viewer import mount_viewer

API = "/v1"
# No ``from __future__ import annotations`` here: FastAPI reads the handlers' annotations, which name
# types local to create_app.


def create_app(location: str | None = None, *, token: str | None = None, mcp: bool = False, hot_path: bool = True,
               **memory_options: Any) -> FastAPI:
    """The API over the memory at ``location`` (a directory or a PostgreSQL URL; default as ``Memory.open``).

    ``memory_options`` go to :meth:`webmem.Memory.open` for each namespace (``secrets=``, ...). With ``mcp``,
    the MCP server of the default namespace is served at ``/mcp`` by the same process. ``hot_path=False``
    answers a run's start, steps, context and finish through their FastAPI routes too (the same answers,
    at more CPU per request; see :mod:`webmem.server.hot_path`).
    """
    namespaces = Namespaces(location, **memory_options)
    mcp_app = _mcp_app(namespaces) if mcp else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        if mcp_app is not None:
            async with mcp_app.router.lifespan_context(mcp_app):
                yield
        else:
            yield
        namespaces.close()

    app = FastAPI(title="webmem", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="A persistent, learning memory for browser agents.", **_without_telemetry())
    app.add_exception_handler(WebmemError, problems.on_webmem_error)
    app.add_exception_handler(RequestValidationError, problems.on_validation_error)
    app.add_exception_handler(HTTPException, problems.on_http_error)
    app.add_exception_handler(Exception, problems.on_unexpected)
    token_check = TokenCheck(token)

    async def authorized(authorization: Annotated[str | None, Header()] = None) -> None:
        token_check.check(authorization)

    async def service(namespace: Annotated[str | None, Header(alias=NAMESPACE_HEADER)] = None) -> MemoryService:
        return namespaces.service(namespace)

    Service = Annotated[MemoryService, Depends(service)]
    guarded = [Depends(authorized)]

    @app.get(f"{API}/health")
    def health() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    # A run's start, steps, context and finish are answered by the hot path (hot_path.py) unless
    # hot_path=False: these routes give them their OpenAPI, and are what the hot path is tested against.
    @app.post(f"{API}/runs", status_code=201, dependencies=guarded)
    def start_run(body: StartBody, svc: Service) -> StartedRun:
        return svc.start_run(body.goal, body.start_url, session_id=body.session_id)

    @app.get(f"{API}/runs", dependencies=guarded)
    def list_runs(svc: Service, domain: str | None = None, session_id: str | None = None, status: str | None = None,
                  limit: int = 20) -> RunList:
        return svc.list_runs(domain=domain, session_id=session_id, status=status, limit=limit)

    @app.get(f"{API}/runs/{{run_id}}", dependencies=guarded)
    def get_run(run_id: str, svc: Service) -> RunDetail:
        return svc.get_run(run_id)

    @app.get(f"{API}/runs/{{run_id}}/steps", dependencies=guarded)
    def get_steps(run_id: str, svc: Service) -> dict[str, Any]:
        return {"run_id": run_id, "steps": svc.get_run(run_id).steps}

    @app.post(f"{API}/runs/{{run_id}}/steps", status_code=201, dependencies=guarded)
    def record_step(run_id: str, body: StepBody, svc: Service) -> RecordedStep:
        return svc.record_step(run_id, **body.model_dump(exclude_none=True))

    @app.get(f"{API}/runs/{{run_id}}/context", dependencies=guarded)
    def get_context(run_id: str, svc: Service, url: str | None = None, budget_tokens: int | None = None) -> RunContext:
        return svc.get_context(run_id, url=url, budget_tokens=budget_tokens)

    @app.post(f"{API}/runs/{{run_id}}/finish", dependencies=guarded)
    def finish_run(run_id: str, body: FinishBody, svc: Service) -> FinishedRun:
        return svc.finish_run(run_id, success=body.success, outcome=body.outcome, final_url=body.final_url)

    @app.post(f"{API}/runs/{{run_id}}/resume", status_code=201, dependencies=guarded)
    def resume_run(run_id: str, body: ResumeBody, svc: Service) -> StartedRun:
        return svc.resume_run(run_id, goal=body.goal)

    @app.post(f"{API}/runs/{{run_id}}/fork", status_code=201, dependencies=guarded)
    def fork_run(run_id: str, body: ForkBody, svc: Service) -> StartedRun:
        return svc.fork_run(run_id, goal=body.goal)

    @app.get(f"{API}/trajectories/match", dependencies=guarded)
    def match_trajectories(goal: str, url: str, svc: Service, limit: int = DEFAULT_MATCH_LIMIT,
                           all: bool = False) -> TrajectorySearch:
        """The closest ``limit`` stored runs (every one, each explained, with ``all=true``: slower on a large
        memory), the reference a run would get and the replay plan; ``scored`` says how many there were."""
        return svc.search_trajectories(goal, url, limit=limit, all=all)

    @app.get(f"{API}/replay-plan", dependencies=guarded)
    def replay_plan(goal: str, url: str, svc: Service) -> dict[str, Any]:
        offer, reason = svc.replay_for(goal, url)
        return {"goal": goal, "replay": offer, "reason": reason}

    @app.get(f"{API}/lessons", dependencies=guarded)
    def list_lessons(svc: Service, category: str | None = None, domain: str | None = None) -> Lessons:
        return svc.list_lessons(category=category, domain=domain)

    @app.get(f"{API}/lessons/recall", dependencies=guarded)
    def recall_lessons(svc: Service, error: str | None = None, command: str | None = None,
                       domain: str | None = None) -> Lessons:
        return svc.recall_lessons(error=error, command=command, domain=domain)

    @app.get(f"{API}/sites/{{domain}}/facts", dependencies=guarded)
    def site_facts(domain: str, svc: Service) -> SiteFacts:
        return svc.site_facts(domain)

    @app.get(f"{API}/sites/{{domain}}/selectors", dependencies=guarded)
    def site_selectors(domain: str, svc: Service) -> SiteSelectors:
        return svc.site_selectors(domain)

    @app.get(f"{API}/sites/{{domain}}/wording", dependencies=guarded)
    def site_wording(domain: str, svc: Service) -> SiteWording:
        """What the site's recordings taught about how its tasks may be worded, per origin: words that name one act
        there, and options of a field that are values of a task."""
        return svc.site_wording(domain)

    @app.get(f"{API}/sites/{{domain}}/skills", dependencies=guarded)
    def site_skills(domain: str, svc: Service) -> SkillList:
        """The site's remembered tasks as skills (tools with typed parameters), most trusted first."""
        return svc.list_skills(domain)

    @app.post(f"{API}/skills/{{skill_id}}/plan", dependencies=guarded)
    def plan_skill(skill_id: str, body: SkillCallBody, svc: Service) -> SkillCall:
        """A call of the skill with ``parameters``, as the replay plan's steps and their tool calls."""
        return svc.plan_skill(skill_id, body.parameters, site=body.site)

    @app.get(f"{API}/runs/{{run_id}}/lineage", dependencies=guarded)
    def lineage(run_id: str, svc: Service) -> RunList:
        return svc.lineage(run_id)

    @app.get(f"{API}/trajectories", dependencies=guarded)
    def list_trajectories(svc: Service, domain: str | None = None, limit: int = 50) -> TrajectoryList:
        return svc.list_trajectories(domain=domain, limit=limit)

    @app.get(f"{API}/scripts/{{source_id}}", dependencies=guarded)
    def run_script(source_id: str, svc: Service, lang: str = "python") -> Response:
        media = "text/x-python" if lang == "python" else "text/typescript"
        return Response(svc.memory.script(source_id, lang=lang), media_type=f"{media}; charset=utf-8")

    @app.get(f"{API}/sites", dependencies=guarded)
    def list_sites(svc: Service) -> Sites:
        return svc.sites()

    @app.get(f"{API}/sites/{{domain}}/history", dependencies=guarded)
    def site_history(domain: str, svc: Service) -> SiteHistory:
        return svc.site_history(domain)

    @app.get(f"{API}/stats", dependencies=guarded)
    def stats(svc: Service) -> dict[str, Any]:
        return svc.stats()

    if hot_path:
        app.add_middleware(HotPath, namespaces=namespaces, token=token_check)
    if mcp_app is not None:
        app.mount("/mcp", _guarded_asgi(mcp_app, token))
    mount_api_docs(app)
    mount_viewer(app)
    return app


def _mcp_app(namespaces: Namespaces) -> Any:
    from ..mcp.server import build_server

    server = build_server(namespaces.service(None), log_level="WARNING")
    return server.streamable_http_app(streamable_http_path="/", host="127.0.0.1")


def _guarded_asgi(app: Any, token: str | None) -> Any:
    if not token:
        return app
    from ..mcp.transports import BearerToken

    return BearerToken(app, token)


#: What ``webmem serve`` hands to each worker process.
ENV_LOCATION = "WEBMEM_SERVE_LOCATION"
ENV_TOKEN = "WEBMEM_API_TOKEN"
ENV_MCP = "WEBMEM_SERVE_MCP"


def app_from_environment() -> FastAPI:
    """The app ``webmem serve`` runs in each worker, configured through the environment."""
    import os

    location = os.environ.get(ENV_LOCATION) or None
    return create_app(location, token=os.environ.get(ENV_TOKEN) or None, mcp=os.environ.get(ENV_MCP) == "1")


def _without_telemetry() -> dict[str, Any]:
    """FastAPI's own OpenTelemetry instrumentation (FastAPI 0.165 and later) turned off: whatever the process's
    OpenTelemetry set-up or environment, the server never records or exports spans, metrics or logs of its
    requests (their paths and queries carry run ids and goals)."""
    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:
        return {}
    return {"telemetry": {"tracing": False, "metrics": False, "logs": False, "operation_spans": False,
                          "auto_configure": False}}
