"""How fast recall is, and whether it stays flat as the memory grows.

Three memories, each on SQLite (and PostgreSQL with ``--backends sqlite,postgres``):
1. 10,000 trajectories on 20 origins (500 each), saved through ``mem.trajectories.save``. Timed:
   a warm ``match`` (the origin already held in memory), the first match in a fresh process right
   after ``Memory.open``, and a match right after another process saved a trajectory there.
2. One task done 1,000 then 10,000 times on one origin (goals that differ only by an order number of
   their own and a customer of four): a warm match, a replay search and a save, and the ratio of p50s.
   Then 1,000 and 10,000 long goals of many tasks on one origin, all beginning with one of four openings
   (compared in order with each other): a warm match of a goal like them, and of a new task.
3. ``run.context()`` for a new run at 1,000 runs and at ``--runs`` runs (default 100,000) of 10
   steps over 1,000 domains, the two memories open together and timed in turns (25 contexts on one, then
   25 on the other), so that the ratio of their p50s does not depend on how fast the host was when. How the large memory is built, the fastest honest way: 1,000 runs go
   through the public API (start, 10 steps, finish: trajectory, session, facts); then their
   ``runs``, ``run_steps`` and ``sessions`` rows are copied in SQL under new ids, and one successful
   trajectory in five is added for each copy through ``mem.trajectories.save`` (the public write
   path of the index), so every origin holds ~``runs/1000*0.8`` trajectories with varied goals; each
   domain then keeps its newest sessions only, as recording them through the API does.
4. Every public path that answers one trajectory (``recall_paths.py``), on 10,000 trajectories on 20 origins of
   goals of 6-12 words, (a) from 20 templates that share most of their words and (b) of their own: a warm
   ``match(limit=1)``, ``find_best_match``, ``run.context()`` for a new run, the service's search (as the HTTP
   and MCP endpoints call it), a match and ``find_best_match`` right after another memory saved on the origin,
   ``match`` explaining every candidate, and ``webmem trajectories match`` in process (it opens the memory).
   Each in a fresh process, with ``--baseline REV`` also with that revision's code (a ``git worktree``) on a
   memory of the same goals that it built itself, in the same run.
On PostgreSQL each memory is vacuumed and analysed once built, before anything is timed (``settle``).

Prints medians and p99s in ms, the ratio of the large memory's p50 to the small one's, and the ratio of
``find_best_match``'s p50 to ``match(limit=1)``'s.
Usage: python benchmarks/bench_recall_speed.py [--runs N] [--samples N] [--backends sqlite,postgres]
       [--sections matches,repeats,long,contexts,paths] [--baseline REV]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sqlalchemy import text

import webmem
from webmem.knowledge import MAX_SESSIONS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_backends  # noqa: E402
import recall_paths  # noqa: E402
from bench_backends import (  # noqa: E402  (the same vocabulary, timing and throwaway stores)
    percentiles,
    postgres_location,
    sqlite_location,
    timed,
)

DOMAINS = 1_000
STEPS = 10
CONTEXT_BLOCK = 25  # contexts timed on one memory before turning to the other


def site(index: int, domains: int = DOMAINS) -> str:
    return f"https://shop{index % domains:04d}.example.com/"


def goal(rng: random.Random) -> str:
    """A goal of bench_backends' vocabulary with a number of its own, so that goals rarely repeat."""
    return f"{bench_backends.goal(rng)} #{rng.randrange(10**6)}"


def location(backend: str) -> Any:
    return sqlite_location() if backend == "sqlite" else postgres_location()


def settle(backend: str, url: str) -> None:
    """VACUUM ANALYZE on PostgreSQL: what autovacuum does within a minute of a bulk load, done before timing, so that
    the timings do not depend on whether it has run yet. Until a table is first analysed, statements prepared while
    it was nearly empty keep plans made for an empty table (a lookup by id may scan the namespace; analysing makes
    every session plan them again)."""
    if backend != "postgres":
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


# --- 1. match at 10,000 trajectories on 20 origins ------------------------------------------------

FRESH_PROCESS = """
import sys, time, webmem
began = time.perf_counter()
mem = webmem.Memory.open(sys.argv[1], local_dir=sys.argv[2])
opened = time.perf_counter()
mem.trajectories.match(sys.argv[3], origin=sys.argv[4], limit=1)
print((time.perf_counter() - opened) * 1000, (opened - began) * 1000)
"""

