"""The event log: capped in size and rotated (also with several processes writing), and `webmem events`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import webmem
from webmem.cli import cli
from webmem.core import events
from webmem.core.events import ENV_KEEP, ENV_MAX_BYTES, EVENTS_FILE

SITE = "https://shop.example/"


def all_events(directory: Path) -> list[dict[str, object]]:
    """Every event kept, oldest first (the highest-numbered rotated file is the oldest)."""
    rotated = sorted(directory.glob(EVENTS_FILE + ".[0-9]*"), key=lambda file: -int(file.suffix[1:]))
    found = []
    current = directory / EVENTS_FILE
    for file in [*rotated, *([current] if current.exists() else [])]:  # a rotation by the last write leaves none
        found += [json.loads(line) for line in file.read_text().splitlines()]  # every line whole
    return found


def record(directory: Path, steps: int) -> str:
    with webmem.Memory.open(directory) as mem, mem.start_run(goal="Find a pie", start_url=SITE) as run:
        for number in range(steps):
            run.record_step(action="click", target=f'link "Pie {number}"', url=SITE)
        run.finish(success=True)
        return run.id


def log_writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """From now on, what each write of event lines handed the operating system (the writes still happen)."""
    writes: list[bytes] = []
    write = os.write

    def counted(fd: int, data: bytes) -> int:
        if b'"event"' in data:
            writes.append(bytes(data))
        return write(fd, data)

    monkeypatch.setattr(os, "write", counted)
    return writes


def test_the_events_of_one_transaction_reach_the_log_after_it_in_one_write_and_in_order(
    memory_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    writes = log_writes(monkeypatch)
    with webmem.Memory.open(memory_dir) as mem:
        with mem.store.write():
            run = mem.start_run(goal="Find a pie", start_url=SITE)
            for number in range(5):
                run.record_step(action="click", target=f'link "Pie {number}"', url=SITE)
            assert writes == []  # nothing is told before the commit
        assert len(writes) == 1
        assert [event["seq"] for event in all_events(memory_dir) if event["event"] == "step_recorded"] == [1, 2, 3, 4, 5]
        with pytest.raises(RuntimeError), mem.store.write():
            run.record_step(action="click", target='link "Pie 6"', url=SITE)
            raise RuntimeError("undone")
        # a transaction of its own: told at once, the step and its selector in one write
        run.record_step(action="click", target='link "Pie 7"', selector="#pie-7", url=SITE)
    assert len(writes) == 2 and [json.loads(line)["event"] for line in writes[1].splitlines()] == [
        "selector_recorded", "step_recorded"]
    assert [event["seq"] for event in all_events(memory_dir) if event["event"] == "step_recorded"] == [1, 2, 3, 4, 5, 6]


def test_a_context_tells_its_match_and_itself_in_one_write(memory_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        record(memory_dir, 2)
        run = mem.start_run(goal="Find a pie", start_url=SITE)
        writes = log_writes(monkeypatch)
        run.context(url=SITE)
        told = [[json.loads(line)["event"] for line in data.splitlines()] for data in writes]
        assert told[-1][-2:] == ["trajectory_matched", "context_built"], told


def test_the_log_is_rotated_past_its_size_and_old_files_go(memory_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_BYTES, "4000")
    monkeypatch.setenv(ENV_KEEP, "2")
    record(memory_dir, 120)
    names = sorted(file.name for file in memory_dir.glob(EVENTS_FILE + "*") if not file.name.endswith(".lock"))
    assert [name for name in names if name != EVENTS_FILE] == [EVENTS_FILE + ".1", EVENTS_FILE + ".2"]
    for name in names[-2:]:
        size = (memory_dir / name).stat().st_size
        assert 4000 < size < 4000 + 3000  # rotated just past the limit (by one transaction's events at most)
    assert "run_finished" in [event["event"] for event in all_events(memory_dir)[-8:]]  # the newest are kept


def test_processes_sharing_the_log_rotate_without_losing_a_line(memory_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_BYTES, "3000")
    monkeypatch.setenv(ENV_KEEP, "500")  # nothing dropped: every line must be somewhere
    webmem.Memory.open(memory_dir).close()
    script = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_event_log as t; "
              f"from pathlib import Path; t.record(Path({str(memory_dir)!r}), 60)")
    workers = [subprocess.Popen([sys.executable, "-c", script], env=dict(os.environ)) for _ in range(3)]
    assert [worker.wait(timeout=300) for worker in workers] == [0, 0, 0]
    steps = [event for event in all_events(memory_dir) if event["event"] == "step_recorded"]
    assert len(steps) == 180 and len({(event["run_id"], event["seq"]) for event in steps}) == 180


def test_a_memory_writes_to_the_log_at_its_path_after_another_moved_or_removed_it(
    memory_dir: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The log stays open between events; once the file at its path is another (rotated by another process)
    or gone (removed by hand), the next event after the check interval goes to the file at the path."""
    monkeypatch.setattr(events, "CHECK_SECONDS", 0.0)  # checked before every event
    log = memory_dir / EVENTS_FILE
    with webmem.Memory.open(memory_dir) as mem:
        run = mem.start_run(goal="Find a pie", start_url=SITE)
        os.replace(log, memory_dir / (EVENTS_FILE + ".1"))  # as a rotation by another process does
        run.record_step(action="click", target='link "Pie 1"', url=SITE)
        assert [json.loads(line)["event"] for line in log.read_text().splitlines()] == ["step_recorded"]
        log.unlink()
        run.record_step(action="click", target='link "Pie 2"', url=SITE)
        assert [json.loads(line)["seq"] for line in log.read_text().splitlines()] == [2]
    moved = [json.loads(line)["event"] for line in (memory_dir / (EVENTS_FILE + ".1")).read_text().splitlines()]
    assert "step_recorded" not in moved


