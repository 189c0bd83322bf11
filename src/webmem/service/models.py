"""What the service layer answers: plain records that the MCP server and the HTTP API send as they are."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..core.models import Fact, FieldOption, LearnedAct, RunManifest, SelectorEntry, Step, ValueRead
from ..core.skill_records import Skill


class Answer(BaseModel):
    model_config = ConfigDict(frozen=True)


class PlannedCall(Answer):
    """One step of a replay plan, and the Playwright MCP tool call that performs it.

    ``value`` keeps a secret's placeholder (``{password}``): a client types the secret itself. ``tool``
    is None for a step that needs no call (Playwright scrolls an element into view when acting on it).
    """

    step: int
    action: str
    target: str | None = None
    value: str | None = None
    url: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    note: str | None = None


class ReplayOffer(Answer):
    """A remembered successful run bound to this run's goal: its steps as ready tool calls.

    ``stop_step`` is where an earlier replay of this task failed: hand over to the model before it.
    """

    trajectory_id: str
    recorded_goal: str
    slots: dict[str, str] = Field(default_factory=dict)
    steps: list[PlannedCall]
    stop_step: int | None = None


class StartedRun(Answer):
    """A run that was just started: its id, the tier-1 lessons for the system prompt, the first context,
    and a replay plan when a remembered run fits the goal (else why none does)."""

    run_id: str
    session_id: str | None = None
    goal: str
    domain: str
    system_prompt: str
    lessons: list[str]
    context: str
    context_tokens: int
    replay: ReplayOffer | None = None
    replay_unavailable: str | None = None


class RecordedStep(Answer):
    """A step as stored (secrets as placeholders), with the lessons its error recalled."""

    run_id: str
    step: Step
    tips: list[str] = Field(default_factory=list)


class RunContext(Answer):
    """The memory's context for the run's next turn, and what went into it."""

    run_id: str
    url: str
    text: str
    tokens: int
    budget_tokens: int
    parts: list[dict[str, Any]]


class FinishedRun(Answer):
    """The run's manifest once finished."""

    run: RunManifest
    steps: int


class LessonView(Answer):
    """A lesson as an agent reads it."""

    id: str
    lesson: str
    category: str
    domain: str | None = None
    failed_command: str | None = None
    error_pattern: str | None = None
    source: str
    use_count: int
    helpful_count: int
    unhelpful_count: int


class Lessons(Answer):
    lessons: list[LessonView]


class TrajectoryCandidate(Answer):
    trajectory_id: str
    goal: str
    similarity: float
    score: float
    eligible: bool
    reason: str
    why: str = ""


class TrajectorySearch(Answer):
    """Stored successful runs on the URL's origin that match a goal, best first, and why: the closest ``limit``
    of them (every one when asked for ``all``); ``scored`` says how many candidates there were. ``set_aside`` is
    what of the goal was not compared (how the answer must be written, politeness), ``values_read`` the values
    read in their usual forms ("05/01/2021" as the date 2021-05-01)."""

    goal: str
    origin: str
    best: str | None = None
    reason: str
    reference: str
    candidates: list[TrajectoryCandidate]
    scored: int = 0
    set_aside: list[str] = Field(default_factory=list)
    values_read: list[ValueRead] = Field(default_factory=list)
    replay: ReplayOffer | None = None
    replay_unavailable: str | None = None


class RunList(Answer):
    runs: list[RunManifest]


class RunDetail(Answer):
    run: RunManifest
    steps: list[Step]


class SiteFacts(Answer):
    domain: str
    facts: list[Fact]


class SiteSelectors(Answer):
    domain: str
    selectors: list[SelectorEntry]


class OriginWording(Answer):
    """What one origin's recordings taught about how its tasks may be worded: words that name one act there
    (``acts``), and options of a field that are values of a task (``options``)."""

    origin: str
    acts: list[LearnedAct]
    options: list[FieldOption]


class SiteWording(Answer):
    """What a site's recordings taught about how its tasks may be worded, per origin of the site."""

    domain: str
    origins: list[OriginWording]


class SkillList(Answer):
    """A site's skills, most trusted first."""

    site: str
    skills: list[Skill]


class SkillCall(Answer):
    """A call of a skill as a replay: the goal its parameters stand for and the plan's steps as tool calls.
    Replaying it keeps every guarantee replay has: a step whose element is not the one remembered hands over."""

    skill: Skill
    goal: str
    replay: ReplayOffer
