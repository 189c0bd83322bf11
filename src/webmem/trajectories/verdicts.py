"""What a match says of each goal it ranked: whether it may win and why, its score, and the report.

The report is built from values the match computed itself (the goal it was given is checked first):
its records are made without validating them again (``stored_record``), which would cost more than the
ranking of a warm origin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core.models import MatchCandidate, MatchReport, Trajectory, TrajectorySummary, ValueRead
from ..core.records import stored_record
from .ranking import Scored
from .reading import read_goal
from .recall import Signature
from .value_forms import value_spans

RECENCY_HALF_LIFE_DAYS = 14.0  # the e-folding time of the recency score
SPEED_SCALE_MS = 60_000.0
_SUMMARY_FIELDS = ("id", "goal", "origin", "created_at", "duration_ms", "run_id", "step_count", "verification_rate",
                   "goal_template")
_CANDIDATE_FIELDS = ("trajectory", "similarity", "score", "recency", "speed", "verification_rate", "eligible",
                     "reason", "why", "semantic")
_REPORT_FIELDS = ("goal", "origin", "threshold", "trace_scoring", "candidates", "scored", "best", "reason", "set_aside",
                  "values_read")
_VALUE_FIELDS = ("written", "kind", "value")


@dataclass(slots=True)
class Judged:
    item: Scored
    score: float
    recency: float
    speed: float
    reason: str

    @property
    def eligible(self) -> bool:
        return self.reason == "eligible"


@dataclass(slots=True)
class Judge:
    """Judges ranked goals for one match: made at ``now``, goals created before ``cutoff`` have expired."""

    now: datetime
    cutoff: datetime
    ttl_days: float
    threshold: float
    trace_scoring: bool
    exclude_run_id: str | None

    def __call__(self, item: Scored) -> Judged:
        stored = item.goal
        age_days = max(0.0, (self.now - stored.created_at).total_seconds() / 86_400)
        recency = math.exp(-age_days / RECENCY_HALF_LIFE_DAYS)
        speed = 1.0 / (1.0 + stored.duration_ms / SPEED_SCALE_MS)
        score = (0.6 * item.similarity + 0.2 * recency + 0.1 * speed + 0.1 * stored.verification_rate) \
            if self.trace_scoring else item.similarity
        if self.exclude_run_id is not None and stored.run_id == self.exclude_run_id:
            reason = "this run's own trajectory"
        elif stored.created_at < self.cutoff:
            reason = f"expired: {age_days:.1f} days old, TTL is {self.ttl_days:g} days"
        elif item.similarity < self.threshold:
            reason = f"similarity {item.similarity:.2f} is below the threshold {self.threshold:.2f}"
        else:
            reason = "eligible"
        return Judged(item, score, recency, speed, reason)


def candidate(judged: Judged, origin: str, query: Signature, goal: str) -> MatchCandidate:
    item, stored = judged.item, judged.item.goal
    summary = stored_record(TrajectorySummary, _SUMMARY_FIELDS, (
        stored.id, stored.goal, origin, stored.created_at, stored.duration_ms, stored.run_id, stored.step_count,
        stored.verification_rate, stored.signature.template))
    return stored_record(MatchCandidate, _CANDIDATE_FIELDS, (
        summary, item.similarity, judged.score, judged.recency, judged.speed, stored.verification_rate,
        judged.eligible, judged.reason, item.why(query, goal), item.semantic))


def report(goal: str, origin: str, threshold: float, trace_scoring: bool, candidates: list[MatchCandidate],
           scored: int, best: Trajectory | None, reason: str, *, option: str | None = None) -> MatchReport:
    """The match report; ``option``: the words of the goal the winner was reached by reading as another option of a
    field (``field_options``), listed among the values read."""
    reading = read_goal(goal)
    values_read = [stored_record(ValueRead, _VALUE_FIELDS, (span.written, span.kind, span.value))
                   for span in value_spans(reading.text)]
    if option is not None:
        values_read.append(stored_record(ValueRead, _VALUE_FIELDS, (option, "option", option)))
    values: tuple[Any, ...] = (goal, origin, threshold, trace_scoring, candidates, scored, best, reason,
                               list(reading.set_aside), values_read)
    return stored_record(MatchReport, _REPORT_FIELDS, values)


def verdict(
    best: MatchCandidate | None, closest: tuple[Judged, str] | None, eligible: int, threshold: float, scored: int,
) -> str:
    if best is not None:
        how = "highest score" if eligible > 1 else "only eligible candidate"
        return (f"{best.trajectory.id} won: similarity {best.similarity:.2f} >= {threshold:.2f} ({best.why}), "
                f"{how} ({best.score:.3f})")
    if closest is None:
        return "no successful trajectory on this origin"
    judged, why = closest
    return f"no eligible candidate among {scored}; closest: {judged.item.goal.id} ({judged.reason}; {why})"
