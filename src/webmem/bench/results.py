"""What a benchmark measured: one record per episode, and the averages over tasks and modes.

Every aggregate is a pure function of the episode records, so a report can be rebuilt from its JSON.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from statistics import fmean
from typing import Any

__all__ = ["MODES", "BenchReport", "EpisodeRecord", "Summary", "comparison", "decision_curve", "summarize"]

#: Cold: the agent without memory. Warm: one memory shared by every episode, learning as it goes.
MODES = ("cold", "warm")


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode: what the task asked, whether the page rewarded it, and what the agent spent.

    ``success`` is the task's verdict (raw reward > 0); ``agent_success`` is what the agent claimed.
    ``replayed`` means the memory's replay alone solved it (no policy decision, and the task agreed).
    """

    task: str
    episode: int
    seed: str
    mode: str
    success: bool
    reward: float | None
    utterance: str = ""
    decisions: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    steps: int = 0
    turns: int = 0
    wall_ms: float = 0.0
    replayed: bool = False
    replay_fallback: bool = False
    context_tokens: int = 0
    reason: str = ""
    run_id: str | None = None
    agent_success: bool | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Summary:
    """Averages over a set of episodes (per episode unless the name says otherwise)."""

    episodes: int
    successes: int
    success_rate: float
    decisions: float
    llm_calls: float
    tokens: float
    steps: float
    wall_ms: float
    replayed: int
    replay_rate: float
    replay_fallbacks: int
    context_tokens: float


def summarize(records: Iterable[EpisodeRecord]) -> Summary | None:
    """The aggregate of ``records``, or None when there are none."""
    chosen = list(records)
    if not chosen:
        return None
    count = len(chosen)
    successes = sum(record.success for record in chosen)
    replayed = sum(record.replayed for record in chosen)
    return Summary(
        episodes=count,
        successes=successes,
        success_rate=successes / count,
        decisions=fmean(record.decisions for record in chosen),
        llm_calls=fmean(record.llm_calls for record in chosen),
        tokens=fmean(record.tokens for record in chosen),
        steps=fmean(record.steps for record in chosen),
        wall_ms=fmean(record.wall_ms for record in chosen),
        replayed=replayed,
        replay_rate=replayed / count,
        replay_fallbacks=sum(record.replay_fallback for record in chosen),
        context_tokens=fmean(record.context_tokens for record in chosen),
    )


def decision_curve(records: Iterable[EpisodeRecord], mode: str) -> list[float]:
    """Decisions at each episode index of ``mode``, averaged over the tasks that ran that episode."""
    by_index: dict[int, list[int]] = {}
    for record in records:
        if record.mode == mode:
            by_index.setdefault(record.episode, []).append(record.decisions)
    return [fmean(by_index[index]) for index in sorted(by_index)]


@dataclass(frozen=True)
class BenchReport:
    """A benchmark: its settings and its episodes, in the order they ran."""

    tasks: tuple[str, ...]
    modes: tuple[str, ...]
    episodes_per_task: int
    policy: str
    seed: int
    max_turns: int
    records: tuple[EpisodeRecord, ...] = ()
    duration_ms: float = 0.0
    memory_dir: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def select(self, mode: str, task: str | None = None) -> list[EpisodeRecord]:
        return [r for r in self.records if r.mode == mode and (task is None or r.task == task)]

    def summary(self, mode: str, task: str | None = None) -> Summary | None:
        """The aggregate of one mode, over one task or (``task=None``) all of them."""
        return summarize(self.select(mode, task))

    def curve(self, mode: str) -> list[float]:
        return decision_curve(self.records, mode)

    def to_dict(self) -> dict[str, Any]:
        """Plain data: settings, then per mode its overall aggregate, per-task aggregates and episodes."""
        data: dict[str, Any] = {
            "settings": {
                "tasks": list(self.tasks), "modes": list(self.modes), "episodes_per_task": self.episodes_per_task,
                "policy": self.policy, "seed": self.seed, "max_turns": self.max_turns,
                "memory_dir": self.memory_dir, "duration_ms": round(self.duration_ms, 1), **self.extra,
            },
        }
        for mode in self.modes:
            data[mode] = {
                "overall": _plain(self.summary(mode)),
                "tasks": {task: _plain(self.summary(mode, task)) for task in self.tasks},
                "decision_curve": self.curve(mode),
                "episodes": [_record(record) for record in self.select(mode)],
            }
        return data


def _plain(summary: Summary | None) -> dict[str, Any] | None:
    return None if summary is None else asdict(summary)


def _record(record: EpisodeRecord) -> dict[str, Any]:
    return {**asdict(record), "tokens": record.tokens}


def comparison(report: BenchReport) -> tuple[list[str], list[list[str]]]:
    """The side-by-side table, as text: columns, then a row per task and a last ``overall`` row."""
    spent_llm = any(record.llm_calls for record in report.records)
    columns = ["task"]
    for mode in report.modes:
        columns += [f"{mode} success", f"{mode} decisions/ep"] + ([f"{mode} LLM calls/ep"] if spent_llm else [])
    if "warm" in report.modes:
        columns += ["warm replayed", "warm fallbacks", "warm context tokens/ep"]
    rows = []
    for task in [*report.tasks, None]:
        row = [task or "overall"]
        for mode in report.modes:
            found = report.summary(mode, task)
            row += [_rate(found), _mean(found and found.decisions)]
            if spent_llm:
                row.append(_mean(found and found.llm_calls))
        if "warm" in report.modes:
            warm = report.summary("warm", task)
            row += ["-" if warm is None else f"{warm.replay_rate:.0%} ({warm.replayed}/{warm.episodes})",
                    "-" if warm is None else str(warm.replay_fallbacks), _mean(warm and warm.context_tokens, 0)]
        rows.append(row)
    return columns, rows


def _rate(found: Summary | None) -> str:
    return "-" if found is None else f"{found.success_rate:.0%} ({found.successes}/{found.episodes})"


def _mean(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
