"""The operations that webmem's protocol surfaces (the MCP server, the HTTP API) share."""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .models import (
        FinishedRun,
        Lessons,
        LessonView,
        PlannedCall,
        RecordedStep,
        ReplayOffer,
        RunContext,
        RunDetail,
        RunList,
        SiteFacts,
        SiteSelectors,
        StartedRun,
        TrajectoryCandidate,
        TrajectorySearch,
    )
    from .service import AGENT_ACTIONS, DEFAULT_MATCH_LIMIT, MemoryService

__all__ = [
    "AGENT_ACTIONS",
    "DEFAULT_MATCH_LIMIT",
    "FinishedRun",
    "LessonView",
    "Lessons",
    "MemoryService",
    "PlannedCall",
    "RecordedStep",
    "ReplayOffer",
    "RunContext",
    "RunDetail",
    "RunList",
    "SiteFacts",
    "SiteSelectors",
    "StartedRun",
    "TrajectoryCandidate",
    "TrajectorySearch",
]

# Loaded on first use (PEP 562): the MCP server declares its tools with the models before the memory,
# and the library under it, are loaded.
_HOMES = {
    "AGENT_ACTIONS": ".service",
    "DEFAULT_MATCH_LIMIT": "..core.vocabulary",
    "FinishedRun": ".models",
    "LessonView": ".models",
    "Lessons": ".models",
    "MemoryService": ".service",
    "PlannedCall": ".models",
    "RecordedStep": ".models",
    "ReplayOffer": ".models",
    "RunContext": ".models",
    "RunDetail": ".models",
    "RunList": ".models",
    "SiteFacts": ".models",
    "SiteSelectors": ".models",
    "StartedRun": ".models",
    "TrajectoryCandidate": ".models",
    "TrajectorySearch": ".models",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home, __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
