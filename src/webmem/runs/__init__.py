"""The run registry (``registry``: one manifest per run, its recorded steps, resume/fork lineage) and when a
running run counts as abandoned (``liveness``)."""

from .liveness import ABANDONED, ABANDONED_AFTER, ENV_ABANDONED_AFTER, abandoned_after, shown_status
from .registry import ADVANCE_RUN, RUN_STATUSES, RunRegistry, appending_step, new_manifest

__all__ = [
    "ABANDONED",
    "ABANDONED_AFTER",
    "ADVANCE_RUN",
    "ENV_ABANDONED_AFTER",
    "RUN_STATUSES",
    "RunRegistry",
    "abandoned_after",
    "appending_step",
    "new_manifest",
    "shown_status",
]
