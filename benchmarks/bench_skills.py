"""How far a site's skills carry an agent that is not webmem's: tool calls and success with skills and without,
on Trac (the real app of ``bench_trac_replay.py``) and MiniWoB++, with goals composed of two skills never
recorded together.

The agent under test is an MCP client (the ``mcp`` SDK's ``Client``) of the recording proxy, ``webmem mcp
--browser "node cli.js --browser chromium ..."``, started as a subprocess over stdio. Its policy is scripted
and knows webmem only by the tools the proxy lists, by name and description:

- without skills, it does the task with Playwright MCP's tools itself: ``browser_navigate`` to the start page
  (the custom query page listing every ticket), then one ``browser_click`` / ``browser_type`` /
  ``browser_select_option`` per step of the replay benchmark's plan of the task, each element picked by
  snapshot ref from the last answer's snapshot, or from a ``browser_snapshot`` call when the answer gave none
  (or when the element is not there yet: up to 3 looks). That is the demonstrator's knowledge of the task,
  as a capable agent would have it.
- with skills, it navigates to the start page, lists the tools, and aligns each part of the goal (a composed
  goal's parts are joined by ", then ") with the ``Does:`` template of each ``skill_<name>`` tool's
  description: the template's words as they are, each ``{parameter}`` any text, a parameter with an ``enum``
  one of its options. It calls the skill that fits (of several, the one with the most words of its own) with
  the parameters read off the goal by that alignment. A part no skill fits, or whose call hands over, it does
  itself as above from the start page (then, after a hand-over, it calls ``webmem_finish_run`` on the run
  the proxy handed over, as the answer asks).

Method: one memory (for both apps). Recording: for each task, the without-skills policy does ``--recordings`` instances
(values no new instance uses: the replay benchmark's recorded instances) through the proxy, begun with
``webmem_start_run(goal)`` and finished with ``webmem_finish_run(success)`` as Trac's database tells it, so
webmem records them and makes them skills. New instances (the replay benchmark's, with values no recording
used, ``--instances`` per task) and composed goals (``--composed``: two ticket tasks' goals on one ticket,
"Set the priority of the ticket X to minor, then resolve the ticket X as invalid", never recorded together)
are then done by the with-skills policy on that memory (one proxy session; the memory goes on learning, as a
skill's replays are runs), and by the without-skills policy through a proxy on an empty memory (no skill is
offered; nothing it does reaches the skills' memory). The tickets are reset before every episode; Trac's
database decides success (the query page's URL and the tickets it lists, for the filter tasks), and a wrong
effect is any change of the data other than the asked one.

Counts: a tool call is a ``tools/call`` request of the agent (listing tools is not one); the recordings'
``webmem_start_run`` / ``webmem_finish_run`` are not counted (an agent without webmem makes neither). "done
by skills" means a success with exactly one skill call per part of the goal, every one answering done, and
no part done by hand.

Prints per task: new instances done by skills / total, success with and without skills, median tool calls
with and without (and their ratio), hand-overs, wrong effects with and without; the composed goals done /
total; which of the issue's goals are met (>= 90% of new instances done by skills on the tasks the goal
determines, >= 80% of composed goals, 0 wrong effects with skills) and why the misses missed.

MiniWoB++ (``skills_miniwob.py``): enter-text, enter-password, login-user, choose-list and click-option, the
tasks whose instruction gives every value and whose page is the same in every episode, on the ``miniwob``
package's pages served on 127.0.0.1; the agent clicks START and reads the instruction before it acts, with
skills and without, and the page's reward decides success (it has no data to change: no wrong effect is
counted there). Its tasks share one origin (one port), so they are one site's skills, as Trac's are.

Usage: python benchmarks/bench_skills.py [--apps trac,miniwob] [--tasks resolve,comment]
       [--miniwob-tasks enter-text,login-user] [--recordings 2] [--instances 5] [--composed 5] [--json FILE]
       [--keep DIR] [--seed 0] [-v]
       (needs: pip install trac; Chromium; Playwright MCP: scripts/setup.sh, or PLAYWRIGHT_MCP_CLI=path/cli.js)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from realapp_report import code_version
from skills_agent import ProxySession, playwright_mcp_cli
from trac_app import require_trac, serve_trac

NEW_INSTANCE_GOAL = 0.9
COMPOSED_GOAL = 0.8
TOP_MISSES = 3


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from skills_miniwob import TASKS as MINIWOB_TASKS
    from skills_trac import TASKS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASKS), help=f"comma-separated, of {', '.join(TASKS)}")
    parser.add_argument("--apps", default="trac,miniwob", help="comma-separated, of trac, miniwob (default both)")
    parser.add_argument("--miniwob-tasks", default=",".join(MINIWOB_TASKS),
                        help=f"comma-separated, of {', '.join(MINIWOB_TASKS)}")
    parser.add_argument("--recordings", type=int, default=2, help="recorded runs per task (1 to 3; default 2)")
    parser.add_argument("--instances", type=int, default=5, help="new instances per task (default 5)")
    parser.add_argument("--composed", type=int, default=5, help="composed goals (default 5; they need the ticket "
                        "tasks set_priority, resolve, reassign and comment)")
    parser.add_argument("--json", type=Path, help="write every episode and the summary to this file")
    parser.add_argument("--keep", type=Path, help="keep the skills' memory in DIR")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every episode")
    args = parser.parse_args(argv)
    args.tasks = list(dict.fromkeys(name.strip() for name in args.tasks.split(",") if name.strip()))
    args.miniwob_tasks = list(dict.fromkeys(name.strip() for name in args.miniwob_tasks.split(",") if name.strip()))
    args.apps = list(dict.fromkeys(name.strip() for name in args.apps.split(",") if name.strip()))
    if not args.tasks or any(name not in TASKS for name in args.tasks):
        parser.error(f"--tasks: expected some of {', '.join(TASKS)}")
    if not args.miniwob_tasks or any(name not in MINIWOB_TASKS for name in args.miniwob_tasks):
        parser.error(f"--miniwob-tasks: expected some of {', '.join(MINIWOB_TASKS)}")
    if not args.apps or any(name not in ("trac", "miniwob") for name in args.apps):
        parser.error("--apps: expected some of trac, miniwob")
    if not 1 <= args.recordings <= 3 or args.instances < 1 or args.composed < 0:
        parser.error("--recordings: 1 to 3; --instances: at least 1; --composed: at least 0")
    return args


def done_by_skills(record: dict) -> bool:
    """A success with one skill call per part of the goal, each done, and nothing done by hand."""
    return bool(record["success"] and not record["by_hand"] and len(record["called"]) == record["needed"]
                and all(outcome == "done" for _, _, outcome in record["called"]))


async def run_app(args: argparse.Namespace, bench, skills_memory: Path, root: Path, cli: Path
                  ) -> tuple[list[dict], list[dict]]:
    """Record ``bench``'s tasks into the skills' memory, then do its new instances and composed goals with skills
    (on that memory) and without (on an empty one)."""
    root = root / bench.name
    recordings: list[dict] = []
    async with ProxySession.started(skills_memory, root / "record", cli) as session:
        for task in bench.tasks:
            for instance in bench.recorded[task]:
                recordings.append(await bench.record(session, instance))
                if args.verbose or not recordings[-1]["success"]:
                    print(f"  [record {task}] {'ok' if recordings[-1]['success'] else 'FAILED'} "
                          f"{recordings[-1]['goal']!r}: {recordings[-1]['detail']}", flush=True)
    planned = bench.episodes()
    episodes = [{"app": bench.name, "task": task, "kind": kind, "goal": bench.goal(parts)}
                for task, kind, parts in planned]
    async with ProxySession.started(skills_memory, root / "with", cli) as session:
        for record, (_, _, parts) in zip(episodes, planned):
            record["with"] = await bench.with_skills(session, parts)
            record["with"]["done_by_skills"] = done_by_skills(record["with"])
            record["goal"] = record["with"].get("goal") or record["goal"]
    async with ProxySession.started(root / "empty-memory", root / "without", cli) as session:
        for record, (_, _, parts) in zip(episodes, planned):
            record["without"] = await bench.without_skills(session, parts)
            if args.verbose or not record["with"]["done_by_skills"] or "wrong" in (
                    record["with"]["effect"], record["without"]["effect"]):
                print(episode_line(record), flush=True)
    return recordings, episodes


def episode_line(record: dict) -> str:
    used, bare = record["with"], record["without"]
    state = "by skills" if used["done_by_skills"] else "success" if used["success"] else "FAILED"
    line = (f"  [{record['kind']} {record['task']}] {state}: {record['goal']!r}; calls {used['calls']} with, "
            f"{bare['calls']} without ({'ok' if bare['success'] else 'FAILED'})")
    if not used["done_by_skills"]:
        line += f"\n      called {used['called']}; notes {used['notes']}; {used['detail']}"
    for side, found in (("with", used), ("without", bare)):
        if found["effect"] == "wrong":
            line += f"\n      WRONG EFFECT {side} skills: {found['detail']}"
    return line


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(episodes: list[dict], tasks: list[str]) -> dict:
    rows: dict[str, dict] = {}
    groups = [(task, [item for item in episodes if item["kind"] == "new" and item["task"] == task]) for task in tasks]
    groups.append(("composed", [item for item in episodes if item["kind"] == "composed"]))
    for name, items in groups:
        if not items:
            continue
        with_calls = _median([item["with"]["calls"] for item in items])
        without_calls = _median([item["without"]["calls"] for item in items])
        misses = Counter(note.split(": ", 1)[0] + ": " + (note.split(": ", 2)[1] if note.count(": ") > 1 else "")
                         for item in items if not item["with"]["done_by_skills"] for note in item["with"]["notes"]
                         or [item["with"]["detail"]])
        rows[name] = {
            "instances": len(items), "done_by_skills": sum(item["with"]["done_by_skills"] for item in items),
            "success_with": sum(item["with"]["success"] for item in items),
            "success_without": sum(item["without"]["success"] for item in items),
            "median_calls_with": with_calls, "median_calls_without": without_calls,
            "calls_ratio": round(with_calls / without_calls, 2) if with_calls and without_calls else None,
            "handovers": sum(outcome == "handed_over" for item in items for _, _, outcome in item["with"]["called"]),
            "wrong_with": sum(item["with"]["effect"] == "wrong" for item in items),
            "wrong_without": sum(item["without"]["effect"] == "wrong" for item in items),
            "misses": misses.most_common(TOP_MISSES),
        }
    return rows


def goals_met(rows: dict) -> dict:
    new = [row for name, row in rows.items() if name != "composed"]
    done, total = sum(row["done_by_skills"] for row in new), sum(row["instances"] for row in new)
    composed = rows.get("composed")
    return {
        "new_instances": {"done": done, "total": total, "met": bool(total and done / total >= NEW_INSTANCE_GOAL)},
        "composed": None if composed is None else {
            "done": composed["done_by_skills"], "total": composed["instances"],
            "met": composed["done_by_skills"] / composed["instances"] >= COMPOSED_GOAL},
        "no_wrong_effects": {"wrong": sum(row["wrong_with"] for row in rows.values()),
                             "met": all(row["wrong_with"] == 0 for row in rows.values())},
    }


def print_table(rows: dict, goals: dict) -> None:
    print(f"\n{'task':<22} {'by skills':>9} {'ok with':>7} {'ok w/o':>7} {'calls with':>10} {'calls w/o':>9} "
          f"{'ratio':>5} {'handover':>8} {'wrong with':>10} {'wrong w/o':>9}")
    for name, row in rows.items():
        n = row["instances"]
        print(f"{name:<22} {row['done_by_skills']:>5}/{n:<3} {row['success_with']:>3}/{n:<3} "
              f"{row['success_without']:>3}/{n:<3} {row['median_calls_with']:>10g} {row['median_calls_without']:>9g} "
              f"{row['calls_ratio'] or 0:>5.2f} {row['handovers']:>8} {row['wrong_with']:>10} {row['wrong_without']:>9}")
        for reason, count in row["misses"]:
            print(f"{'':<24}{count:>3}x {reason[:150]}")
    new, composed, wrong = goals["new_instances"], goals["composed"], goals["no_wrong_effects"]
    print(f"\ngoal >= {NEW_INSTANCE_GOAL:.0%} of new instances done with one skill call per skill: "
          f"{new['done']}/{new['total']} {'met' if new['met'] else 'NOT met'}")
    if composed is not None:
        print(f"goal >= {COMPOSED_GOAL:.0%} of composed goals done by skills: {composed['done']}/{composed['total']} "
              f"{'met' if composed['met'] else 'NOT met'}")
    print(f"goal 0 wrong effects with skills: {wrong['wrong']} {'met' if wrong['met'] else 'NOT met'}")


async def run_all(args: argparse.Namespace, root: Path, cli: Path) -> tuple[list, list[dict], list[dict]]:
    """Each app of ``args.apps`` served and run in turn, on one skills' memory."""
    from skills_miniwob import MiniwobTasks
    from skills_trac import TracTasks, build_catalog

    from webmem.bench.miniwob import serve_miniwob

    skills_memory = args.keep or root / "skills-memory"
    benches, recordings, episodes = [], [], []
    for app_name in args.apps:
        with contextlib.ExitStack() as stack:
            if app_name == "trac":
                app = stack.enter_context(serve_trac(build_catalog(args.seed)))
                bench = TracTasks(app, args.tasks, args.recordings, args.instances, args.composed, args.seed)
                where = app.base_url
            else:
                where = stack.enter_context(serve_miniwob())
                bench = MiniwobTasks(where, args.miniwob_tasks, args.recordings, args.instances, args.seed)
            print(f"{bench.name}: recording {sum(map(len, bench.recorded.values()))} runs, then "
                  f"{len(bench.episodes())} episodes with skills and without, on {where} ...", flush=True)
            recorded, done = await run_app(args, bench, skills_memory, root, cli)
        benches.append(bench)
        recordings += recorded
        episodes += done
    return benches, recordings, episodes


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if "trac" in args.apps:
        require_trac()
    cli = playwright_mcp_cli()
    if cli is None or not cli.is_file():
        sys.exit("Playwright MCP is needed: scripts/setup.sh installs it, or set PLAYWRIGHT_MCP_CLI=path/to/cli.js")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="webmem-bench-skills-") as scratch:
        benches, recordings, episodes = asyncio.run(run_all(args, Path(scratch), cli))
    rows = summarize(episodes, [*(args.tasks if "trac" in args.apps else []),
                                *(args.miniwob_tasks if "miniwob" in args.apps else [])])
    goals = goals_met(rows)
    print_table(rows, goals)
    failed = [item for item in recordings if not item["success"]]
    elapsed = time.perf_counter() - started
    composed = sum(len(bench.composed) for bench in benches)
    print(f"\n{code_version()}; seed {args.seed}, {args.recordings} recordings and {args.instances} new instances "
          f"per task, {composed} composed goals; total time {elapsed:.0f} s")
    if failed:
        print(f"!! {len(failed)} recorded runs failed: the memory lacks what those tasks should replay")
    if args.json:
        args.json.write_text(json.dumps({
            "version": code_version(), "seed": args.seed, "apps": args.apps, "tasks": args.tasks,
            "miniwob_tasks": args.miniwob_tasks, "recordings_per_task": args.recordings, "instances": args.instances,
            "duration_s": round(elapsed, 1), "summary": rows, "goals": goals, "recordings": recordings,
            "episodes": episodes}, indent=1, ensure_ascii=False))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
