"""Short-term memory: the run's recent thought-action-observation cycles, bounded, with priorities,
failure tracking and loop detection. One action signature is used for all of it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from ..core.errors import InvalidInput
from ..core.models import positive_int
from ..core.redaction import redact_tree
from ..core.text import clean_for_prompt

DEFAULT_MAX_ENTRIES = 50
LOOP_THRESHOLD = 3
LOOP_WINDOW = 10
OBSERVATION_CHARS = 500


class MemoryPriority(str, Enum):
    """How long an entry is kept when the history is full: LOW goes first, CRITICAL never."""

    CRITICAL = "critical"
    HIGH = "high"
    NORMAL = "normal"
    LOW = "low"


class ExecutionOutcome(str, Enum):
    """How a cycle's action ended."""

    SUCCESS = "success"
    FAILURE = "failure"
    PARTIAL = "partial"
    SKIPPED = "skipped"


EVICTION_ORDER = (MemoryPriority.LOW, MemoryPriority.NORMAL, MemoryPriority.HIGH)


@dataclass(frozen=True)
class Action:
    """A tool call: the tool's name and its parameters."""

    tool: str
    parameters: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, action: Action | Mapping[str, Any] | str) -> Action:
        """Accept an Action, a mapping with ``tool`` and ``parameters`` (or ``params``), or a bare tool name."""
        if isinstance(action, Action):
            return action
        if isinstance(action, str) and action.strip():
            return cls(action.strip())
        if isinstance(action, Mapping) and isinstance(action.get("tool"), str) and action["tool"].strip():
            parameters = action.get("parameters", action.get("params", {}))
            if not isinstance(parameters, Mapping):
                raise InvalidInput("action.parameters: expected a mapping")
            try:
                json.dumps(dict(parameters), sort_keys=True)
            except (TypeError, ValueError):
                raise InvalidInput("action.parameters: values must be JSON-serialisable") from None
            return cls(action["tool"].strip(), dict(parameters))
        raise InvalidInput("action: expected a tool name or a mapping with 'tool' and 'parameters'")

    @property
    def tool_name(self) -> str:
        """The tool's name, by the seed's name for it."""
        return self.tool

    def describe(self) -> str:
        return f"{self.tool}({json.dumps(dict(self.parameters), sort_keys=True, ensure_ascii=False)})"


