"""The requests every run makes, answered without FastAPI's per-request machinery.

An agent starts a run, records its steps, reads its context and finishes: nearly all of a fleet's
traffic. FastAPI's routes for them (``app.py``) define the API and its OpenAPI; this middleware
answers the same requests itself, with the same checks in the same order and the same answers, for
about a third less CPU per request: no dependency solving, no validation per header, no hop to the
thread pool (the memory's work runs in the event loop, as long as it takes). Every other request goes
on to the routes.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from ..core.errors import WebmemError
from ..service import MemoryService
from . import problems
from .bodies import ContextQuery, FinishBody, StartBody, StepBody
from .namespaces import NAMESPACE_HEADER, Namespaces

ASGIApp = Any
Parsed = TypeVar("Parsed", bound=BaseModel)
#: What a request answers: its status and the model sent back as JSON.
Operation = Callable[[MemoryService, str, bytes, bytes], tuple[int, BaseModel]]
UNAUTHORIZED = "send Authorization: Bearer <token> (the token the server was started with)"
_RUN_ROUTE = re.compile(r"/v1/runs/([^/]+)/(steps|context|finish)")
_NAMESPACE = NAMESPACE_HEADER.lower().encode("latin-1")


class TokenCheck:
    """The server's bearer token: :meth:`check` raises a 401 unless ``Authorization`` carries it (no token:
    every request passes)."""

    def __init__(self, token: str | None) -> None:
        self._expected = f"Bearer {token}".encode() if token else None

    def check(self, authorization: str | None) -> None:
        if self._expected is not None and not hmac.compare_digest((authorization or "").encode(), self._expected):
            raise HTTPException(401, UNAUTHORIZED)


def _json(model: type[Parsed], body: bytes) -> Parsed:
    if not body:  # as FastAPI answers a request without the body its route requires
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    return _parsed(model.model_validate_json, body)


def _parsed(parse: Callable[[Any], Parsed], given: Any) -> Parsed:
    """What the request gave, parsed; what does not parse is the request's error (a pydantic error raised by
    the memory itself is not: it goes up as FastAPI's routes let it)."""
    try:
        return parse(given)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False)) from None


def _start(svc: MemoryService, run_id: str, body: bytes, query: bytes) -> tuple[int, BaseModel]:
    start = _json(StartBody, body)
    return 201, svc.start_run(start.goal, start.start_url, session_id=start.session_id)


def _record_step(svc: MemoryService, run_id: str, body: bytes, query: bytes) -> tuple[int, BaseModel]:
    return 201, svc.record_step(run_id, **_json(StepBody, body).model_dump(exclude_none=True))


def _context(svc: MemoryService, run_id: str, body: bytes, query: bytes) -> tuple[int, BaseModel]:
    asked = _parsed(ContextQuery.model_validate, dict(parse_qsl(query.decode("latin-1"), keep_blank_values=True)))
    return 200, svc.get_context(run_id, url=asked.url, budget_tokens=asked.budget_tokens)


def _finish(svc: MemoryService, run_id: str, body: bytes, query: bytes) -> tuple[int, BaseModel]:
    finish = _json(FinishBody, body)
    return 200, svc.finish_run(run_id, success=finish.success, outcome=finish.outcome, final_url=finish.final_url)


_RUN_OPERATIONS: dict[tuple[str, str], Operation] = {
    ("POST", "steps"): _record_step, ("GET", "context"): _context, ("POST", "finish"): _finish,
}


class HotPath:
    """ASGI middleware: answers ``POST /v1/runs``, ``POST /v1/runs/{id}/steps``, ``GET /v1/runs/{id}/context``
    and ``POST /v1/runs/{id}/finish`` itself; hands every other request to ``app``."""

    def __init__(self, app: ASGIApp, *, namespaces: Namespaces, token: TokenCheck) -> None:
        self.app = app
        self._namespaces = namespaces
        self._token = token

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        found = _route(scope) if scope["type"] == "http" else None
        if found is None:
            await self.app(scope, receive, send)
            return
        response = await self._answer(*found, scope, receive)
        await response(scope, receive, send)

    async def _answer(self, operation: Operation, run_id: str, scope: dict[str, Any], receive: Any) -> Response:
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:  # in lower case; the first of a repeated header counts, as in Starlette
            headers.setdefault(name, value)
        try:
            self._token.check(_header(headers.get(b"authorization")))
            svc = self._namespaces.service(_header(headers.get(_NAMESPACE)))
            body = await _body(receive) if scope["method"] == "POST" else b""
            status, answer = operation(svc, run_id, body, scope.get("query_string", b""))
        except RequestValidationError as exc:
            return problems.validation_problem(exc.errors())
        except WebmemError as exc:
            return problems.webmem_problem(exc)
        except HTTPException as exc:
            return problems.http_problem(exc)
        return Response(answer.model_dump_json(), status_code=status, media_type="application/json")


def _route(scope: dict[str, Any]) -> tuple[Operation, str] | None:
    path, method = _route_path(scope), scope["method"]
    if path == "/v1/runs":
        return (_start, "") if method == "POST" else None
    found = _RUN_ROUTE.fullmatch(path)
    if found is None:
        return None
    operation = _RUN_OPERATIONS.get((method, found.group(2)))
    return (operation, found.group(1)) if operation is not None else None


def _route_path(scope: dict[str, Any]) -> str:
    """The path within the app (an app mounted under a prefix sees the prefix in ``root_path``)."""
    path: str = scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root) and path[len(root):len(root) + 1] == "/":
        return path[len(root):]
    return path


def _header(value: bytes | None) -> str | None:
    return value.decode("latin-1") if value is not None else None


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)
