"""Working memory: one run's in-run state, persisted as it goes, and its parts of the run's context.

``AgentMemory`` (``memory``) holds the history with loop detection (``short_term``), the
scratch pad and inferred context (``context_store``), page maps, extractions (sized by
``compression``, ``inventory`` and ``html_outline``), site exploration (``sitemap``) and the
domain's learned action patterns (``patterns``); ``prompt_parts`` renders them for the prompt.
"""

from .memory import AgentMemory, StateSnapshot
from .patterns import Pattern, PatternStore

__all__ = ["AgentMemory", "Pattern", "PatternStore", "StateSnapshot"]
