"""A fleet that starts together on a memory nobody has opened yet: how many of its first opens succeed.

For each backend and fleet size, starts N processes that wait at one barrier, then each opens a brand-new
memory (SQLite: one new directory; PostgreSQL: one new, empty database), records a run and closes it.
Prints how many opens succeeded, the errors of those that failed, and the slowest open. PostgreSQL is a
throwaway cluster (the test suite's, Debian's postgresql package) or WEBMEM_TEST_POSTGRES_URL's server.

Usage: python benchmarks/bench_first_open.py [--sizes 6,32] [--rounds 3] [--backends sqlite,postgres]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import webmem

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import pg_cluster  # noqa: E402  (the test suite's throwaway cluster)


def opener(location: str, local_dir: str, number: int, barrier: Any, results: Any) -> None:
    barrier.wait(timeout=300)
    began = time.perf_counter()
    try:
        with webmem.Memory.open(location, local_dir=local_dir) as mem, \
                mem.start_run(goal=f"Agent {number} starts", start_url="https://shop.example/") as run:
            run.record_step(action="click", target='button "Start"')
        results.put(("ok", time.perf_counter() - began))
    except Exception as exc:  # reported, not raised: the point is to count them
        results.put((f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}", time.perf_counter() - began))


def fleet(location: str, local_dir: str, size: int) -> tuple[int, Counter, float]:
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(size), context.Queue()
    processes = [context.Process(target=opener, args=(location, local_dir, n, barrier, results)) for n in range(size)]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    failures = Counter(kind for kind, _ in outcomes if kind != "ok")
    return sum(kind == "ok" for kind, _ in outcomes), failures, max(seconds for _, seconds in outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="6,32")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    sizes = [int(part) for part in args.sizes.split(",")]
    backends = args.backends.split(",")
    cluster = pg_cluster.start() if "postgres" in backends else None
    try:
        print(f"{'backend':<10} {'processes':>9} {'opens ok':>10} {'slowest s':>10}  failures")
        for backend in backends:
            for size in sizes:
                ok = total = 0
                failures: Counter = Counter()
                slowest = 0.0
                for _ in range(args.rounds):
                    with tempfile.TemporaryDirectory(prefix="webmem-first-open-") as scratch:
                        if backend == "sqlite":
                            location = str(Path(scratch) / "memory")
                        else:
                            name = f"webmem_first_{uuid.uuid4().hex[:12]}"
                            location = pg_cluster.create_database(cluster, name)
                        done, failed, seconds = fleet(location, scratch, size)
                        if backend == "postgres":
                            pg_cluster.drop_database(cluster, name)
                    ok, total, slowest = ok + done, total + size, max(slowest, seconds)
                    failures.update(failed)
                shown = "; ".join(f"{count}x {kind}" for kind, count in failures.most_common(3)) or "-"
                print(f"{backend:<10} {size:>9} {f'{ok}/{total}':>10} {slowest:>10.2f}  {shown}")
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
