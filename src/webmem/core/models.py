"""The records webmem stores and returns, as validated pydantic models.

Models are strict: a wrong type is rejected rather than coerced, and a record built from
bad input raises :class:`~webmem.errors.InvalidInput` naming the field and the reason
(see :func:`validated`).
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from .errors import InvalidInput
from .text import storable
from .vocabulary import FACT_TYPES, MAX_COUNT, MAX_MILLIS, FactType  # noqa: F401 (importable from here too)

Id = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:@-]+$")]
Namespace = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$")]
Goal = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
LongText = Annotated[str, StringConstraints(max_length=10_000)]
ShortText = Annotated[str, StringConstraints(max_length=1000)]
Url = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Millis = Annotated[int, Field(ge=0, le=MAX_MILLIS, strict=False)]

RunStatus = Literal["running", "completed", "failed"]
LessonCategory = Literal["tool_fallback", "best_practice", "error_recovery", "site_specific"]
LessonSource = Literal["seed", "learned"]
LESSON_CATEGORIES: tuple[str, ...] = ("tool_fallback", "best_practice", "error_recovery", "site_specific")


class Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    @model_validator(mode="after")
    def _storable_texts(self) -> Any:
        """A text with a NUL character (or a lone surrogate) is refused: PostgreSQL cannot store one, and a
        value is never changed without saying so. Checked once per record, after its fields (a check per
        field cost a call per field: most of an import's validation)."""
        for name, value in self.__dict__.items():
            if isinstance(value, str) and (not value.isascii() or "\x00" in value):
                try:
                    storable(value)
                except InvalidInput as exc:
                    raise _FieldProblem(name, str(exc)) from None
        return self


class _FieldProblem(ValueError):
    """A problem a record's own validator found in one of its fields (reported at that field)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")  # as pydantic shows it, the record's location before it
        self.field, self.problem = field, problem


ModelT = TypeVar("ModelT", bound=BaseModel)


def validated(record_type: type[ModelT], /, **data: Any) -> ModelT:
    """Build a ``record_type`` from ``data``, turning a validation failure into InvalidInput."""
    try:
        return record_type(**data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(exc)) from None


@functools.lru_cache(maxsize=64)
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)  # building one costs a schema: ~0.1 ms, paid once per type


def validated_value(annotation: Any, value: object, *, field: str) -> Any:
    """Check one value against a type, turning a validation failure into InvalidInput."""
    try:
        return _adapter(annotation).validate_python(value, strict=True)
    except ValidationError as exc:
        reasons = "; ".join(error["msg"] for error in exc.errors(include_url=False))
        raise InvalidInput(f"{field}: {reasons}") from None


def positive_int(value: object, *, field: str) -> int:
    """``value`` when it is a positive integer (not a bool), else InvalidInput naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{field}: expected a positive integer, got {value!r}")
    return value


def describe_validation_error(exc: ValidationError) -> str:
    problems = []
    for location, message in map(_located, exc.errors(include_url=False)):
        problems.append(f"{'.'.join(map(str, location)) or exc.title}: {message}")
    return "; ".join(problems)


def _located(error: Any) -> tuple[tuple[Any, ...], str]:
    """A pydantic error's location and message; a problem a record found in one of its fields is located
    at that field."""
    found = error.get("ctx", {}).get("error")
    if isinstance(found, _FieldProblem):
        return (*error["loc"], found.field), found.problem
    return tuple(error["loc"]), error["msg"]


ReplayOutcome = Literal["replayed", "handed_over", "replay_failed"]
REPLAY_OUTCOMES: tuple[str, ...] = get_args(ReplayOutcome)


ReplayStepStatus = Literal["hit", "healed", "stale", "missed"]
REPLAY_STEP_STATUSES: tuple[str, ...] = get_args(ReplayStepStatus)


class ReplayedStep(Record):
    """What became of one step of a replay.

    ``hit``: its target was found as remembered and it had its effect. ``healed``: it had its effect,
    but its target was found another way than remembered (by role and name where the remembered
    selector no longer reaches it, by its label where the page moved it, by role alone where earlier
    runs saw this step's target under a different name each time). ``stale``: the remembered target
    is gone from the page, or has another role, although earlier runs all found it: evidence that the
    site changed. ``missed``: the step was not replayed, or did not have its effect (``reason`` says
    why). ``url`` is the page the step met.
    """

    step: Annotated[int, Field(ge=1)]
    action: Name
    target: ShortText | None = None
    status: ReplayStepStatus
    reason: LongText | None = None
    url: Url | None = None


class ReplayReport(Record):
    """What became of the replay a run started with: it alone solved the task (``replayed``), it
    handed the run to the agent's policy (``handed_over``), or it ran without handing over and the
    task failed (``replay_failed``). ``step`` is the plan's step (from 1) where it handed over or
    failed; for ``replayed``, the number of steps replayed. ``steps`` says what became of each step
    the replay reached."""

    outcome: ReplayOutcome
    trajectory_id: Id
    step: Count | None = None
    reason: LongText | None = None
    steps: list[ReplayedStep] = Field(default_factory=list)


class RunManifest(Record):
    """One execution of an agent, as the orchestrator sees it."""

    run_id: Id
    session_id: Id | None = None
    parent_run_id: Id | None = None
    status: RunStatus
    goal: Goal
    domain: Name
    start_url: Url
    final_url: Url | None = None
    current_url: Url | None = None
    started_at: datetime
    updated_at: datetime
    completed_at: datetime | None = None
    success: bool | None = None
    summary: LongText | None = None
    artifact_paths: list[str] = Field(default_factory=list)
    turn_count: Count = 0
    result: LongText | None = None
    reason: LongText | None = None
    model: Name | None = None
    replay: ReplayReport | None = None


#: One signal of an element's identity: a short text as the page gives it.
SignalText = Annotated[str, StringConstraints(max_length=200)]


class ElementSignals(Record):
    """How a person knows an element of a page, besides its role and accessible name: the label tied to
    it, the header of its row or column in a table, the legend of its group, the nearest heading and the
    text just before it, its stable attributes, its input type, a select's options, and its place among
    the fields of its kind in its form. Never its current value: that is state, not identity
    (``core.elements`` compares two identities)."""

    label: SignalText = ""
    row_header: SignalText = ""
    column_header: SignalText = ""
    group: SignalText = ""
    heading: SignalText = ""
    text_before: SignalText = ""
    tag: Annotated[str, StringConstraints(max_length=40)] = ""
    input_type: Annotated[str, StringConstraints(max_length=40)] = ""
    field_name: SignalText = ""
    dom_id: SignalText = ""
    placeholder: SignalText = ""
    title: SignalText = ""
    test_id: SignalText = ""
    options: Annotated[tuple[SignalText, ...], Field(max_length=100, strict=False)] = ()
    position: Annotated[int, Field(ge=1, le=10_000)] | None = None
    of_kind: Annotated[int, Field(ge=1, le=10_000)] | None = None


class Step(Record):
    """One action of a run, with what a replay needs."""

    action: Name
    url: Url | None = None
    target: ShortText | None = None
    selector: ShortText | None = None
    value: LongText | None = None
    ok: bool = True
    verified: bool | None = None
    error: LongText | None = None
    expected_effect: ShortText | None = None
    snapshot_hash: Annotated[str, StringConstraints(max_length=200)] | None = None
    duration_ms: Millis | None = None
    #: Which of several elements with the step's role and name it acted on: the element's place
    #: among them (from 1) in page order, and how many there were.
    target_index: Annotated[int, Field(ge=1, le=10_000)] | None = None
    target_count: Annotated[int, Field(ge=2, le=10_000)] | None = None
    #: The text a person reads next to an element without a name of its own ("Year" beside a text box):
    #: replay finds the field by it when the page puts its fields in another order.
    label: Annotated[str, StringConstraints(max_length=200)] | None = None
    #: In a goal template's replay steps: the slot whose ordinal ("the 2nd textbox") gives ``target_index``.
    place_slot: Annotated[int, Field(ge=1, le=999)] | None = None
    #: In a goal template's replay steps: the target's name is the goal's values around a gap ("{1}…{2}"),
    #: which the page completes (``trajectories.completions``).
    completes: bool | None = None
    #: The signals the target was known by when the step was recorded (replay finds it by them together).
    element: ElementSignals | None = None

    @model_validator(mode="after")
    def _index_within_count(self) -> Step:
        if (self.target_index is None) != (self.target_count is None) or (
            self.target_index is not None and self.target_count is not None and self.target_index > self.target_count
        ):
            raise ValueError("target_index and target_count go together, with target_index <= target_count")
        return self


class RecordedRun(RunManifest):
    """A run with its steps, as ``webmem export`` writes it and ``webmem import`` reads it."""

    steps: list[Step] = Field(default_factory=list)


class Trajectory(Record):
    """The steps of a successful run, offered to later runs with a similar goal."""

    id: Id
    goal: Goal
    origin: Name
    domain: Name
    steps: list[Step]
    success: bool
    duration_ms: Millis
    model: Name | None = None
    created_at: datetime
    run_id: Id | None = None
    goal_template: Goal | None = None
    replay_steps: list[Step] | None = None

    @property
    def verification_rate(self) -> float:
        """The share of the trajectory's steps whose effect was verified (0 when it has none)."""
        if not self.steps:
            return 0.0
        return sum(1 for step in self.steps if step.verified) / len(self.steps)


class Session(Record):
    """A finished run as the next run on the same domain hears of it."""

    id: Id
    domain: Name
    goal: Goal
    outcome: LongText
    success: bool
    final_url: Url | None = None
    timestamp: datetime
    turns_used: Count
    duration_ms: Millis
    run_id: Id | None = None


class Fact(Record):
    """Something learned about a domain, with a confidence that grows and decays."""

    domain: Name
    type: FactType
    key: Name
    value: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]
    confidence: Annotated[float, Field(ge=0.0, le=1.0)]
    sources: Count
    first_seen: datetime
    last_seen: datetime


