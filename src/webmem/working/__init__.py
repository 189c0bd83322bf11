"""Working memory: one run's in-run state, persisted as it goes, and its parts of the run's context.

``AgentMemory`` (``memory``, sized by ``options``) holds the history with loop detection
(``short_term``), the working memory proper: goal, navigation path, scratch pad and page maps
(``state``), user and inferred context and extractions (``context_store``; sized by
``compression``, ``inventory`` and ``html_outline``), site exploration (``sitemap``) and the
domain's learned action patterns (``patterns``); ``prompt_parts`` renders them for the prompt.
"""

from .memory import AgentMemory, OperationMode
from .options import WorkingOptions
from .patterns import LearnedPattern, Pattern, PatternStore
from .short_term import ExecutionOutcome, MemoryPriority
from .state import StateSnapshot, WorkingMemory

__all__ = ["AgentMemory", "ExecutionOutcome", "LearnedPattern", "MemoryPriority", "OperationMode", "Pattern",
           "PatternStore", "StateSnapshot", "WorkingMemory", "WorkingOptions"]
