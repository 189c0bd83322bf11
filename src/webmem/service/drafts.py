"""A step read from another agent's or tool's record, before it is recorded."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepDraft:
    """One action as :meth:`webmem.Run.record_step` takes it (read from a Playwright MCP call, a browser-use step)."""

    action: str
    target: str | None = None
    selector: str | None = None
    value: str | None = None
    url: str | None = None
    ok: bool = True
    error: str | None = None
    duration_ms: int | None = None
