"""Load on `webmem serve`: concurrent clients recording runs over HTTP on 127.0.0.1, on SQLite and PostgreSQL.

Each client repeats: start a run, record STEPS steps (timed), read the context (timed), finish. After
the time is up, every step a client was told was stored is counted in the database: none may be lost or
stored twice. Prints requests/s, steps/s, and p50/p99 latency of record-step and context.

Goals (issue 17): record-step p50 <= 3 ms on loopback, >= 1,000 steps/s with 4 workers on SQLite, 0 lost;
checked with one client per worker (``--clients 4``). With more clients than workers a worker answers its
connections in turn, so a step also waits for another client's start or finish (a few ms each): the
default 8 clients show that queueing at about the same throughput.

Usage: python benchmarks/bench_server_load.py [--seconds 60] [--clients 8] [--workers 4] [--backends sqlite,postgres]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import pg_cluster  # noqa: E402  (the test suite's throwaway cluster)

import webmem  # noqa: E402

SITE = "https://load.example.org/"
STEPS = 10


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def serve(location: str, workers: int, local_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "WEBMEM_DIR": str(local_dir)}
    if location.startswith("postgresql"):
        env["WEBMEM_URL"] = location
        command = [sys.executable, "-m", "webmem", "serve", "--port", str(port), "--workers", str(workers)]
    else:
        env.pop("WEBMEM_URL", None)
        command = [sys.executable, "-m", "webmem", "--memory-dir", location, "serve", "--port", str(port),
                   "--workers", str(workers)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("webmem serve did not start: " + (process.stderr.read().decode() if process.stderr else ""))


class Http:
    """A keep-alive HTTP/1.1 client on the standard library: the load generator shares the machine's CPU
    with the server, so it should take little of it (httpx took about 0.7 ms of CPU a request here)."""

    def __init__(self, base: str) -> None:
        address = urllib.parse.urlsplit(base)
        self._prefix = address.path
        self._connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=30)

    def send(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        self._connection.request(method, self._prefix + path, body=payload, headers=headers)
        answer = self._connection.getresponse()
        return answer.status, json.loads(answer.read() or b"null")

    def close(self) -> None:
        self._connection.close()


def client(base: str, until: float, results: dict[str, Any], lock: threading.Lock) -> None:
    steps_ms: list[float] = []
    context_ms: list[float] = []
    stored: dict[str, int] = {}
    requests = 0
    connection = Http(base)
    try:
        while time.monotonic() < until:
            _, started_run = connection.send("POST", "/runs", {"goal": f"Load test {uuid.uuid4().hex[:8]}",
                                                               "start_url": SITE})
            run_id = started_run["run_id"]
            requests += 1
            stored[run_id] = 0
            for number in range(STEPS):
                started = time.perf_counter()
                status, _ = connection.send("POST", f"/runs/{run_id}/steps", {
                    "action": "click", "target": f'link "Item {number}"', "selector": f"#item-{number}", "url": SITE})
                steps_ms.append((time.perf_counter() - started) * 1000)
                requests += 1
                if status == 201:
                    stored[run_id] += 1
            started = time.perf_counter()
            connection.send("GET", f"/runs/{run_id}/context?budget_tokens=800")
            context_ms.append((time.perf_counter() - started) * 1000)
            connection.send("POST", f"/runs/{run_id}/finish", {"success": True})
            requests += 2
    finally:
        connection.close()
    with lock:
        results["steps_ms"].extend(steps_ms)
        results["context_ms"].extend(context_ms)
        results["stored"].update(stored)
        results["requests"] += requests


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def measure(name: str, location: str, args: argparse.Namespace, local_dir: Path) -> None:
    process, base = serve(location, args.workers, local_dir)
    results: dict[str, Any] = {"steps_ms": [], "context_ms": [], "stored": {}, "requests": 0}
    lock = threading.Lock()
    until = time.monotonic() + args.seconds
    began = time.monotonic()
    cpu_before = time.process_time()
    threads = [threading.Thread(target=client, args=(base, until, results, lock)) for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - began
    generator_share = (time.process_time() - cpu_before) / elapsed / (os.cpu_count() or 1)
    process.terminate()
    process.wait(timeout=30)
    with webmem.Memory.open(location, local_dir=local_dir, prune_lessons=False, seed_lessons=None) as mem:
        counted = {run_id: len(mem.runs.steps(run_id)) for run_id in results["stored"]}
    lost = sum(max(0, told - counted.get(run_id, 0)) for run_id, told in results["stored"].items())
    doubled = sum(max(0, counted.get(run_id, 0) - told) for run_id, told in results["stored"].items())
    steps = sum(results["stored"].values())
    print(f"{name:<10} workers={args.workers} clients={args.clients} {elapsed:.0f} s: "
          f"{results['requests'] / elapsed:,.0f} requests/s, {steps / elapsed:,.0f} steps/s; "
          f"record-step p50 {statistics.median(results['steps_ms']):.2f} ms, p99 {percentile(results['steps_ms'], .99):.2f} ms; "
          f"context p50 {statistics.median(results['context_ms']):.2f} ms, p99 {percentile(results['context_ms'], .99):.2f} ms; "
          f"runs {len(counted)}, steps {steps}, lost {lost}, stored twice {doubled}; "
          f"the load generator used {generator_share:.0%} of the machine's CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="webmem-load-"))
    for backend in args.backends.split(","):
        if backend == "sqlite":
            measure("SQLite", str(work / "sqlite"), args, work / "sqlite")
        elif backend == "postgres":
            cluster = pg_cluster.start()
            name = f"webmem_load_{uuid.uuid4().hex[:12]}"
            try:
                measure("PostgreSQL", pg_cluster.create_database(cluster, name), args, work / "pg")
            finally:
                pg_cluster.drop_database(cluster, name)
                cluster.stop()


if __name__ == "__main__":
    main()