class SelectorEntry(Record):
    """An element identity and the selectors known to reach it."""

    domain: Name
    element: Name
    stable_selector: ShortText | None = None
    last_ref: Annotated[str, StringConstraints(max_length=200)] | None = None
    success_count: Count
    last_used: datetime
    #: When the site last changed under this element's selectors: withheld while they have not worked since.
    stale_since: datetime | None = None


class Scenario(Record):
    """What to start a resumed or forked run with."""

    goal: Goal
    start_url: Url
    session_id: Id | None = None
    parent_run_id: Id


class TrajectorySummary(Record):
    """A stored trajectory without its steps, as a match report lists it."""

    id: Id
    goal: Goal
    origin: Name
    created_at: datetime
    duration_ms: Millis
    run_id: Id | None = None
    step_count: Count
    verification_rate: float
    goal_template: Goal | None = None


class MatchCandidate(Record):
    """One trajectory considered for a goal, with its scores and why it won or lost.

    ``similarity`` is how alike the goals are (0-1); ``semantic`` is the cosine of the goals'
    vectors when a goal embedder was asked (None otherwise); ``why`` says what the similarity
    rests on, and ``reason`` why the candidate is or is not eligible.
    """

    trajectory: TrajectorySummary
    similarity: float
    score: float
    recency: float
    speed: float
    verification_rate: float
    eligible: bool
    reason: str
    why: str = ""
    semantic: float | None = None


