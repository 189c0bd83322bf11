"""How the real-app replay benchmarks (``bench_realapp_replay.py`` on Django's admin, ``bench_trac_replay.py``
on Trac) run: their command line, one episode, one mode (record every task, then run the new instances)
and the run as a whole (``benchmark_main``), given a ``RealApp``: what one app brings (how to serve it, its
catalog and task instances, its environment, policies, summary and table).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from realapp_report import MODES, code_version, episode_line


def parse_args(argv: list[str] | None, tasks: tuple[str, ...], description: str) -> argparse.Namespace:
    """The command line of a benchmark whose tasks are ``tasks``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tasks", default=",".join(tasks), help=f"comma-separated, of {', '.join(tasks)}")
    parser.add_argument("--instances", type=int, default=10, help="new instances per task (default 10)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--shared", action="store_true", help="only the mode with one memory for all tasks")
    which.add_argument("--per-task", action="store_true", help="only the mode with one memory per task")
    parser.add_argument("--json", type=Path, help="write every episode and the summaries to this file")
    parser.add_argument("--isolated", action="store_true",
                        help="run each new instance on a copy of the memory as recorded (nothing learnt from "
                             "other new instances); by default the memory goes on learning")
    parser.add_argument("--keep", type=Path, help="keep the memories in DIR/<mode>[/<task>] for inspection "
                        "(with --isolated: the memories as the recordings left them)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the values chosen (default 0)")
    parser.add_argument("--port", type=int, default=0, help="port of the app (default: a free one)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every episode")
    args = parser.parse_args(argv)
    args.tasks = list(dict.fromkeys(name.strip() for name in args.tasks.split(",") if name.strip()))
    unknown = [name for name in args.tasks if name not in tasks]
    if unknown or not args.tasks:
        parser.error(f"--tasks: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(tasks)}")
    if args.instances < 1:
        parser.error("--instances: at least 1")
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep: {args.keep} is not empty (a memory kept from another run would change the results)")
    args.modes = ["shared"] if args.shared else ["per-task"] if args.per_task else list(MODES)
    return args


def require_playwright(benchmark: str) -> None:
    """Exit with the install hint when Playwright is not importable (``benchmark`` names the benchmark in it)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        sys.exit(f"The {benchmark} benchmark needs Playwright: pip install playwright (and a Chromium)")


@dataclass(frozen=True)
class RealApp:
    """What one app brings to the benchmark. ``serve(catalog, port=...)`` runs the app (an object with
    ``base_url`` and ``reset(catalog)``) until the block exits; ``environment(app, instance, catalog)`` is
    an episode's webmem Environment (one with ``effect()`` adds it to the episode's record);
    ``summarize(records, tasks)`` and ``print_table(mode, rows, records, isolated)`` report a mode."""

    serve: Callable[..., contextlib.AbstractContextManager]
    start_url: Callable[[Any], str]  # where each episode starts, given the app
    build_catalog: Callable[[int], list]
    build_instances: Callable[[int, list, int], dict[str, list]]
    recordings: int  # recorded runs per task
    check_possible: Callable[[Any, list], None]
    reused_values: Callable[[list], dict[str, set[str]]]
    environment: Callable[[Any, Any, list], Any]
    demonstrator: Callable[[], Any]
    null_policy: Callable[[], Any]
    summarize: Callable[[list[dict], list[str]], dict]
    print_table: Callable[[str, dict, list[dict], bool], None]
    scratch_prefix: str  # of the temporary directories of the memories
    log_in: Callable[[Any, Any], None] | None = None  # (page, app), once per browser context


@contextlib.contextmanager
def opened(directories: dict[str, Path]) -> Iterator[dict]:
    """Each task's memory, opened from its directory (tasks sharing a directory share one memory)."""
    from webmem import Memory

    with contextlib.ExitStack() as stack:
        by_path = {path: stack.enter_context(Memory.open(path)) for path in dict.fromkeys(directories.values())}
        yield {task: by_path[path] for task, path in directories.items()}


