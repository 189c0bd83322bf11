"""webmem: a persistent, learning memory for LLM browser agents.

Open a memory, start a run, ask it for context before each LLM turn, record each step,
finish the run; later runs on the same site get the best matching past trajectory, the
site's session history, the facts learned about it and the selectors known to work::

    import webmem

    mem = webmem.Memory.open(".agent-memory")
    with mem.start_run(goal="Search for smart watch reviews", start_url="https://shop.example/") as run:
        prompt_context = str(run.context())
        run.record_step(action="click", target='button "Search"', selector="#search", ok=True)
        run.finish(success=True, outcome="Found 12 reviews")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.lazy import lazy_names

from .core.version import __version__

if TYPE_CHECKING:
    from .core.embeddings import (
        Embedder,
        GloveEmbedder,
        HashingEmbedder,
        SentenceTransformerEmbedder,
        WordLlamaEmbedder,
    )
    from .core.errors import (
        BrowserUnavailable,
        InvalidInput,
        MemoryDisabled,
        NotFound,
        PolicyError,
        RunClosed,
        RunNotFound,
        SchemaTooNew,
        StoreCorrupt,
        StoreError,
        StoreLocked,
        StoreReadOnly,
        TrajectoryNotFound,
        WebmemError,
    )
    from .core.episode_records import (
        EnvironmentState,
        EpisodeEntry,
        GradingResult,
        PageElement,
        RetrievedMemory,
        StepGrade,
    )
    from .core.models import (
        ElementSignals,
        Fact,
        FieldOption,
        LearnedAct,
        Lesson,
        MatchCandidate,
        MatchReport,
        RecordedRun,
        ReplayedStep,
        ReplayReport,
        RunManifest,
        Scenario,
        SelectorEntry,
        Session,
        Step,
        Trajectory,
        TrajectorySummary,
        ValueRead,
    )
    from .core.pack import ContextPack, ContextPart, LineCut, PartReport
    from .core.redaction import SecretRegistry
    from .core.skill_records import Skill, SkillParameter, SkillRecord
    from .episodes.export import export_memories
    from .episodes.store import Episode, EpisodeStore
    from .forgetting import ForgetReport, Forgetting
    from .knowledge import AppKnowledge
    from .lessons.store import ImportReport, LessonStore
    from .memory import Memory
    from .run import Run
    from .runs import RunRegistry
    from .selectors import SelectorCache
    from .skills import Skills
    from .trajectories.store import TrajectoryStore

__all__ = [
    "AppKnowledge",
    "BrowserUnavailable",
    "ContextPack",
    "ContextPart",
    "ElementSignals",
    "Embedder",
    "EnvironmentState",
    "Episode",
    "EpisodeEntry",
    "EpisodeStore",
    "Fact",
    "FieldOption",
    "ForgetReport",
    "Forgetting",
    "GloveEmbedder",
    "GradingResult",
    "HashingEmbedder",
    "ImportReport",
    "InvalidInput",
    "LearnedAct",
    "Lesson",
    "LessonStore",
    "LineCut",
    "MatchCandidate",
    "MatchReport",
    "Memory",
    "MemoryDisabled",
    "NotFound",
    "PageElement",
    "PartReport",
    "PolicyError",
    "RecordedRun",
    "ReplayReport",
    "ReplayedStep",
    "RetrievedMemory",
    "Run",
    "RunClosed",
    "RunManifest",
    "RunNotFound",
    "RunRegistry",
    "Scenario",
    "SchemaTooNew",
    "SecretRegistry",
    "SelectorCache",
    "SelectorEntry",
    "SentenceTransformerEmbedder",
    "Session",
    "Skill",
    "SkillParameter",
    "SkillRecord",
    "Skills",
    "Step",
    "StepGrade",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreReadOnly",
    "Trajectory",
    "TrajectoryNotFound",
    "TrajectoryStore",
    "TrajectorySummary",
    "ValueRead",
    "WebmemError",
    "WordLlamaEmbedder",
    "__version__",
    "export_memories",
]

# The public names are loaded on first use (PEP 562), so that ``import webmem`` and the command line's
# help stay fast: opening a memory needs SQLAlchemy and pydantic, reading ``__version__`` does not.
_HOMES = {
    "AppKnowledge": ".knowledge",
    "BrowserUnavailable": ".core.errors",
    "ContextPack": ".core.pack",
    "ContextPart": ".core.pack",
    "ElementSignals": ".core.models",
    "Embedder": ".core.embeddings",
    "EnvironmentState": ".core.episode_records",
    "Episode": ".episodes.store",
    "EpisodeEntry": ".core.episode_records",
    "EpisodeStore": ".episodes.store",
    "Fact": ".core.models",
    "FieldOption": ".core.models",
    "ForgetReport": ".forgetting",
    "Forgetting": ".forgetting",
    "GradingResult": ".core.episode_records",
    "HashingEmbedder": ".core.embeddings",
    "ImportReport": ".lessons.store",
    "InvalidInput": ".core.errors",
    "LearnedAct": ".core.models",
    "Lesson": ".core.models",
    "LessonStore": ".lessons.store",
    "LineCut": ".core.pack",
    "MatchCandidate": ".core.models",
    "MatchReport": ".core.models",
    "Memory": ".memory",
    "MemoryDisabled": ".core.errors",
    "NotFound": ".core.errors",
    "PageElement": ".core.episode_records",
    "PartReport": ".core.pack",
    "PolicyError": ".core.errors",
    "RecordedRun": ".core.models",
    "ReplayReport": ".core.models",
    "ReplayedStep": ".core.models",
    "RetrievedMemory": ".core.episode_records",
    "Run": ".run",
    "RunClosed": ".core.errors",
    "RunManifest": ".core.models",
    "RunNotFound": ".core.errors",
    "RunRegistry": ".runs",
    "Scenario": ".core.models",
    "SchemaTooNew": ".core.errors",
    "SecretRegistry": ".core.redaction",
    "SelectorCache": ".selectors",
    "SelectorEntry": ".core.models",
    "SentenceTransformerEmbedder": ".core.embeddings",
    "Session": ".core.models",
    "Skill": ".core.skill_records",
    "SkillParameter": ".core.skill_records",
    "SkillRecord": ".core.skill_records",
    "Skills": ".skills",
    "Step": ".core.models",
    "StepGrade": ".core.episode_records",
    "StoreCorrupt": ".core.errors",
    "StoreError": ".core.errors",
    "StoreLocked": ".core.errors",
    "StoreReadOnly": ".core.errors",
    "Trajectory": ".core.models",
    "TrajectoryNotFound": ".core.errors",
    "TrajectoryStore": ".trajectories.store",
    "TrajectorySummary": ".core.models",
    "ValueRead": ".core.models",
    "WebmemError": ".core.errors",
    "WordLlamaEmbedder": ".core.embeddings",
    "GloveEmbedder": ".core.embeddings",
    "export_memories": ".episodes.export",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
