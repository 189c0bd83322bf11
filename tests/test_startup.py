"""Start-up in proportion to the work: ``import webmem`` and the command line's help load neither SQLAlchemy,
pydantic nor the memory; ``webmem mcp`` declares its tools without them and opens the memory meanwhile."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import webmem

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("sqlalchemy", "pydantic", "webmem.memory")
LOADED = f"sorted(m for m in {HEAVY!r} if m in sys.modules)"
HELP_RUNNER = f"""
import sys
from webmem.cli import cli
try:
    cli.main(args=sys.argv[1:], prog_name="webmem")
except SystemExit:
    pass
print({LOADED}, file=sys.stderr)
"""


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          timeout=120, check=True)


def test_import_webmem_loads_no_heavy_module() -> None:
    assert python(f"import sys, webmem; print({LOADED})").stdout.strip() == "[]"


@pytest.mark.parametrize("args", [["--help"], ["runs", "--help"], ["trajectories", "match", "--help"],
                                  ["export", "--help"], ["forget", "fact", "--help"], ["mcp", "--help"]])
def test_help_loads_no_heavy_module(args: list[str]) -> None:
    done = python(HELP_RUNNER, *args)
    assert "Usage: webmem" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_public_names_load_on_first_use() -> None:
    from webmem import Memory

    assert webmem.Memory is Memory
    assert Memory.__module__ == "webmem.memory"
    assert set(webmem.__all__) <= set(dir(webmem))
    assert webmem.core.version.__version__ == webmem.__version__  # a submodule is reached as before
    with pytest.raises(AttributeError, match="no_such_name"):
        webmem.no_such_name  # noqa: B018


def test_the_service_models_load_without_the_memory() -> None:
    code = f"import sys; from webmem.service import StartedRun, DEFAULT_MATCH_LIMIT; print({LOADED})"
    assert python(code).stdout.strip() == "['pydantic']"
    from webmem.service import MemoryService
    from webmem.service.service import MemoryService as defined

    assert MemoryService is defined


needs_sdk = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="needs the mcp extra")


@needs_sdk
def test_the_mcp_server_declares_its_tools_without_the_memory() -> None:
    code = f"import sys, webmem.mcp.server; print({LOADED})"
    assert python(code).stdout.strip() == "['pydantic']"


@needs_sdk
def test_webmem_mcp_on_a_damaged_memory_stops_with_its_error(tmp_path: Path) -> None:
    (tmp_path / "memory.db").write_text("not a database at all")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "0"}}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "webmem", "--memory-dir", str(tmp_path), "mcp"],
                          input="".join(json.dumps(message) + "\n" for message in (initialize, initialized)),
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 1
    assert "not a webmem database or is damaged" in done.stderr
    assert "Traceback" not in done.stderr
