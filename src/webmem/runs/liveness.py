"""When a running run counts as abandoned: the process that last acted on it ended (a process of this machine,
known at once), or nobody acted on it for :func:`abandoned_after` (any machine, the only sign a process of
another machine leaves)."""

from __future__ import annotations

from datetime import datetime, timedelta

from ..core.clock import utcnow
from ..core.env import env_number
from ..core.models import RunManifest
from ..core.processes import has_ended

#: A running run not updated for this long is taken as abandoned: its process died or forgot to finish it.
#: Every recorded step and ``update`` moves ``updated_at``; ``$WEBMEM_ABANDONED_AFTER_MINUTES`` changes it.
ABANDONED_AFTER = timedelta(minutes=30)
ENV_ABANDONED_AFTER = "WEBMEM_ABANDONED_AFTER_MINUTES"
ABANDONED = "abandoned"


def abandoned_after() -> timedelta:
    """How long a running run may go without an update before it counts as abandoned."""
    default = ABANDONED_AFTER.total_seconds() / 60
    return timedelta(minutes=env_number(ENV_ABANDONED_AFTER, default, above=0, at_most=60 * 24 * 365))


def is_abandoned(status: str, updated_at: datetime, owner: str | None, *, cutoff: datetime) -> bool:
    """Whether a run is running with nobody to finish it: not updated since ``cutoff``, or its process ended."""
    return status == "running" and (updated_at < cutoff or has_ended(owner))


def shown_status(manifest: RunManifest, *, now: datetime | None = None, owner_ended: bool = False) -> str:
    """The run's status as people read it: ``abandoned`` for a running run whose process ended
    (``owner_ended``, as :meth:`RunRegistry.statuses <webmem.runs.RunRegistry.statuses>` tells) or that was not updated for too long."""
    if manifest.status == "running" and (owner_ended or manifest.updated_at < (now or utcnow()) - abandoned_after()):
        return ABANDONED
    return manifest.status
