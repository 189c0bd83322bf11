"""What the viewer shows: the sites a memory knows, each site's figures over time, trajectories, lineage.

Reads only; built from the run manifests (newest first, at most :data:`MAX_RUNS_READ` of them).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date

from ..core.models import RunManifest, TrajectorySummary
from ..memory import Memory
from .models import Answer

MAX_RUNS_READ = 5000


#: How many of a site's latest finished runs its summary pictures.
RECENT_RUNS = 30


class RunPoint(Answer):
    """One finished run, as a site's summary pictures it: its steps, how many of them the model decided (the
    rest a replay did as remembered), and what became of it."""

    run_id: str
    started_at: str
    steps: int
    decided: int
    success: bool | None
    replay: str | None = None


class SiteSummary(Answer):
    domain: str
    runs: int
    succeeded: int
    replayed: int
    trajectories: int
    last_run: str | None = None
    recent: list[RunPoint] = []


class DayFigures(Answer):
    """One day of runs on a site: how many, how many succeeded, steps per run, how many replay did alone."""

    day: date
    runs: int
    success_rate: float
    steps_per_run: float
    replay_rate: float


class SiteHistory(Answer):
    domain: str
    days: list[DayFigures]


class Sites(Answer):
    sites: list[SiteSummary]


class TrajectoryList(Answer):
    trajectories: list[TrajectorySummary]


def sites(memory: Memory) -> Sites:
    by_domain: dict[str, list[RunManifest]] = defaultdict(list)
    for run in memory.runs.list(limit=MAX_RUNS_READ):
        by_domain[run.domain].append(run)
    stored: dict[str, int] = defaultdict(int)
    for trajectory in memory.trajectories.list(limit=MAX_RUNS_READ):
        stored[trajectory.domain] += 1
    found = [
        SiteSummary(domain=domain, runs=len(runs), succeeded=sum(run.success is True for run in runs),
                    replayed=sum(_replayed(run) for run in runs), trajectories=stored.get(domain, 0),
                    last_run=runs[0].started_at.isoformat(), recent=_recent(runs))
        for domain, runs in by_domain.items()
    ]
    return Sites(sites=sorted(found, key=lambda site: (-site.runs, site.domain)))


def site_history(memory: Memory, domain: str) -> SiteHistory:
    runs = [run for run in memory.runs.list(domain=domain, limit=MAX_RUNS_READ) if run.status != "running"]
    by_day: dict[date, list[RunManifest]] = defaultdict(list)
    for run in runs:
        by_day[run.started_at.date()].append(run)
    days = [
        DayFigures(day=day, runs=len(group), success_rate=sum(run.success is True for run in group) / len(group),
                   steps_per_run=sum(run.turn_count for run in group) / len(group),
                   replay_rate=sum(_replayed(run) for run in group) / len(group))
        for day, group in sorted(by_day.items())
    ]
    return SiteHistory(domain=runs[0].domain if runs else domain, days=days)


def trajectory_list(memory: Memory, *, domain: str | None = None, limit: int = 50) -> TrajectoryList:
    return TrajectoryList(trajectories=[
        TrajectorySummary(id=t.id, goal=t.goal, origin=t.origin, created_at=t.created_at, duration_ms=t.duration_ms,
                          run_id=t.run_id, step_count=len(t.steps), verification_rate=t.verification_rate,
                          goal_template=t.goal_template)
        for t in memory.trajectories.list(domain=domain, limit=limit)
    ])


def _recent(runs: list[RunManifest]) -> list[RunPoint]:
    """The latest finished of ``runs`` (newest first), oldest first."""
    finished = [run for run in runs if run.status != "running"][:RECENT_RUNS]
    return [RunPoint(run_id=run.run_id, started_at=run.started_at.isoformat(), steps=run.turn_count,
                     decided=max(0, run.turn_count - _steps_replayed(run)), success=run.success,
                     replay=run.replay.outcome if run.replay else None)
            for run in reversed(finished)]


def _steps_replayed(run: RunManifest) -> int:
    if run.replay is None:
        return 0
    return sum(step.status in ("hit", "healed") for step in run.replay.steps)


def _replayed(run: RunManifest) -> bool:
    return run.replay is not None and run.replay.outcome == "replayed"
