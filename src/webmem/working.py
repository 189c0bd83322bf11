"""In-run working memory: one run's history, goal, navigation, scratch pad, page maps, context,
extractions and site exploration, kept in memory for speed and written to the store as the run
goes, so a crashed or resumed run can be inspected and continued.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import select, update

from .clock import utcnow
from .compression import Compressor, compress_with, head_tail
from .context import ContextPack, ContextPart, check_budget
from .context_store import ContextStore
from .errors import InvalidInput
from .patterns import Pattern, PatternStore
from .redaction import names_password_field
from .scope import Scope
from .short_term import (
    Action,
    ExecutionOutcome,
    MemoryPriority,
    ShortTermMemory,
    WorkingEntry,
    redact_tree,
)
from .sitemap import SitemapGraph, SitemapLimits, normalize_url
from .store.schema import working_entries, working_state
from .store.statements import upsert
from .text import clean_for_prompt
from .token_budget import TokenCounter

OPERATION_MODES = ("auto", "navigate", "execute", "scrape", "research")
EXTRACTION_SHARE = 0.20
EXTRACTION_SHARE_BY_MODE = {"scrape": 0.40, "research": 0.40}
MAX_EXTRACTION_TOKENS = 4000
MAX_SINGLE_EXTRACTION_CHARS = 8000
CONTEXT_WINDOW_BUDGET = 64_000
HISTORY_IN_CONTEXT = 10
NAVIGATION_IN_CONTEXT = 10

# Priorities of the working-memory parts beside the persistent ones (last error 60, session
# history 50, site tips 45, episode advice 42, reference trajectory 40, app knowledge 30,
# known selectors 25). The task part is critical: never dropped, cut if it must be.
PRIORITY_TASK = 100
PRIORITY_LOOP_WARNINGS = 80
PRIORITY_USER_CONTEXT = 70
PRIORITY_HISTORY = 55
PRIORITY_EXTRACTIONS = 35
PRIORITY_PATTERNS = 28
PRIORITY_NAVIGATION = 20
PRIORITY_SCRATCH = 15
PRIORITY_SITEMAP = 12


@dataclass
class StateSnapshot:
    """Where the browser was: page, what was visible, form state and scroll position."""

    url: str
    title: str = ""
    visible_elements_summary: str = ""
    form_state: dict[str, Any] = field(default_factory=dict)
    scroll_position: tuple[int, int] = (0, 0)
    snapshot_id: str = ""
    timestamp: float = field(default_factory=time.time)
    associated_entry_id: int | None = None


@dataclass
class WorkingMemory:
    """The run's current goal, cycle count, navigation path, scratch pad and page maps."""

    goal: str | None = None
    cycle_count: int = 0
    navigation: list[StateSnapshot] = field(default_factory=list)
    scratch: dict[str, Any] = field(default_factory=dict)
    page_maps: dict[str, dict[str, Any]] = field(default_factory=dict)
    page_key: Callable[[str], str] = field(default=lambda url: _page_key(url), repr=False, compare=False)

    def get_navigation_history(self) -> list[StateSnapshot]:
        return list(self.navigation)

    def get_scratch(self, key: str, default: Any = None) -> Any:
        return self.scratch.get(key, default)

    def has_page_map(self, url: str) -> bool:
        return self.page_key(url) in self.page_maps

    def get_page_map(self, url: str) -> Any:
        item = self.page_maps.get(self.page_key(url))
        return item["map"] if item else None

    def get_page_summary(self, url: str) -> str | None:
        item = self.page_maps.get(self.page_key(url))
        return item["summary"] if item else None

    def get_all_page_maps(self) -> dict[str, Any]:
        return {url: item["map"] for url, item in self.page_maps.items()}


