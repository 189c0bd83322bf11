"""The event log: what the memory did, for a callback and for ``<dir>/events.jsonl``."""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .env import env_number
from .redaction import SecretRegistry

try:
    import fcntl
except ImportError:  # Windows: rotation is not serialised across processes there
    fcntl = None  # type: ignore[assignment]

EventCallback = Callable[[dict[str, Any]], None]
Event = tuple[str, str | None, dict[str, Any]]  # kind, run id, fields
EVENTS_FILE = "events.jsonl"
#: The log is rotated when it passes this size: ``events.jsonl`` becomes ``events.jsonl.1`` (and ``.1``
#: ``.2``, ...), and the oldest beyond the kept count goes. ``$WEBMEM_EVENTS_MAX_BYTES`` (0: never rotate)
#: and ``$WEBMEM_EVENTS_KEEP``, read when an event log is made (a memory opens), change them.
MAX_BYTES = 10 * 1024 * 1024
KEEP = 3
#: How long a process writes to the log file it holds open before it checks that the file at the path is still
#: that one (another process may have rotated the log): events told within that time of a rotation by another
#: process go to the rotated file, after the lines it holds.
CHECK_SECONDS = 0.1
ENV_MAX_BYTES = "WEBMEM_EVENTS_MAX_BYTES"
ENV_KEEP = "WEBMEM_EVENTS_KEEP"
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # what json.dumps would make on each call


class EventLog:
    """Sends each event to the callback and appends it as one JSON line to the log file.

    Events are redacted with the memory's secrets before they leave. Lines are written with a
    single ``write`` on a file opened for appending, so processes sharing the file do not
    interleave their lines.
    """

    def __init__(
        self,
        path: Path | None,
        *,
        namespace: str,
        secrets: SecretRegistry,
        callback: EventCallback | None = None,
    ) -> None:
        self.path = path
        self.namespace = namespace
        self._secrets = secrets
        self._callback = callback
        self._lock = threading.Lock()
        self._max_bytes, self._keep = max_bytes(), kept_files()  # read once: the environment is read per memory
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._checked = 0.0  # when the file at the path was last compared with the one open (time.monotonic)
        self._size = 0  # the log's size as last read, and what this process wrote since
        self._closer: weakref.finalize | None = None

    def emit(self, kind: str, /, *, run_id: str | None = None, **fields: Any) -> dict[str, Any]:
        return self.emit_all([(kind, run_id, fields)])[0]

    def emit_all(self, events: list[Event]) -> list[dict[str, Any]]:
        """Emit ``(kind, run_id, fields)`` events in order; their lines go to the file in one ``write``."""
        now = event_time()  # told together: at one time
        made = [self._event(now, kind, run_id, fields) for kind, run_id, fields in events]
        if self.path is not None and made:
            self._append("".join(_ENCODER.encode(event) + "\n" for event in made))
        if self._callback is not None:
            for event in made:
                self._callback(event)
        return made

    def _event(self, now: str, kind: str, run_id: str | None, fields: dict[str, Any]) -> dict[str, Any]:
        event: dict[str, Any] = {
            "ts": now,
            "event": kind,
            "namespace": self.namespace,
            "run_id": run_id,
            **fields,
        }
        return self._redacted(event) if len(self._secrets) else event

    def _redacted(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._secrets.redact(value)
        if isinstance(value, dict):
            return {key: self._redacted(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._redacted(item) for item in value]
        return value

    def _append(self, lines: str) -> None:
        data = lines.encode("utf-8")
        with self._lock:
            fd = self._log()
            os.write(fd, data)
            self._size += len(data)  # what this process wrote; the others' is counted at each check
            if self._max_bytes and self._size > self._max_bytes and self.path is not None:
                self._size = os.fstat(fd).st_size
                if self._size > self._max_bytes:
                    rotate(self.path, keep=self._keep, limit=self._max_bytes)
                    self._close_file()

    def _log(self) -> int:
        """The log file's descriptor, kept open between events. At most every ``CHECK_SECONDS`` it is checked
        against the file at the path (its size read again) and opened again once that is another file (a
        process rotated the log) or gone (removed by hand): a system call per event instead of four."""
        assert self.path is not None
        now = time.monotonic()
        if self._fd is not None and now - self._checked < CHECK_SECONDS:
            return self._fd
        self._checked = now
        try:
            found = os.stat(self.path)
            current = (found.st_dev, found.st_ino)
        except FileNotFoundError:
            current = None
        if self._fd is not None and current != self._identity:
            self._close_file()
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._closer = weakref.finalize(self, os.close, self._fd)  # a log never closed is closed when let go
        found = os.fstat(self._fd)
        self._identity, self._size = (found.st_dev, found.st_ino), found.st_size
        return self._fd

    def close(self) -> None:
        """Close the log file (the next event opens it again)."""
        with self._lock:  # never while another thread writes to it
            self._close_file()

    def _close_file(self) -> None:
        if self._closer is not None:
            self._closer()
        self._fd, self._identity, self._closer = None, None, None


_second: tuple[int, str] = (-1, "")  # the last second an event was told in, and its text


def event_time() -> str:
    """Now in UTC as ISO 8601 to the millisecond (``datetime.now(UTC).isoformat(timespec="milliseconds")``, made
    from the text of the current second once per second)."""
    global _second
    now = time.time()
    second = int(now)
    micro = round((now - second) * 1_000_000)  # as datetime rounds a time to its microsecond
    if micro >= 1_000_000:
        second, micro = second + 1, micro - 1_000_000
    known = _second
    if known[0] != second:
        known = _second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return f"{known[1]}.{micro // 1000:03d}+00:00"


def max_bytes() -> int:
    return int(env_number(ENV_MAX_BYTES, MAX_BYTES, whole=True, at_least=0))


def kept_files() -> int:
    return int(env_number(ENV_KEEP, KEEP, whole=True, at_least=1))


def rotated(path: Path, number: int) -> Path:
    return path.with_name(f"{path.name}.{number}")


def rotate(path: Path, *, keep: int, limit: int) -> None:
    """Move the log aside (``.1``, the older ones one further, the oldest beyond ``keep`` dropped). Processes
    that share the log rotate one at a time, and only a log still over the limit."""
    with _rotation_lock(path):
        try:
            if path.stat().st_size <= limit:
                return  # another process rotated it meanwhile
        except FileNotFoundError:
            return
        rotated(path, keep).unlink(missing_ok=True)
        for number in range(keep - 1, 0, -1):
            if rotated(path, number).exists():
                os.replace(rotated(path, number), rotated(path, number + 1))
        os.replace(path, rotated(path, 1))


class _rotation_lock:
    """An exclusive lock on ``<log>.lock`` (shared by every process writing the log) while rotating."""

    def __init__(self, path: Path) -> None:
        self._path = path.with_name(path.name + ".lock")
        self._fd = -1

    def __enter__(self) -> None:
        self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT, 0o600)
        if fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if fcntl is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
