"""What a benchmark measured: one record per episode, and the averages over tasks and modes.

Every aggregate is a pure function of the episode records, so a report can be rebuilt from its JSON
(:meth:`BenchReport.from_dict`) and gives the same figures.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from statistics import fmean
from typing import Any

from ..core.models import REPLAY_OUTCOMES  # what became of a replay that started, settled by the task

__all__ = [
    "MODES", "REPLAY_OUTCOMES", "TOP_REASONS", "BenchReport", "EpisodeRecord", "Summary", "comparison",
    "decision_curve", "memory_label", "reason_group", "repeated_instances", "replay_notes", "settle_replay",
    "summarize", "top_reasons",
]

#: Cold: the agent without memory. Warm: with a memory that learns as it goes (one per task, unless shared).
MODES = ("cold", "warm")
#: How many hand-over reasons a summary keeps, most common first.
TOP_REASONS = 5


@dataclass(frozen=True)
class EpisodeRecord:
    """One episode: what the task asked, whether the page rewarded it, and what the agent spent.

    ``success`` is the task's verdict: the episode ended with the full reward (raw reward >= 1).
    ``partial`` is partial credit (it ended with 0 < reward < 1): not a success, counted on its own.
    ``agent_success`` is what the agent claimed.

    ``replay_outcome`` is None when no replay started, else one of :data:`REPLAY_OUTCOMES`:
    ``replayed`` (the replay alone solved the task), ``handed_over`` (the replay handed the run to the
    policy at ``replay_step`` because of ``replay_reason``) or ``replay_failed`` (it ran without handing
    over and the task was not solved). ``replayed`` and ``replay_fallback`` say the same in two booleans.

    ``skill_calls`` counts the skills the policy called (see ``AgentResult.skill_calls``): ``skill_calls_done``
    those whose replay did all its steps (or during which the task was solved), ``skill_calls_handed_over``
    those whose replay gave the page back; the rest could not be planned, or the episode failed during them.
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
    partial: bool = False
    replay_outcome: str | None = None
    replay_step: int | None = None
    replay_reason: str | None = None
    replay_miss_reason: str | None = None
    timeouts: int = 0
    skill_calls: int = 0
    skill_calls_done: int = 0
    skill_calls_handed_over: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def settle_replay(outcome: str | None, step: int | None, reason: str | None, *, success: bool,
                  task_reason: str | None = None) -> tuple[str | None, int | None, str | None]:
    """The replay's ``(outcome, step, reason)`` as the benchmark counts it.

    A hand-over stays one. A replay that ran without handing over is ``replayed`` when the task gave
    its full reward and ``replay_failed`` otherwise, whatever the agent concluded: the task has the last
    word. When that changes the agent's outcome, the reason says so.
    """
    if outcome not in ("replayed", "replay_failed"):
        return outcome, step, reason
    settled = "replayed" if success else "replay_failed"
    if settled == outcome:
        return outcome, step, reason
    if success:
        return settled, step, "the task gave its full reward"
    return settled, step, f"the task did not give its full reward ({task_reason or 'no reason given'})"


@dataclass(frozen=True)
class Summary:
    """Aggregates over a set of episodes: counts, rates, and means per episode.

    ``replay_candidates`` counts episodes in which a replay started; ``repeated`` those whose
    instruction already came up in an earlier episode of the same task and mode (see
    :func:`repeated_instances`), and ``repeated_replayed`` the repeated ones that replay solved.
    ``handover_reasons`` is the most common hand-over reasons, grouped by :func:`reason_group`, and
    ``miss_reasons`` the most common reasons why no replay was offered.
    """

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
    partials: int = 0
    handed_over: int = 0
    replay_failed: int = 0
    replay_candidates: int = 0
    replay_rate_of_candidates: float = 0.0
    repeated: int = 0
    repeated_replayed: int = 0
    replay_rate_of_repeated: float = 0.0
    handover_reasons: tuple[tuple[str, int], ...] = ()
    miss_reasons: tuple[tuple[str, int], ...] = ()
    prompt_tokens_per_decision: float = 0.0
    timeouts: int = 0


