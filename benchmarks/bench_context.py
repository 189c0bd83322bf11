"""How long the hot paths take: run.context(), record_step(), finish() and trajectory matching.

Prints medians over repeated calls, and ratios against a baseline measured in the same process
(a context built from an empty memory). Usage: python benchmarks/bench_context.py [--trajectories N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from timing import median_ms

import webmem

SITE = "https://www.example-shop.com/"
WORDS = "search smart watch reviews cart checkout promo code apply size shoe track order parcel".split()



def fill(mem: webmem.Memory, trajectories: int) -> None:
    for index in range(trajectories):
        goal = " ".join(WORDS[(index + k) % len(WORDS)] for k in range(5)) + f" variant {index}"
        run = mem.start_run(goal=goal, start_url=SITE)
        for step in range(8):
            run.record_step(action="click", target=f'button "Step {step}"', selector=f"#s{step}", url=SITE,
                            verified=True, duration_ms=300)
        run.finish(success=True, outcome=f"done {index}",
                   facts=[{"type": "quirk", "key": f"quirk-{index % 30}", "value": "modal on load"}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trajectories", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        empty = webmem.Memory.open(Path(tmp) / "empty")
        baseline_run = empty.start_run(goal="search smart watch reviews", start_url=SITE)
        baseline = median_ms(lambda: baseline_run.context(), args.repeat)

        mem = webmem.Memory.open(Path(tmp) / "full")
        began = time.perf_counter()
        fill(mem, args.trajectories)
        fill_s = time.perf_counter() - began
        run = mem.start_run(goal="search smart watch reviews cart", start_url=SITE)
        first_context = median_ms(lambda: mem.trajectories.match(run.goal, origin=SITE), max(20, args.repeat // 10))
        warm_context = median_ms(lambda: run.context(), args.repeat)
        record = median_ms(
            lambda: run.record_step(action="click", target='button "Go"', selector="#go", url=SITE), args.repeat
        )
        finishes = []
        for _ in range(max(20, args.repeat // 10)):
            extra = mem.start_run(goal="apply promo code at checkout", start_url=SITE)
            for _ in range(8):
                extra.record_step(action="click", target='button "Go"', selector="#go", url=SITE)
            began = time.perf_counter()
            extra.finish(success=True, outcome="ok")
            finishes.append((time.perf_counter() - began) * 1000)
        finish = statistics.median(finishes)

    print(f"memory with {args.trajectories} trajectories of 8 steps (filled in {fill_s:.1f}s), {args.repeat} repeats")
    print(f"{'operation':<52}{'median ms':>10}{'x baseline':>12}")
    rows = [
        ("baseline: run.context() on an empty memory", baseline),
        ("match a goal against all trajectories", first_context),
        ("run.context() (reference cached per origin)", warm_context),
        ("run.record_step() (step + selector)", record),
        ("run.finish() (8 steps: trajectory, session, facts)", finish),
    ]
    for name, value in rows:
        print(f"{name:<52}{value:>10.3f}{value / baseline:>12.2f}")


if __name__ == "__main__":
    main()
