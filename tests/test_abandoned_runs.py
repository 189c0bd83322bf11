"""A run whose process died stays `running` in the store: it is shown as abandoned at once when its process was
one of this machine, after a while otherwise; doctor reports it, and `webmem runs close` finishes it as failed
(its steps kept; no trajectory, no success)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text

import webmem
from webmem.cli import cli
from webmem.core.processes import this_process
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
    assert [run.run_id for run in mem.runs.list(status="running")] == [fresh.id]  # one someone may still finish
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


HOLDER = """
import sys, time, webmem
mem = webmem.Memory.open(sys.argv[1])
run = mem.start_run(goal=sys.argv[2], start_url="https://shop.example/")
run.record_step(action="click", target='link "Pies"', url="https://shop.example/")
print(run.id, flush=True)
time.sleep(600)
"""


def holding_a_run(memory_dir: Path, goal: str) -> tuple[subprocess.Popen[str], str]:
    """A process of this machine that started a run, recorded a step and holds it (sleeping): its run id."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(memory_dir), goal], stdout=subprocess.PIPE,
                               text=True, env={**os.environ, ENV_ABANDONED_AFTER: "30"})
    line = process.stdout.readline() if process.stdout else ""
    assert line.startswith("run_"), f"the holder did not start its run (exit code {process.poll()})"
    return process, line.strip()


def test_a_run_whose_process_was_killed_is_abandoned_at_once(memory_dir: Path) -> None:
    """An orchestrator restarting after a crash tells its dead runs from live ones without waiting 30 minutes:
    a run whose process (of this machine) was killed is abandoned, one whose process lives is running."""
    webmem.Memory.open(memory_dir).close()
    killed, dead_run = holding_a_run(memory_dir, "Find a pie")
    alive, live_run = holding_a_run(memory_dir, "Find a cake")
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        with webmem.Memory.open(memory_dir) as mem:
            assert [run.run_id for run in mem.runs.list(status="running")] == [live_run]
            assert [run.run_id for run in mem.runs.list(status="abandoned")] == [dead_run]
            assert [run.run_id for run in mem.runs.abandoned()] == [dead_run]
            assert mem.runs.statuses(mem.runs.list()) == {dead_run: "abandoned", live_run: "running"}
            assert mem.doctor()["abandoned_runs"] == [dead_run]
        runner = CliRunner()
        for status, shown, hidden in (("running", live_run, dead_run), ("abandoned", dead_run, live_run)):
            listed = runner.invoke(cli, ["--memory-dir", str(memory_dir), "runs", "--status", status, "--json"],
                                   catch_exceptions=False)
            assert [run["run_id"] for run in json.loads(listed.output)] == [shown], status
        table = runner.invoke(cli, ["--memory-dir", str(memory_dir), "runs"], catch_exceptions=False).output
        assert next(line for line in table.splitlines() if dead_run in line).count("abandoned") == 1
        assert "abandoned" not in next(line for line in table.splitlines() if live_run in line)
    finally:
        alive.kill()
        alive.wait(timeout=30)


def test_a_run_of_another_machine_or_a_reused_process_id_is_judged_rightly(mem: webmem.Memory) -> None:
    """A process of another machine cannot be looked up: its run stays running until the timeout. A process id
    that a later process took (here pid 1, which started long before) does not keep a dead run alive."""
    elsewhere = mem.start_run(goal="Find a pie", start_url=SITE)
    reused = mem.start_run(goal="Find a cake", start_url=SITE)
    here = mem.start_run(goal="Find a tart", start_url=SITE)
    machine = this_process().rsplit("|", 2)[0]
    with mem.store.write() as conn:
        for run, owner in ((elsewhere, "another-host|boot|4242|77"), (reused, f"{machine}|1|0")):
            conn.execute(text("UPDATE runs SET owner = :owner WHERE run_id = :run"), {"owner": owner, "run": run.id})
    assert [run.run_id for run in mem.runs.abandoned()] == [reused.id]
    assert {run.run_id for run in mem.runs.list(status="running")} == {elsewhere.id, here.id}
    here.record_step(action="click", target='link "Tarts"', url=SITE)  # acting on a run makes this process its owner
    reused_handle = mem.get_run(reused.id)
    reused_handle.record_step(action="click", target='link "Cakes"', url=SITE)
    assert mem.runs.abandoned() == []
