"""What a run of the agent came to (``AgentResult``), and the environment's own verdict on a task
(``Environment``, ``EnvironmentOutcome``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.models import ReplayedStep
from .policy import StepOutcome


@dataclass(frozen=True)
class EnvironmentOutcome:
    """The environment's own verdict on the run (a task's reward, a success check)."""

    success: bool
    reward: float | None = None
    detail: str = ""


class Environment(Protocol):
    """Something that can tell from the page whether the task is over: ``None`` while it is not."""

    def outcome(self, page: Any) -> EnvironmentOutcome | None:
        """The environment's verdict on the episode now; None while it is not over."""
        ...


@dataclass
class AgentResult:
    """How a run of the agent went.

    When the memory's replay started, ``replay_outcome`` is one of ``webmem.core.models.REPLAY_OUTCOMES``,
    ``replay_step`` the plan's step (from 1) where it handed over or failed (for ``replayed``, the
    steps replayed), and ``replay_reason`` why; all three are None when no replay started.
    ``replay_steps`` says what became of each replayed step (hit, healed, stale or missed, and why).
    ``replayed`` and ``replay_fallback`` say the same as ``replay_outcome`` in two booleans.
    ``replay_offered`` says whether the memory had a replay for the goal, and ``replay_miss_reason``
    why it had none (no run recorded on the origin, the goal does not fit a recorded task and where,
    a value the goal does not give, replay turned off, ...).
    ``skill_calls`` says what became of each skill the policy called, in order: ``done`` (its replay did all
    its steps, or the run succeeded during it), ``handed_over`` (its replay stopped and gave the page back),
    ``failed`` (the run failed during its replay) or ``refused`` (it could not be planned: a value its
    parameter refuses, or a skill that cannot be replayed for these values).
    """

    goal: str
    success: bool
    reason: str
    run_id: str | None = None
    answer: str | None = None
    turns: int = 0
    steps: int = 0
    decisions: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    replayed: bool = False
    replay_fallback: bool = False
    replay_trajectory_id: str | None = None
    handover_reason: str | None = None
    replay_outcome: str | None = None
    replay_step: int | None = None
    replay_reason: str | None = None
    replay_steps: list[ReplayedStep] = field(default_factory=list)
    replay_offered: bool = False
    replay_miss_reason: str | None = None
    skill_calls: list[str] = field(default_factory=list)
    context_tokens: int = 0
    memory_hits: int = 0
    duration_ms: int = 0
    final_url: str | None = None
    reward: float | None = None
    history: list[StepOutcome] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data (for JSON output)."""
        data = {key: value for key, value in self.__dict__.items() if key not in ("history", "replay_steps")}
        data["replay_steps"] = [step.model_dump(mode="json") for step in self.replay_steps]
        data["actions"] = [outcome.action.describe() for outcome in self.history]
        return data