@contextlib.contextmanager
def copied(directory: Path) -> Iterator[Path]:
    """A throwaway copy of a (closed) memory directory."""
    with tempfile.TemporaryDirectory(prefix="webmem-realapp-copy-") as scratch:
        yield Path(shutil.copytree(directory, Path(scratch) / "memory"))


def run_episode(page, app, catalog, memory, instance, policy, *, new_environment: Callable[[Any, Any, list], Any],
                url: str, replay: bool, goal_task: dict, goal_phase: dict) -> dict:
    """One episode from ``url``, the app reset to ``catalog`` and the outcome told by ``new_environment(app,
    instance, catalog)``, as a record (with the environment's ``effect()``, when it has one)."""
    from webmem.agent import Agent

    app.reset(catalog)
    environment = new_environment(app, instance, catalog)
    if hasattr(policy, "begin"):
        policy.begin(instance)
    agent = Agent(page, policy=policy, memory=memory, environment=environment, replay=replay)
    began = time.perf_counter()
    result = agent.run(instance.goal, url=url)
    wall_ms = (time.perf_counter() - began) * 1000
    verdict = environment.outcome(page)
    replayed_goal = replayed_task = replayed_phase = None
    if result.replay_trajectory_id:
        with contextlib.suppress(Exception):  # a trajectory forgotten since is reported as unknown
            replayed_goal = memory.trajectories.get(result.replay_trajectory_id).goal
        replayed_task = goal_task.get(replayed_goal, "unknown")
        replayed_phase = goal_phase.get(replayed_goal, "unknown")
    effect = {"effect": environment.effect()} if hasattr(environment, "effect") else {}
    return {
        "task": instance.task, "phase": instance.phase, "number": instance.number, "goal": instance.goal,
        "values": instance.values, "success": result.success, "replayed": result.replayed,
        "task_verdict": None if verdict is None else verdict.success,
        "task_detail": None if verdict is None else verdict.detail, **effect,
        "replay_offered": getattr(result, "replay_offered", None),
        "replay_trajectory_id": result.replay_trajectory_id, "replayed_goal": replayed_goal,
        "replayed_task": replayed_task, "replayed_phase": replayed_phase,
        "replay_outcome": result.replay_outcome, "replay_step": result.replay_step,
        "replay_reason": result.replay_reason, "replay_miss_reason": getattr(result, "replay_miss_reason", None),
        "replay_steps": [step.model_dump(mode="json") for step in result.replay_steps],
        "reason": result.reason, "decisions": result.decisions, "steps": result.steps, "turns": result.turns,
        "actions": [outcome.action.describe() for outcome in result.history], "wall_ms": round(wall_ms, 1),
        "final_url": result.final_url, "run_id": result.run_id,
    }


def run_mode(mode, browser, app, catalog, instances, tasks, args, goals, root: Path, bench: RealApp) -> list[dict]:
    """Record every task with the demonstrator, then run the new instances with the null policy and replay:
    on the memory as it goes on learning, or (``--isolated``) each on a copy of the memory as recorded."""
    directories = {task: root if mode == "shared" else root / task for task in tasks}
    recordings = [item for task in tasks for item in instances[task] if item.phase == "record"]
    tests = {task: [item for item in instances[task] if item.phase == "test"] for task in tasks}
    if mode == "shared":  # the tasks take turns, as in a mixed workload
        ordered = [tests[task][index] for index in range(args.instances) for task in tasks]
    else:
        ordered = [item for task in tasks for item in tests[task]]
    records: list[dict] = []
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        if bench.log_in is not None:
            bench.log_in(page, app)

        def episode(memory, instance, policy, replay: bool) -> None:
            record = run_episode(page, app, catalog, memory, instance, policy, new_environment=bench.environment,
                                 url=bench.start_url(app), replay=replay, goal_task=goals[0], goal_phase=goals[1])
            record["mode"], record["isolated"] = mode, args.isolated
            records.append(record)
            if args.verbose or record.get("effect") == "wrong" or (
                    record["phase"] == "record" and not record["success"]):
                print(episode_line(record), flush=True)

        demonstrator, null = bench.demonstrator(), bench.null_policy()
        with opened(directories) as memory_of:
            for instance in recordings:
                episode(memory_of[instance.task], instance, demonstrator, False)
            if not args.isolated:
                for instance in ordered:
                    episode(memory_of[instance.task], instance, null, True)
        if args.isolated:
            for instance in ordered:
                with copied(directories[instance.task]) as copy, opened({instance.task: copy}) as memory_of:
                    episode(memory_of[instance.task], instance, null, True)
    finally:
        context.close()
    return records


