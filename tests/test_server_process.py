"""`webmem serve` as a process on 127.0.0.1, and a client in another language (Node, with fetch) against it."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

import webmem
from webmem.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def serving(memory_dir: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``webmem serve`` with a token and two workers, answering: its address, and the process."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "webmem", "--memory-dir", str(memory_dir), "serve", "--port",
                                str(port), "--token", "tok-9", "--workers", "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read().decode() if process.stderr else "webmem serve stopped")
        try:
            if httpx.get(f"{base}/v1/health", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError("webmem serve did not answer within 60 s")
        time.sleep(0.2)
    yield base, process
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def served(serving: tuple[str, subprocess.Popen[bytes]]) -> str:
    return serving[0]


def test_serve_names_the_viewer_and_the_docs_on_start(serving: tuple[str, subprocess.Popen[bytes]],
                                                      memory_dir: Path) -> None:
    base, process = serving
    assert process.stderr is not None
    os.set_blocking(process.stderr.fileno(), False)  # said before it listened: all there, nothing to wait for
    said = (process.stderr.read() or b"").decode()
    assert f"webmem serving {memory_dir}" in said
    for name, url in (("API", f"{base}/v1"), ("viewer", f"{base}/"), ("docs", f"{base}/docs")):
        assert re.search(rf"^\s*{name}\s+{re.escape(url)}$", said, re.MULTILINE), said
    assert httpx.get(f"{base}/").headers["content-type"].startswith("text/html")


def test_the_banner_hides_a_database_password() -> None:
    from webmem.cli.serve import banner

    said = banner("postgresql://webmem:s3cret@db.internal:5432/webmem", "::1", 8765)
    assert "s3cret" not in said and "postgresql://webmem:***@db.internal:5432/webmem" in said
    assert "viewer  http://[::1]:8765/" in said


def test_the_node_example_records_a_run_through_webmem_serve(served: str, memory_dir: Path) -> None:
    assert httpx.get(f"{served}/v1/runs").status_code == 401
    node = shutil.which("node")
    assert node, "Node.js is needed for this test (scripts/setup.sh installs it)"
    finished = subprocess.run([node, str(ROOT / "examples" / "node" / "record_run.mjs"), served, "tok-9"],
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    answer = json.loads(finished.stdout)
    assert answer["status"] == "completed" and answer["steps"] == 4 and answer["context_tokens"] > 0
    with webmem.Memory.open(memory_dir) as mem:
        assert [step.action for step in mem.runs.steps(answer["run_id"])] == ["goto", "fill", "click", "click"]
        assert mem.trajectories.list()[0].goal == "Subscribe node@example.org to the newsletter"


@pytest.mark.parametrize("token", [None, "wrong"], ids=["missing", "refused"])
def test_the_node_example_says_in_one_line_that_its_token_is_missing_or_refused(served: str, token: str | None) -> None:
    node = shutil.which("node")
    assert node, "Node.js is needed for this test (scripts/setup.sh installs it)"
    finished = subprocess.run([node, str(ROOT / "examples" / "node" / "record_run.mjs"), served,
                               *([token] if token else [])], capture_output=True, text=True, timeout=120,
                              env={name: value for name, value in os.environ.items() if name != "WEBMEM_API_TOKEN"})
    assert finished.returncode == 1 and finished.stdout == ""
    lines = finished.stderr.splitlines()
    assert len(lines) == 1 and "token" in lines[0] and "401" in lines[0], finished.stderr


def test_serve_refuses_to_listen_off_loopback_without_a_token(memory_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "give --token" in result.output


def test_a_second_server_on_the_port_of_one_with_workers_is_refused(served: str, memory_dir: Path) -> None:
    """The workers share one listening socket: another ``webmem serve`` cannot bind the port beside them (with
    SO_REUSEPORT it could, and would have taken a share of the connections)."""
    port = served.rpartition(":")[2]
    second = subprocess.run([sys.executable, "-m", "webmem", "--memory-dir", str(memory_dir), "serve", "--port", port,
                             "--workers", "2"], capture_output=True, text=True, timeout=60)
    assert second.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in second.stderr
    assert httpx.get(f"{served}/v1/health", timeout=5).status_code == 200


def test_worker_sockets_get_connections_without_nagle() -> None:
    """The workers' socket names TCP, so asyncio turns Nagle off on what it accepts (else every answer
    waits for the client's delayed ACK, ~40 ms); shown on a socket like uvicorn's own for contrast."""
    import asyncio

    import asyncrun

    from webmem.server.workers import bind

    async def accepted_nodelay(listener: socket.socket) -> int:
        found: list[int] = []

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            found.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=listener)
        reader, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        await reader.read()
        writer.close()
        server.close()
        return found[0]

    ours = bind("127.0.0.1", free_port())
    assert ours.proto == socket.IPPROTO_TCP
    assert asyncrun.run(accepted_nodelay, ours) != 0
    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # as uvicorn's --workers binds it
    plain.bind(("127.0.0.1", 0))
    plain.listen()
    assert asyncrun.run(accepted_nodelay, plain) == 0


def test_serve_with_mcp_answers_mcp_clients_behind_the_same_token(memory_dir: Path) -> None:
    import asyncrun
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "webmem", "--memory-dir", str(memory_dir), "serve", "--port",
                                str(port), "--token", "tok-m", "--mcp"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            try:
                if httpx.get(f"{base}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "webmem serve --mcp did not answer"
                time.sleep(0.2)
        assert httpx.post(f"{base}/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 401

        async def main() -> str:
            http = httpx2.AsyncClient(headers={"Authorization": "Bearer tok-m"}, timeout=30)
            async with Client(streamable_http_client(f"{base}/mcp/", http_client=http)) as client:
                answer = await client.call_tool("webmem_start_run", {"goal": "Find a pie",
                                                                     "start_url": "https://shop.example/"})
                return str(answer.structured_content["run_id"])

        run_id = asyncrun.run(main)
        runs = httpx.get(f"{base}/v1/runs", headers={"Authorization": "Bearer tok-m"}).json()["runs"]
        assert [run["run_id"] for run in runs] == [run_id]  # one memory behind both
    finally:
        process.terminate()
        process.wait(timeout=15)
