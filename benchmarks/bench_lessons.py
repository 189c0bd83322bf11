"""Lessons at scale: does recall on a site stay flat as a memory learns lessons about many sites?

Builds memories holding ``--small`` and ``--large`` site lessons (ten per site, each with its own failed
command and error pattern) through ``mem.lessons.record``, then times on random sites (half of them with
lessons): ``peek_domain`` (the lessons a page on the site would recall), ``peek_error`` (those an error
there would recall), a new run's first ``run.context()`` on a site with lessons (recalling them counts
their use: a write) and on one without, and recording one more lesson. Prints p50s in ms and the ratio
large / small.

Usage: python benchmarks/bench_lessons.py [--small 100] [--large 10000] [--samples 300]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

import webmem

PER_SITE = 10


def site(number: int) -> str:
    return f"shop{number:04d}.example.com"


def build(lessons: int) -> webmem.Memory:
    mem = webmem.Memory.open(tempfile.mkdtemp(prefix="webmem-lessons-"))
    with mem.store.write():
        for number in range(lessons):
            mem.lessons.record(f"Accept the cookie banner {number} before clicking.", "site_specific",
                               failed_command=f'click button "Item {number}"',
                               error_pattern=f"element is covered by banner {number}", domain=site(number // PER_SITE))
    return mem


def p50(samples: int, work: Callable[[random.Random], Callable[[], object]]) -> float:
    rng = random.Random(3)
    found = []
    for _ in range(samples):
        call = work(rng)
        began = time.perf_counter()
        call()
        found.append(time.perf_counter() - began)
    return statistics.median(found) * 1000


def measure(lessons: int, samples: int) -> dict[str, float]:
    began = time.perf_counter()
    mem = build(lessons)
    print(f"  {lessons:,} lessons recorded in {time.perf_counter() - began:.1f}s", file=sys.stderr)
    sites = 2 * max(1, lessons // PER_SITE)  # half the sites have lessons

    def first_context(taught: bool) -> Callable[[random.Random], Callable[[], object]]:
        def start(rng: random.Random) -> Callable[[], object]:
            url = f"https://{site(rng.randrange(sites // 2) + (0 if taught else sites // 2))}/"
            run = mem.start_run(goal="Buy a desk lamp", start_url=url)
            return lambda: run.context(url=url)
        return start

    figures = {
        "peek_domain": p50(samples, lambda rng: lambda: mem.lessons.peek_domain(site(rng.randrange(sites)))),
        "peek_error": p50(samples, lambda rng: lambda: mem.lessons.peek_error(
            "click", "Timeout: element is covered by banner 7", domain=site(rng.randrange(sites)))),
        "first context, taught site": p50(samples, first_context(True)),
        "first context, other site": p50(samples, first_context(False)),
        "record one more lesson": p50(samples, lambda rng: lambda: mem.lessons.record(
            "Scroll first.", "site_specific", failed_command="scroll", error_pattern=f"not in view {rng.random()}",
            domain=site(rng.randrange(sites)))),
    }
    mem.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    small, large = measure(args.small, args.samples), measure(args.large, args.samples)
    print(f"{'p50 ms':<26}{f'{args.small:,} lessons':>16}{f'{args.large:,} lessons':>16}{'ratio':>8}")
    for name in small:
        print(f"{name:<26}{small[name]:>16.3f}{large[name]:>16.3f}{large[name] / small[name]:>8.1f}")


if __name__ == "__main__":
    main()
