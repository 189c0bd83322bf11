"""In-run working memory: one run's history, goal, navigation, scratch pad, page maps, context,
extractions and site exploration, kept in memory for speed and written to the store as the run
goes, so a crashed or resumed run can be inspected and continued.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from enum import Enum
from typing import Any

from sqlalchemy import select, update

from ..core.clock import utcnow
from ..core.errors import InvalidInput
from ..core.pack import ContextPack, ContextPart, check_budget
from ..core.redaction import names_password_field, redact_tree
from ..core.text import storable
from ..core.tokens import TokenCounter
from ..store.schema import working_entries, working_state
from ..store.scope import Scope
from ..store.statements import upsert
from .compression import Compressor
from .context_store import ContextStore
from .options import (
    CONTEXT_WINDOW_BUDGET,
    EXTRACTION_SHARE,
    MAX_EXTRACTION_TOKENS,
    MAX_SINGLE_EXTRACTION_CHARS,
    SHORT_TERM_MAX_ENTRIES,
)
from .patterns import LearnedPattern, Pattern, PatternStore
from .prompt_parts import working_parts
from .short_term import (
    Action,
    ExecutionOutcome,
    MemoryPriority,
    ShortTermMemory,
    WorkingEntry,
)
from .sitemap import SitemapGraph, SitemapLimits
from .state import StateSnapshot, WorkingMemory, page_key, snapshot_of
from .task_summary import task_summary


class OperationMode(str, Enum):
    """How the agent works: scraping and research give extractions a bigger share of the context."""

    AUTO = "auto"
    NAVIGATE = "navigate"
    EXECUTE = "execute"
    SCRAPE = "scrape"
    RESEARCH = "research"


OPERATION_MODES = tuple(mode.value for mode in OperationMode)


class AgentMemory:
    """The working memory of one run. Mutate it through its methods: they also persist.

    The options are seed 002's constructor options; ``Memory.open(working_memory={...})`` sets them
    for every run. ``goal`` and ``start_url`` (the run's) stand for the goal and the current page until
    the agent gives its own (``start_task``, ``record_navigation``, ``record_cycle``).
    """

    def __init__(
        self,
        scope: Scope,
        run_id: str,
        *,
        patterns: PatternStore,
        counter: TokenCounter | None = None,
        short_term_max_entries: int = SHORT_TERM_MAX_ENTRIES,
        context_window_budget: int = CONTEXT_WINDOW_BUDGET,
        max_extraction_budget_percent: float = EXTRACTION_SHARE,
        max_extraction_tokens: int = MAX_EXTRACTION_TOKENS,
        max_single_extraction_chars: int = MAX_SINGLE_EXTRACTION_CHARS,
        compressor: Compressor | Callable[[str, int], str] | None = None,
        clock: Callable[[], float] = time.time,
        goal: str | None = None,
        start_url: str | None = None,
    ) -> None:
        self._scope = scope
        self.run_id = run_id
        self.patterns = patterns
        self.counter = counter or TokenCounter()
        self.context_window_budget = check_budget(context_window_budget)
        if not 0 < max_extraction_budget_percent <= 1:
            raise InvalidInput("max_extraction_budget_percent: expected a share between 0 and 1")
        self.max_extraction_budget_percent = max_extraction_budget_percent
        self.max_extraction_tokens = max_extraction_tokens
        self.max_single_extraction_chars = max_single_extraction_chars
        self.compressor = compressor
        self._clock = clock
        self.short_term = ShortTermMemory(short_term_max_entries, redact=self._redact)
        self.working = WorkingMemory(goal=self._redact(goal) if goal else None, owner=self)
        self.context_store = ContextStore(redact=self._redact, clock=clock, on_change=self._save)
        self._start_url = self._redact(start_url) if start_url else None
        self.sitemap: SitemapGraph | None = None
        self.operation_mode = "auto"
        self._visited: set[str] = set()
        self._next_entry = 1

    # -- persistence -------------------------------------------------------------------------

    @classmethod
    def load(cls, scope: Scope, run_id: str, **options: Any) -> AgentMemory:
        """The run's working memory as last written (empty when the run never used one)."""
        memory = cls(scope, run_id, **options)
        with scope.store.read() as conn:
            state = conn.execute(
                select(working_state.c.state).where(
                    working_state.c.namespace == scope.namespace, working_state.c.run_id == run_id
                )
            ).scalar_one_or_none()
            rows = conn.execute(
                select(working_entries.c.entry).where(
                    working_entries.c.namespace == scope.namespace, working_entries.c.run_id == run_id,
                    working_entries.c.evicted.is_(False),
                ).order_by(working_entries.c.entry_id)
            ).scalars().all()
        if state is not None:
            memory._restore(state, [WorkingEntry(**row) for row in rows])
        return memory

    def _restore(self, state: Mapping[str, Any], entries: list[WorkingEntry]) -> None:
        self.working = WorkingMemory(
            owner=self,
            goal=state.get("goal"), cycle_count=state.get("cycle_count", 0),
            navigation=[StateSnapshot(**{**item, "scroll_position": tuple(item.get("scroll_position", (0, 0)))})
                        for item in state.get("navigation", [])],
            scratch=dict(state.get("scratch", {})), page_maps=dict(state.get("page_maps", {})),
        )
        self.context_store.load(state.get("context", {}))
        self.operation_mode = state.get("mode", "auto")
        self._visited = set(state.get("visited", []))
        self._next_entry = state.get("next_entry", len(entries) + 1)
        self.short_term.restore(entries, set(state.get("failed", [])))
        sitemap = state.get("sitemap")
        self.sitemap = SitemapGraph.from_dict(sitemap) if sitemap else None

    def _state(self) -> dict[str, Any]:
        return {
            "goal": self.working.goal, "cycle_count": self.working.cycle_count,
            "navigation": [asdict(snapshot) for snapshot in self.working.navigation],
            "scratch": self.working.scratch, "page_maps": self.working.page_maps,
            "context": self.context_store.to_dict(), "mode": self.operation_mode,
            "visited": sorted(self._visited), "next_entry": self._next_entry,
            "failed": sorted(self.short_term.failed_signatures()),
            "sitemap": self.sitemap.to_dict() if self.sitemap else None,
        }

    def _save(self, *, entry: WorkingEntry | None = None, evicted: Iterable[WorkingEntry] = ()) -> None:
        now = utcnow()
        key = {"namespace": self._scope.namespace, "run_id": self.run_id}
        with self._scope.store.write() as conn:
            if entry is not None:
                conn.execute(working_entries.insert().values(
                    **key, entry_id=entry.entry_id, entry=entry.to_dict(), evicted=False, recorded_at=now
                ))
            gone = [item.entry_id for item in evicted]
            if gone:
                conn.execute(update(working_entries).where(
                    working_entries.c.namespace == self._scope.namespace,
                    working_entries.c.run_id == self.run_id, working_entries.c.entry_id.in_(gone),
                ).values(evicted=True))
            upsert(conn, working_state, {**key, "state": self._state(), "updated_at": now},
                   update=("state", "updated_at"))

    # -- the unified interface ---------------------------------------------------------------

    def start_task(self, goal: str, user_context: Mapping[str, Any] | None = None) -> None:
        """Begin a task, as the seed's lifecycle says ("clear short-term, set goal"): short-term memory (the
        history and the failures it saw) is cleared, the goal (and any context the user gave) replaces the
        previous one's, the cycle count restarts. The rest of the working memory (navigation path, scratch
        pad, page maps), the context store (user and inferred context, extractions), the visited pages,
        the sitemap and the learned patterns stay: a task often builds on what the last one found.
        :meth:`set_goal` changes the goal of the task in progress instead; :meth:`clear_task` ends a task."""
        self._set_goal(goal, user_context, restart=True)

    def set_goal(self, goal: str, user_context: Mapping[str, Any] | None = None) -> None:
        """Give the task in progress a new goal (and user context); its history and cycle count stay."""
        self._set_goal(goal, user_context, restart=False)

    def _set_goal(self, goal: str, user_context: Mapping[str, Any] | None, *, restart: bool) -> None:
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: expected a non-empty string")
        if user_context is not None:
            self.context_store.set_user_context(user_context)  # checks it before anything changes
        evicted = self.short_term.entries if restart else []
        if restart:
            self.short_term.clear()
            self.working.cycle_count = 0
        self.working.goal = self._redact(goal.strip()[:2000])
        self._save(evicted=evicted)

    def record_cycle(
        self,
        thought: str,
        action: Action | Mapping[str, Any] | str,
        observation: str = "",
        outcome: ExecutionOutcome | str = ExecutionOutcome.SUCCESS,
        priority: MemoryPriority | str = MemoryPriority.NORMAL,
        *,
        url: str | None = None,
        title: str | None = None,
        duration_ms: float = 0.0,
        retry_count: int = 0,
        error: str | None = None,
        tags: Iterable[str] = (),
    ) -> WorkingEntry:
        """Record one thought-action-observation cycle; returns the entry (with its signature)."""
        call = Action.of(action)
        outcome_value = _enum_value(ExecutionOutcome, outcome, "outcome")
        priority_value = _enum_value(MemoryPriority, priority, "priority")
        for name, text in (("thought", thought), ("observation", observation)):
            if not isinstance(text, str):
                raise InvalidInput(f"{name}: expected a string, got {type(text).__name__}")
        _check_cycle_details(url=url, title=title, error=error, duration_ms=duration_ms, retry_count=retry_count,
                             tags=tags)
        page = url if url is not None else self.current_url() or ""
        entry = WorkingEntry(
            entry_id=self._next_entry, tool=storable(call.tool), parameters=self._redact_tree(dict(call.parameters)),
            thought=self._redact(thought[:5000]), observation=self._redact(observation[:20_000]),
            outcome=outcome_value, priority=priority_value, url=self._redact(page), title=self._redact(title or ""),
            duration_ms=float(duration_ms), retry_count=int(retry_count),
            error=self._redact(error[:4000]) if error else None, tags=sorted({self._redact(tag) for tag in tags}), timestamp=self._clock(),
        )
        entry.estimated_tokens = self.counter.count(entry.format_for_prompt())
        self._next_entry += 1
        self.working.cycle_count += 1
        evicted = self.short_term.add(entry)
        self._save(entry=entry, evicted=evicted)
        return entry

    def is_repeated_failure(self, action: Action | Mapping[str, Any] | str, url: str | None = None) -> bool:
        """Whether this very action (same tool, parameters and url) already failed in this run."""
        page = url if url is not None else self.current_url()
        return self.short_term.has_failed(self.short_term.signature_of(action, page))

    def mark_url_visited(self, url: str) -> None:
        """Remember that the agent has been on ``url`` in this run."""
        self._visited.add(self.page_key(url))
        self._save()

    def has_visited_url(self, url: str) -> bool:
        """Whether the agent has been on ``url`` in this run (compared normalised)."""
        return self.page_key(url) in self._visited

    def set_operation_mode(self, mode: OperationMode | str) -> None:
        """How the agent works now (auto, navigate, execute, scrape, research); scraping and research give
        extractions a bigger share of the context.
        """
        value = mode.value if isinstance(mode, OperationMode) else mode
        if value not in OPERATION_MODES:
            raise InvalidInput(f"mode: {mode!r} is not one of {', '.join(OPERATION_MODES)}")
        self.operation_mode = value
        self._save()

    def get_operation_mode(self) -> OperationMode:
        """How the agent works now."""
        return OperationMode(self.operation_mode)

    def get_task_summary(self) -> dict[str, Any]:
        """The goal, cycle count, mode, step counts, pages visited, the pages explored (with their summaries)
        and the recent successful actions, as plain data; ``text`` says it all as the seed prints it."""
        return task_summary(self, visited=self._visited)

    def clear_task(self) -> None:
        """End a task as the seed's lifecycle says ("clear short-term + working"): the history, and the
        working memory (goal, cycle count, navigation path, scratch pad, page maps) are cleared. What is
        not the task's own stays for the next one: the context store (the user's context, inferred
        context, extractions), the visited pages, the sitemap and the learned patterns. The stored
        history stays inspectable (its entries are marked evicted, not deleted)."""
        evicted = self.short_term.entries
        self.short_term.clear()
        self.working = WorkingMemory(owner=self)
        self._save(evicted=evicted)

    # -- working memory ----------------------------------------------------------------------

    def record_navigation(self, snapshot: StateSnapshot | Mapping[str, Any]) -> StateSnapshot:
        """Add a page to the navigation path (URL, title, what was visible); returns it as kept."""
        state = snapshot_of(snapshot)
        state.url = self._redact(state.url)
        state.title = self._redact(state.title)
        state.visible_elements_summary = self._redact(state.visible_elements_summary)
        state.form_state = {
            key: "{password}" if names_password_field(key) else self._redact_tree(value)
            for key, value in state.form_state.items()
        }
        self.working.navigation.append(state)
        self._save()
        return state

    def set_scratch(self, key: str, value: Any) -> None:
        """Keep a JSON value under ``key`` on the scratch pad (shown in the context)."""
        _check_json(key, value)
        self.working.scratch[key] = self._redact_tree(value)
        self._save()

    def store_page_map(self, url: str, page_map: Any, summary: str | None = None) -> None:
        """Keep a JSON map of the page at ``url``, with an optional one-line summary."""
        _check_json(url, page_map)
        self.working.page_maps[self.page_key(url)] = {"map": self._redact_tree(page_map),
                                                  "summary": self._redact(summary or "")}
        self._save()

    def add_inferred_context(self, key: str, value: Any, source: str) -> None:
        """Keep a value the agent inferred, naming where it came from (``source``)."""
        self.context_store.add_inferred_context(key, value, source)

    def has_page_map(self, url: str) -> bool:
        """Whether a map of the page at ``url`` is kept."""
        return self.working.has_page_map(url)

    def get_page_map(self, url: str) -> Any:
        """The map kept for the page at ``url``, or None."""
        return self.working.get_page_map(url)

    def get_page_summary(self, url: str) -> str | None:
        """The summary kept with the page's map, or None."""
        return self.working.get_page_summary(url)

    def get_all_page_maps(self) -> dict[str, Any]:
        """Every page map kept, by page."""
        return self.working.get_all_page_maps()

    def add_extraction(self, key: str, data: Any) -> None:
        """Keep extracted data under ``key``; the context shows it within its share of the budget.

        Like ``context_store.get_cached_extraction``, the context trusts an extraction for the cache's
        TTL (five minutes) and then leaves it out: the seed gives the TTL for the cache and says nothing
        of the prompt, and data the cache no longer trusts is stale for the model too. Add it again to
        keep it in view."""
        self.context_store.cache_extraction(key, data)

    # -- long-term patterns ------------------------------------------------------------------

    def learn_pattern(self, domain: str | LearnedPattern, description: str | None = None,
                      pattern_type: str | None = None, steps: list[Mapping[str, Any]] | None = None) -> Pattern:
        """Learn an action pattern for ``domain`` from these steps, or the seed's ``LearnedPattern`` as it is."""
        return self.patterns.learn_pattern(domain, description, pattern_type, steps, run_id=self.run_id)

    @property
    def long_term(self) -> PatternStore:
        """The learned patterns (the seed's name for them): ``record_usage``, ``prune``..."""
        return self.patterns

    def get_patterns_for_domain(self, domain: str) -> list[Pattern]:
        """Patterns of this domain or a parent domain, best success rate first."""
        return self.patterns.get_patterns_for_domain(domain)

    # -- sitemap -----------------------------------------------------------------------------

    def init_sitemap_graph(self, homepage_url: str, limits: SitemapLimits | None = None) -> SitemapGraph:
        """Start exploring a site from ``homepage_url``, within ``limits`` (pages, depth)."""
        self.sitemap = SitemapGraph(self._redact_url(homepage_url), limits=limits or SitemapLimits())
        self._save()
        return self.sitemap

    def add_sitemap_links(self, parent_url: str, links: list[Mapping[str, str]], link_type: str) -> list[str]:
        """Add links found on ``parent_url`` to the exploration; returns the URLs that were new."""
        safe = [self._redact_tree(dict(link)) if isinstance(link, Mapping) else link for link in links]
        added = self._require_sitemap().add_links(self._redact_url(parent_url), safe, link_type=link_type)
        self._save()
        return added

    def update_sitemap_visited(self, url: str, *, title: str, summary: str = "", section_count: int = 0) -> None:
        """Mark ``url`` explored, with its title, a summary and its number of sections."""
        self._require_sitemap().mark_visited(self._redact_url(url), title=self._redact(title) if isinstance(title, str) else title,
                                             summary=self._redact(summary) if isinstance(summary, str) else summary,
                                             section_count=section_count)
        self._save()

    def get_next_page_to_visit(self) -> str | None:
        """The unvisited page of lowest depth (earliest found among equals), or None when none is left."""
        return self._require_sitemap().next_page_to_visit()

    def is_sitemap_exploration_complete(self) -> bool:
        """Whether every page found so far has been visited (or skipped)."""
        return self._require_sitemap().is_complete()

    def format_site_exploration_summary(self) -> str:
        """The exploration so far as prompt text."""
        return self._require_sitemap().summary()

    # -- prompt ------------------------------------------------------------------------------

    def current_url(self) -> str | None:
        """The page the agent is on: the last navigation, else the last step's URL, else the run's start URL."""
        if self.working.navigation:
            return self.working.navigation[-1].url
        entries = self.short_term.entries
        return next((entry.url for entry in reversed(entries) if entry.url), self._start_url)

    def context_parts(self, domain: str | None = None) -> list[ContextPart]:
        """The working-memory parts of a context, with their priorities (the task part is critical)."""
        return working_parts(self, domain)

    def format_for_prompt(self, domain: str | None = None, budget_tokens: int | None = None) -> str:
        """The working memory alone as prompt text, within ``budget_tokens`` (default: the window budget)."""
        budget = self.context_window_budget if budget_tokens is None else budget_tokens
        return str(ContextPack.assemble(self.context_parts(domain), budget, counter=self.counter))

    # -- helpers -----------------------------------------------------------------------------

    def _require_sitemap(self) -> SitemapGraph:
        if self.sitemap is None:
            raise InvalidInput("no sitemap: call init_sitemap_graph(homepage_url) first")
        return self.sitemap

    def _redact(self, text: str) -> str:
        """``text`` as it may be kept: refused when the store could not hold it, with secrets replaced."""
        return self._scope.secrets.redact(storable(text)) or ""

    def _redact_url(self, url: object) -> Any:
        return self._redact(url) if isinstance(url, str) else url

    def page_key(self, url: str) -> str:
        """The key a page is kept under: normalised, with registered secrets replaced."""
        return page_key(self._redact_url(url))

    def _redact_tree(self, value: Any) -> Any:
        return redact_tree(value, self._redact)


def _check_cycle_details(*, url: object, title: object, error: object, duration_ms: object, retry_count: object,
                         tags: object) -> None:
    for name, text in (("url", url), ("title", title), ("error", error)):
        if text is not None and not isinstance(text, str):
            raise InvalidInput(f"{name}: expected a string, got {type(text).__name__}")
    if isinstance(duration_ms, bool) or not isinstance(duration_ms, int | float) or duration_ms < 0:
        raise InvalidInput(f"duration_ms: expected a non-negative number, got {duration_ms!r}")
    if isinstance(retry_count, bool) or not isinstance(retry_count, int) or retry_count < 0:
        raise InvalidInput(f"retry_count: expected a non-negative integer, got {retry_count!r}")
    if isinstance(tags, str | bytes) or not all(isinstance(tag, str) for tag in tags):  # type: ignore[union-attr]
        raise InvalidInput("tags: expected a list of strings")


def _check_json(key: object, value: Any) -> None:
    if not isinstance(key, str) or not key:
        raise InvalidInput(f"key: expected a non-empty string, got {key!r}")
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{key}: the value must be JSON-serialisable, got {type(value).__name__}") from None


def _enum_value(kind: type[MemoryPriority] | type[ExecutionOutcome], value: object, field_name: str) -> str:
    try:
        return kind(value).value
    except ValueError:
        allowed = ", ".join(member.value for member in kind)
        raise InvalidInput(f"{field_name}: {value!r} is not one of {allowed}") from None