def summarize(records: Iterable[EpisodeRecord]) -> Summary | None:
    """The aggregate of ``records``, or None when there are none."""
    chosen = list(records)
    if not chosen:
        return None
    count = len(chosen)
    successes = sum(record.success for record in chosen)
    replayed = sum(record.replayed for record in chosen)
    candidates = sum(record.replay_outcome is not None for record in chosen)
    repeated = [record for record, again in zip(chosen, repeated_instances(chosen)) if again]
    repeated_replayed = sum(record.replayed for record in repeated)
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
        partials=sum(record.partial for record in chosen),
        handed_over=sum(record.replay_outcome == "handed_over" for record in chosen),
        replay_failed=sum(record.replay_outcome == "replay_failed" for record in chosen),
        replay_candidates=candidates,
        replay_rate_of_candidates=replayed / candidates if candidates else 0.0,
        repeated=len(repeated),
        repeated_replayed=repeated_replayed,
        replay_rate_of_repeated=repeated_replayed / len(repeated) if repeated else 0.0,
        handover_reasons=top_reasons(chosen),
        miss_reasons=top_misses(chosen),
        prompt_tokens_per_decision=_per(sum(record.prompt_tokens for record in chosen),
                                        sum(record.decisions for record in chosen)),
        timeouts=sum(record.timeouts for record in chosen),
    )


def repeated_instances(records: Sequence[EpisodeRecord]) -> list[bool]:
    """For each record, in order: whether its instruction already came up in an earlier episode (by
    episode index) of the same task and mode. A record without an instruction is never repeated."""
    flags = [False] * len(records)
    seen: dict[tuple[str, str], set[str]] = {}
    for position in sorted(range(len(records)), key=lambda number: records[number].episode):
        record = records[position]
        if not record.utterance:
            continue
        earlier = seen.setdefault((record.mode, record.task), set())
        flags[position] = record.utterance in earlier
        earlier.add(record.utterance)
    return flags


_STEP_PREFIX = re.compile(r"^step\s+\d+\s*:?\s*", re.IGNORECASE)
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|(?<!\w)'(?:[^'\\]|\\.)*'(?!\w)")
_NUMBER = re.compile(r"(?<![\w.])\d+(?!\w|\.\d)")
_TRAJECTORY_ID = re.compile(r"\btraj_\w+")
MAX_REASON_CHARS = 160


def reason_group(reason: str | None) -> str:
    """A hand-over reason without its step-specific part, so that equal causes group together.

    Only the first line counts; a leading ``step N`` (and its colon) is cut; every quoted name
    (``"..."`` or ``'...'``) becomes ``"…"`` and every other stand-alone number ``N``; spaces are
    collapsed and the text is cut at 160 characters. ``step 3: button "Next" is not on the page``
    gives ``button "…" is not on the page``.
    """
    lines = (reason or "").strip().splitlines()
    text = _QUOTED.sub('"…"', _STEP_PREFIX.sub("", lines[0].strip() if lines else ""))
    text = _NUMBER.sub("N", _TRAJECTORY_ID.sub("traj_…", text))
    return " ".join(text.split())[:MAX_REASON_CHARS] or "(no reason given)"


def top_reasons(records: Iterable[EpisodeRecord], limit: int = TOP_REASONS) -> tuple[tuple[str, int], ...]:
    """The most common hand-over reasons of ``records`` as ``(reason, count)``, most common first
    (ties in alphabetical order); only episodes whose replay handed over count."""
    counts = Counter(reason_group(record.replay_reason) for record in records
                     if record.replay_outcome == "handed_over")
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit])


def top_misses(records: Iterable[EpisodeRecord], limit: int = TOP_REASONS) -> tuple[tuple[str, int], ...]:
    """The most common reasons why no replay was offered, as :func:`top_reasons` counts hand-overs."""
    counts = Counter(reason_group(record.replay_miss_reason) for record in records
                     if record.replay_outcome is None and record.replay_miss_reason)
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit])


def decision_curve(records: Iterable[EpisodeRecord], mode: str) -> list[float]:
    """Decisions at each episode index of ``mode``, averaged over the tasks that ran that episode."""
    by_index: dict[int, list[int]] = {}
    for record in records:
        if record.mode == mode:
            by_index.setdefault(record.episode, []).append(record.decisions)
    return [fmean(by_index[index]) for index in sorted(by_index)]


_SETTINGS = ("tasks", "modes", "episodes_per_task", "policy", "seed", "max_turns", "memory_dir", "duration_ms",
             "shared_memory", "memory_from")
_RECORD_FIELDS = frozenset(item.name for item in fields(EpisodeRecord))


