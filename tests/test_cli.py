"""The command line: thin over the API, one-line errors, JSON that is only data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import webmem
from webmem.cli import cli


@pytest.fixture
def filled(memory_dir: Path) -> dict[str, str]:
    with webmem.Memory.open(memory_dir) as mem:
        done = mem.start_run(goal="Buy a kettle", start_url="https://shop.example/", session_id="proj_1")
        done.record_step(action="click", target='button "Kettles"', selector="#k", url="https://shop.example/")
        done.finish(success=True, outcome="Kettle in cart")
        failed = mem.start_run(goal="Cancel an order", start_url="https://other.example:8080/")
        failed.finish(success=False, outcome="No cancel button")
        running = mem.start_run(goal="Track a parcel", start_url="https://shop.example/track")
    return {"done": done.id, "failed": failed.id, "running": running.id}


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_runs_lists_newest_first_as_json(memory_dir: Path, filled: dict[str, str]) -> None:
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [row["run_id"] for row in rows] == [filled["running"], filled["failed"], filled["done"]]
    assert rows[0]["status"] == "running" and rows[2]["status"] == "completed"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--domain", "shop.example"], {"done", "running"}),
        (["--domain", "other.example:8080"], {"failed"}),
        (["--status", "failed"], {"failed"}),
        (["--session-id", "proj_1"], {"done"}),
    ],
)
def test_runs_filters(memory_dir: Path, filled: dict[str, str], args: list[str], expected: set[str]) -> None:
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", *args, "--json")
    assert code == 0
    assert {row["run_id"] for row in json.loads(out)} == {filled[name] for name in expected}


def test_runs_limit_and_table(memory_dir: Path, filled: dict[str, str]) -> None:
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", "--limit", "1", "--json")
    assert code == 0 and len(json.loads(out)) == 1
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs")
    assert code == 0
    assert filled["done"] in out and "Buy a kettle" in out


def test_runs_show(memory_dir: Path, filled: dict[str, str]) -> None:
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", "show", filled["done"], "--json")
    assert code == 0
    shown = json.loads(out)
    assert shown["summary"] == "Kettle in cart"
    assert shown["steps"][0]["target"] == 'button "Kettles"'
    code, out, _ = invoke("--memory-dir", str(memory_dir), "runs", "show", filled["done"])
    assert code == 0 and "Kettle in cart" in out and "#k" in out


def test_memory_dir_from_environment(
    memory_dir: Path, filled: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEBMEM_DIR", str(memory_dir))
    code, out, _ = invoke("runs", "--json")
    assert code == 0 and len(json.loads(out)) == 3


def test_namespace_option_isolates(memory_dir: Path, filled: dict[str, str]) -> None:
    code, out, _ = invoke("--memory-dir", str(memory_dir), "--namespace", "elsewhere", "runs", "--json")
    assert code == 0 and json.loads(out) == []


def test_unknown_run_is_one_line_error(memory_dir: Path, filled: dict[str, str]) -> None:
    code, out, err = invoke("--memory-dir", str(memory_dir), "runs", "show", "run_0000000000000_nope00")
    assert code == 1
    assert out == ""
    assert err.strip().splitlines() == ["Error: run_id: no run 'run_0000000000000_nope00' in namespace 'default'"]


def test_missing_memory_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "nothing-here"
    code, _, err = invoke("--memory-dir", str(target), "runs")
    assert code == 1 and "no webmem memory" in err
    assert not target.exists()


def test_bad_usage_exits_2(memory_dir: Path, filled: dict[str, str]) -> None:
    code, _, err = invoke("--memory-dir", str(memory_dir), "runs", "--limit", "0")
    assert code == 2 and "--limit" in err
    code, _, err = invoke("--memory-dir", str(memory_dir), "runs", "--status", "paused")
    assert code == 2


def test_bad_domain_is_one_line_error(memory_dir: Path, filled: dict[str, str]) -> None:
    code, _, err = invoke("--memory-dir", str(memory_dir), "runs", "--domain", "a/b")
    assert code == 1 and err.startswith("Error: domain:")


def test_corrupt_database_is_one_line_error(tmp_path: Path) -> None:
    directory = tmp_path / "broken"
    directory.mkdir()
    (directory / "memory.db").write_bytes(b"this is not sqlite" * 100)
    code, _, err = invoke("--memory-dir", str(directory), "runs")
    assert code == 1
    assert "not a webmem database" in err and "Traceback" not in err


def test_help_and_version() -> None:
    code, out, _ = invoke("-h")
    assert code == 0 and "runs" in out and "demo" in out
    code, out, _ = invoke("runs", "-h")
    assert code == 0 and "--session-id" in out
    code, out, _ = invoke("--version")
    assert code == 0 and webmem.__version__ in out
