"""The JSON bodies the API accepts (unknown fields are refused, so a misspelt one is not ignored), and the
query of a context (read by the hot path; FastAPI reads the route's parameters)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


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


class ContextQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")  # as FastAPI ignores query parameters a route does not name

    url: str | None = None
    budget_tokens: int | None = None


class SkillCallBody(Body):
    parameters: dict[str, Any] = {}
    site: str | None = None  # needed only when the skill is named by its name, not its id