@dataclass(frozen=True)
class BenchReport:
    """A benchmark: its settings and its episodes, in the order they ran.

    ``shared_memory`` False: each task's warm episodes had a memory of their own; True: one memory
    served every task, so what one task learned could help or hurt another. ``memory_from`` names the
    policy that recorded the warm memory first (its episodes have the mode ``recording``), or None.
    """

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
    shared_memory: bool = False
    memory_from: str | None = None

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
                "memory_dir": self.memory_dir, "shared_memory": self.shared_memory, "memory_from": self.memory_from,
                "duration_ms": round(self.duration_ms, 1), **self.extra,
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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BenchReport:
        """The report that :meth:`to_dict` wrote (aggregates are computed again from the episodes)."""
        settings = dict(data["settings"])
        modes = tuple(settings["modes"])
        records = tuple(
            EpisodeRecord(**{key: value for key, value in episode.items() if key in _RECORD_FIELDS})
            for mode in modes for episode in data[mode]["episodes"]
        )
        return cls(
            tasks=tuple(settings["tasks"]), modes=modes, episodes_per_task=settings["episodes_per_task"],
            policy=settings["policy"], seed=settings["seed"], max_turns=settings["max_turns"], records=records,
            duration_ms=settings.get("duration_ms", 0.0), memory_dir=settings.get("memory_dir"),
            shared_memory=bool(settings.get("shared_memory", False)), memory_from=settings.get("memory_from"),
            extra={key: value for key, value in settings.items() if key not in _SETTINGS},
        )


def _plain(summary: Summary | None) -> dict[str, Any] | None:
    if summary is None:
        return None
    data = asdict(summary)
    data["handover_reasons"] = [[reason, count] for reason, count in summary.handover_reasons]
    data["miss_reasons"] = [[reason, count] for reason, count in summary.miss_reasons]
    return data


def _record(record: EpisodeRecord) -> dict[str, Any]:
    return {**asdict(record), "tokens": record.tokens}


def memory_label(report: BenchReport) -> str:
    """How the warm episodes kept their memory, in words (for headings)."""
    if "warm" not in report.modes:
        return "no memory"
    recorded = f", recorded first by the {report.memory_from} policy" if report.memory_from else ""
    if report.shared_memory:
        return f"warm: one memory shared by every task{recorded}"
    return f"warm: one memory per task{recorded}"


def replay_notes(report: BenchReport) -> list[str]:
    """The replay figures that follow the table, as sentences: the replay rate over warm episodes
    that had a replay candidate and over repeated instances, then the top hand-over reasons."""
    warm = report.summary("warm") if "warm" in report.modes else None
    if warm is None:
        return []
    notes = [
        f"Replay solved {_share(warm.replayed, warm.replay_candidates)} of the warm episodes in which a replay "
        f"started ({warm.handed_over} handed over, {warm.replay_failed} failed), and "
        f"{_share(warm.repeated_replayed, warm.repeated)} of the repeated instances "
        f"(an instruction already seen in an earlier episode of the task).",
    ]
    if warm.handover_reasons:
        notes.append("Top hand-over reasons: "
                     + "; ".join(f"{count}× {reason}" for reason, count in warm.handover_reasons) + ".")
    else:
        notes.append("No replay handed over.")
    if warm.miss_reasons:
        notes.append("Top reasons no replay was offered: "
                     + "; ".join(f"{count}× {reason}" for reason, count in warm.miss_reasons) + ".")
    return notes


def _per(total: int, count: int) -> float:
    return total / count if count else 0.0


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%} ({part}/{whole})" if whole else "- (0/0)"


def comparison(report: BenchReport) -> tuple[list[str], list[list[str]]]:
    """The side-by-side table, as text: columns, then a row per task and a last ``overall`` row."""
    spent_llm = any(record.llm_calls for record in report.records)
    columns = ["task"]
    for mode in report.modes:
        columns += [f"{mode} success", f"{mode} partial", f"{mode} decisions/ep"]
        columns += [f"{mode} LLM calls/ep", f"{mode} prompt tokens/decision", f"{mode} timeouts"] if spent_llm else []
    if "warm" in report.modes:
        columns += ["warm replayed", "warm handed over", "warm replay failed", "warm context tokens/ep"]
    rows = []
    for task in [*report.tasks, None]:
        row = [task or "overall"]
        for mode in report.modes:
            found = report.summary(mode, task)
            row += [_rate(found), _count(found and found.partials), _mean(found and found.decisions)]
            if spent_llm:
                row += [_mean(found and found.llm_calls), _mean(found and found.prompt_tokens_per_decision, 0),
                        _count(found and found.timeouts)]
        if "warm" in report.modes:
            warm = report.summary("warm", task)
            row += ["-" if warm is None else f"{warm.replay_rate:.0%} ({warm.replayed}/{warm.episodes})",
                    _count(warm and warm.handed_over), _count(warm and warm.replay_failed),
                    _mean(warm and warm.context_tokens, 0)]
        rows.append(row)
    return columns, rows


def _rate(found: Summary | None) -> str:
    return "-" if found is None else f"{found.success_rate:.0%} ({found.successes}/{found.episodes})"


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _mean(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
