"""How often webmem's replay alone does new, naturally worded instances of tasks in Trac, a real issue tracker.

The Django-admin benchmark's method (``bench_realapp_replay.py``) on another real app: Trac 1.6, installed
from PyPI, server-rendered with classic table layouts, where several fields have no accessible name (the
"resolve as" select and the "reassign to" box of a ticket, a query filter's mode and value next to a row
header). A scripted demonstrator (a stand-in for a capable agent) records 3 runs of each task; then a
policy that can do nothing (it gives up at once) runs new instances on that memory with replay on, so
every success is the replay's. Goals are worded naturally and unquoted ("Resolve the ticket Export to
CSV as wontfix", "Show the tickets of type enhancement with priority major"); new instances use values no
recording used (summaries of 2 to 5 words, priorities, resolutions and users no recording used). Each
episode starts at the custom query page listing every ticket, with the tickets reset; the task's real
outcome (the database, or the query page's URL and the tickets it lists) decides success. Modes: one
memory per task, and one memory shared by all tasks (new instances of the tasks taking turns).

By default the memory goes on learning during the new instances (a replay that succeeds is saved
like any successful run, and later instances may replay it); ``--isolated`` runs each new instance on
a copy of the memory as the recordings left it.

Prints per mode and task: recorded runs that succeeded, new instances replayed to success ("from rec":
of those, the ones that replayed a recorded run rather than an earlier new instance), replays offered
(a replay started), wrong-task replays (the replayed trajectory's goal is another task's, or could not
be looked up), wrong effects (new instances that changed the data, not as asked: a replay is safe only
with none), hand-overs (replays that gave the run back to the null policy), the median time of a new
instance, whether the goal is met (>= 90% replayed, no wrong-task replay, no wrong effect) and the most
common reasons a new instance was not replayed.

Usage: python benchmarks/bench_trac_replay.py [--tasks resolve,reassign] [--instances 10] [--shared | --per-task]
       [--isolated] [--json FILE] [--keep DIR] [--seed 0] [-v]      (needs: pip install trac; Chromium)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_realapp_replay import (
    GOAL_RATE,
    MODES,
    code_version,
    copied,
    episode_line,
    opened,
    summarize,
)
from trac_app import require_trac, serve_trac


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from tracapp.catalog import TASKS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASKS), help=f"comma-separated, of {', '.join(TASKS)}")
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
    unknown = [name for name in args.tasks if name not in TASKS]
    if unknown or not args.tasks:
        parser.error(f"--tasks: unknown {', '.join(unknown) or '(none given)'}; known: {', '.join(TASKS)}")
    if args.instances < 1:
        parser.error("--instances: at least 1")
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep: {args.keep} is not empty (a memory kept from another run would change the results)")
    args.modes = ["shared"] if args.shared else ["per-task"] if args.per_task else list(MODES)
    return args


def run_episode(page, app, catalog, memory, instance, policy, *, replay: bool, goal_task: dict,
                goal_phase: dict) -> dict:
    from tracapp.tasks import TicketTaskEnvironment

    from webmem.agent import Agent

    app.reset(catalog)
    environment = TicketTaskEnvironment(app, instance, catalog)
    if hasattr(policy, "begin"):
        policy.begin(instance)
    agent = Agent(page, policy=policy, memory=memory, environment=environment, replay=replay)
    began = time.perf_counter()
    result = agent.run(instance.goal, url=app.query_url)
    wall_ms = (time.perf_counter() - began) * 1000
    verdict = environment.outcome(page)
    replayed_goal = replayed_task = replayed_phase = None
    if result.replay_trajectory_id:
        with contextlib.suppress(Exception):  # a trajectory forgotten since is reported as unknown
            replayed_goal = memory.trajectories.get(result.replay_trajectory_id).goal
        replayed_task = goal_task.get(replayed_goal, "unknown")
        replayed_phase = goal_phase.get(replayed_goal, "unknown")
    return {
        "task": instance.task, "phase": instance.phase, "number": instance.number, "goal": instance.goal,
        "values": instance.values, "success": result.success, "replayed": result.replayed,
        "task_verdict": None if verdict is None else verdict.success,
        "task_detail": None if verdict is None else verdict.detail, "effect": environment.effect(),
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


def trac_episode_line(record: dict) -> str:
    """The Django benchmark's episode line, and what a wrong effect did."""
    line = episode_line(record)
    if record["effect"] == "wrong":
        line += f"\n      WRONG EFFECT: {record['task_detail']}\n      actions: {record['actions']}"
    return line


def run_mode(mode, browser, app, catalog, instances, tasks, args, goals, root: Path) -> list[dict]:
    """Record every task with the demonstrator, then run the new instances with the null policy and replay:
    on the memory as it goes on learning, or (``--isolated``) each on a copy of the memory as recorded."""
    from tracapp.policies import Demonstrator, NullPolicy

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

        def episode(memory, instance, policy, replay: bool) -> None:
            record = run_episode(page, app, catalog, memory, instance, policy, replay=replay,
                                 goal_task=goals[0], goal_phase=goals[1])
            record["mode"], record["isolated"] = mode, args.isolated
            records.append(record)
            if args.verbose or record["effect"] == "wrong" or (record["phase"] == "record" and not record["success"]):
                print(trac_episode_line(record), flush=True)

        demonstrator, null = Demonstrator(), NullPolicy()
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


