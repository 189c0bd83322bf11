"""What the real-app replay benchmarks (``bench_realapp_replay.py``, ``bench_trac_replay.py``) print and save.

An episode's line, each task's summary, the parts of the tables both print (the heading, the notes under
a task's row, the median times) and the version of the code measured. Each benchmark prints its own
columns (``print_table``), and may add to the summary (Trac: wrong effects and hand-overs).
"""

from __future__ import annotations

import statistics
import subprocess
from collections import Counter
from pathlib import Path

MODES = {"per-task": "one memory per task", "shared": "one memory shared by all tasks"}
TOP_MISSES = 3
GOAL_RATE = 0.9


def code_version() -> str:
    """webmem's version and, when the webmem imported is a git checkout's, its commit and whether its src/
    has changes not committed."""
    import webmem

    root = Path(webmem.__file__).resolve().parent.parent.parent
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "src"], capture_output=True,
                                 text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"webmem {webmem.__version__}"
    return f"webmem {webmem.__version__} (git {commit}{', src/ changed since' if changed else ''})"


def miss_reason(record: dict) -> str:
    """Why a new instance was not replayed to success: the replay's own reason when one started, else the
    memory's reason for offering none (``replay_miss_reason``, when the agent gives one)."""
    if record["replay_trajectory_id"] is not None:
        return record["replay_reason"] or record["reason"] or "(no reason given)"
    return "not offered: " + (record["replay_miss_reason"] or "(no reason given)")


def episode_line(record: dict) -> str:
    """An episode as printed with ``-v`` (a failed recording and a wrong effect are printed always): what it
    did, and why a new instance was not replayed, why a recording failed or what a wrong effect did."""
    if record["phase"] == "record":
        state = "recorded" if record["success"] else "RECORDING FAILED"
    else:
        state = "replayed" if record["success"] and record["replayed"] else (record["replay_outcome"] or "no replay")
    offered = "" if record["replay_offered"] is None else f" replay_offered={record['replay_offered']}"
    line = f"  [{record['phase']} {record['task']} #{record['number']}] {state:<12} {record['goal']!r} " \
           f"({record['wall_ms']:.0f} ms){offered}"
    if record["phase"] == "test" and not (record["success"] and record["replayed"]):
        line += f"\n      why: {miss_reason(record)}"
    if record["phase"] == "record" and not record["success"]:
        line += f"\n      reason: {record['reason']}\n      actions: {record['actions']}"
    if record.get("effect") == "wrong":
        line += f"\n      WRONG EFFECT: {record['task_detail']}\n      actions: {record['actions']}"
    return line


def summarize(records: list[dict], tasks: list[str]) -> dict:
    """Each task's row: its recorded runs, new instances replayed (from a recording or not), replays offered,
    wrong-task replays, median times and the most common reasons a new instance was not replayed."""
    from webmem.bench.results import reason_group

    rows = {}
    for task in tasks:
        recorded = [item for item in records if item["task"] == task and item["phase"] == "record"]
        tested = [item for item in records if item["task"] == task and item["phase"] == "test"]
        misses = Counter()
        for item in tested:
            if item["success"] and item["replayed"]:
                continue
            why = miss_reason(item)
            prefix = "not offered: " if why.startswith("not offered: ") else ""
            misses[prefix + reason_group(why.removeprefix(prefix))] += 1
        rows[task] = {
            "recorded": sum(item["success"] for item in recorded), "recordings": len(recorded),
            "replayed": sum(item["success"] and item["replayed"] for item in tested), "instances": len(tested),
            "distinct_goals": len({item["goal"] for item in tested}),
            "replayed_from_recording": sum(item["success"] and item["replayed"] and item["replayed_phase"] == "record"
                                           for item in tested),
            "offered": sum(item["replay_trajectory_id"] is not None for item in tested),
            "offered_by_agent": None if any(item["replay_offered"] is None for item in tested) else
            sum(bool(item["replay_offered"]) for item in tested),
            "wrong_task": sum(item["replayed_task"] not in (None, task) for item in tested),
            "wrong_task_successes": sum(item["replayed_task"] not in (None, task) and item["success"]
                                        for item in tested),
            "successes_not_replayed": sum(item["success"] and not item["replayed"] for item in tested),
            "test_median_ms": round(statistics.median(item["wall_ms"] for item in tested), 1) if tested else None,
            "record_median_ms": round(statistics.median(item["wall_ms"] for item in recorded), 1) if recorded else None,
            "misses": misses.most_common(TOP_MISSES),
        }
    return rows


def print_heading(mode: str, isolated: bool) -> None:
    """The line a mode's table starts with: the mode, and whether the memory goes on learning."""
    learning = "each new instance on a copy of the memory as recorded" if isolated else "the memory goes on learning"
    print(f"\n== {mode}: {MODES[mode]}; {learning} ==")


def print_notes(row: dict, indent: int) -> None:
    """The lines under a task's row, ``indent`` spaces in: repeated goals, the most common misses, and what
    looks wrong in the counts."""
    pad = " " * indent
    if row["distinct_goals"] < row["instances"]:
        print(f"{pad}note: {row['distinct_goals']} distinct goals among the {row['instances']} new instances "
              f"(fewer new values than instances)")
    for reason, count in row["misses"]:
        print(f"{pad}{count:>3}x {reason}")
    if row["offered_by_agent"] is not None and row["offered_by_agent"] != row["offered"]:
        print(f"{pad}!! the agent's replay_offered says {row['offered_by_agent']} offered, "
              f"replay_trajectory_id says {row['offered']}")
    if row["successes_not_replayed"]:
        print(f"{pad}!! {row['successes_not_replayed']} successes without a replay "
              f"(the null policy cannot succeed: check the task's outcome check)")
    if row["wrong_task_successes"]:
        print(f"{pad}!! {row['wrong_task_successes']} wrong-task replays ended in success")


def print_medians(records: list[dict]) -> None:
    """The line a mode's table ends with: the median time of a recording and of a new instance."""
    tested = [item["wall_ms"] for item in records if item["phase"] == "test"]
    recorded = [item["wall_ms"] for item in records if item["phase"] == "record"]
    print(f"median episode time: recording {statistics.median(recorded):.0f} ms, new instances "
          f"{statistics.median(tested):.0f} ms")
