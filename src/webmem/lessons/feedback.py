"""Judging recalled tips by what happened next: a tip helped when the agent followed it and that worked,
and failed when the agent followed it and that failed. A tip the agent did not follow is not judged."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.models import Lesson, Step
from .learning import command_name, failure_key

JUDGE_WITHIN_STEPS = 2


@dataclass
class _Pending:
    advice: dict[str, str]  # lesson id -> what it said to do instead
    key: tuple[str | None, str]
    error: str
    steps_left: int = JUDGE_WITHIN_STEPS
    trigger_seen: bool = False


@dataclass
class TipFeedback:
    """Tips recalled on an error, waiting for the next steps to show whether following them helped.

    The failed step that caused the recall may be recorded just before or just after the
    recall; it is not taken for an attempt to follow the tips.
    """

    pending: list[_Pending] = field(default_factory=list)

    def recalled(self, tips: list[Lesson], command: str, error: str) -> None:
        advice = {tip.id: tip.recovery for tip in tips if tip.recovery}
        if advice:
            self.pending.append(_Pending(advice, failure_key(command, error), error))

    def judge(self, step: Step) -> tuple[list[str], list[str]]:
        """Feed the next recorded step; returns the lesson ids now judged (helpful, unhelpful)."""
        helpful: list[str] = []
        unhelpful: list[str] = []
        waiting = []
        for item in self.pending:
            if not item.trigger_seen:
                item.trigger_seen = True
                if not step.ok and (step.error or "") == item.error and failure_key(step.action, step.error or "") \
                        == item.key:
                    waiting.append(item)
                    continue
            for lesson_id, recovery in list(item.advice.items()):
                if follows(step, recovery):
                    (helpful if step.ok else unhelpful).append(lesson_id)
                    del item.advice[lesson_id]
            item.steps_left -= 1
            if item.advice and item.steps_left > 0:
                waiting.append(item)
        self.pending = waiting
        return helpful, unhelpful


def follows(step: Step, recovery: str) -> bool:
    """Whether ``step`` does what a tip advised: the same command, and the same key for a press."""
    advised = recovery.split()
    if not advised or command_name(step.action) != advised[0].lower():
        return False
    return len(advised) == 1 or (step.value or "").strip().lower() == " ".join(advised[1:]).lower()
