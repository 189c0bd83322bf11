"""Do the scripts `webmem script` writes pass? MiniWoB++'s default set, with the heuristic policy.

Per task: the heuristic agent records a run (replay off; up to three seeds until one succeeds); its
Python script is written (`mem.script`) and loaded as a module; its `run(page, **params)` is called, in
a fresh page of its own each time, on the instance it was recorded on (default parameters), then on
``--new`` new instances, each with
the parameters the new instruction gives (the goal template bound to it). A new instance whose
instruction does not fit the template is counted apart (the script is not for that instruction).
An episode passes when MiniWoB++ rewards it. Prints a table by task and the totals.

Usage: python benchmarks/bench_scripts.py [--tasks a,b] [--new 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import webmem
from webmem.agent import Agent
from webmem.agent.browser import launch_chromium
from webmem.agent.heuristic import HeuristicPolicy
from webmem.bench.miniwob import DEFAULT_TASKS, INSTRUCTION_DETERMINED, TaskPage, serve_miniwob
from webmem.bench.runner import MiniWobEnvironment
from webmem.scripts import plan_script
from webmem.trajectories.binding import bind

ATTEMPTS = 3


@dataclass
class TaskResult:
    task: str
    scripted: bool = False
    why_not: str = ""
    recorded_pass: bool = False
    fitting: int = 0
    passed: int = 0
    failures: list[str] = field(default_factory=list)


def load_script(text: str, task: str) -> Any:
    module = types.ModuleType(f"script_{task.replace('-', '_')}")
    exec(compile(text, f"<script of {task}>", "exec"), module.__dict__)  # noqa: S102 (our own generated script)
    return module


def attempt(browser: Any, task_page: TaskPage, seed: str, module: Any, params: dict[str, str]) -> tuple[bool, str]:
    """Run the script on the seeded instance in a page of its own, as a script runs in its own browser (a
    page the agent used keeps its mouse where the agent left it, and a hover there moves nothing)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(3000)
        own = TaskPage(page, task_page.url.rsplit("/miniwob/", 1)[0], task_page.task)
        own.load()
        own.start(seed)
        try:
            module.run(page, **params)
        except Exception as exc:  # noqa: BLE001 (a failing script is a result, reported by its message)
            own.finish()
            return False, " ".join(str(exc).split())[:int(os.environ.get("WHY_CHARS", "160"))]
        time.sleep(0.05)
        state = own.finish()
        return state.success, "" if state.success else state.reason
    finally:
        context.close()


def bench_task(browser: Any, base_url: str, task: str, new: int, seed: int) -> TaskResult:
    result = TaskResult(task)
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(3000)
    task_page = TaskPage(page, base_url, task)
    task_page.load()
    with tempfile.TemporaryDirectory() as directory, webmem.Memory.open(Path(directory)) as mem:
        recorded_seed, run_id = None, None
        for number in range(ATTEMPTS):
            candidate = f"script-{seed}-{task}-{number}"
            utterance = task_page.start(candidate)
            outcome = Agent(page, memory=mem, policy=HeuristicPolicy(), environment=MiniWobEnvironment(),
                            max_turns=12, replay=False).run(utterance, url=None)
            if task_page.finish().success:
                recorded_seed, run_id = candidate, outcome.run_id
                break
        if run_id is None:
            result.why_not = "the heuristic policy did not succeed"
            context.close()
            return result
        try:
            text = mem.script(run_id)
        except webmem.WebmemError as exc:
            result.why_not = str(exc)[:120]
            context.close()
            return result
        result.scripted = True
        trajectory = next(found for found in mem.trajectories.list() if found.run_id == run_id)
        plan = plan_script(trajectory)
        module = load_script(text, task)
        result.recorded_pass, why = attempt(browser, task_page, recorded_seed, module, {})
        if not result.recorded_pass:
            result.failures.append(f"recorded: {why}")
        for number in range(new):
            instance = f"script-new-{seed}-{task}-{number}"
            utterance = task_page.start(instance)
            task_page.finish()
            if plan.template is None:
                values = {} if utterance.split() == trajectory.goal.split() else None
            else:
                values = bind(plan.template, utterance)
            if values is None:
                continue
            result.fitting += 1
            params = {param.name: values[param.slot] for param in plan.params if param.slot in values}
            passed, why = attempt(browser, task_page, instance, module, params)
            result.passed += passed
            if not passed:
                result.failures.append(f"{utterance[:60]!r}: {why}")
    context.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default=",".join(DEFAULT_TASKS))
    parser.add_argument("--new", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=3000)
    results = []
    with serve_miniwob() as base_url, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for task in [name.strip() for name in args.tasks.split(",") if name.strip()]:
                results.append(bench_task(browser, base_url, task, args.new, args.seed))
                item = results[-1]
                print(f"{task:28} scripted={'yes' if item.scripted else 'no ':3} recorded={'pass' if item.recorded_pass else 'FAIL'}"
                      f" new fitting={item.fitting} passed={item.passed}  {item.why_not or '; '.join(item.failures[:2])}",
                      flush=True)
        finally:
            browser.close()
    scripted = [item for item in results if item.scripted]
    print(f"\ntasks {len(results)}, scripts written {len(scripted)}, pass on the recorded instance "
          f"{sum(item.recorded_pass for item in scripted)}/{len(scripted)}, new instances that fit the script "
          f"{sum(item.fitting for item in scripted)}, of which passed {sum(item.passed for item in scripted)}")
    determined = [item for item in scripted if item.task in INSTRUCTION_DETERMINED]
    print(f"tasks whose instruction determines the actions: {len(determined)}, pass on the recorded instance "
          f"{sum(item.recorded_pass for item in determined)}/{len(determined)}, new instances that fit the script "
          f"{sum(item.fitting for item in determined)}, of which passed {sum(item.passed for item in determined)}")


if __name__ == "__main__":
    main()