def benchmark_main(argv: list[str] | None, *, description: str, tasks: tuple[str, ...],
                   require_app: Callable[[], None], benchmark: str, real_app: Callable[[], RealApp]) -> int:
    """A benchmark's ``main``: read the command line, exit with a hint when the app (``require_app``) or
    Playwright is missing, then run on ``real_app()`` (built only then: the app's modules import Playwright)."""
    args = parse_args(argv, tasks, description)
    require_app()
    require_playwright(benchmark)
    return run_benchmark(args, real_app())


def run_benchmark(args: argparse.Namespace, bench: RealApp) -> int:
    """Draw the catalog and the instances, run each mode of ``args`` on the app served, print each mode's
    table and the version measured, and write ``--json``; 1 when a recorded run failed, else 0."""
    from playwright.sync_api import sync_playwright

    from webmem.agent.browser import launch_chromium

    started = time.perf_counter()
    catalog = bench.build_catalog(args.seed)
    instances = bench.build_instances(args.seed, catalog, args.instances)
    goal_task: dict[str, str] = {}
    goal_phase: dict[str, str] = {}
    for task, items in instances.items():
        for item in items:
            bench.check_possible(item, catalog)
            if goal_task.setdefault(item.goal, task) != task or \
                    goal_phase.setdefault(item.goal, item.phase) != item.phase:
                sys.exit(f"the goal {item.goal!r} belongs to two tasks or phases")
        if reused := bench.reused_values(items):
            print(f"note: new instances of {task} reuse recorded values: {reused}")
    results: dict[str, list[dict]] = {}
    with bench.serve(catalog, port=args.port) as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for mode in args.modes:
                print(f"{mode}: recording {len(args.tasks) * bench.recordings} runs, then "
                      f"{len(args.tasks) * args.instances} new instances on {app.base_url} ...", flush=True)
                with contextlib.ExitStack() as stack:
                    root = args.keep / mode if args.keep else Path(
                        stack.enter_context(tempfile.TemporaryDirectory(prefix=bench.scratch_prefix)))
                    results[mode] = run_mode(mode, browser, app, catalog, instances, args.tasks, args,
                                             (goal_task, goal_phase), root, bench)
        finally:
            browser.close()
    summaries = {mode: bench.summarize(records, args.tasks) for mode, records in results.items()}
    for mode, rows in summaries.items():
        bench.print_table(mode, rows, results[mode], args.isolated)
    failed = [item for records in results.values() for item in records
              if item["phase"] == "record" and not item["success"]]
    elapsed = time.perf_counter() - started
    version = code_version()
    print(f"\n{version}; seed {args.seed}, {args.instances} new instances per task, total time {elapsed:.0f} s")
    if failed:
        print(f"!! {len(failed)} recorded runs failed: the memory lacks what those tasks should replay")
    if args.json:
        args.json.write_text(json.dumps({
            "version": version, "seed": args.seed, "isolated": args.isolated, "tasks": args.tasks,
            "instances": args.instances, "modes": args.modes,
            "duration_s": round(elapsed, 1), "catalog": [item.__dict__ for item in catalog],
            "summaries": summaries, "episodes": [item for records in results.values() for item in records],
        }, indent=1, ensure_ascii=False))
    return 1 if failed else 0
