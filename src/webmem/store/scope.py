"""What every component is built with: the store, its namespace, the event log and the secrets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.events import Event, EventLog
from ..core.redaction import SecretRegistry
from . import Store


@dataclass(frozen=True)
class Scope:
    store: Store
    namespace: str
    events: EventLog
    secrets: SecretRegistry

    def emit(self, kind: str, /, *, run_id: str | None = None, **fields: Any) -> None:
        """Report an event once the surrounding transaction has committed (at once outside one)."""
        self.emit_all([(kind, run_id, fields)])

    def emit_all(self, events: list[Event]) -> None:
        """Report ``(kind, run_id, fields)`` events as :meth:`emit` does, in one write to the log."""
        self.store.after_commit_together(self.events.emit_all, *events)

    def redact(self, text: str | None) -> str | None:
        return self.secrets.redact(text)
