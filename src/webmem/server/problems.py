"""Errors as RFC 9457 problem details (``application/problem+json``), named after webmem's errors.

No traceback or driver message ever reaches a client: an error webmem did not expect is answered as
``InternalError`` with a generic detail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from ..core.errors import (
    InvalidInput,
    MemoryDisabled,
    NotFound,
    RunClosed,
    StoreCorrupt,
    StoreLocked,
    StoreReadOnly,
    WebmemError,
)

PROBLEM_TYPE = "application/problem+json"
#: The HTTP status of each of webmem's errors (the first class an error is an instance of wins).
STATUSES: tuple[tuple[type[WebmemError], int], ...] = (
    (InvalidInput, 422), (NotFound, 404), (RunClosed, 409), (MemoryDisabled, 409), (StoreLocked, 503),
    (StoreReadOnly, 503), (StoreCorrupt, 500),
)


def problem(status: int, title: str, detail: str, **extra: Any) -> JSONResponse:
    body = {"type": f"urn:webmem:problem:{title}", "title": title, "status": status, "detail": detail, **extra}
    headers = {"WWW-Authenticate": 'Bearer realm="webmem"'} if status == 401 else None
    return JSONResponse(body, status_code=status, media_type=PROBLEM_TYPE, headers=headers)


def webmem_problem(exc: WebmemError) -> JSONResponse:
    status = next((code for kind, code in STATUSES if isinstance(exc, kind)), 500)
    return problem(status, type(exc).__name__, str(exc))


async def on_webmem_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, WebmemError)
    return webmem_problem(exc)


def validation_problem(errors: Sequence[Mapping[str, Any]]) -> JSONResponse:
    """A 422 naming each field that failed (FastAPI's or pydantic's errors; where a field was is left out)."""
    fields = []
    for error in errors:
        if error.get("type") == "json_invalid":  # FastAPI's parser and pydantic's word this differently
            fields.append("body: not valid JSON")
            continue
        where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("body", "query", "path"))
        fields.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
    return problem(422, "InvalidInput", "; ".join(fields) or "the request is not valid")


async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
    return validation_problem(getattr(exc, "errors", lambda: [])())


def http_problem(exc: Exception) -> JSONResponse:
    status = int(getattr(exc, "status_code", 500))
    titles = {401: "Unauthorized", 404: "NotFound", 405: "MethodNotAllowed"}
    return problem(status, titles.get(status, "HTTPError"), str(getattr(exc, "detail", "")) or titles.get(status, ""))


async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
    return http_problem(exc)


async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    return problem(500, "InternalError", "the server could not answer this request; its log says why")
