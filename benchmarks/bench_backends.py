"""SQLite and PostgreSQL side by side: loading runs, and the reads a run makes when it starts.

Loads N runs (default 100,000) of 10 steps each over 1,000 domains into each backend through the
public API (one transaction per run: start, 10 steps, finish), then prints per backend the load
rate in steps/s, and the median and p99 of ``run.context()`` for a new run and of
``mem.trajectories.find_best_match``. SQLite lives in a temporary directory; PostgreSQL is a
throwaway cluster (as in the test suite: Debian's postgresql package) or the server named by
WEBMEM_TEST_POSTGRES_URL, in a fresh database dropped afterwards.

Usage: python benchmarks/bench_backends.py [--runs N] [--samples N] [--backends sqlite,postgres]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import webmem

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import pg_cluster  # noqa: E402  (the test suite's throwaway cluster)

DOMAINS = 1_000
STEPS = 10
VERBS = "search buy track compare return review book cancel subscribe rate".split()
THINGS = "smart watch running shoes coffee beans laptop stand desk lamp headphones backpack router".split()
EXTRAS = "today cheapest fastest with coupon for a gift in blue on sale nearby".split()


def site(index: int) -> str:
    return f"https://shop{index % DOMAINS:04d}.example.com/"


def goal(rng: random.Random) -> str:
    return f"{rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(THINGS)} {rng.choice(EXTRAS)}"


def load(mem: webmem.Memory, runs: int, rng: random.Random) -> float:
    """Store ``runs`` finished runs of STEPS steps; returns the seconds it took."""
    began = time.perf_counter()
    for index in range(runs):
        url = site(index)
        with mem.store.write():  # one transaction per run
            run = mem.start_run(goal=goal(rng), start_url=url)
            for step in range(STEPS):
                run.record_step(action="click" if step % 3 else "fill", target=f'button "Step {step}"',
                                selector=f"#step-{step}", value=None if step % 3 else "smart watch",
                                url=f"{url}page/{step}", verified=step % 2 == 0, duration_ms=250 + step)
            run.finish(success=index % 5 != 0, outcome=f"finished run {index}",
                       facts=[{"type": "quirk", "key": f"quirk-{index % 7}", "value": "a modal on load"}])
        if (index + 1) % max(1, runs // 20) == 0:
            rate = (index + 1) * STEPS / (time.perf_counter() - began)
            print(f"  {index + 1:>7} runs loaded ({rate:,.0f} steps/s)", file=sys.stderr, flush=True)
    return time.perf_counter() - began


def percentiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return statistics.median(samples), cuts[98]


def timed(action: Callable[[], object]) -> float:
    began = time.perf_counter()
    action()
    return (time.perf_counter() - began) * 1000


def measure(mem: webmem.Memory, samples: int, rng: random.Random) -> dict[str, tuple[float, float]]:
    contexts, matches = [], []
    for _ in range(samples):
        url = site(rng.randrange(DOMAINS))
        run = mem.start_run(goal=goal(rng), start_url=url)  # a new run: nothing cached yet
        contexts.append(timed(lambda: run.context(url=url)))
        wanted = goal(rng)
        matches.append(timed(lambda: mem.trajectories.find_best_match(wanted, origin=url)))
    return {"run.context() (new run)": percentiles(contexts), "find_best_match": percentiles(matches)}


@contextmanager
def sqlite_location() -> Iterator[tuple[str, Path]]:
    with tempfile.TemporaryDirectory(prefix="webmem-bench-") as tmp:
        yield str(Path(tmp) / "memory"), Path(tmp) / "memory"


@contextmanager
def postgres_location() -> Iterator[tuple[str, Path]]:
    cluster = pg_cluster.start()
    name = f"webmem_bench_{uuid.uuid4().hex[:12]}"
    try:
        url = pg_cluster.create_database(cluster, name)
        with tempfile.TemporaryDirectory(prefix="webmem-bench-") as tmp:
            yield url, Path(tmp) / "local"  # the event log, as with SQLite
        pg_cluster.drop_database(cluster, name)
    finally:
        cluster.stop()


def bench(backend: str, runs: int, samples: int) -> dict[str, object]:
    print(f"{backend}: loading {runs:,} runs of {STEPS} steps over {DOMAINS:,} domains", file=sys.stderr, flush=True)
    location = sqlite_location() if backend == "sqlite" else postgres_location()
    with location as (where, local_dir):
        mem = webmem.Memory.open(where, local_dir=local_dir)
        try:
            seconds = load(mem, runs, random.Random(7))
            found = measure(mem, samples, random.Random(11))
        finally:
            mem.close()
    return {"load": runs * STEPS / seconds, "load_seconds": seconds, **found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000, help="runs to load (default 100,000)")
    parser.add_argument("--samples", type=int, default=500, help="timed calls of each read (default 500)")
    parser.add_argument("--backends", default="sqlite,postgres", help="comma-separated (default sqlite,postgres)")
    args = parser.parse_args()
    backends = [name.strip() for name in args.backends.split(",") if name.strip()]
    results = {backend: bench(backend, args.runs, args.samples) for backend in backends}

    print(f"{args.runs:,} runs x {STEPS} steps over {DOMAINS:,} domains; {args.samples} samples per read")
    width = 16
    print(f"{'':<34}" + "".join(f"{backend:>{width}}" for backend in backends))
    print(f"{'load (steps/s)':<34}" + "".join(f"{results[b]['load']:>{width},.0f}" for b in backends))
    print(f"{'load time (s)':<34}" + "".join(f"{results[b]['load_seconds']:>{width},.1f}" for b in backends))
    for read in ("run.context() (new run)", "find_best_match"):
        for label, position in (("median ms", 0), ("p99 ms", 1)):
            values = [results[b][read][position] for b in backends]  # type: ignore[index]
            print(f"{read + ' ' + label:<34}" + "".join(f"{value:>{width}.2f}" for value in values))


if __name__ == "__main__":
    main()
