"""Every public path that answers one trajectory, timed on one memory of 10,000 trajectories on 20 origins.

``bench_recall_speed.py`` (section 4) runs this file as a script in fresh processes, with whatever ``webmem``
comes first on ``sys.path``: ``python benchmarks/recall_paths.py build WHERE LOCAL KIND 0 SEED`` builds the memory,
``... time WHERE LOCAL KIND SAMPLES SEED`` times each path on the same goals and prints the milliseconds of every
sample as JSON. So the working tree's code and a baseline revision's (a ``git worktree`` of it, first on
``PYTHONPATH``) each time a memory of the same goals that it built itself, in the same run (a memory written by
another version's code would be rebuilt whole on its first read, unlike one reopened).

Two kinds of goals, 6 to 12 words each: ``similar`` goals come from 20 templates that share most of their words
(four openings, five endings, a thing of eight and a colour of four: many near-duplicates, the hard case for a
ranking that reads only the goals that can compete); ``own`` goals are words of their own.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from click.testing import CliRunner

import webmem
from webmem.cli import cli
from webmem.service import MemoryService

ROOT = Path(__file__).resolve().parent.parent
ORIGINS = [f"https://shop{index:02d}.example.com/" for index in range(20)]
OPENINGS = ("search for", "find", "look up", "show me")
ENDINGS = ("and add it to my cart", "and add it to my list", "and tell me its price", "in the catalogue",
           "on sale and compare reviews")
TEMPLATES = [f"{opening} the {{thing}} {ending}" for opening in OPENINGS for ending in ENDINGS]  # 20
THINGS = ("smart watch", "running shoes", "coffee beans", "laptop stand", "desk lamp", "headphones", "backpack",
          "router")
COLOURS = ("", "blue ", "red ", "black ")
SYLLABLES = "ka lo mi ne ru ta vo zi pe qua dor fen gal hix jun kep lum mor nix pol".split()
#: What is timed, in this order; each on the same goals (fewer for the paths that cost much more).
PATHS = ("match(limit=1)", "find_best_match", "run.context() (new run)", "service search (HTTP, MCP)",
         "match after a save, limit=1", "find_best_match after a save", "match, every candidate",
         "CLI trajectories match")
ROUND = 25  # goals timed on one path before turning to the next


def similar_goal(rng: random.Random) -> str:
    """6 to 12 words from one of 20 templates that share most of their words."""
    return rng.choice(TEMPLATES).format(thing=rng.choice(COLOURS) + rng.choice(THINGS))


def own_goal(rng: random.Random) -> str:
    """6 to 12 made-up words of three syllables (8,000 of them): goals that share few words."""
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(3)) for _ in range(rng.randint(6, 12)))


KINDS: dict[str, Callable[[random.Random], str]] = {"similar": similar_goal, "own": own_goal}


def build(where: str, local: Path, kind: str, seed: int) -> float:
    """10,000 successful trajectories of ``kind`` goals on 20 origins (500 each), saved through the public API;
    returns the seconds it took."""
    make, rng = KINDS[kind], random.Random(seed)
    step = [webmem.Step(action="click", target='button "Go"', verified=True)]
    began = time.perf_counter()
    with webmem.Memory.open(where, local_dir=local) as mem:
        for start in range(0, 10_000, 500):
            with mem.store.write():
                for index in range(start, start + 500):
                    mem.trajectories.save(goal=make(rng), start_url=ORIGINS[index % 20], steps=step)
    return time.perf_counter() - began


def _timed(action: Callable[[], object]) -> float:
    began = time.perf_counter()
    action()
    return (time.perf_counter() - began) * 1000


def time_paths(where: str, local: Path, kind: str, samples: int, seed: int) -> dict[str, list[float]]:
    """The milliseconds of each path in ``PATHS`` on the memory at ``where``, warm: every origin's goals read, every
    path asked once on every origin and ten goals of its own matched on each, before anything is timed. The first
    four paths are timed in turns, ``ROUND`` goals each, so that a slower spell of the host weighs on all alike."""
    make, rng = KINDS[kind], random.Random(seed)
    # each path its own goals (made before, not timed), alike for every code timed: a goal asked again finds what
    # the first asking left behind (its token sets weighed, its winner decoded)
    asked = {name: [(make(rng), rng.choice(ORIGINS)) for _ in range(samples)] for name in PATHS}
    few = {name: goals[:max(10, samples // 10)] for name, goals in asked.items()}
    found: dict[str, list[float]] = {name: [] for name in PATHS}
    step = [webmem.Step(action="click", target='button "Go"', verified=True)]
    with webmem.Memory.open(where, local_dir=local) as mem, webmem.Memory.open(where, local_dir=local) as other:
        service = MemoryService(mem)

        def context(text: str, origin: str) -> float:
            run = mem.start_run(goal=text, start_url=origin)  # a new run: nothing cached in it yet (not timed)
            return _timed(lambda: run.context(url=origin))

        turns: list[tuple[str, Callable[[str, str], float]]] = [
            (PATHS[0], lambda text, origin: _timed(lambda: mem.trajectories.match(text, origin=origin, limit=1))),
            (PATHS[1], lambda text, origin: _timed(lambda: mem.trajectories.find_best_match(text, origin=origin))),
            (PATHS[2], context),
            (PATHS[3], lambda text, origin: _timed(lambda: service.search_trajectories(text, origin))),
        ]
        for origin in ORIGINS:  # every goal of the origin read (decoded from the snapshot), as in a process that ran
            mem.trajectories.match(make(rng), origin=origin)
            for _ in range(10):
                mem.trajectories.match(make(rng), origin=origin, limit=1)
            for _, path in turns:
                path(make(rng), origin)
        for start in range(0, samples, ROUND):
            for name, path in turns:
                found[name] += [path(text, origin) for text, origin in asked[name][start:start + ROUND]]
        found[PATHS[6]] = [_timed(lambda: mem.trajectories.match(text, origin=origin))
                           for text, origin in few[PATHS[6]]]
        for (text, origin), (other_text, other_origin) in zip(few[PATHS[4]], few[PATHS[5]]):
            other.trajectories.save(goal=make(rng), start_url=origin, steps=step)  # as another process would
            found[PATHS[4]].append(_timed(lambda: mem.trajectories.match(text, origin=origin, limit=1)))
            other.trajectories.save(goal=make(rng), start_url=other_origin, steps=step)
            found[PATHS[5]].append(_timed(lambda: mem.trajectories.find_best_match(other_text,
                                                                                   origin=other_origin)))
    runner = CliRunner()
    if "://" in where:  # PostgreSQL: the CLI reads the URL from the environment
        os.environ["WEBMEM_URL"] = where

    def command(text: str, origin: str) -> None:
        result = runner.invoke(cli, ["--memory-dir", str(local), "trajectories", "match", text, "--url", origin,
                                     "--json"])
        assert result.exit_code == 0, result.output

    found[PATHS[7]] = [_timed(lambda: command(text, origin)) for text, origin in few[PATHS[7]]]
    return found


@contextmanager
def source_tree(revision: str | None) -> Iterator[Path]:
    """The ``src`` directory of ``revision`` (a ``git worktree`` of it, removed afterwards), or the working tree's."""
    if revision is None:
        yield ROOT / "src"
        return
    with tempfile.TemporaryDirectory(prefix="webmem-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision], check=True,
                       capture_output=True)
        try:
            yield tree / "src"
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False,
                           capture_output=True)


def time_in_process_of(src: Path, where: str, local: Path, kind: str, samples: int,
                       seed: int) -> dict[str, list[float]]:
    """:func:`time_paths` in a fresh process whose ``webmem`` is the one in ``src``."""
    return _in_process_of(src, "time", where, str(local), kind, str(samples), str(seed))


def build_in_process_of(src: Path, where: str, local: Path, kind: str, seed: int) -> float:
    """:func:`build` in a fresh process whose ``webmem`` is the one in ``src``."""
    return _in_process_of(src, "build", where, str(local), kind, "0", str(seed))


def _in_process_of(src: Path, *arguments: str) -> Any:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, __file__, *arguments], check=True, capture_output=True, text=True,
                         env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    command, where, local, kind, samples, seed = sys.argv[1:7]
    assert command in ("time", "build"), "usage: recall_paths.py time|build WHERE LOCAL KIND SAMPLES SEED"
    if command == "build":
        print(json.dumps(build(where, Path(local), kind, int(seed))))
    else:
        print(json.dumps(time_paths(where, Path(local), kind, int(samples), int(seed))))


if __name__ == "__main__":
    main()
