"""The operations that webmem's protocol surfaces (the MCP server, the HTTP API) share."""

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
