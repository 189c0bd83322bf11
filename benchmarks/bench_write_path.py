"""The write path through the public API: start a run, record steps, finish it; and a bulk import.

For each backend, stores ``--runs`` runs of 10 steps one after the other (each call its own
transaction, as an agent makes them) into a fresh memory and prints the median and p99 of
``start_run``, ``record_step`` and ``finish``, and steps/s overall. Then stores ``--import-runs`` runs
in another memory, exports it as JSONL and imports it into a fresh one (``webmem import``'s code path),
printing steps written per second (a run's and a trajectory's) and records per second.

``--baseline REV`` measures the same with webmem as it was at git revision REV (checked out into a
temporary worktree and run in a subprocess of this script with that ``src/`` first on the path), in
the same run on the same machine, and prints the ratios. ``--load N`` also loads N runs of 10 steps
into a fresh memory through the public API and prints the time, two ways (``--load-by``): ``calls``,
run by run (``start_run``, ``record_step`` per step, ``finish``) in transactions of ``--batch`` runs;
``import``, as ``webmem export`` JSONL files of 10,000 runs each (the run with its steps, its session,
and its trajectory when it succeeded), each imported by ``webmem import``'s code path; the time to
write the files is printed apart, and the stored counts are checked.

SQLite lives in a temporary directory; PostgreSQL is a throwaway cluster (the test suite's) or the
server named by WEBMEM_TEST_POSTGRES_URL, in a fresh database.

Usage: python benchmarks/bench_write_path.py [--runs 300] [--import-runs 2000] [--backends sqlite,postgres]
       [--baseline 2dd7cec] [--load 100000 --batch 100 --load-by calls,import]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import webmem

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
STEPS = 10
VERBS = "search buy track compare return review book cancel subscribe rate".split()
THINGS = "smart watch running shoes coffee beans laptop stand desk lamp headphones backpack router".split()


#: The identity signals the reference agent records with each step (a select in a table row), where the webmem
#: measured has them: a baseline from before them records steps without, so the ratio is their whole cost.
SIGNALS: dict[str, Any] = {"element": {
    "row_header": "Status", "field_name": "status", "tag": "select", "heading": "Export fails", "text_before": "Status",
    "options": ["unread", "chatting", "in-progress", "testing", "done-cbb", "resolved"], "position": 1, "of_kind": 4,
}} if hasattr(webmem, "ElementSignals") else {}


def goal(rng: random.Random, index: int) -> str:
    return f"{rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(THINGS)} number {index}"


def one_run(mem: webmem.Memory, rng: random.Random, index: int, timings: dict[str, list[float]] | None) -> None:
    url = f"https://shop{index % 50:02d}.example.com/"
    began = time.perf_counter()
    run = mem.start_run(goal=goal(rng, index), start_url=url)
    if timings is not None:
        timings["start_run"].append(time.perf_counter() - began)
    for step in range(STEPS):
        began = time.perf_counter()
        run.record_step(action="click" if step % 3 else "fill", target=f'button "Step {step}"',
                        selector=f"#step-{step}", value=None if step % 3 else "smart watch",
                        url=f"{url}page/{step}", verified=step % 2 == 0, duration_ms=250 + step, **SIGNALS)
        if timings is not None:
            timings["record_step"].append(time.perf_counter() - began)
    began = time.perf_counter()
    run.finish(success=index % 5 != 0, outcome=f"finished run {index}",
               facts=[{"type": "quirk", "key": f"quirk-{index % 7}", "value": "a modal on load"}])
    if timings is not None:
        timings["finish"].append(time.perf_counter() - began)


def measure(location: str, namespace: str, runs: int, import_runs: int) -> dict[str, float]:
    """The figures of one backend, in milliseconds (medians and p99) and steps per second."""
    rng = random.Random(7)
    timings: dict[str, list[float]] = {"start_run": [], "record_step": [], "finish": []}
    with webmem.Memory.open(location, namespace=namespace) as mem:
        for index in range(min(30, runs)):  # warm up: statements compiled, pools filled
            one_run(mem, rng, index, None)
        began = time.perf_counter()
        for index in range(runs):
            one_run(mem, rng, index, timings)
        elapsed = time.perf_counter() - began
        figures = {"steps_per_s": runs * STEPS / elapsed}
        for name, samples in timings.items():
            ordered = sorted(samples)
            figures[f"{name}_p50_ms"] = statistics.median(ordered) * 1000
            figures[f"{name}_p99_ms"] = ordered[int(len(ordered) * 0.99) - 1] * 1000
    figures.update(bulk_import(location, namespace, import_runs))
    return figures


def bulk_import(location: str, namespace: str, runs: int) -> dict[str, float]:
    """Export a memory of ``runs`` runs (stored 100 per transaction) as JSONL and import it into a fresh
    namespace (``webmem import``'s code path): steps written per second (a run's and a trajectory's) and
    records per second."""
    from webmem.interop.transfer import collect, import_path, render

    source = f"{namespace}-source"
    with webmem.Memory.open(location if "://" in location else tempfile.mkdtemp(), namespace=source) as mem:
        rng = random.Random(5)
        for start in range(0, runs, 100):
            with mem.store.write():
                for index in range(start, min(runs, start + 100)):
                    one_run(mem, rng, index, None)
        export = Path(tempfile.mkdtemp()) / "export.jsonl"
        export.write_text(render(mem, collect(mem, ["runs", "trajectories", "facts", "sessions", "selectors"]),
                                 "jsonl"), encoding="utf-8")
    records = [json.loads(line)["record"] for line in export.read_text(encoding="utf-8").splitlines()]
    steps = sum(len(record.get("steps", [])) for record in records)  # runs carry theirs since webmem 0.3
    with webmem.Memory.open(location if "://" in location else tempfile.mkdtemp(),
                            namespace=f"{namespace}-import") as mem:
        began = time.perf_counter()
        import_path(mem, export)
        seconds = time.perf_counter() - began
    return {"bulk_import_steps_per_s": steps / seconds, "bulk_import_records_per_s": len(records) / seconds}


def load(location: str, runs: int, batch: int) -> float:
    """Seconds to store ``runs`` runs of 10 steps, ``batch`` runs per transaction."""
    rng = random.Random(11)
    with webmem.Memory.open(location, namespace="load") as mem:
        began = time.perf_counter()
        for start in range(0, runs, batch):
            with mem.store.write():
                for index in range(start, min(runs, start + batch)):
                    one_run(mem, rng, index, None)
            if (start // batch) % max(1, runs // batch // 10) == 0:
                print(f"  loaded {start + batch:,} runs in {time.perf_counter() - began:.0f}s", flush=True)
        return time.perf_counter() - began


def load_records(rng: random.Random, index: int, started: datetime) -> list[tuple[str, dict[str, Any]]]:
    """Run ``index`` of :func:`one_run` as ``webmem export`` writes it (JSONL records): the run with its
    steps, its session (a domain keeps its newest few), and its trajectory when it succeeded."""
    url = f"https://shop{index % 50:02d}.example.com/"
    domain = url.split("/")[2]
    at = (started + timedelta(milliseconds=index)).isoformat()
    task, success = goal(rng, index), index % 5 != 0
    steps = [{"action": "click" if step % 3 else "fill", "target": f'button "Step {step}"', "selector": f"#step-{step}",
              "value": None if step % 3 else "smart watch", "url": f"{url}page/{step}", "verified": step % 2 == 0,
              "duration_ms": 250 + step} for step in range(STEPS)]
    outcome = f"finished run {index}"
    run_id = f"run_load_{index:07d}"
    records = [
        ("runs", {"run_id": run_id, "status": "completed" if success else "failed", "goal": task, "domain": domain,
                  "start_url": url, "final_url": steps[-1]["url"], "current_url": steps[-1]["url"], "started_at": at,
                  "updated_at": at, "completed_at": at, "success": success, "summary": outcome,
                  "turn_count": STEPS, "result": outcome if success else None, "reason": None if success else outcome,
                  "steps": steps}),
        ("sessions", {"id": f"sess_load_{index:07d}", "domain": domain, "goal": task, "outcome": outcome,
                      "success": success, "final_url": steps[-1]["url"], "timestamp": at, "turns_used": STEPS,
                      "duration_ms": sum(step["duration_ms"] for step in steps), "run_id": run_id}),
    ]
    if success:
        records.append(("trajectories", {
            "id": f"traj_load_{index:07d}", "goal": task, "origin": url.rstrip("/"), "domain": domain, "steps": steps,
            "success": True, "duration_ms": sum(step["duration_ms"] for step in steps), "created_at": at,
            "run_id": run_id,
        }))
    return records


def load_by_import(location: str, runs: int, chunk: int = 10_000) -> tuple[float, float]:
    """Write ``runs`` runs of :func:`one_run`'s shape as ``webmem export`` JSONL files of ``chunk`` runs, and
    import them into a fresh memory through ``webmem import``'s code path (``import_path``: each file one
    transaction, records validated as they are read). Returns the seconds spent writing the files and the
    seconds spent importing them."""
    from webmem.interop.transfer import import_path

    rng = random.Random(11)
    started = datetime.now(UTC) - timedelta(days=30)
    writing = importing = 0.0
    with tempfile.TemporaryDirectory() as directory, webmem.Memory.open(location, namespace="load") as mem:
        for start in range(0, runs, chunk):
            end = min(runs, start + chunk)
            began = time.perf_counter()
            export = Path(directory) / f"runs-{start}.jsonl"
            with export.open("w", encoding="utf-8") as out:
                for index in range(start, end):
                    out.writelines(json.dumps({"kind": kind, "record": record}) + "\n"
                                   for kind, record in load_records(rng, index, started))
            writing += time.perf_counter() - began
            began = time.perf_counter()
            report = import_path(mem, export)
            importing += time.perf_counter() - began
            export.unlink()
            if report.problems or report.added.get("runs") != end - start:
                raise SystemExit(f"import of {export.name} went wrong: {report.problems[:3]} {dict(report.added)}")
            print(f"  imported {end:,} runs in {importing:.0f}s", flush=True)
        stored = mem.stats()["counts"]
    expected = {"runs": runs, "steps": runs * STEPS, "trajectories": runs - len(range(0, runs, 5))}
    if {kind: stored[kind]["total"] for kind in expected} != expected:
        raise SystemExit(f"stored {stored}, expected {runs} runs")
    return writing, importing


@contextmanager
def backend(name: str) -> Iterator[Callable[[], str]]:
    """A maker of fresh memory locations on the backend: each a new directory, or a new database (the
    baseline gets its own: an older webmem refuses a database a newer one migrated)."""
    if name == "sqlite":
        with tempfile.TemporaryDirectory() as directory:
            yield lambda: tempfile.mkdtemp(dir=directory)
        return
    import pg_cluster
    cluster = pg_cluster.start()
    made: list[str] = []

    def fresh() -> str:
        made.append(f"bench_{uuid.uuid4().hex[:8]}")
        return pg_cluster.create_database(cluster, made[-1])

    try:
        yield fresh
    finally:
        for database in made:
            pg_cluster.drop_database(cluster, database)
        cluster.stop()


@contextmanager
def baseline_checkout(revision: str) -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp()) / "baseline"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(directory), revision],
                   check=True, capture_output=True)
    try:
        yield directory
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(directory)],
                       check=True, capture_output=True)


def measure_in(source: Path, location: str, namespace: str, runs: int, import_runs: int) -> dict[str, float]:
    environment = {**os.environ, "PYTHONPATH": str(source / "src")}
    done = subprocess.run([sys.executable, __file__, "--measure-only", location, namespace, str(runs), str(import_runs)],
                          env=environment, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--import-runs", type=int, default=2000, help="runs in the memory exported, then imported")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--baseline", help="a git revision to compare with (today's code before a change)")
    parser.add_argument("--load", type=int, default=0, help="also load this many runs and print the time")
    parser.add_argument("--batch", type=int, default=100, help="runs per transaction when loading run by run")
    parser.add_argument("--load-by", default="calls,import",
                        help="calls (start, record_step, finish), import (webmem export files), or both")
    parser.add_argument("--measure-only", nargs=4, metavar=("LOCATION", "NAMESPACE", "RUNS", "IMPORT_RUNS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_only:
        location, namespace, runs, import_runs = args.measure_only
        print(json.dumps(measure(location, namespace, int(runs), int(import_runs))))
        return
    print(f"webmem {webmem.__version__} from {Path(webmem.__file__).parent}; {args.runs} runs of {STEPS} steps")
    for name in args.backends.split(","):
        with backend(name) as fresh:
            figures = measure(fresh(), f"now-{uuid.uuid4().hex[:6]}", args.runs, args.import_runs)
            before = None
            if args.baseline:
                with baseline_checkout(args.baseline) as source:
                    before = measure_in(source, fresh(), f"base-{uuid.uuid4().hex[:6]}", args.runs, args.import_runs)
        print(f"\n{name}")
        print(f"  {'figure':28} {'now':>10}" + (f" {'baseline':>10} {'ratio':>8}" if before else ""))
        for key, value in figures.items():
            line = f"  {key:28} {value:10.3f}"
            if before is not None and key in before:
                line += f" {before[key]:10.3f} {before[key] / value if key.endswith('_ms') else value / before[key]:7.1f}x"
            print(line)
        if args.load and "calls" in args.load_by.split(","):
            with backend(name) as fresh:
                seconds = load(fresh(), args.load, args.batch)
            print(f"  load {args.load:,} runs / {args.load * STEPS:,} steps, run by run: {seconds:.0f} s "
                  f"({args.load * STEPS / seconds:,.0f} steps/s)")
        if args.load and "import" in args.load_by.split(","):
            with backend(name) as fresh:
                writing, importing = load_by_import(fresh(), args.load)
            print(f"  load {args.load:,} runs / {args.load * STEPS:,} steps by `webmem import`: {importing:.0f} s "
                  f"({args.load * STEPS / importing:,.0f} run steps/s; writing the JSONL files took {writing:.0f} s more)")


if __name__ == "__main__":
    main()
