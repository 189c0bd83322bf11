"""How far a skill is to be trusted: its record (the runs that recorded it, its replays and what became of them)
and its status, admitted by evidence.

A skill is ``verified`` once a replay of it did a new instance (other values in its template's slots than those
of the runs that recorded it without replay, however the goal was worded) and that run succeeded; ``withdrawn``
while its replays fail too often (the replay gate closed), or when a page it goes through changed after it last
worked, until a replay verifies it again, or while the outcome gate demotes every recording of it (the runs given
it as advice kept failing); ``unverified`` otherwise. A replay failed when it ran without handing
over and the task failed; a run that failed after its replay did all its steps failed on the rest of its goal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..core.models import RunManifest, Trajectory
from ..core.skill_records import SkillRecord, SkillStatus
from ..trajectories.binding import bind
from ..trajectories.plans import ReplayGate


@dataclass(frozen=True)
class Standing:
    record: SkillRecord
    status: SkillStatus
    reason: str


def standing(recordings: Sequence[Trajectory], runs: Sequence[RunManifest], gate: ReplayGate,
             changed: datetime | None, *, demoted: bool = False) -> Standing:
    """The record and status of the skill ``recordings`` make (newest first), from the ``runs`` of its site, its
    replay gate, when a page of its newest recording changed after that recording (``changed``), and whether the
    outcome gate demoted every recording of it (``demoted``: runs given it as advice kept failing)."""
    ids = {trajectory.id for trajectory in recordings}
    replays = [run for run in runs if run.replay is not None and run.replay.trajectory_id in ids]
    replay_runs = {run.run_id for run in replays}
    template = recordings[0].goal_template if recordings else None
    taught = {_instance(trajectory.goal, template) for trajectory in recordings if trajectory.run_id not in replay_runs}
    successes = [run for run in replays if run.replay.outcome == "replayed" and run.success is True]  # type: ignore[union-attr]
    new_instances = [run for run in successes if _instance(run.goal, template) not in taught]
    last_verified = max((run.completed_at or run.updated_at for run in new_instances), default=None)
    record = SkillRecord(
        recorded=len(recordings) - len(replay_runs & {t.run_id for t in recordings if t.run_id}),
        replays=len(replays), successes=len(successes),
        handovers=sum(run.replay.outcome == "handed_over" for run in replays),  # type: ignore[union-attr]
        failures=sum(run.replay.outcome == "replay_failed" for run in replays),  # type: ignore[union-attr]
        last_verified=last_verified,
    )
    if gate.closed:
        return Standing(record, "withdrawn", f"its replays failed {gate.failures} times against {gate.successes} "
                                             "successes: it is not replayed until it is recorded again")
    if demoted:
        return Standing(record, "withdrawn", "runs that were given it kept failing: memory no longer offers it, "
                                             "until a new recording of it succeeds")
    if changed is not None and (last_verified is None or last_verified < changed):
        return Standing(record, "withdrawn", f"a page it goes through changed on {changed:%Y-%m-%d %H:%M} UTC, "
                                             "after it last worked: a replay must verify it again")
    if last_verified is not None:
        return Standing(record, "verified", f"a replay did a new instance on {last_verified:%Y-%m-%d %H:%M} UTC")
    return Standing(record, "unverified", "no replay of it has done an instance other than its recordings yet")


def _instance(goal: str, template: str | None) -> object:
    """What tells one instance of the task from another: the values the goal gives the template's slots (however
    the rest is worded), else the goal itself (a run that called the skill on the way to a larger goal)."""
    values = bind(template, goal) if template else None
    if values is not None:
        return tuple(sorted((slot, _normal(value)) for slot, value in values.items()))
    return _normal(goal)


def _normal(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip(".!? ")