SAVE_ONE = """
import sys, webmem
mem = webmem.Memory.open(sys.argv[1], local_dir=sys.argv[2])
mem.trajectories.save(goal=sys.argv[3], start_url=sys.argv[4], steps=[webmem.Step(action="click", target="button")])
"""


def matches(backend: str, samples: int) -> dict[str, tuple[float, float]]:
    rng = random.Random(5)
    origins = [site(index, 20) for index in range(20)]
    with location(backend) as (where, local):
        mem = webmem.Memory.open(where, local_dir=local)
        step = [webmem.Step(action="click", target='button "Go"', verified=True)]
        began = time.perf_counter()
        for start in range(0, 10_000, 500):
            with mem.store.write():
                for index in range(start, start + 500):
                    mem.trajectories.save(goal=goal(rng), start_url=origins[index % 20], steps=step)
        print(f"  {backend}: 10,000 trajectories saved in {time.perf_counter() - began:.1f}s", file=sys.stderr)
        settle(backend, where)
        for origin in origins:
            mem.trajectories.match(goal(rng), origin=origin, limit=1)
        asked = [(goal(rng), rng.choice(origins)) for _ in range(samples)]  # made before, not timed with the match
        warm = [timed(lambda: mem.trajectories.match(text, origin=origin, limit=1)) for text, origin in asked]
        fresh, after_save = [], []
        for _ in range(max(5, samples // 50)):
            out = subprocess.run([sys.executable, "-c", FRESH_PROCESS, where, str(local), goal(rng), rng.choice(origins)],
                                 check=True, capture_output=True, text=True).stdout.split()
            fresh.append(float(out[0]))
            origin = rng.choice(origins)
            mem.trajectories.match(goal(rng), origin=origin, limit=1)
            subprocess.run([sys.executable, "-c", SAVE_ONE, where, str(local), goal(rng), origin], check=True)
            text = goal(rng)
            after_save.append(timed(lambda: mem.trajectories.match(text, origin=origin, limit=1)))
        mem.close()
    return {"warm match (10k on 20 origins)": percentiles(warm),
            "first match in a fresh process": percentiles(fresh),
            "match after another process saved": percentiles(after_save)}


# --- 2. one task done again and again -------------------------------------------------------------

CUSTOMERS = ["Ann", "Bob", "Cyd", "Dee"]


def repeated_task(rng: random.Random) -> tuple[str, list[webmem.Step]]:
    """The goal of one task with an order number of its own and a customer who recurs, and its steps."""
    number = str(rng.randrange(10**6))
    return f"Search for order {number} of customer {rng.choice(CUSTOMERS)}", [
        webmem.Step(action="fill", target='textbox "Order"', value=number, verified=True),
        webmem.Step(action="click", target='button "Search"', verified=True)]


def repeats(backend: str, samples: int, sizes: tuple[int, ...] = (1_000, 10_000)) -> dict[str, tuple[float, float]]:
    """A match, a replay search and a save at ``sizes`` runs of one task on one origin (goals that differ only
    by their values: a memory must not slow down as an agent repeats its work)."""
    rng = random.Random(13)
    origin = site(0, 1)
    found: dict[str, tuple[float, float]] = {}
    with location(backend) as (where, local):
        mem = webmem.Memory.open(where, local_dir=local)
        stored = 0
        for size in sizes:
            with mem.store.write():
                for _ in range(size - stored):
                    goal, steps = repeated_task(rng)
                    mem.trajectories.save(goal=goal, start_url=origin, steps=steps)
            stored = size
            settle(backend, where)
            mem.trajectories.match(repeated_task(rng)[0], origin=origin, limit=1)
            asked = [repeated_task(rng)[0] for _ in range(samples)]
            found[f"match, {size:,} runs of one task"] = percentiles(
                [timed(lambda: mem.trajectories.match(text, origin=origin, limit=1)) for text in asked])
            asked = [repeated_task(rng)[0] for _ in range(samples)]
            found[f"replay search, {size:,} runs of one task"] = percentiles(
                [timed(lambda: mem.trajectories.search_replay(text, origin)) for text in asked])
            saves = []
            for _ in range(max(5, samples // 10)):
                goal, steps = repeated_task(rng)
                saves.append(timed(lambda: mem.trajectories.save(goal=goal, start_url=origin, steps=steps)))
            stored += len(saves)
            found[f"save, {size:,} runs of one task"] = percentiles(saves)
        mem.close()
    return found


# --- 2b. long goals of many tasks that begin alike --------------------------------------------------

OPENINGS = ["Can you", "Find me", "Add the", "Show me"]
CLAUSES = ["that has the same colour as the one in the picture", "with a pattern like the animal in the image",
           "of the same brand as the product in this picture", "that is cheaper than the one in my cart",
           "which the man on the left is holding", "that looks most like the drawing on this page"]
ENDINGS = ["and add it to my shopping cart", "and add it to my wish list", "and tell me its price",
           "and leave a review"]


def long_goal(rng: random.Random) -> str:
    """A goal of 20 to 30 words such as VisualWebArena's: one of four openings, a thing, two of six clauses and one of
    four endings (24,192 wordings, each compared in order with those that begin alike)."""
    return (f"{rng.choice(OPENINGS)} {rng.choice(['a', 'the', 'some'])} {rng.choice(bench_backends.THINGS)} "
            f"{rng.choice(CLAUSES)} {rng.choice(CLAUSES)} {rng.choice(ENDINGS)}")


def new_long_task(rng: random.Random) -> str:
    """A long goal that begins as stored ones do, with words of its own: a new task."""
    words = " ".join(f"{rng.choice(['the', 'a', 'of', 'my', 'to'])} item{rng.randrange(10**6)}" for _ in range(7))
    return f"{rng.choice(OPENINGS)} {words}"


def long_goals(backend: str, samples: int, sizes: tuple[int, ...] = (1_000, 10_000)) -> dict[str, tuple[float, float]]:
    """A warm match at ``sizes`` long goals on one origin that begin with one of four openings, for a goal of a stored
    kind and for a new task that begins alike."""
    rng = random.Random(17)
    origin = site(0, 1)
    found: dict[str, tuple[float, float]] = {}
    step = [webmem.Step(action="click", target='button "Go"', verified=True)]
    with location(backend) as (where, local):
        mem = webmem.Memory.open(where, local_dir=local)
        stored = 0
        for size in sizes:
            with mem.store.write():
                for _ in range(size - stored):
                    mem.trajectories.save(goal=long_goal(rng), start_url=origin, steps=step)
            stored = size
            settle(backend, where)
            for make, what in ((long_goal, "similar"), (new_long_task, "new task")):
                asked = [make(rng) for _ in range(samples)]
                for text_asked in asked[:50]:  # the origin's goals read once, as by an agent that ran a while
                    mem.trajectories.match(text_asked, origin=origin, limit=1)
                found[f"match, {size:,} long goals ({what})"] = percentiles(
                    [timed(lambda: mem.trajectories.match(text_asked, origin=origin, limit=1))
                     for text_asked in asked])
        mem.close()
    return found


# --- 3. run.context() at 1,000 and at N runs ------------------------------------------------------


def load_runs(mem: webmem.Memory, runs: int, rng: random.Random) -> float:
    began = time.perf_counter()
    base = min(runs, DOMAINS)
    for index in range(base):
        url = site(index)
        with mem.store.write():
            run = mem.start_run(goal=goal(rng), start_url=url)
            for number in range(STEPS):
                run.record_step(action="click" if number % 3 else "fill", target=f'button "Step {number}"',
                                selector=f"#step-{number}", value=None if number % 3 else "smart watch",
                                url=f"{url}page/{number}", verified=number % 2 == 0, duration_ms=250)
            run.finish(success=index % 5 != 0, outcome=f"finished run {index}",
                       facts=[{"type": "quirk", "key": f"quirk-{index % 7}", "value": "a modal on load"}])
    copies = runs // base - 1
    step = [webmem.Step(action="click", target='button "Go"', verified=True)]
    for copy in range(1, copies + 1):
        with mem.store.write() as conn:
            params = {"ns": mem.namespace, "suffix": f"_c{copy}"}
            conn.execute(text(
                "INSERT INTO runs (namespace, run_id, session_id, parent_run_id, status, goal, domain, start_url,"
                " final_url, current_url, started_at, updated_at, completed_at, success, summary, result, reason,"
                " artifact_paths, turn_count, model) SELECT namespace, run_id || :suffix, session_id, parent_run_id, status, goal, domain,"
                " start_url, final_url, current_url, started_at, updated_at, completed_at, success, summary, result,"
                " reason, artifact_paths, turn_count, model FROM runs WHERE namespace = :ns AND run_id NOT LIKE '%\\_c%'"
                " ESCAPE '\\'"), params)
            conn.execute(text(
                "INSERT INTO run_steps (namespace, run_id, seq, url, action, target, selector, value, ok, verified,"
                " error, expected_effect, snapshot_hash, duration_ms, recorded_at)"
                " SELECT namespace, run_id || :suffix, seq, url, action, target, selector, value,"
                " ok, verified, error, expected_effect, snapshot_hash, duration_ms, recorded_at FROM run_steps"
                " WHERE namespace = :ns AND run_id NOT LIKE '%\\_c%' ESCAPE '\\'"), params)
            conn.execute(text(
                "INSERT INTO sessions (namespace, domain, session_id, run_id, goal, outcome, success, final_url,"
                " recorded_at, turns_used, duration_ms) SELECT namespace, domain, session_id || :suffix,"
                " run_id || :suffix, goal, outcome, success, final_url, recorded_at, turns_used, duration_ms"
                " FROM sessions WHERE namespace = :ns AND run_id NOT LIKE '%\\_c%' ESCAPE '\\'"), params)
            for index in range(base):
                if index % 5:
                    mem.trajectories.save(goal=goal(rng), start_url=site(index), steps=step)
        if copy % 10 == 0:
            print(f"  {(copy + 1) * base:,} runs", file=sys.stderr)
    with mem.store.write() as conn:  # as recording them does, each domain keeps its newest sessions only
        conn.execute(text(
            "DELETE FROM sessions WHERE namespace = :ns AND pk NOT IN (SELECT pk FROM (SELECT pk, ROW_NUMBER() OVER"
            " (PARTITION BY domain ORDER BY recorded_at DESC, pk DESC) AS newest FROM sessions WHERE namespace = :ns)"
            " AS ranked WHERE newest <= :kept)"), {"ns": mem.namespace, "kept": MAX_SESSIONS})
    return time.perf_counter() - began


def contexts(backend: str, runs: int, samples: int) -> dict[str, tuple[float, ...]]:
    """``run.context()`` on a memory of 1,000 runs and on one of ``runs``, both open in this process and timed in
    turns, a block of ``CONTEXT_BLOCK`` contexts on one and then on the other: so that a slower or faster spell of the
    host, or the state the building left the process in, weighs on both alike and the ratio of their p50s is the
    memory's size alone."""
    rng = random.Random(11)
    with location(backend) as (small_where, small_local), location(backend) as (large_where, large_local):
        small = webmem.Memory.open(small_where, local_dir=small_local)
        load_runs(small, DOMAINS, random.Random(7))
        settle(backend, small_where)
        large = webmem.Memory.open(large_where, local_dir=large_local)
        seconds = load_runs(large, runs, random.Random(7))
        settle(backend, large_where)
        print(f"  {backend}: {runs:,} runs loaded in {seconds:.0f}s", file=sys.stderr)
        small_times: list[float] = []
        large_times: list[float] = []
        for _ in range(0, samples, CONTEXT_BLOCK):
            for mem, times in ((small, small_times), (large, large_times)):
                for _ in range(CONTEXT_BLOCK):
                    url = site(rng.randrange(DOMAINS))
                    run = mem.start_run(goal=goal(rng), start_url=url)  # a new run: nothing cached in it yet
                    times.append(timed(lambda: run.context(url=url)))
        small.close()
        large.close()
    return {"small": percentiles(small_times), "large": (*percentiles(large_times), seconds)}


# --- 4. every path that answers one trajectory -------------------------------------------------------


def paths(backend: str, samples: int, baseline: str | None) -> dict[str, dict[str, tuple[float, float]]]:
    """For each kind of goals, each path's p50 and p99, with this tree's code and (``baseline``) that revision's, keyed
    ``kind`` and ``kind @ baseline``."""
    found: dict[str, dict[str, tuple[float, float]]] = {}
    with recall_paths.source_tree(None) as current, recall_paths.source_tree(baseline) as old:
        codes = [("", current)] + ([(f" @ {baseline}", old)] if baseline else [])
        for seed, kind in enumerate(recall_paths.KINDS, start=21):
            # each code times a memory it built itself, from the same goals: a memory reopened is read from the
            # snapshot its own code wrote (goals decoded as first met), while one of another version is rebuilt
            # whole on its first read, which would make the other code look faster than it is
            for label, src in codes:
                with location(backend) as (where, local):
                    seconds = recall_paths.build_in_process_of(src, where, local, kind, seed)
                    print(f"  {backend}: 10,000 trajectories ({kind} goals{label}) saved in {seconds:.1f}s",
                          file=sys.stderr)
                    settle(backend, where)
                    times = recall_paths.time_in_process_of(src, where, local, kind, samples, seed + 100)
                    found[kind + label] = {name: percentiles(values) for name, values in times.items()}
    return found


def print_paths(found: dict[str, dict[str, tuple[float, float]]], baseline: str | None) -> None:
    for kind in recall_paths.KINDS:
        base = found.get(f"{kind} @ {baseline}") if baseline else None
        print(f"\n{f'one trajectory, 10k on 20 origins ({kind})':<46}{'p50 ms':>10}{'p99 ms':>10}"
              + (f"{'base p50':>10}{'base p99':>10}{'p50 / base':>11}" if base else ""))
        for name, (p50, p99) in found[kind].items():
            print(f"{name:<46}{p50:>10.3f}{p99:>10.3f}" + (
                f"{base[name][0]:>10.3f}{base[name][1]:>10.3f}{p50 / base[name][0]:>11.2f}" if base else ""))
        ratio = found[kind]["find_best_match"][0] / found[kind]["match(limit=1)"][0]
        print(f"{'find_best_match / match(limit=1), p50s':<46}{ratio:>10.2f}" + (
            f"{'':>10}{base['find_best_match'][0] / base['match(limit=1)'][0]:>10.2f}" if base else ""))


SECTIONS = ("matches", "repeats", "long", "contexts", "paths")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--backends", default="sqlite")
    parser.add_argument("--sections", default=",".join(SECTIONS), help="of " + ", ".join(SECTIONS))
    parser.add_argument("--baseline", help="a git revision whose code section 4 also times (e.g. HEAD~1)")
    args = parser.parse_args()
    sections = {name.strip() for name in args.sections.split(",") if name.strip()}
    if not sections <= set(SECTIONS):
        parser.error(f"--sections: of {', '.join(SECTIONS)}")
    for backend in [name.strip() for name in args.backends.split(",") if name.strip()]:
        figures = matches(backend, args.samples) if "matches" in sections else {}
        if "repeats" in sections:
            figures.update(repeats(backend, args.samples))
        if "long" in sections:
            figures.update(long_goals(backend, args.samples))
        timed_contexts = contexts(backend, args.runs, args.samples) if "contexts" in sections else None
        one = paths(backend, args.samples, args.baseline) if "paths" in sections else None
        print(f"\n{backend}{'':<36}{'p50 ms':>10}{'p99 ms':>10}" if figures or timed_contexts else f"\n{backend}")
        for name, (p50, p99) in figures.items():
            print(f"{name:<44}{p50:>10.3f}{p99:>10.3f}")
        if timed_contexts is not None:
            small, large = timed_contexts["small"], timed_contexts["large"]
            print(f"{'run.context() at 1,000 runs':<44}{small[0]:>10.3f}{small[1]:>10.3f}")
            print(f"{f'run.context() at {args.runs:,} runs':<44}{large[0]:>10.3f}{large[1]:>10.3f}")
            print(f"{'ratio of p50s (large / small)':<44}{large[0] / small[0]:>10.2f}")
        for what in ("match", "replay search", "save") if "repeats" in sections else ():
            print(f"{f'{what}: ratio of p50s (10,000 / 1,000 runs)':<44}"
                  f"{figures[f'{what}, 10,000 runs of one task'][0] / figures[f'{what}, 1,000 runs of one task'][0]:>10.2f}")
        for what in ("similar", "new task") if "long" in sections else ():
            print(f"{f'long goals ({what}): ratio (10,000 / 1,000)':<44}"
                  f"{figures[f'match, 10,000 long goals ({what})'][0] / figures[f'match, 1,000 long goals ({what})'][0]:>10.2f}")
        if one is not None:
            print_paths(one, args.baseline)


if __name__ == "__main__":
    main()
