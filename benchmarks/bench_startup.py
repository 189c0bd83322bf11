"""How long webmem takes to start: ``import webmem``, ``webmem --help``, and ``webmem mcp`` up to its answer
to ``initialize`` (alone, and as the recording proxy in front of Playwright MCP).

Each figure is the wall time of a fresh process, from spawning it to its exit (import, help) or to the
first line it writes on stdout, the JSON-RPC answer to ``initialize`` (MCP). Prints the median and the 90th
percentile of ``--runs`` runs. With ``--baseline REV``, the same commands also run on a ``git worktree`` of
REV (``PYTHONPATH=<worktree>/src``), alternating with the current tree, and each figure gets the ratio
current / baseline. Each tree has its own memory in a temporary directory (``WEBMEM_DIR``), created by an
unmeasured first run of every command, which also compiles the bytecode.

The proxy row needs Node and Playwright MCP (``--playwright-mcp``, default: ``.cache/node`` of this
checkout or of the main one, where ``tests/test_mcp_proxy.py`` finds it); without them it is skipped.

Usage: python benchmarks/bench_startup.py [--runs 7] [--baseline REV] [--playwright-mcp PATH/cli.js]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYWRIGHT_MCP = Path(".cache") / "node" / "node_modules" / "@playwright" / "mcp" / "cli.js"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench_startup", "version": "0"}}}
TIMEOUT_SECONDS = 120


@dataclass
class Tree:
    """A source tree to time: its ``src`` goes first on PYTHONPATH, with a memory of its own."""

    label: str
    source: Path
    memory_dir: Path

    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in ("WEBMEM_URL", "PYTHONPATH")}
        return {**env, "PYTHONPATH": str(self.source / "src"), "WEBMEM_DIR": str(self.memory_dir)}


@dataclass
class Measure:
    name: str
    time_once: Callable[[Tree], float]
    skipped: str | None = None
    times: dict[str, list[float]] = field(default_factory=dict)


def webmem_command() -> list[str]:
    """The ``webmem`` script beside this Python (as a user runs it), else ``python -m webmem``."""
    script = Path(sys.executable).parent / "webmem"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "webmem"]


def run_to_exit(command: list[str]) -> Callable[[Tree], float]:
    def time_once(tree: Tree) -> float:
        began = time.perf_counter()
        subprocess.run(command, env=tree.env(), check=True, stdout=subprocess.DEVNULL, timeout=TIMEOUT_SECONDS)
        return time.perf_counter() - began

    return time_once


def run_to_initialized(command: list[str]) -> Callable[[Tree], float]:
    """Spawn an MCP server on stdio, send ``initialize``, and stop the clock at the first line it answers."""

    def time_once(tree: Tree) -> float:
        began = time.perf_counter()
        process = subprocess.Popen(command, env=tree.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
            process.stdin.flush()
            line = process.stdout.readline()
            elapsed = time.perf_counter() - began
            if b'"result"' not in line:
                process.kill()
                error = process.communicate(timeout=TIMEOUT_SECONDS)[1].decode(errors="replace")
                raise RuntimeError(f"{shlex.join(command)} did not answer initialize: {line!r} {error[-2000:]}")
            process.stdin.close()  # end of input: the server stops
            try:
                process.wait(timeout=TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            return elapsed
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    return time_once


def find_playwright_mcp(given: Path | None) -> tuple[Path | None, str | None]:
    """Playwright MCP's cli.js, or why there is none."""
    if shutil.which("node") is None:
        return None, "node is not installed"
    if given is not None:
        return (given, None) if given.is_file() else (None, f"{given} does not exist")
    common = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                            capture_output=True, text=True, check=False).stdout.strip()
    for checkout in (ROOT, Path(common).parent if common else ROOT):
        if (checkout / PLAYWRIGHT_MCP).is_file():
            return checkout / PLAYWRIGHT_MCP, None
    return None, f"no Playwright MCP at {PLAYWRIGHT_MCP} (npm install @playwright/mcp there, as the tests do)"


def browser_command(cli_js: Path) -> str:
    command = ["node", str(cli_js), "--headless", "--isolated", "--no-sandbox"]
    sys.path.insert(0, str(ROOT / "src"))
    try:
        from webmem.agent.browser import find_chromium

        chromium = find_chromium()
    except ImportError:
        chromium = None
    finally:
        sys.path.pop(0)
    return shlex.join([*command, "--executable-path", str(chromium)] if chromium else command)


def measures(playwright_mcp: Path | None) -> list[Measure]:
    webmem = webmem_command()
    found, missing = find_playwright_mcp(playwright_mcp)
    proxy = Measure("webmem mcp --browser (initialize)", lambda tree: math.nan, skipped=missing)
    if found is not None:
        proxy.time_once = run_to_initialized([*webmem, "mcp", "--browser", browser_command(found)])
    return [
        Measure("import webmem", run_to_exit([sys.executable, "-c", "import webmem"])),
        Measure("webmem --help", run_to_exit([*webmem, "--help"])),
        Measure("webmem mcp (initialize)", run_to_initialized([*webmem, "mcp"])),
        proxy,
    ]


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def seconds(values: list[float] | None) -> str:
    return f"{statistics.median(values):6.3f} s (p90 {p90(values):.3f})" if values else "-"


def report(rows: list[Measure], trees: list[Tree], runs: int) -> None:
    current = trees[0].label
    baseline = trees[1].label if len(trees) > 1 else None
    print(f"\n{runs} runs each, median (p90); python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    header = f"{'':36} {current:>26}"
    if baseline is not None:
        header += f" {baseline:>26} {'ratio':>7}"
    print(header)
    for row in rows:
        if row.skipped is not None:
            print(f"{row.name:36} skipped: {row.skipped}")
            continue
        line = f"{row.name:36} {seconds(row.times.get(current)):>26}"
        if baseline is not None:
            ratio = statistics.median(row.times[current]) / statistics.median(row.times[baseline])
            line += f" {seconds(row.times.get(baseline)):>26} {ratio:7.2f}"
        print(line)


def add_worktree(revision: str, where: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(where), revision],
                   check=True)
    return where


def remove_worktree(where: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="Runs of each command per tree (default: 7).")
    parser.add_argument("--baseline", metavar="REV", help="Also time this git revision, and print the ratios.")
    parser.add_argument("--playwright-mcp", type=Path, help="Playwright MCP's cli.js, for the proxy row.")
    args = parser.parse_args()
    rows = measures(args.playwright_mcp)
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as scratch:
        trees = [Tree("current", ROOT, Path(scratch) / "memory-current")]
        if args.baseline:
            label = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline],
                                   capture_output=True, text=True, check=True).stdout.strip()
            trees.append(Tree(f"baseline {label}", add_worktree(args.baseline, Path(scratch) / "baseline"),
                              Path(scratch) / "memory-baseline"))
        try:
            for tree in trees:  # creates each memory and compiles the bytecode: not measured
                for row in rows:
                    if row.skipped is None:
                        row.time_once(tree)
            for number in range(args.runs):
                order = trees if number % 2 == 0 else trees[::-1]  # alternate which tree goes first
                for row in rows:
                    if row.skipped is not None:
                        continue
                    for tree in order:
                        row.times.setdefault(tree.label, []).append(row.time_once(tree))
                print(f"run {number + 1} of {args.runs} done", file=sys.stderr)
        finally:
            if args.baseline:
                remove_worktree(Path(scratch) / "baseline")
    report(rows, trees, args.runs)


if __name__ == "__main__":
    main()
