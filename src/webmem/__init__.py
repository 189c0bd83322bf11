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

from .core.embeddings import Embedder, HashingEmbedder, SentenceTransformerEmbedder, WordLlamaEmbedder
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
from .core.version import __version__
from .episodes.export import export_memories
from .episodes.store import Episode, EpisodeStore
from .forgetting import ForgetReport, Forgetting
from .knowledge import AppKnowledge
from .lessons.store import ImportReport, LessonStore
from .memory import Memory
from .run import Run
from .runs import RunRegistry
from .selectors import SelectorCache
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
    "ForgetReport",
    "Forgetting",
    "GradingResult",
    "HashingEmbedder",
    "ImportReport",
    "InvalidInput",
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
