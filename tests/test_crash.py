"""A writer killed with SIGKILL at random points, 20 times over one memory: afterwards the database opens
clean, every step whose ``record_step`` returned and every run whose ``finish`` returned is there as it
was written, and the killed run, left running, is recognised as abandoned."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import webmem
from webmem.runs import ENV_ABANDONED_AFTER

WRITER = Path(__file__).with_name("crash_writer.py")
KILLS = 20


def journal_lines(path: Path) -> list[list[str]]:
    if not path.exists():
        return []
    # the last line may be cut by the kill: only whole lines count
    text = path.read_text(encoding="utf-8")
    return [line.split() for line in text.split("\n")[:-1]]


def start_writer(memory_dir: Path, journal: Path, seed: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, str(WRITER), str(memory_dir), str(journal), str(seed)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_until_ready(writer: subprocess.Popen[bytes], journal: Path, since: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(line == ["ready"] for line in journal_lines(journal)[since:]):
            return
        if writer.poll() is not None:
            raise AssertionError(f"the writer stopped: {writer.stderr.read().decode() if writer.stderr else ''}")
        time.sleep(0.02)
    raise AssertionError("the writer did not start")


def test_a_writer_killed_at_random_points_loses_nothing_it_was_told_was_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_dir, journal = tmp_path / "memory", tmp_path / "journal.txt"
    rng = random.Random(20261125)
    for kill in range(KILLS):
        since = len(journal_lines(journal))
        writer = start_writer(memory_dir, journal, seed=kill)
        wait_until_ready(writer, journal, since)
        time.sleep(rng.uniform(0.05, 0.8))  # somewhere inside a step, a finish or between them
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        assert writer.returncode == -signal.SIGKILL, "the writer ended before it was killed"

    lines = journal_lines(journal)
    steps = {(line[1], int(line[2])) for line in lines if line[0] == "step"}
    finished = {line[1]: (int(line[2]), line[3] == "1") for line in lines if line[0] == "finished"}
    started = [line[1] for line in lines if line[0] == "started"]
    assert len(finished) >= KILLS // 2 and len(steps) > len(finished), "the writer did too little to test anything"

    monkeypatch.setenv(ENV_ABANDONED_AFTER, str(0.5 / 60))
    time.sleep(0.6)
    with webmem.Memory.open(memory_dir) as mem:
        health = mem.doctor()
        assert health["ok"] and health["integrity"] == "ok", health
        for run_id, (count, success) in finished.items():
            manifest = mem.runs.get(run_id)
            assert manifest.status == ("completed" if success else "failed") and manifest.success is success
            assert len(mem.runs.steps(run_id)) == count
            saved = [trajectory for trajectory in mem.trajectories.list() if trajectory.run_id == run_id]
            assert len(saved) == (1 if success else 0)
            assert len(saved[0].steps) == count if saved else True
        for run_id, seq in steps:
            assert len(mem.runs.steps(run_id)) >= seq, f"step {seq} of {run_id} was lost"
        killed = [run_id for run_id in started if run_id not in finished]
        assert 0 < len(killed) <= KILLS  # each kill left at most one run it had noted unfinished
        stored = {run.run_id: run for run in mem.runs.list()}
        # a killed run noted as started is there: running, or finished if the kill came after finish committed
        assert all(run_id in stored for run_id in killed)
        running = {run_id for run_id, run in stored.items() if run.status == "running"}
        # the runs left running: those noted unfinished, and ones killed before start_run's return was noted
        assert running and not running & set(finished) and len(running) <= KILLS
        assert {run.run_id for run in mem.runs.abandoned()} == running
        assert set(health["abandoned_runs"]) == running
        sessions = {session.run_id for domain in mem.knowledge.domains() for session in mem.knowledge.sessions(domain)}
        assert not sessions & running, "a killed run fed the session history"
        assert os.path.getsize(memory_dir / "memory.db") > 0