def test_closing_a_memory_closes_its_log(memory_dir: Path) -> None:
    def open_files() -> set[str]:
        return {os.readlink(entry) for entry in Path("/proc/self/fd").iterdir() if entry.is_symlink()}

    with webmem.Memory.open(memory_dir) as mem:
        mem.start_run(goal="Find a pie", start_url=SITE)
        assert str(memory_dir / EVENTS_FILE) in open_files()
    assert str(memory_dir / EVENTS_FILE) not in open_files()


def test_webmem_events_shows_the_end_of_the_log_and_filters(memory_dir: Path) -> None:
    run_id = record(memory_dir, 6)
    runner = CliRunner()
    shown = runner.invoke(cli, ["--memory-dir", str(memory_dir), "events", "--tail", "3"], catch_exceptions=False)
    assert shown.exit_code == 0 and len(shown.output.splitlines()) == 3 and "fact_recorded" in shown.output
    only = runner.invoke(cli, ["--memory-dir", str(memory_dir), "events", "--event", "step_recorded", "--json",
                               "--run-id", run_id, "--tail", "100"], catch_exceptions=False)
    events = [json.loads(line) for line in only.output.splitlines()]
    assert [event["seq"] for event in events] == [1, 2, 3, 4, 5, 6]
    missing = runner.invoke(cli, ["--memory-dir", str(memory_dir.parent / "nowhere"), "events"])
    assert missing.exit_code == 1 and "no event log" in missing.output


def test_webmem_events_follow_prints_new_events_across_a_rotation(memory_dir: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    record(memory_dir, 1)
    monkeypatch.setenv(ENV_KEEP, "50")  # nothing rotated out of reach while the follower sleeps between polls
    env = {**os.environ, ENV_MAX_BYTES: "3000"}
    follower = subprocess.Popen([sys.executable, "-m", "webmem", "--memory-dir", str(memory_dir), "events", "--follow",
                                 "--tail", "1", "--event", "run_finished", "--json"],
                                env=env, stdout=subprocess.PIPE, text=True)
    watchdog = threading.Timer(120, follower.kill)  # a follower that never prints fails the test, never hangs it
    watchdog.start()
    try:
        first = follower.stdout.readline()  # the run before: the follower reads the log now, however slow its start
        monkeypatch.setenv(ENV_MAX_BYTES, "3000")
        newest = [record(memory_dir, 30) for _ in range(2)]  # rotates the log several times on the way
        assert (memory_dir / (EVENTS_FILE + ".1")).exists()
        time.sleep(3)  # a few polls of the follower
    finally:
        follower.terminate()
        output, _ = follower.communicate(timeout=10)
        watchdog.cancel()
    seen = [json.loads(line)["run_id"] for line in [first, *output.splitlines()] if line.strip()]
    assert seen[1:] == newest  # the one before, then each new run as it finished, across the rotations


def test_an_event_is_timed_in_utc_to_the_millisecond_as_isoformat_writes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC, datetime

    for moment in (1_795_000_000.0, 1_795_000_000.9995, 1_795_000_059.25, 1_795_000_060.001, 1_795_000_000.5,
                   1_795_000_059.9999996):
        monkeypatch.setattr(events.time, "time", lambda moment=moment: moment)
        expected = datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
        assert events.event_time() == expected
    monkeypatch.undo()
    before = datetime.now(UTC)
    told = datetime.fromisoformat(events.event_time())
    assert before.replace(microsecond=before.microsecond // 1000 * 1000) <= told <= datetime.now(UTC)
