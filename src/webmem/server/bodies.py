"""The JSON bodies the API accepts (unknown fields are refused, so a misspelt one is not ignored)."""

from __future__ import annotations

from typing import Any, TypeVar

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, ValidationError


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StartBody(Body):
    goal: str
    start_url: str
    session_id: str | None = None


class StepBody(Body):
    action: str
    target: str | None = None
    selector: str | None = None
    value: str | None = None
    url: str | None = None
    ok: bool = True
    error: str | None = None
    secret: bool = False
    verified: bool | None = None
    expected_effect: str | None = None
    duration_ms: int | None = None
    target_index: int | None = None
    target_count: int | None = None
    label: str | None = None


class FinishBody(Body):
    success: bool
    outcome: str | None = None
    final_url: str | None = None


class ResumeBody(Body):
    goal: str | None = None


class ForkBody(Body):
    goal: str


Parsed = TypeVar("Parsed", bound=Body)


def parsed_body(model: type[Parsed], raw: bytes) -> Parsed:
    """``raw`` (a request's JSON body) as ``model``, or the 422 FastAPI would answer for it."""
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**error, "loc": ("body", *error["loc"])} for error in exc.errors(include_url=False)]) from None


def documented_body(model: type[Body]) -> dict[str, Any]:
    """The OpenAPI of a route that reads its body itself (with :func:`parsed_body`): ``model`` as its body."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}
