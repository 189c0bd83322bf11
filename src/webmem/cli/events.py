"""``webmem events``: read the event log (``<memory dir>/events.jsonl``), its end, or follow it."""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ..core.events import EVENTS_FILE, kept_files, rotated
from ..core.locations import resolve_directory
from .output import COUNT

POLL_SECONDS = 0.5


@click.command("events")
@click.option("--tail", "count", type=COUNT, default=20, show_default=True, help="Show the last N events.")
@click.option("--follow", "-f", is_flag=True, help="Keep printing events as they are written (Ctrl-C stops).")
@click.option("--event", "kind", help="Only events of this kind (step_recorded, run_finished, ...).")
@click.option("--run-id", help="Only events of this run.")
@click.option("--json", "json_", is_flag=True, help="Print the events as JSON lines.")
@click.pass_obj
def events_command(settings: Any, count: int, follow: bool, kind: str | None, run_id: str | None,
                   json_: bool) -> None:
    """Show the memory's event log, newest last (the rotated files too)."""
    path = resolve_directory(settings.memory_dir) / EVENTS_FILE
    if not path.exists() and not follow:
        raise click.ClickException(f"no event log at {path} (events are written once the memory is used)")

    def wanted(event: dict[str, Any]) -> bool:
        return (kind is None or event.get("event") == kind) and (run_id is None or event.get("run_id") == run_id)

    for event in deque((event for event in history(path) if wanted(event)), maxlen=count):
        show(event, json_)
    if follow:
        try:
            for event in tail_forever(path):
                if wanted(event):
                    show(event, json_)
        except KeyboardInterrupt:
            return


def history(path: Path) -> Iterator[dict[str, Any]]:
    """Every event kept, oldest first: the rotated files, then the log."""
    for file in [*(rotated(path, number) for number in range(kept_files(), 0, -1)), path]:
        if file.exists():
            with file.open(encoding="utf-8", errors="replace") as lines:
                yield from parsed(lines)


def tail_forever(path: Path) -> Iterator[dict[str, Any]]:
    """Events written from now on. The open file is read to its end even after it was rotated away, then the
    files rotated after it, then the new log: no event is skipped, however often the log rotated meanwhile."""
    follower = _Follower(path)
    while True:
        yield from follower.poll()
        time.sleep(POLL_SECONDS)


class _Follower:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.handle: Any = None
        self.pending = ""
        if path.exists():
            self.handle = path.open(encoding="utf-8", errors="replace")
            self.handle.seek(0, os.SEEK_END)

    def poll(self) -> Iterator[dict[str, Any]]:
        yield from self._read()
        current = _identity(self.path)
        mine = _identity_of(self.handle) if self.handle is not None else None
        if current is None or current == mine:
            return
        if mine is not None:  # rotated: the files moved aside after ours are newer than it, oldest first
            files = [rotated(self.path, number) for number in range(kept_files(), 0, -1)]
            found = [index for index, file in enumerate(files) if _identity(file) == mine]
            for file in files[found[0] + 1:] if found else []:
                with file.open(encoding="utf-8", errors="replace") as lines:
                    yield from parsed(lines)
            self.handle.close()
        self.handle, self.pending = self.path.open(encoding="utf-8", errors="replace"), ""
        yield from self._read()

    def _read(self) -> Iterator[dict[str, Any]]:
        if self.handle is None:
            return
        self.pending += self.handle.read()
        complete, _, self.pending = self.pending.rpartition("\n")
        if complete:
            yield from parsed(complete.splitlines())


def parsed(lines: Any) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash
        if isinstance(event, dict):
            yield event


def show(event: dict[str, Any], json_: bool) -> None:
    if json_:
        click.echo(json.dumps(event, ensure_ascii=False))
        return
    rest = " ".join(f"{key}={_short(value)}" for key, value in event.items()
                    if key not in ("ts", "event", "namespace", "run_id") and value not in (None, [], {}, ""))
    click.echo(f"{event.get('ts', '')}  {event.get('event', '?'):<20} {event.get('run_id') or '-':<28} {rest}")


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def _identity_of(handle: Any) -> tuple[int, int]:
    found = os.fstat(handle.fileno())
    return found.st_dev, found.st_ino


COMMANDS = [events_command]
