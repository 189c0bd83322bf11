"""The working memory proper (seed 002's ``WorkingMemory``): the run's current goal, cycle count,
navigation path, scratch pad and page maps, and the snapshots that make up the path.

A run's ``WorkingMemory`` is owned by its :class:`~webmem.working.memory.AgentMemory`: the seed's
calls on it (``memory.working.set_goal(...)``, ``record_navigation``, ``set_scratch``) are handed to
the owner, which redacts and saves them, so they are kept exactly as the same calls on the owner.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import InvalidInput
from .sitemap import normalize_url

if TYPE_CHECKING:
    from .memory import AgentMemory


@dataclass(init=False)
class StateSnapshot:
    """Where the browser was: page, what was visible, form state and scroll position.

    ``page_title`` is the seed's name for ``title``; either may be given (not both) and both read it.
    """

    url: str
    title: str = ""
    visible_elements_summary: str = ""
    form_state: dict[str, Any] = field(default_factory=dict)
    scroll_position: tuple[int, int] = (0, 0)
    snapshot_id: str = ""
    timestamp: float = field(default_factory=time.time)
    associated_entry_id: int | None = None

    def __init__(
        self, url: str, title: str | None = None, visible_elements_summary: str = "",
        form_state: dict[str, Any] | None = None, scroll_position: tuple[int, int] = (0, 0), snapshot_id: str = "",
        timestamp: float | None = None, associated_entry_id: int | None = None, *, page_title: str | None = None,
    ) -> None:
        if title is not None and page_title is not None:
            raise InvalidInput("snapshot: give title or page_title, not both")
        self.url = url
        self.title = title if title is not None else page_title if page_title is not None else ""
        self.visible_elements_summary = visible_elements_summary
        self.form_state = dict(form_state) if form_state is not None else {}
        self.scroll_position = scroll_position
        self.snapshot_id = snapshot_id
        self.timestamp = time.time() if timestamp is None else timestamp
        self.associated_entry_id = associated_entry_id

    @property
    def page_title(self) -> str:
        """The page's title, by the seed's name."""
        return self.title


def snapshot_of(data: StateSnapshot | Mapping[str, Any]) -> StateSnapshot:
    """A snapshot given as one, or as a mapping of its fields (the seed's ``page_title`` accepted)."""
    if isinstance(data, StateSnapshot):
        snapshot = data
    elif isinstance(data, Mapping):
        try:
            snapshot = StateSnapshot(**dict(data))
        except TypeError as exc:
            raise InvalidInput(f"snapshot: {exc}") from None
    else:
        raise InvalidInput(f"snapshot: expected a StateSnapshot or a mapping, got {type(data).__name__}")
    if not isinstance(snapshot.url, str) or not snapshot.url:
        raise InvalidInput("snapshot.url: expected a URL string")
    snapshot.scroll_position = tuple(snapshot.scroll_position)  # type: ignore[assignment]
    return snapshot


def page_key(url: str) -> str:
    """The key a page is kept under: the URL normalised."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidInput(f"url: expected a URL string, got {url!r}")
    return normalize_url(url.strip()) or url.strip()


@dataclass
class WorkingMemory:
    """The run's current goal, cycle count, navigation path, scratch pad and page maps.

    Read it freely; change it through its methods (or the owner's): with an owner they are saved.
    A ``WorkingMemory`` without an owner (made by hand) keeps the changes in memory only.
    """

    goal: str | None = None
    cycle_count: int = 0
    navigation: list[StateSnapshot] = field(default_factory=list)
    scratch: dict[str, Any] = field(default_factory=dict)
    page_maps: dict[str, dict[str, Any]] = field(default_factory=dict)
    owner: AgentMemory | None = field(default=None, repr=False, compare=False)

    @property
    def current_goal(self) -> str | None:
        """The goal of the task in progress (the seed's name)."""
        return self.goal

    def set_goal(self, goal: str) -> None:
        """Give the task in progress a new goal (its history and cycle count stay)."""
        if self.owner is not None:
            self.owner.set_goal(goal)
            return
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: expected a non-empty string")
        self.goal = goal.strip()

    def record_navigation(self, snapshot: StateSnapshot | Mapping[str, Any]) -> StateSnapshot:
        """Add a page to the navigation path; returns it as kept."""
        if self.owner is not None:
            return self.owner.record_navigation(snapshot)
        state = snapshot_of(snapshot)
        self.navigation.append(state)
        return state

    def get_navigation_history(self) -> list[StateSnapshot]:
        """The pages visited, in order."""
        return list(self.navigation)

    def set_scratch(self, key: str, value: Any) -> None:
        """Keep a JSON value under ``key`` on the scratch pad."""
        if self.owner is not None:
            self.owner.set_scratch(key, value)
            return
        self.scratch[key] = value

    def get_scratch(self, key: str, default: Any = None) -> Any:
        """The scratch pad's value under ``key``, else ``default``."""
        return self.scratch.get(key, default)

    def has_page_map(self, url: str) -> bool:
        """Whether a map of the page at ``url`` is kept."""
        return self._key(url) in self.page_maps

    def get_page_map(self, url: str) -> Any:
        """The map kept for the page at ``url``, or None."""
        item = self.page_maps.get(self._key(url))
        return item["map"] if item else None

    def get_page_summary(self, url: str) -> str | None:
        """The summary kept with the page's map, or None."""
        item = self.page_maps.get(self._key(url))
        return item["summary"] if item else None

    def get_all_page_maps(self) -> dict[str, Any]:
        """Every page map kept, by page."""
        return {url: item["map"] for url, item in self.page_maps.items()}

    def _key(self, url: str) -> str:
        return self.owner.page_key(url) if self.owner is not None else page_key(url)