def action_signature(action: Action | Mapping[str, Any] | str, url: str | None) -> str:
    """The identity of an action on a page: tool, parameters and url, canonical at every depth (keys of
    nested mappings sorted, ``2`` and ``2.0`` spelled alike), so one action always has one signature."""
    call = Action.of(action)
    canonical = json.dumps([call.tool, _canonical(dict(call.parameters)), url or ""], ensure_ascii=False,
                           sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _canonical(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


@dataclass
class WorkingEntry:
    """One thought-action-observation cycle."""

    entry_id: int
    tool: str
    parameters: dict[str, Any]
    thought: str = ""
    observation: str = ""
    outcome: str = ExecutionOutcome.SUCCESS.value
    priority: str = MemoryPriority.NORMAL.value
    url: str = ""
    title: str = ""
    duration_ms: float = 0.0
    retry_count: int = 0
    error: str | None = None
    estimated_tokens: int = 0
    tags: list[str] = field(default_factory=list)
    timestamp: float = field(default_factory=time.time)

    @property
    def signature(self) -> str:
        return action_signature(Action(self.tool, self.parameters), self.url)

    # the seed's names for what an entry holds
    @property
    def action_signature(self) -> str:
        """The action's signature (tool, parameters at every depth, page): one action, one signature."""
        return self.signature

    @property
    def action(self) -> Action:
        """The tool call (``action.tool_name``, ``action.parameters``)."""
        return Action(self.tool, self.parameters)

    @property
    def page_title(self) -> str:
        """The page's title when the cycle ran."""
        return self.title

    @property
    def error_message(self) -> str | None:
        """The action's error, if it failed with one."""
        return self.error

    def describe(self) -> str:
        return Action(self.tool, self.parameters).describe()

    def format_for_prompt(self, *, include_observation: bool = True) -> str:
        lines = [f"[{self.outcome.capitalize()}] {clean_for_prompt(self.describe(), 300)}"]
        if self.thought:
            lines.append(f"   Thought: {clean_for_prompt(self.thought, 300)}")
        if self.error:
            lines.append(f"   Error: {clean_for_prompt(self.error, 300)}")
        if include_observation and self.observation:
            lines.append(f"   Result: {clean_for_prompt(self.observation, OBSERVATION_CHARS)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ShortTermMemory:
    """The most recent cycles, at most ``max_entries`` of them (CRITICAL ones are never evicted)."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES, *, redact: Callable[[str], str] | None = None) -> None:
        self.max_entries = positive_int(max_entries, field="max_entries")
        self._redact = redact
        self._entries: list[WorkingEntry] = []
        self._failed: set[str] = set()

    def add(self, entry: WorkingEntry) -> list[WorkingEntry]:
        """Keep an entry; returns the entries evicted to make room (by priority, oldest first)."""
        self._entries.append(entry)
        if entry.outcome == ExecutionOutcome.FAILURE.value:
            self._failed.add(entry.signature)
        evicted = []
        while len(self._entries) > self.max_entries:
            victim = self._victim()
            if victim is None:
                break  # everything left is CRITICAL
            self._entries.remove(victim)
            evicted.append(victim)
        return evicted

    def _victim(self) -> WorkingEntry | None:
        for priority in EVICTION_ORDER:
            for entry in self._entries:
                if entry.priority == priority.value:
                    return entry
        return None

    @property
    def entries(self) -> list[WorkingEntry]:
        return list(self._entries)

    def get_recent(self, n: int = 5) -> list[WorkingEntry]:
        return self._entries[-n:] if n > 0 else []

    def get_by_outcome(self, outcome: ExecutionOutcome | str) -> list[WorkingEntry]:
        value = outcome.value if isinstance(outcome, ExecutionOutcome) else outcome
        return [entry for entry in self._entries if entry.outcome == value]

    def has_failed(self, signature: str) -> bool:
        """Whether an action with this signature failed in this run (evicted entries included)."""
        return signature in self._failed

    def signature_of(self, action: Action | Mapping[str, Any] | str, url: str | None = None) -> str:
        """The signature of an action as its entry would carry it: entries are stored with registered
        secrets replaced (in the parameters and the url), so the action is signed that way too."""
        if self._redact is None:
            return action_signature(action, url)
        call = Action.of(action)
        return action_signature(Action(call.tool, redact_tree(dict(call.parameters), self._redact)),
                                self._redact(url or ""))

    def get_action_frequency(self, action: Action | Mapping[str, Any] | str,
                             url_or_parameters: str | Mapping[str, Any] | None = None) -> int:
        """How many times the history holds this action: on the page ``url`` (no url is a page of its own),
        or, called as the seed writes it, ``get_action_frequency("scroll_page", {"direction": "down"})``,
        with these parameters on any page."""
        if isinstance(url_or_parameters, Mapping):
            if not isinstance(action, str):
                raise InvalidInput("action: with parameters given apart, expected the tool's name")
            call = {"tool": action, "parameters": url_or_parameters}
            return sum(1 for entry in self._entries if entry.signature == self.signature_of(call, entry.url))
        if url_or_parameters is not None and not isinstance(url_or_parameters, str):
            raise InvalidInput(f"url: expected a URL string, got {type(url_or_parameters).__name__}")
        signature = self.signature_of(action, url_or_parameters)
        return sum(1 for entry in self._entries if entry.signature == signature)

    def get_loop_warnings(self, threshold: int = LOOP_THRESHOLD, window: int = LOOP_WINDOW) -> list[str]:
        """One warning per action repeated ``threshold``+ times in the last ``window`` entries."""
        recent = self._entries[-window:]
        counts = Counter(entry.signature for entry in recent)
        warnings = []
        for signature, times in counts.items():
            if times >= threshold:
                example = next(entry for entry in recent if entry.signature == signature)
                warnings.append(
                    f"Warning: {clean_for_prompt(example.describe(), 200)} repeated {times} times "
                    f"in the last {len(recent)} actions!"
                )
        return warnings

    def format_history(self, last_n: int = 5) -> str:
        recent = self.get_recent(last_n)
        if not recent:
            return ""
        lines = self.get_loop_warnings()
        for number, entry in enumerate(recent, start=1):
            lines.append(f"{number}. {entry.format_for_prompt()}")
        return "\n".join(lines)

    def total_tokens(self) -> int:
        return sum(entry.estimated_tokens for entry in self._entries)

    def restore(self, entries: list[WorkingEntry], failed: set[str]) -> None:
        self._entries = list(entries)
        self._failed = set(failed)

    def failed_signatures(self) -> set[str]:
        return set(self._failed)

    def clear(self) -> None:
        self._entries.clear()
        self._failed.clear()