class ValueRead(Record):
    """A value of a goal read in its usual form: a date, an amount, a size or a count, however it is written
    ("05/01/2021" is the date ``2021-05-01``, "$30" and "thirty dollars" the number ``30``)."""

    written: str
    kind: str
    value: str


class LearnedAct(Record):
    """Two words (or short phrases) a site's recordings showed to name one act there: two goals that differ in them
    only, whose runs did the same steps; ``trajectory_id`` is the recording whose save taught it, ``other_id`` the
    one recorded before in the other words."""

    words: tuple[str, str]
    trajectory_id: str
    other_id: str
    learned_at: datetime


class FieldOption(Record):
    """An option a page offered in a field where a run chose the value its goal named: a value of that task too
    ("pending" beside the "completed" of "Show the completed orders"). ``value`` is the chosen one as the goal said
    it, ``field`` the field's label, ``task`` the run's goal template (or its goal), ``trajectory_id`` the run."""

    option: str
    value: str
    field: str
    task: str
    trajectory_id: str
    learned_at: datetime


class MatchReport(Record):
    """The outcome of looking for a reference trajectory: every candidate scored (or the closest
    ``limit`` of them; ``scored`` says how many there were), the winner, and why it won. ``set_aside``
    lists what of the goal did not count toward matching (how the answer must be written, politeness),
    ``values_read`` the values read in their usual forms."""

    goal: str
    origin: str
    threshold: float
    trace_scoring: bool
    candidates: list[MatchCandidate]
    scored: int = 0
    best: Trajectory | None = None
    reason: str
    set_aside: list[str] = Field(default_factory=list)
    values_read: list[ValueRead] = Field(default_factory=list)


class Lesson(Record):
    """Advice learned from a failure followed by a recovery (or seeded), with its track record."""

    id: Id
    lesson: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    category: LessonCategory
    failed_command: Annotated[str, StringConstraints(min_length=1, max_length=50)] | None = None
    error_pattern: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    domain: Name | None = None
    #: What the lesson tells the agent to do instead (``check``, ``press Enter``): a recalled tip is
    #: judged helpful only when the next step did this and worked.
    recovery: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    use_count: Count = 0
    helpful_count: Count = 0
    unhelpful_count: Count = 0
    created_at: datetime
    last_used: datetime
    source: LessonSource = "learned"
    triggered_domains: list[str] = Field(default_factory=list)
    learned_from: list[str] = Field(default_factory=list)
    recalled_in: list[str] = Field(default_factory=list)

    @property
    def demoted(self) -> bool:
        """Learned advice that kept failing: kept, but neither recalled nor promoted."""
        return is_demoted(self.source, self.helpful_count, self.unhelpful_count)

    @property
    def tier(self) -> int:
        """1 for lessons shown in every system prompt (tool fallbacks, best practices), else 2."""
        return 1 if self.category in ("tool_fallback", "best_practice") else 2


DEMOTE_AFTER_UNHELPFUL = 3


def is_demoted(source: str, helpful: int, unhelpful: int) -> bool:
    return source == "learned" and unhelpful >= DEMOTE_AFTER_UNHELPFUL and helpful <= unhelpful