def summarize_trac(records: list[dict], tasks: list[str]) -> dict:
    """The Django benchmark's summary of each task, with its wrong effects and hand-overs among new instances."""
    rows = summarize(records, tasks)
    for task, row in rows.items():
        tested = [item for item in records if item["task"] == task and item["phase"] == "test"]
        row["wrong_effects"] = sum(item["effect"] == "wrong" for item in tested)
        row["handed_over"] = sum(item["replay_outcome"] == "handed_over" for item in tested)
        row["goal_met"] = bool(row["instances"] and row["replayed"] / row["instances"] >= GOAL_RATE
                               and row["wrong_task"] == 0 and row["wrong_effects"] == 0)
    return rows


def print_table(mode: str, rows: dict, records: list[dict], isolated: bool) -> None:
    learning = "each new instance on a copy of the memory as recorded" if isolated else "the memory goes on learning"
    print(f"\n== {mode}: {MODES[mode]}; {learning} ==")
    print(f"{'task':<21} {'recorded':>8} {'replayed':>9} {'from rec':>8} {'offered':>8} {'wrong-task':>10} "
          f"{'wrong-eff':>9} {'handover':>8} {'test ms':>8}  goal")
    for task, row in rows.items():
        print(f"{task:<21} {row['recorded']:>4}/{row['recordings']:<3} {row['replayed']:>5}/{row['instances']:<3} "
              f"{row['replayed_from_recording']:>8} {row['offered']:>8} {row['wrong_task']:>10} "
              f"{row['wrong_effects']:>9} {row['handed_over']:>8} {row['test_median_ms'] or 0:>8.0f}  "
              f"{'met' if row['goal_met'] else 'not met'}")
        if row["distinct_goals"] < row["instances"]:
            print(f"{'':<23}note: {row['distinct_goals']} distinct goals among the {row['instances']} new instances "
                  f"(fewer new values than instances)")
        for reason, count in row["misses"]:
            print(f"{'':<23}{count:>3}x {reason}")
        if row["offered_by_agent"] is not None and row["offered_by_agent"] != row["offered"]:
            print(f"{'':<23}!! the agent's replay_offered says {row['offered_by_agent']} offered, "
                  f"replay_trajectory_id says {row['offered']}")
        if row["successes_not_replayed"]:
            print(f"{'':<23}!! {row['successes_not_replayed']} successes without a replay "
                  f"(the null policy cannot succeed: check the task's outcome check)")
        if row["wrong_task_successes"]:
            print(f"{'':<23}!! {row['wrong_task_successes']} wrong-task replays ended in success")
    tested = [item["wall_ms"] for item in records if item["phase"] == "test"]
    recorded = [item["wall_ms"] for item in records if item["phase"] == "record"]
    total = sum(row["replayed"] for row in rows.values()), sum(row["instances"] for row in rows.values())
    summed = {key: sum(row[key] for row in rows.values())
              for key in ("replayed_from_recording", "offered", "wrong_task", "wrong_effects", "handed_over")}
    print(f"{'all':<21} {'':>8} {total[0]:>5}/{total[1]:<3} {summed['replayed_from_recording']:>8} "
          f"{summed['offered']:>8} {summed['wrong_task']:>10} {summed['wrong_effects']:>9} {summed['handed_over']:>8}")
    print(f"median episode time: recording {statistics.median(recorded):.0f} ms, new instances "
          f"{statistics.median(tested):.0f} ms")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    require_trac()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sys.exit("The Trac benchmark needs Playwright: pip install playwright (and a Chromium)")
    from tracapp.catalog import (
        RECORDINGS,
        build_catalog,
        build_instances,
        reused_values,
    )
    from tracapp.tasks import check_possible

    from webmem.agent.browser import launch_chromium

    started = time.perf_counter()
    catalog = build_catalog(args.seed)
    instances = build_instances(args.seed, catalog, args.instances)
    goal_task: dict[str, str] = {}
    goal_phase: dict[str, str] = {}
    for task, items in instances.items():
        for item in items:
            check_possible(item, catalog)
            if goal_task.setdefault(item.goal, task) != task or \
                    goal_phase.setdefault(item.goal, item.phase) != item.phase:
                sys.exit(f"the goal {item.goal!r} belongs to two tasks or phases")
        if reused := reused_values(items):
            print(f"note: new instances of {task} reuse recorded values: {reused}")
    results: dict[str, list[dict]] = {}
    with serve_trac(catalog, port=args.port) as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for mode in args.modes:
                print(f"{mode}: recording {len(args.tasks) * RECORDINGS} runs, then "
                      f"{len(args.tasks) * args.instances} new instances on {app.base_url} ...", flush=True)
                with contextlib.ExitStack() as stack:
                    root = args.keep / mode if args.keep else Path(
                        stack.enter_context(tempfile.TemporaryDirectory(prefix="webmem-trac-")))
                    results[mode] = run_mode(mode, browser, app, catalog, instances, args.tasks, args,
                                             (goal_task, goal_phase), root)
        finally:
            browser.close()
    summaries = {mode: summarize_trac(records, args.tasks) for mode, records in results.items()}
    for mode, rows in summaries.items():
        print_table(mode, rows, results[mode], args.isolated)
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
            "duration_s": round(elapsed, 1), "catalog": [ticket.__dict__ for ticket in catalog],
            "summaries": summaries, "episodes": [item for records in results.values() for item in records],
        }, indent=1, ensure_ascii=False))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
