"""The agent's skill calls: the site's skills offered to a policy that calls them (an LLM's), and each call made a
replay of the skill's plan that gives the page back to that policy when its steps are done or it hands over."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..core.errors import NotFound
from ..core.models import ReplayReport
from ..core.skill_records import Skill
from ..core.text import clean_for_prompt
from ..core.urls import origin_of
from ..skills.tools import offered
from .actions import Action
from .policy import Policy, PolicyStats, StepOutcome, Turn
from .replay import ReplayPolicy

if TYPE_CHECKING:
    from ..memory import Memory
    from ..trajectories.plans import ReplayPlan

#: The most skills offered at once (most trusted first): each is a tool the model reads on every turn.
MAX_SKILLS_OFFERED = 6


class OfferedSkills:
    """The skills of the site a page is on that a run offers its policy: none unless the policy calls skills
    (``calls_skills``) and the agent has a memory; read again when the page's origin changes."""

    def __init__(self, memory: Memory | None, policy: Policy) -> None:
        self._memory = memory if getattr(policy, "calls_skills", False) else None
        self._origin: str | None = None
        self._skills: tuple[Skill, ...] = ()

    def on(self, url: str) -> tuple[Skill, ...]:
        """The skills offered on the page at ``url``: its origin's, withdrawn ones left out, most trusted first."""
        if self._memory is None or not url.startswith(("http://", "https://")):
            return ()
        origin = origin_of(url)
        if origin != self._origin:
            self._origin = origin
            found = self._memory.skills.list(origin)
            self._skills = tuple(offered(found, MAX_SKILLS_OFFERED))
        return self._skills

    def plan(self, action: Action) -> ReplayPlan:
        """The replay plan of the call ``action`` makes of an offered skill; ``InvalidInput`` for a value its
        parameter refuses, ``NotFound`` when the skill cannot be replayed for these values (or is not offered)."""
        call = action.skill
        skill = next((skill for skill in self._skills if call is not None and skill.id == call.id), None)
        if self._memory is None or skill is None or call is None:
            raise NotFound("no such skill is offered on this page")
        return self._memory.skills.plan(skill, call.values)


@dataclass
class SkillReplay:
    """A skill call whose plan was made: its replay, its entry in the run's history (``index``), and the repeat
    counts from before the call (the replay's own actions are not the model's repeats)."""

    action: Action
    replay: ReplayPolicy
    index: int
    repeats: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    ended: bool = False

    @property
    def steps(self) -> int:
        return len(self.replay.plan.steps)

    def end(self, history: list[StepOutcome]) -> str | None:
        """The replay gave the page back: the call's entry in ``history`` says how it went. The error naming the
        skill, when it handed over."""
        self.ended = True
        replay, name = self.replay, self.action.skill.name if self.action.skill else "?"
        error = effect = None
        if replay.handed_over:
            error = (f"its replay stopped at step {replay.handover_step} of {self.steps} and handed the page back to "
                     f"you: {clean_for_prompt(replay.handover_reason or '', 500)}. Go on from the page as it is")
        else:
            effect = f"replayed all {self.steps} steps of the skill"
        history[self.index] = replace(history[self.index], ok=error is None, effect=effect, error=error)
        return f"skill {name}: {error}" if error is not None else None

    def outcome(self, success: bool) -> str:
        """What became of the call, once the run ended (``success``: how it ended): ``handed_over`` (its replay
        stopped and gave the page back), ``done`` (all its steps replayed, or the run succeeded during it) or
        ``failed`` (the run failed during it). A replay that did all its steps is not blamed for a run that failed
        after it, on the rest of the goal."""
        if self.replay.handed_over:
            return "handed_over"
        return "done" if success or self.ended else "failed"

    def report(self, success: bool, reason: str, last_step: StepOutcome | None) -> ReplayReport:
        """What became of the call's replay, for the run's manifest (see :meth:`outcome`): handed over, replayed
        (done) or failed."""
        replay = self.replay
        trajectory_id = replay.plan.trajectory_id
        steps = replay.step_report(last_step)
        outcome = self.outcome(success)
        if outcome == "handed_over":
            return ReplayReport(outcome="handed_over", trajectory_id=trajectory_id, step=replay.handover_step,
                                reason=clean_for_prompt(replay.handover_reason or "", 2000), steps=steps)
        if outcome == "done":
            return ReplayReport(outcome="replayed", trajectory_id=trajectory_id, step=replay.position, steps=steps)
        return ReplayReport(outcome="replay_failed", trajectory_id=trajectory_id, step=max(replay.position, 1),
                            reason=clean_for_prompt(reason, 2000), steps=steps)


class AfterSkill:
    """The policy behind a skill's replay: ``policy`` itself, told first (``handed_back``) that the replay gave the
    page back, so that the turn it decides carries how the call went."""

    def __init__(self, policy: Policy, handed_back: Callable[[Turn], Turn]) -> None:
        self.policy = policy
        self.name = policy.name
        self._handed_back = handed_back

    @property
    def stats(self) -> PolicyStats:
        return self.policy.stats

    def start(self, goal: str) -> None:
        """Nothing to reset: the run started long before the call."""

    def decide(self, turn: Turn) -> Action:
        return self.policy.decide(self._handed_back(turn))
