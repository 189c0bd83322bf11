"""decide: the policy protocol, and what a policy is given each turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..core.models import SelectorEntry
from ..core.skill_records import Skill
from .actions import Action
from .observation import Observation


@dataclass(frozen=True)
class StepOutcome:
    """What one executed action did, as later turns of the same run see it."""

    action: Action
    ok: bool
    verified: bool | None
    error: str | None = None
    effect: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class Turn:
    """Everything a policy decides from.

    ``context`` is the memory's context for this turn (``run.context(url=...)`` as text, '' without
    memory); ``system_prompt`` carries the tier-1 lessons; ``known_selectors`` are the memory's selector
    cache entries for the site, most successful first; ``history`` is this run's executed actions.
    ``skills`` are the skills of the page's site that a policy may call (an LLM's tools), most trusted first.
    """

    goal: str
    observation: Observation
    number: int
    context: str = ""
    system_prompt: str = ""
    history: tuple[StepOutcome, ...] = ()
    known_selectors: tuple[SelectorEntry, ...] = ()
    last_error: str | None = None
    skills: tuple[Skill, ...] = ()


@dataclass
class PolicyStats:
    """What a policy spent: decisions made, and LLM calls and tokens as the endpoint reported them."""

    decisions: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def snapshot(self) -> PolicyStats:
        """A copy of the counts now."""
        return PolicyStats(self.decisions, self.llm_calls, self.prompt_tokens, self.completion_tokens, dict(self.extra))

    def since(self, before: PolicyStats) -> PolicyStats:
        """The counts added since ``before`` was taken."""
        return PolicyStats(
            self.decisions - before.decisions, self.llm_calls - before.llm_calls,
            self.prompt_tokens - before.prompt_tokens, self.completion_tokens - before.completion_tokens,
        )


@runtime_checkable
class Policy(Protocol):
    """Chooses the next action. ``stats.decisions`` counts the calls to :meth:`decide`."""

    name: str
    stats: PolicyStats

    def decide(self, turn: Turn) -> Action:
        """The next action for this turn (``finish`` to end the run)."""
        ...

    def start(self, goal: str) -> None:
        """A new run begins (a policy may reset what it tracks per run)."""
        ...
