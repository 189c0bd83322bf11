"""The event log: what the memory did, for a callback and for ``<dir>/events.jsonl``."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .clock import utcnow
from .redaction import SecretRegistry

EventCallback = Callable[[dict[str, Any]], None]
EVENTS_FILE = "events.jsonl"


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

    def emit(self, kind: str, /, *, run_id: str | None = None, **fields: Any) -> dict[str, Any]:
        event: dict[str, Any] = {
            "ts": utcnow().isoformat(timespec="milliseconds"),
            "event": kind,
            "namespace": self.namespace,
            "run_id": run_id,
            **fields,
        }
        event = self._redacted(event)
        line = json.dumps(event, ensure_ascii=False, default=str)
        if self.path is not None:
            self._append(line + "\n")
        if self._callback is not None:
            self._callback(event)
        return event

    def _redacted(self, value: Any) -> Any:
        if isinstance(value, str):
            return self._secrets.redact(value)
        if isinstance(value, dict):
            return {key: self._redacted(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self._redacted(item) for item in value]
        return value

    def _append(self, line: str) -> None:
        data = line.encode("utf-8")
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