class AgentMemory:
    """The working memory of one run. Mutate it through its methods: they also persist."""

    def __init__(
        self,
        scope: Scope,
        run_id: str,
        *,
        patterns: PatternStore,
        counter: TokenCounter | None = None,
        max_entries: int = 50,
        context_window_budget: int = CONTEXT_WINDOW_BUDGET,
        max_extraction_budget_percent: float = EXTRACTION_SHARE,
        max_extraction_tokens: int = MAX_EXTRACTION_TOKENS,
        max_single_extraction_chars: int = MAX_SINGLE_EXTRACTION_CHARS,
        compressor: Compressor | Callable[[str, int], str] | None = None,
        clock: Callable[[], float] = time.time,
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
        self.short_term = ShortTermMemory(max_entries, redact=self._redact)
        self.working = WorkingMemory(page_key=self._page_key)
        self.context_store = ContextStore(redact=scope.secrets.redact, clock=clock)
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
            page_key=self._page_key,
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
        if not isinstance(goal, str) or not goal.strip():
            raise InvalidInput("goal: expected a non-empty string")
        self.working.goal = self._redact(goal.strip()[:2000])
        self.working.cycle_count = 0
        if user_context is not None:
            self.context_store.set_user_context(user_context)
        self._save()

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
            entry_id=self._next_entry, tool=call.tool, parameters=self._redact_tree(dict(call.parameters)),
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
        self._visited.add(self._page_key(url))
        self._save()

    def has_visited_url(self, url: str) -> bool:
        return self._page_key(url) in self._visited

    def set_operation_mode(self, mode: str) -> None:
        if mode not in OPERATION_MODES:
            raise InvalidInput(f"mode: {mode!r} is not one of {', '.join(OPERATION_MODES)}")
        self.operation_mode = mode
        self._save()

    def get_task_summary(self) -> dict[str, Any]:
        entries = self.short_term.entries
        return {
            "goal": self.working.goal,
            "mode": self.operation_mode,
            "cycles": self.working.cycle_count,
            "successes": sum(1 for entry in entries if entry.outcome == "success"),
            "failures": sum(1 for entry in entries if entry.outcome == "failure"),
            "pages_visited": len(self._visited),
            "current_url": self.current_url(),
            "loop_warnings": self.short_term.get_loop_warnings(),
        }

    def clear_task(self) -> None:
        """Forget the task's in-run state (the stored history stays inspectable)."""
        evicted = self.short_term.entries
        self.short_term.clear()
        self.working = WorkingMemory(page_key=self._page_key)
        self.context_store = ContextStore(redact=self._scope.secrets.redact, clock=self._clock)
        self._visited.clear()
        self.sitemap = None
        self._save(evicted=evicted)

    # -- working memory ----------------------------------------------------------------------

    def record_navigation(self, snapshot: StateSnapshot | Mapping[str, Any]) -> StateSnapshot:
        state = snapshot if isinstance(snapshot, StateSnapshot) else _snapshot(snapshot)
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
        _check_json(key, value)
        self.working.scratch[key] = self._redact_tree(value)
        self._save()

    def store_page_map(self, url: str, page_map: Any, summary: str | None = None) -> None:
        _check_json(url, page_map)
        self.working.page_maps[self._page_key(url)] = {"map": self._redact_tree(page_map),
                                                  "summary": self._redact(summary or "")}
        self._save()

    def add_inferred_context(self, key: str, value: Any, source: str) -> None:
        self.context_store.add_inferred_context(key, value, source)
        self._save()

    def add_extraction(self, key: str, data: Any) -> None:
        self.context_store.cache_extraction(key, data)
        self._save()

    # -- long-term patterns ------------------------------------------------------------------

    def learn_pattern(self, domain: str, description: str, pattern_type: str,
                      steps: list[Mapping[str, Any]]) -> Pattern:
        return self.patterns.learn_pattern(domain, description, pattern_type, steps, run_id=self.run_id)

    def get_patterns_for_domain(self, domain: str) -> list[Pattern]:
        return self.patterns.get_patterns_for_domain(domain)

    # -- sitemap -----------------------------------------------------------------------------

    def init_sitemap_graph(self, homepage_url: str, limits: SitemapLimits | None = None) -> SitemapGraph:
        self.sitemap = SitemapGraph(self._redact_url(homepage_url), limits=limits or SitemapLimits())
        self._save()
        return self.sitemap

    def add_sitemap_links(self, parent_url: str, links: list[Mapping[str, str]], link_type: str) -> list[str]:
        safe = [self._redact_tree(dict(link)) if isinstance(link, Mapping) else link for link in links]
        added = self._require_sitemap().add_links(self._redact_url(parent_url), safe, link_type=link_type)
        self._save()
        return added

    def update_sitemap_visited(self, url: str, *, title: str, summary: str = "", section_count: int = 0) -> None:
        self._require_sitemap().mark_visited(self._redact_url(url), title=self._redact(title) if isinstance(title, str) else title,
                                             summary=self._redact(summary) if isinstance(summary, str) else summary,
                                             section_count=section_count)
        self._save()

    def get_next_page_to_visit(self) -> str | None:
        return self._require_sitemap().next_page_to_visit()

    def is_sitemap_exploration_complete(self) -> bool:
        return self._require_sitemap().is_complete()

    def format_site_exploration_summary(self) -> str:
        return self._require_sitemap().summary()

    # -- prompt ------------------------------------------------------------------------------

    def current_url(self) -> str | None:
        if self.working.navigation:
            return self.working.navigation[-1].url
        entries = self.short_term.entries
        return next((entry.url for entry in reversed(entries) if entry.url), None)

    def context_parts(self, domain: str | None = None) -> list[ContextPart]:
        """The working-memory parts of a context, with their priorities (the task part is critical)."""
        relevant = self.context_store.get_relevant_context(self.working.goal or "")
        user = {key: value for key, value in self.context_store.get_all().items()
                if self.context_store.source_of(key) == "user"}
        shown = {**relevant, **user}
        return [
            ContextPart("task", "TASK", PRIORITY_TASK, self._task_text(), critical=True),
            ContextPart("loop_warnings", "LOOP WARNINGS", PRIORITY_LOOP_WARNINGS,
                        "\n".join(self.short_term.get_loop_warnings())),
            ContextPart("user_context", "CONTEXT", PRIORITY_USER_CONTEXT, self._context_text(shown)),
            ContextPart("recent_history", "RECENT ACTIONS", PRIORITY_HISTORY,
                        "\n".join(f"{n}. {e.format_for_prompt()}" for n, e in
                                  enumerate(self.short_term.get_recent(HISTORY_IN_CONTEXT), start=1))),
            ContextPart("extractions", "EXTRACTED DATA", PRIORITY_EXTRACTIONS, fit=self._extractions_text),
            ContextPart("patterns", "KNOWN PATTERNS", PRIORITY_PATTERNS,
                        self.patterns.format_for_brain(domain) if domain else ""),
            ContextPart("navigation_path", "NAVIGATION PATH", PRIORITY_NAVIGATION, self._navigation_text()),
            ContextPart("scratch_pad", "SCRATCH PAD", PRIORITY_SCRATCH, "\n".join(
                f"- {clean_for_prompt(key, 80)}: {clean_for_prompt(json.dumps(value, ensure_ascii=False), 300)}"
                for key, value in self.working.scratch.items())),
            ContextPart("sitemap", "SITE EXPLORATION", PRIORITY_SITEMAP, self.sitemap.summary() if self.sitemap else ""),
        ]

    def format_for_prompt(self, domain: str | None = None, budget_tokens: int | None = None) -> str:
        """The working memory alone as prompt text, within ``budget_tokens`` (default: the window budget)."""
        budget = self.context_window_budget if budget_tokens is None else budget_tokens
        return str(ContextPack.assemble(self.context_parts(domain), budget, counter=self.counter))

    def _task_text(self) -> str:
        if not self.working.goal:
            return ""
        lines = [f"Goal: {clean_for_prompt(self.working.goal, 2000)}",
                 f"Mode: {self.operation_mode}, cycle {self.working.cycle_count}"]
        page = self.working.navigation[-1] if self.working.navigation else None
        url = self.current_url()
        if url:
            title = f" ({clean_for_prompt(page.title, 200)})" if page and page.title else ""
            lines.append(f"Current page: {clean_for_prompt(url, 500)}{title}")
            if page and page.visible_elements_summary:
                lines.append(f"Visible: {clean_for_prompt(page.visible_elements_summary, 500)}")
        return "\n".join(lines)

    def _context_text(self, shown: Mapping[str, Any]) -> str:
        lines = []
        for key, value in shown.items():
            source = self.context_store.source_of(key)
            origin = "given by the user" if source == "user" else f"inferred from {clean_for_prompt(source or '', 100)}"
            lines.append(f"- {clean_for_prompt(key, 80)}: "
                         f"{clean_for_prompt(json.dumps(value, ensure_ascii=False), 300)} ({origin})")
        return "\n".join(lines)

    def _navigation_text(self) -> str:
        recent = self.working.navigation[-NAVIGATION_IN_CONTEXT:]
        return "\n".join(
            f"{number}. {clean_for_prompt(item.url, 300)}"
            + (f" - {clean_for_prompt(item.title, 120)}" if item.title else "")
            + (f": {clean_for_prompt(item.visible_elements_summary, 200)}" if item.visible_elements_summary else "")
            for number, item in enumerate(recent, start=1)
        )

    def _extractions_text(self, available_tokens: int) -> str:
        """Extractions within their share of what remains: 20% (40% when scraping or researching),
        at most ``max_extraction_tokens``; big ones are compressed (keeping URLs, selectors and
        form fields) or cut head-and-tail to the per-extraction cap.
        """
        items = self.context_store.extractions()
        if not items:
            return ""
        share = EXTRACTION_SHARE_BY_MODE.get(self.operation_mode, self.max_extraction_budget_percent)
        allowance = min(int(available_tokens * share), self.max_extraction_tokens)
        if allowance <= 0:
            return ""
        per_item = min(self.max_single_extraction_chars, allowance * 4 // len(items))
        while per_item >= 40:
            body = "\n\n".join(f"[{clean_for_prompt(key, 80)}]\n{_fit_extraction(data, per_item, self.compressor)}"
                               for key, data in items.items())
            if self.counter.count(body) <= allowance:
                return body
            per_item = per_item * 3 // 4
        return ""

    # -- helpers -----------------------------------------------------------------------------

    def _require_sitemap(self) -> SitemapGraph:
        if self.sitemap is None:
            raise InvalidInput("no sitemap: call init_sitemap_graph(homepage_url) first")
        return self.sitemap

    def _redact(self, text: str) -> str:
        return self._scope.secrets.redact(text) or ""

    def _redact_url(self, url: object) -> Any:
        return self._redact(url) if isinstance(url, str) else url

    def _page_key(self, url: str) -> str:
        """The key a page is kept under: normalised, with registered secrets replaced."""
        return _page_key(self._redact_url(url))

    def _redact_tree(self, value: Any) -> Any:
        return redact_tree(value, self._redact)


def _fit_extraction(data: Any, max_chars: int, compressor: Compressor | Callable[[str, int], str] | None) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    if len(text) <= max_chars:
        return text
    return _fitted(text, max_chars, compressor)


@lru_cache(maxsize=256)
def _fitted(text: str, max_chars: int, compressor: Compressor | Callable[[str, int], str] | None) -> str:
    """Compressed (or cut head-and-tail) extraction; cached, since turns rebuild the same ones."""
    result = compress_with(compressor, text, max_chars=max_chars)
    return result.text if result.within_budget else head_tail(text, max_chars)


def _page_key(url: str) -> str:
    if not isinstance(url, str) or not url.strip():
        raise InvalidInput(f"url: expected a URL string, got {url!r}")
    return normalize_url(url.strip()) or url.strip()


def _snapshot(data: Mapping[str, Any]) -> StateSnapshot:
    try:
        snapshot = StateSnapshot(**dict(data))
    except TypeError as exc:
        raise InvalidInput(f"snapshot: {exc}") from None
    if not isinstance(snapshot.url, str) or not snapshot.url:
        raise InvalidInput("snapshot.url: expected a URL string")
    snapshot.scroll_position = tuple(snapshot.scroll_position)  # type: ignore[assignment]
    return snapshot


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
