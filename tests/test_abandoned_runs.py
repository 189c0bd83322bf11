"""A run whose process died stays `running` in the store: after a while it is shown as abandoned, doctor
reports it, and `webmem runs close` finishes it as failed (its steps kept; no trajectory, no success)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import webmem
from webmem.cli import cli
from webmem.runs import ABANDONED_AFTER, ENV_ABANDONED_AFTER, abandoned_after, shown_status

SITE = "https://shop.example/"
TIMEOUT_SECONDS = 1.5


def left_running(mem: webmem.Memory, monkeypatch: pytest.MonkeyPatch) -> str:
    """A run whose process stopped after one step, and then longer than the (shortened) timeout went by."""
    monkeypatch.setenv(ENV_ABANDONED_AFTER, str(TIMEOUT_SECONDS / 60))
    run = mem.start_run(goal="Find a pie", start_url=SITE)
    run.record_step(action="click", target='link "Pies"', url=SITE)
    time.sleep(TIMEOUT_SECONDS * 1.5)
    return run.id


def test_a_stale_running_run_is_abandoned_and_a_fresh_one_is_not(mem: webmem.Memory,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    old = left_running(mem, monkeypatch)
    fresh = mem.start_run(goal="Find a cake", start_url=SITE)
    assert [run.run_id for run in mem.runs.abandoned()] == [old]
    assert [run.run_id for run in mem.runs.list(status="abandoned")] == [old]
    assert {run.run_id for run in mem.runs.list(status="running")} == {old, fresh.id}
    assert shown_status(mem.runs.get(old)) == "abandoned" and shown_status(fresh.manifest) == "running"
    assert mem.doctor()["abandoned_runs"] == [old]


def test_the_timeout_can_be_set_and_is_checked(mem: webmem.Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    old = left_running(mem, monkeypatch)
    assert [run.run_id for run in mem.runs.abandoned()] == [old]
    monkeypatch.delenv(ENV_ABANDONED_AFTER)
    assert abandoned_after() == ABANDONED_AFTER and mem.runs.abandoned() == []  # 30 minutes by default
    monkeypatch.setenv(ENV_ABANDONED_AFTER, "soon")
    with pytest.raises(webmem.InvalidInput, match=ENV_ABANDONED_AFTER):
        mem.runs.abandoned()


def test_runs_close_finishes_it_as_failed_from_the_command_line(memory_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        old = left_running(mem, monkeypatch)
    runner = CliRunner()
    listed = runner.invoke(cli, ["--memory-dir", str(memory_dir), "runs"], catch_exceptions=False)
    assert "abandoned" in listed.output
    doctor = runner.invoke(cli, ["--memory-dir", str(memory_dir), "doctor"], catch_exceptions=False)
    assert "abandoned runs" in doctor.output and doctor.exit_code == 0
    closed = runner.invoke(cli, ["--memory-dir", str(memory_dir), "runs", "close", old, "--json"],
                           catch_exceptions=False)
    assert closed.exit_code == 0 and json.loads(closed.output)["closed"] is True
    again = runner.invoke(cli, ["--memory-dir", str(memory_dir), "runs", "close", old], catch_exceptions=False)
    assert "already failed" in again.output
    missing = runner.invoke(cli, ["--memory-dir", str(memory_dir), "runs", "close", "run_nope"])
    assert missing.exit_code == 1 and "run_nope" in missing.output
    with webmem.Memory.open(memory_dir) as mem:
        manifest = mem.runs.get(old)
        assert manifest.status == "failed" and manifest.success is False
        assert manifest.summary == "Closed: the run was abandoned"
        assert mem.runs.abandoned() == [] and mem.trajectories.list() == []
        assert [step.target for step in mem.runs.steps(old)] == ['link "Pies"']  # its steps are kept
