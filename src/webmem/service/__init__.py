"""The operations that webmem's protocol surfaces (the MCP server, the HTTP API) share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_names

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
        SiteWording,
        SkillCall,
        SkillList,
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
    "SiteWording",
    "SkillCall",
    "SkillList",
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
    "SiteWording": ".models",
    "SkillCall": ".models",
    "SkillList": ".models",
    "StartedRun": ".models",
    "TrajectoryCandidate": ".models",
    "TrajectorySearch": ".models",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
