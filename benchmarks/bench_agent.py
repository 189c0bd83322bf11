"""What the memory costs and saves the agent loop, on a local page in headless Chromium.

Runs the same two-step task (fill a field, click a button) with a rule-free scripted decision:
without memory (the baseline), with memory but replay off (context built and steps recorded every
turn), and with memory and replay (no decisions). Prints the median wall time of a run in each mode
and its ratio to the baseline measured in the same process.
Usage: python benchmarks/bench_agent.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from webmem import Memory
from webmem.agent import Action, Agent, PolicyStats, Target, Turn
from webmem.agent.browser import launch_chromium
from webmem.agent.checks import SuccessCheck
from webmem.demo.server import serve_site

SITE = Path(__file__).resolve().parent.parent / "tests" / "sites" / "subscribe" / "v1"


class Scripted:
    """Fill the email, click Subscribe, finish: the cheapest possible policy, so the figures are the loop's."""

    name = "scripted"

    def __init__(self) -> None:
        self.stats = PolicyStats()

    def start(self, goal: str) -> None:
        pass

    def decide(self, turn: Turn) -> Action:
        self.stats.decisions += 1
        done = {outcome.action.kind for outcome in turn.history}
        if "fill" not in done:
            return Action("fill", Target(role="textbox", name="Email"), value=turn.goal.split('"')[1])
        if "click" not in done:
            return Action("click", Target(role="button", name="Subscribe"))
        return Action("finish", success=True)


def timed_runs(page: object, url: str, memory: Memory | None, *, replay: bool, runs: int) -> tuple[float, float]:
    samples, decisions = [], []
    for index in range(runs):
        email = f"user{index}@example.com"
        agent = Agent(page, memory=memory, policy=Scripted(), replay=replay,
                      environment=SuccessCheck(text=f"Thanks, {email}") if replay else None)
        began = time.perf_counter()
        result = agent.run(f'Subscribe to the newsletter with the email "{email}"', url=url)
        samples.append((time.perf_counter() - began) * 1000)
        decisions.append(result.decisions)
        if not result.success:
            sys.exit(f"run {index} failed: {result.reason}")
    return statistics.median(samples), statistics.fmean(decisions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with sync_playwright() as playwright, serve_site(SITE) as url, tempfile.TemporaryDirectory() as directory:
        browser = launch_chromium(playwright)
        page = browser.new_page()
        baseline, base_decisions = timed_runs(page, url, None, replay=False, runs=args.runs)
        with Memory.open(Path(directory) / "no-replay") as memory:
            recorded, recorded_decisions = timed_runs(page, url, memory, replay=False, runs=args.runs)
        with Memory.open(Path(directory) / "replay") as memory:
            replayed, replay_decisions = timed_runs(page, url, memory, replay=True, runs=args.runs)
        browser.close()
    print(f"agent runs of a 2-step task, median of {args.runs} (headless Chromium, local page)")
    print(f"  no memory (baseline)      {baseline:7.1f} ms  1.00x  decisions/run {base_decisions:.2f}")
    print(f"  memory, replay off        {recorded:7.1f} ms  {recorded / baseline:.2f}x  decisions/run "
          f"{recorded_decisions:.2f}")
    print(f"  memory, replay on         {replayed:7.1f} ms  {replayed / baseline:.2f}x  decisions/run "
          f"{replay_decisions:.2f}")


if __name__ == "__main__":
    main()
