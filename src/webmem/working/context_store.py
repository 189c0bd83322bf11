"""What the agent knows about its task beyond the goal: user context (which wins), inferred
context with its source, the history of changes, and a cache of extractions with a TTL.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import InvalidInput
from ..core.redaction import redact_tree
from ..core.text import word_tokens

EXTRACTION_TTL_SECONDS = 300.0
# Words too common to make an entry relevant to a task ("the", "to"...).
STOP_WORDS = frozenset(
    "a an and any are as at be by do does for from has have in into is it its me my no not of on or our "
    "so than that the then there these this those to up us was we were what when where which who will with "
    "you your".split()
)
MAX_VALUE_CHARS = 20_000
MAX_EXTRACTION_CHARS = 2_000_000


class ContextStore:
    """User and inferred context for one run. Values must be JSON-serialisable.

    ``on_change`` is called after every change (a run's working memory saves itself there), so calls
    made on the store directly are kept as surely as those made through the working memory.
    """

    def __init__(self, *, redact: Callable[[str | None], str | None] = lambda text: text,
                 clock: Callable[[], float] = time.time, on_change: Callable[[], None] = lambda: None) -> None:
        self._redact = redact
        self._clock = clock
        self._on_change = on_change
        self._user: dict[str, Any] = {}
        self._inferred: dict[str, dict[str, Any]] = {}
        self._history: list[dict[str, Any]] = []
        self._extractions: dict[str, dict[str, Any]] = {}

    def set_user_context(self, context: Mapping[str, Any]) -> None:
        """Replace the user context; its keys override inferred ones."""
        if not isinstance(context, Mapping):
            raise InvalidInput("user_context: expected a mapping of names to values")
        checked = {self._key(key): self._value(value, key) for key, value in context.items()}
        self._user = checked
        self._history.append({"at": self._clock(), "kind": "user", "keys": sorted(checked)})
        self._on_change()

    def add_inferred_context(self, key: str, value: Any, source: str) -> None:
        """Remember something inferred during the run, and where it came from."""
        name = self._key(key)
        if not isinstance(source, str) or not source.strip():
            raise InvalidInput("source: say where the inferred context came from")
        origin = self._redact(source[:500])
        self._inferred[name] = {"value": self._value(value, name), "source": origin}
        self._history.append({"at": self._clock(), "kind": "inferred", "keys": [name], "source": origin})
        self._on_change()

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._user:
            return self._user[key]
        if key in self._inferred:
            return self._inferred[key]["value"]
        return default

    def get_all(self) -> dict[str, Any]:
        merged = {key: item["value"] for key, item in self._inferred.items()}
        merged.update(self._user)
        return merged

    def source_of(self, key: str) -> str | None:
        if key in self._user:
            return "user"
        return self._inferred[key]["source"] if key in self._inferred else None

    @property
    def history(self) -> list[dict[str, Any]]:
        return list(self._history)

    def get_relevant_context(self, task: str) -> dict[str, Any]:
        """The context entries whose key or value shares a word (not a stop word) with the task; {} when none does."""
        if not isinstance(task, str):
            raise InvalidInput("task: expected a string")
        wanted = word_tokens(task) - STOP_WORDS
        return {
            key: value for key, value in self.get_all().items()
            if wanted & (word_tokens(key) | word_tokens(json.dumps(value, ensure_ascii=False)))
        }

    def cache_extraction(self, key: str, data: Any) -> None:
        self._extractions[self._key(key)] = {"at": self._clock(), "data": self._value(data, key, MAX_EXTRACTION_CHARS)}
        self._on_change()

    def get_cached_extraction(self, key: str, max_age_seconds: float = EXTRACTION_TTL_SECONDS) -> Any:
        """The cached data, or None when there is none or it is older than ``max_age_seconds``."""
        item = self._extractions.get(key)
        if item is None or self._clock() - item["at"] > max_age_seconds:
            return None
        return item["data"]

    def extractions(self, max_age_seconds: float = EXTRACTION_TTL_SECONDS) -> dict[str, Any]:
        now = self._clock()
        return {key: item["data"] for key, item in self._extractions.items() if now - item["at"] <= max_age_seconds}

    def to_dict(self) -> dict[str, Any]:
        return {"user": self._user, "inferred": self._inferred, "history": self._history,
                "extractions": self._extractions}

    def load(self, state: Mapping[str, Any]) -> None:
        self._user = dict(state.get("user", {}))
        self._inferred = dict(state.get("inferred", {}))
        self._history = list(state.get("history", []))
        self._extractions = dict(state.get("extractions", {}))

    @staticmethod
    def _key(key: object) -> str:
        if not isinstance(key, str) or not key.strip() or len(key) > 200:
            raise InvalidInput(f"key: expected a non-empty name of at most 200 characters, got {key!r}")
        return key

    def _value(self, value: Any, key: object, limit: int = MAX_VALUE_CHARS) -> Any:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            raise InvalidInput(f"{key}: the value must be JSON-serialisable, got {type(value).__name__}") from None
        if len(text) > limit:
            raise InvalidInput(f"{key}: the value is {len(text)} characters as JSON (at most {limit})")
        # the strings of the document, keys included, not its JSON text: a secret of digits must not
        # turn the number 14821.5 into text that is no JSON
        return redact_tree(json.loads(text), lambda string: self._redact(string) or string)
