"""The bounds and closed sets of words that records and the command line's options name.

Kept free of pydantic and the store: ``webmem --help`` shows these without loading either.
"""

from __future__ import annotations

from typing import Literal, get_args

#: The largest count and duration stored (a 32-bit column on PostgreSQL; 2**53 ms is 285,000 years).
MAX_COUNT = 2**31 - 1
MAX_MILLIS = 2**53 - 1

FactType = Literal["timing", "selector", "pattern", "quirk", "site_changed"]
FACT_TYPES: tuple[str, ...] = get_args(FactType)

#: How many matching runs a trajectory search shows unless asked for another number.
DEFAULT_MATCH_LIMIT = 5
SCRIPT_LANGUAGES = ("python", "typescript")
TRANSFER_KINDS = ("runs", "trajectories", "facts", "sessions", "selectors", "lessons", "episodes")
TRANSFER_FORMATS = ("json", "jsonl", "csv", "prompt")
