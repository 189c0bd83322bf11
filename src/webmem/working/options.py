"""The working memory's options, under the names of seed 002's ``AgentMemory`` constructor.

``Memory.open(working_memory={...})`` gives them to every run's working memory (and
``long_term_max_patterns`` to the memory's pattern store); each is checked when the memory opens.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..core.errors import InvalidInput

CONTEXT_WINDOW_BUDGET = 64_000
SHORT_TERM_MAX_ENTRIES = 50
LONG_TERM_MAX_PATTERNS = 100
EXTRACTION_SHARE = 0.20
MAX_EXTRACTION_TOKENS = 4000
MAX_SINGLE_EXTRACTION_CHARS = 8000


@dataclass(frozen=True)
class WorkingOptions:
    """How big each part of a run's working memory may grow."""

    context_window_budget: int = CONTEXT_WINDOW_BUDGET
    short_term_max_entries: int = SHORT_TERM_MAX_ENTRIES
    long_term_max_patterns: int = LONG_TERM_MAX_PATTERNS
    max_extraction_budget_percent: float = EXTRACTION_SHARE
    max_extraction_tokens: int = MAX_EXTRACTION_TOKENS
    max_single_extraction_chars: int = MAX_SINGLE_EXTRACTION_CHARS

    def __post_init__(self) -> None:
        for option in fields(self):
            value = getattr(self, option.name)
            if option.name == "max_extraction_budget_percent":
                if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
                    raise InvalidInput(f"{option.name}: expected a share between 0 and 1, got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{option.name}: expected a positive whole number, got {value!r}")

    @classmethod
    def of(cls, options: WorkingOptions | Mapping[str, Any] | None) -> WorkingOptions:
        """The options given as a mapping of the seed's names (or as options already)."""
        if options is None:
            return cls()
        if isinstance(options, WorkingOptions):
            return options
        if not isinstance(options, Mapping):
            raise InvalidInput(f"working_memory: expected a mapping of option names to values, got {options!r}")
        known = [option.name for option in fields(cls)]
        unknown = sorted(str(name) for name in options if name not in known)
        if unknown:
            raise InvalidInput(f"working_memory: unknown option {', '.join(unknown)} (known: {', '.join(known)})")
        return cls(**options)

    def for_agent_memory(self) -> dict[str, Any]:
        """The options a run's :class:`~webmem.working.memory.AgentMemory` takes (all but the patterns')."""
        return {option.name: getattr(self, option.name) for option in fields(self)
                if option.name != "long_term_max_patterns"}
