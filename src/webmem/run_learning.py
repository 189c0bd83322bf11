"""What a finished run teaches the memory, written in the transaction that finishes it: the manifest, what became of
its replay, the outcome gate's counts, the trajectory of a successful run, the session on its domain, the facts its
steps show, the lessons of a failure then a success, and an action pattern."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .core.clock import utcnow
from .core.models import ReplayReport, RunManifest
from .core.urls import site_of
from .knowledge import derived_facts
from .outcomes import GivenAdvice, learn_from_replay
from .store.prepared import reading_ahead
from .working.patterns import derive_pattern

if TYPE_CHECKING:
    from .memory import Memory


def learn_from_run(
    mem: Memory, run_id: str, domain: str, given: GivenAdvice, *, success: bool, summary: str, final_url: str | None,
    facts: list[Mapping[str, str]], model: str | None, replay: ReplayReport | None,
) -> RunManifest:
    """Finish ``run_id`` and learn from it in one transaction; the manifest as stored (unchanged when another
    finish came first)."""
    with mem.store.write() as conn:
        # only a running run is finished: a concurrent finish of this run waits, then finds it finished
        manifest = mem.runs.finish_running(run_id, success=success, summary=summary, final_url=final_url,
                                           replay=replay)
        if manifest is None:
            return mem.runs.get(run_id)
        stamp = mem.trajectories.context_reads(manifest.start_url) if success else []  # a trajectory's origin
        with reading_ahead(conn, [mem.runs.steps_read(run_id), *stamp]):  # one round trip on PostgreSQL
            steps = mem.runs.steps(run_id)
            ended = manifest.completed_at or utcnow()
            elapsed_ms = max(0, round((ended - manifest.started_at).total_seconds() * 1000))
            if replay is not None:
                learn_from_replay(mem, replay, given, run_id=run_id, success=success)
            mem.outcomes.record(conn, site=site_of(domain), given=given, success=success, run_id=run_id)
            if success and steps:
                step_ms = [step.duration_ms for step in steps if step.duration_ms is not None]
                mem.trajectories.save(
                    goal=manifest.goal, start_url=manifest.start_url, steps=steps, success=True,
                    duration_ms=sum(step_ms) if step_ms else elapsed_ms, model=model or manifest.model, run_id=run_id,
                )
            mem.knowledge.record_session(
                domain, goal=manifest.goal, outcome=manifest.summary or summary, success=success,
                final_url=manifest.final_url, turns_used=manifest.turn_count, duration_ms=elapsed_ms,
                session_id=manifest.session_id, run_id=run_id,
            )
            learned = [*(derived_facts(steps) if success else []), *facts]
            if learned:
                mem.knowledge.record_facts(domain, learned, run_id=run_id)
            mem.lessons.extract_from_steps(steps, run_id=run_id)
            draft = derive_pattern(manifest.goal, steps) if success else None
            if draft is not None:
                mem.patterns.learn_pattern(domain, draft.description, draft.pattern_type, draft.steps, run_id=run_id)
    return manifest
