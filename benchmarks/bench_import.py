"""How fast an ``.agent-memory/`` directory imports: ``import_agent_memory`` on a generated tree.

The tree is realistic for browser-agent-driver's layout: 3 domains (one with a port), each with
knowledge.json (facts, 5 sessions) and selectors.json, trajectories of 4-8 steps (clicks, typing,
fills with dropdowns and checkboxes, scrolls, waits, a typed password), about half of them in the
memory root (where that agent's CLI writes them) and half in ``domains/<host>/trajectories/``,
plus a run manifest for every tenth trajectory.

Prints the median of ``--repeats`` imports (each into a fresh memory directory), records per
second, and as a baseline measured in the same process the time to only read and json-parse the
same files. With ``--cli``, also runs ``python -m webmem import`` once in a subprocess (stderr on a
pseudo-terminal, so that the progress bar is drawn) and prints its wall time.

Usage: python benchmarks/bench_import.py [--count 10000] [--repeats 3] [--cli]
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import webmem
from webmem.interop.agent_memory import import_agent_memory

DOMAINS = [  # (origin, folder name)
    ("https://www.example-shop.com", "www.example-shop.com"),
    ("http://app.example.org:3000", "app.example.org_3000"),
    ("http://localhost:5173", "localhost_5173"),
]
ELEMENTS = [("button", "Accept all cookies"), ("searchbox", "Search products"), ("link", "Trailblazer 2 Running Shoe"),
            ("combobox", "Select size"), ("button", "Add to cart"), ("textbox", "Email"), ("textbox", "Password"),
            ("button", "Sign in"), ("checkbox", "Remember me"), ("link", "Orders"), ("button", "Apply"),
            ("textbox", "Promo code"), ("combobox", "Country"), ("radio", "Annual billing"), ("button", "Save")]
WORDS = ("add search open apply export invite filter assign check switch mark the a to in for with size order "
         "cart promo code report project task board billing plan team shoe jacket wishlist label").split()
START = datetime(2026, 11, 1, tzinfo=UTC)


def ref(role: str, name: str) -> str:
    return f"@{role[0]}{zlib.crc32(f'{role}:{name}'.encode()) % 0xFFFF:x}"  # stable across processes


def stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def step(rng: random.Random, origin: str) -> dict[str, Any]:
    role, name = rng.choice(ELEMENTS)
    kind = rng.choices(["click", "type", "press", "select", "fill", "scroll", "wait", "navigate", "hover"],
                       weights=[30, 15, 5, 8, 8, 8, 6, 10, 4])[0]
    if kind == "type":
        action: dict[str, Any] = {"action": "type", "selector": ref(role, name),
                                  "text": "hunter2" if name == "Password" else rng.choice(WORDS)}
    elif kind == "press":
        action = {"action": "press", "selector": ref(role, name), "key": "Enter"}
    elif kind == "select":
        action = {"action": "select", "selector": ref("combobox", "Select size"), "value": str(rng.randint(6, 13))}
    elif kind == "fill":
        action = {"action": "fill", "fields": {ref("textbox", "Email"): "qa@example.org",
                                               ref("textbox", "Promo code"): "SUMMER15"},
                  "selects": {ref("combobox", "Country"): "NL"}, "checks": [ref("checkbox", "Remember me")]}
    elif kind == "scroll":
        action = {"action": "scroll", "direction": "down", "amount": rng.choice([300, 400, 600])}
    elif kind == "wait":
        action = {"action": "wait", "ms": rng.choice([500, 1000, 2000])}
    elif kind == "navigate":
        action = {"action": "navigate", "url": f"{origin}/{rng.choice(WORDS)}?page={rng.randint(1, 9)}"}
    else:
        action = {"action": kind, "selector": ref(role, name)}
    item: dict[str, Any] = {"url": f"{origin}/{rng.choice(WORDS)}", "action": action,
                            "snapshotHash": str(rng.randint(-2**31, 2**31 - 1))}
    if rng.random() < 0.7:
        item["verified"] = rng.random() < 0.8
        item["expectedEffect"] = f"{name} responds"
    return item


def generate(root: Path, count: int, seed: int) -> dict[str, int]:
    """Write the tree; returns how many files and records of each kind it holds."""
    rng = random.Random(seed)
    sizes = {"files": 0, "trajectories": count, "steps": 0, "facts": 0, "sessions": 0, "selectors": 0, "runs": 0}
    for origin, folder in DOMAINS:
        target = root / "domains" / folder
        (target / "trajectories").mkdir(parents=True)
        facts = [{"type": rng.choice(["timing", "selector", "pattern", "quirk"]), "key": f"key-{n}",
                  "value": f"value {n} {rng.choice(WORDS)}", "confidence": round(rng.uniform(0.3, 1), 4),
                  "sources": rng.randint(1, 6), "lastSeen": stamp(START + timedelta(hours=n))} for n in range(12)]
        sessions = [{"id": f"session_{n}", "goal": f"goal {n}", "outcome": "Goal achieved", "success": True,
                     "finalUrl": f"{origin}/done", "timestamp": stamp(START + timedelta(days=n)), "turnsUsed": 5,
                     "durationMs": 12000} for n in range(5)]
        (target / "knowledge.json").write_text(json.dumps({"domain": f"{origin}/", "facts": facts, "sessions": sessions,
                                                           "updatedAt": stamp(START)}, indent=2))
        entries = {f'{role} "{name}"': {"element": f'{role} "{name}"', "successCount": rng.randint(1, 20),
                                         "lastUsed": stamp(START), "lastRef": ref(role, name)}
                   for role, name in ELEMENTS}
        (target / "selectors.json").write_text(json.dumps({"entries": entries, "updatedAt": stamp(START)}, indent=2))
        sizes["files"] += 2
        sizes["facts"] += len(facts)
        sizes["sessions"] += len(sessions)
        sizes["selectors"] += len(entries)
    (root / "agent-runs").mkdir()
    for number in range(count):
        origin, folder = DOMAINS[number % len(DOMAINS)]
        moment = START + timedelta(seconds=37 * number)
        millis = int(moment.timestamp() * 1000)
        trajectory_id = f"traj_{millis}_{number:06x}"
        steps = [step(rng, origin) for _ in range(rng.randint(4, 8))]
        sizes["steps"] += len(steps)
        body = {"id": trajectory_id, "goal": " ".join(rng.choices(WORDS, k=8)), "origin": origin, "steps": steps,
                "success": rng.random() < 0.75, "durationMs": rng.randint(3000, 30000), "model": "gpt-5.4",
                "timestamp": stamp(moment)}
        where = root if number % 2 else root / "domains" / folder / "trajectories"
        (where / f"{trajectory_id}.json").write_text(json.dumps(body, indent=2))
        sizes["files"] += 1
        if number % 10 == 0:
            run_id = f"run_{millis}_{number:06x}"
            (root / "agent-runs" / f"{run_id}.json").write_text(json.dumps({
                "runId": run_id, "status": "completed", "goal": body["goal"], "domain": folder.split("_")[0],
                "startUrl": f"{origin}/", "startedAt": stamp(moment), "updatedAt": stamp(moment),
                "artifactPaths": [], "turnCount": len(steps) + 1, "success": True, "finalUrl": f"{origin}/done",
                "summary": "Goal achieved", "result": "Goal achieved", "completedAt": stamp(moment)}, indent=2))
            sizes["files"] += 1
            sizes["runs"] += 1
    return sizes


def all_files(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.json"))


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    result = action()
    return time.perf_counter() - began, result


def import_once(tree: Path, scratch: Path, number: int) -> tuple[float, Any]:
    directory = scratch / f"memory-{number}"
    with webmem.Memory.open(directory) as mem:  # opening (schema, seeds) is not part of the import
        return timed(lambda: import_agent_memory(mem, tree))


def parse_only(files: list[Path]) -> int:
    return sum(len(json.loads(path.read_text(encoding="utf-8"))) for path in files)


def cli_once(tree: Path, scratch: Path) -> tuple[float, int, bool, str]:
    """``python -m webmem import`` with stderr on a pseudo-terminal: wall time, exit code, bar drawn?"""
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = {**os.environ, "TERM": os.environ.get("TERM", "xterm-256color"), "COLUMNS": "120"}
    began = time.perf_counter()
    process = subprocess.run([sys.executable, "-m", "webmem", "--memory-dir", str(scratch / "cli-memory"), "import",
                              str(tree)], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env,
                             check=False)
    wall = time.perf_counter() - began
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    drawn = b"".join(chunks).decode("utf-8", errors="replace")
    return wall, process.returncode, "Importing" in drawn, process.stdout.decode("utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=10_000, help="trajectory files to generate (default 10000)")
    parser.add_argument("--repeats", type=int, default=3, help="imports to take the median of (default 3)")
    parser.add_argument("--seed", type=int, default=7, help="random seed of the generated tree")
    parser.add_argument("--cli", action="store_true", help="also time one `python -m webmem import` subprocess")
    args = parser.parse_args()
    if args.count < 1 or args.repeats < 1:
        parser.error("--count and --repeats must be positive")

    with tempfile.TemporaryDirectory(prefix="webmem-bench-import-") as tmp:
        scratch = Path(tmp)
        tree = scratch / ".agent-memory"
        generated, sizes = timed(lambda: generate(tree, args.count, args.seed))
        files = all_files(tree)
        megabytes = sum(path.stat().st_size for path in files) / 1e6
        print(f"tree: {len(files)} files ({megabytes:.1f} MB): {sizes['trajectories']} trajectories with "
              f"{sizes['steps']} actions, {sizes['runs']} run manifests, {sizes['facts']} facts, "
              f"{sizes['sessions']} sessions, {sizes['selectors']} selectors in {len(DOMAINS)} domains "
              f"(generated in {generated:.1f}s)")

        parse_times = [timed(lambda: parse_only(files))[0] for _ in range(args.repeats)]
        import_times = []
        report = None
        for number in range(args.repeats):
            seconds, report = import_once(tree, scratch, number)
            import_times.append(seconds)
        assert report is not None
        records = sum(report.added.values()) + sum(report.merged.values())
        parse_median, import_median = statistics.median(parse_times), statistics.median(import_times)
        print(f"import_agent_memory: median {import_median:.2f}s of {args.repeats} "
              f"({', '.join(f'{t:.2f}' for t in import_times)}), {records} records "
              f"({', '.join(f'{n} {kind}' for kind, n in sorted(report.added.items()))}), "
              f"{records / import_median:,.0f} records/s, {len(files) / import_median:,.0f} files/s, "
              f"{len(report.problems)} problems")
        print(f"baseline (read + json.loads of the same files): median {parse_median:.2f}s, "
              f"{len(files) / parse_median:,.0f} files/s; import takes {import_median / parse_median:.1f}x the parse")
        if args.cli:
            wall, code, drawn, out = cli_once(tree, scratch)
            print(f"`python -m webmem import` (subprocess, stderr on a terminal): {wall:.2f}s wall, exit {code}, "
                  f"progress bar {'drawn' if drawn else 'NOT drawn'}")
            if code != 0:
                print(out)


if __name__ == "__main__":
    main()
