"""A remembered run as a Playwright script (Python or TypeScript) that a team can read, review, put in CI
and run without any model: ``plan`` decides what the script does, ``python`` and ``typescript`` write it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import InvalidInput, RunNotFound, TrajectoryNotFound
from ..core.models import Trajectory
from ..core.vocabulary import SCRIPT_LANGUAGES
from .plan import ScriptPlan, plan_script
from .python import render_python
from .typescript import render_typescript

if TYPE_CHECKING:
    from ..memory import Memory

LANGUAGES = SCRIPT_LANGUAGES


def script_for(trajectory: Trajectory, *, lang: str = "python", start_url: str | None = None) -> str:
    """The trajectory's path as a runnable Playwright script in ``lang`` (python or typescript)."""
    if lang not in LANGUAGES:
        raise InvalidInput(f"lang: {lang!r} is not one of {', '.join(LANGUAGES)}")
    plan = plan_script(trajectory, start_url=start_url)
    return render_python(plan) if lang == "python" else render_typescript(plan)


def script_of(mem: Memory, source_id: str, *, lang: str = "python") -> str:
    """The script of a run (by its id or its trajectory's id); the run's start URL is where it begins."""
    if not isinstance(source_id, str) or not source_id:
        raise InvalidInput("source_id: expected a run id or a trajectory id")
    try:
        trajectory = mem.trajectories.get(source_id)
    except TrajectoryNotFound:
        manifest = mem.runs.get(source_id)  # RunNotFound names the id when it is neither
        found = [stored for stored in mem.trajectories.list(domain=manifest.domain) if stored.run_id == source_id]
        if not found:
            raise TrajectoryNotFound(f"run {source_id} left no trajectory: only a run that succeeded becomes a "
                                     "script") from None
        return script_for(found[0], lang=lang, start_url=manifest.start_url)
    try:
        start = mem.runs.get(trajectory.run_id).start_url if trajectory.run_id else None
    except RunNotFound:  # the run was forgotten, its trajectory kept
        start = None
    return script_for(trajectory, lang=lang, start_url=start)


__all__ = ["LANGUAGES", "ScriptPlan", "plan_script", "script_for", "script_of"]
