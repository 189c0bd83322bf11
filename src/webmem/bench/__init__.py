"""Benchmarks of webmem's browser agent: MiniWoB++ tasks, run cold (no memory) and warm (with memory).

``run_benchmark`` drives headless Chromium on a local copy of the tasks and returns a
:class:`BenchReport`; ``render_html`` turns it into a self-contained page. Needs ``webmem[bench]``.
"""

from .miniwob import (
    DEFAULT_TASKS,
    EpisodeState,
    TaskPage,
    available_tasks,
    episode_seed,
    html_dir,
    read_state,
    serve_miniwob,
)
from .report import render_html
from .results import (
    MODES,
    REPLAY_OUTCOMES,
    BenchReport,
    EpisodeRecord,
    Summary,
    comparison,
    decision_curve,
    memory_label,
    reason_group,
    replay_notes,
    summarize,
)
from .runner import (
    MEMORY_CHOICES,
    POLICIES,
    RECORDING,
    RECORDING_SEED_OFFSET,
    BenchProgress,
    MiniWobEnvironment,
    check_tasks,
    run_benchmark,
)

__all__ = [
    "DEFAULT_TASKS",
    "MEMORY_CHOICES",
    "MODES",
    "POLICIES",
    "RECORDING",
    "RECORDING_SEED_OFFSET",
    "REPLAY_OUTCOMES",
    "BenchProgress",
    "BenchReport",
    "EpisodeRecord",
    "EpisodeState",
    "MiniWobEnvironment",
    "Summary",
    "TaskPage",
    "available_tasks",
    "check_tasks",
    "comparison",
    "decision_curve",
    "episode_seed",
    "html_dir",
    "memory_label",
    "read_state",
    "reason_group",
    "render_html",
    "replay_notes",
    "run_benchmark",
    "serve_miniwob",
    "summarize",
]
