"""The records of the episode store: pages as the agent saw them, graded steps, and the advice drawn from them."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from .models import Id, LongText, Name, Record, ShortText, Url


Outcome = Literal["pending", "success", "failure"]


class PageElement(Record):
    """An interactive element of a page, as an accessibility snapshot shows it."""

    role: Name
    name: Annotated[str, StringConstraints(max_length=1000)] = ""
    ref: Annotated[str, StringConstraints(max_length=200)] | None = None
    value: LongText | None = None


_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f]")


def _absolute_url(url: str) -> str:
    if _SPACE_OR_CONTROL.search(url):
        raise ValueError("the URL contains whitespace or control characters")
    if not urlsplit(url).scheme:
        raise ValueError(f"{url[:80]!r} is not an absolute URL (it has no scheme such as https:)")
    return url


class EnvironmentState(Record):
    """What the agent saw: the page's url, title and interactive elements."""

    url: Annotated[Url, AfterValidator(_absolute_url)]
    title: Annotated[str, StringConstraints(max_length=1000)] = ""
    elements: list[PageElement] = Field(default_factory=list, max_length=5000)

    def element_keys(self) -> frozenset[tuple[str, str]]:
        """The page's elements as (role, name) pairs, for comparing two pages."""
        return frozenset((element.role, element.name) for element in self.elements)


class EpisodeEntry(Record):
    """One graded step of an episode: the page before, the action, the page after, and its grade."""

    id: int
    session_id: Id
    step_id: Id | None = None
    env_pre: EnvironmentState
    internal_state: LongText
    think: LongText | None = None
    internal_state_embedding: list[float]
    embedder: Name
    action: ShortText
    action_element_text: ShortText
    env_post: EnvironmentState | None = None
    outcome: Outcome = "pending"
    outcome_reason: LongText | None = None
    correction: LongText | None = None
    task_incomplete: LongText | None = None
    grade_confidence: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    created_at: datetime
    step_num: Annotated[int, Field(ge=1)]
    rep: Annotated[int, Field(ge=1)]
    run_id: Id | None = None


class StepGrade(BaseModel):
    """The grader's verdict on one step; it names the step by id or by number."""

    model_config = ConfigDict(extra="forbid")

    step_id: Id | None = None
    step_number: Annotated[int, Field(ge=1)] | None = None
    action: ShortText | None = None
    is_correct: bool
    explanation: LongText = ""
    correction: LongText | None = None
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0


class GradingResult(BaseModel):
    """A grader's verdict on a whole episode."""

    model_config = ConfigDict(extra="forbid")

    task_completed: bool
    completion_confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0
    overall_explanation: LongText = ""
    step_grades: list[StepGrade]


class RetrievedMemory(Record):
    """An earlier step offered as advice: REPEAT when it worked, AVOID when it did not."""

    entry: EpisodeEntry
    environment_similarity: float
    state_similarity: float
    score: float

    @property
    def advice(self) -> str:
        """REPEAT or AVOID and the action, as one prompt line (from the entry's grade)."""
        return "REPEAT" if self.entry.outcome == "success" else "AVOID"
