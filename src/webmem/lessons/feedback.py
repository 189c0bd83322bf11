"""Judging recalled tips by what happened next: a success soon after, or the same failure again."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.models import Step
from .learning import failure_key

JUDGE_WITHIN_STEPS = 2


@dataclass
class _Pending:
    lesson_ids: list[str]
    key: tuple[str | None, str]
    error: str
    steps_left: int = JUDGE_WITHIN_STEPS
    trigger_seen: bool = False


@dataclass
class TipFeedback:
    """Tips recalled on an error, waiting for the next steps to show whether they helped.

    The failed step that caused the recall may be recorded just before or just after the
    recall; it is not counted as a repeat of itself.
    """

    pending: list[_Pending] = field(default_factory=list)

    def recalled(self, lesson_ids: list[str], command: str, error: str) -> None:
        if lesson_ids:
            self.pending.append(_Pending(lesson_ids, failure_key(command, error), error))

    def judge(self, step: Step) -> tuple[list[str], list[str]]:
        """Feed the next recorded step; returns the lesson ids now judged (helpful, unhelpful)."""
        helpful: list[str] = []
        unhelpful: list[str] = []
        waiting = []
        for item in self.pending:
            same_failure = not step.ok and failure_key(step.action, step.error or "") == item.key
            if not item.trigger_seen:
                item.trigger_seen = True
                if same_failure and (step.error or "") == item.error:
                    waiting.append(item)
                    continue
            if step.ok:
                helpful.extend(item.lesson_ids)
            elif same_failure:
                unhelpful.extend(item.lesson_ids)
            elif item.steps_left > 1:
                item.steps_left -= 1
                waiting.append(item)
        self.pending = waiting
        return helpful, unhelpful
