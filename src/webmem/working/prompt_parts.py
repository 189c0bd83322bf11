"""The working memory's parts of a run's context: task, loop warnings, user context, recent actions,
extractions (within their share of the budget), patterns, navigation path, scratch pad, exploration."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..core.pack import ContextPart, LineCut
from ..core.text import clean_for_prompt
from .compression import Compressor, compress_with, head_tail

if TYPE_CHECKING:
    from .memory import AgentMemory

HISTORY_IN_CONTEXT = 10
NAVIGATION_IN_CONTEXT = 10
EXTRACTION_SHARE_BY_MODE = {"scrape": 0.40, "research": 0.40}

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


#: Under a tight budget the oldest actions go first: the most recent cycle is the last thing that may go.
LATEST_ACTIONS_FIRST_TO_STAY = LineCut(
    head=0, least=1, latest=True, units=lambda body: re.split(r"\n(?=\d+\. )", body),  # an action and its lines
    omitted=lambda n: f"({n} earlier action{'s' if n != 1 else ''} left out)",
)


def working_parts(memory: AgentMemory, domain: str | None = None) -> list[ContextPart]:
    """The working-memory parts of a context, with their priorities (the task part is critical)."""
    relevant = memory.context_store.get_relevant_context(memory.working.goal or "")
    user = {key: value for key, value in memory.context_store.get_all().items()
            if memory.context_store.source_of(key) == "user"}
    shown = {**relevant, **user}
    return [
        ContextPart("task", "TASK", PRIORITY_TASK, _task_text(memory), critical=True),
        ContextPart("loop_warnings", "LOOP WARNINGS", PRIORITY_LOOP_WARNINGS,
                    "\n".join(memory.short_term.get_loop_warnings())),
        ContextPart("user_context", "CONTEXT", PRIORITY_USER_CONTEXT, _context_text(memory, shown)),
        ContextPart("recent_history", "RECENT ACTIONS", PRIORITY_HISTORY,
                    "\n".join(f"{n}. {e.format_for_prompt()}" for n, e in
                              enumerate(memory.short_term.get_recent(HISTORY_IN_CONTEXT), start=1)),
                    by_lines=LATEST_ACTIONS_FIRST_TO_STAY),
        ContextPart("extractions", "EXTRACTED DATA", PRIORITY_EXTRACTIONS,
                    fit=lambda available: _extractions_text(memory, available)),
        ContextPart("patterns", "KNOWN PATTERNS", PRIORITY_PATTERNS,
                    memory.patterns.format_for_prompt(domain) if domain else ""),
        ContextPart("navigation_path", "NAVIGATION PATH", PRIORITY_NAVIGATION, _navigation_text(memory)),
        ContextPart("scratch_pad", "SCRATCH PAD", PRIORITY_SCRATCH, "\n".join(
            f"- {clean_for_prompt(key, 80)}: {clean_for_prompt(json.dumps(value, ensure_ascii=False), 300)}"
            for key, value in memory.working.scratch.items())),
        ContextPart("sitemap", "SITE EXPLORATION", PRIORITY_SITEMAP,
                    memory.sitemap.summary() if memory.sitemap else ""),
    ]


def _task_text(memory: AgentMemory) -> str:
    if not memory.working.goal:
        return ""
    lines = [f"Goal: {clean_for_prompt(memory.working.goal, 2000)}",
             f"Mode: {memory.operation_mode}, cycle {memory.working.cycle_count}"]
    page = memory.working.navigation[-1] if memory.working.navigation else None
    url = memory.current_url()
    if url:
        title = f" ({clean_for_prompt(page.title, 200)})" if page and page.title else ""
        lines.append(f"Current page: {clean_for_prompt(url, 500)}{title}")
        if page and page.visible_elements_summary:
            lines.append(f"Visible: {clean_for_prompt(page.visible_elements_summary, 500)}")
    return "\n".join(lines)

def _context_text(memory: AgentMemory, shown: Mapping[str, Any]) -> str:
    lines = []
    for key, value in shown.items():
        source = memory.context_store.source_of(key)
        origin = "given by the user" if source == "user" else f"inferred from {clean_for_prompt(source or '', 100)}"
        lines.append(f"- {clean_for_prompt(key, 80)}: "
                     f"{clean_for_prompt(json.dumps(value, ensure_ascii=False), 300)} ({origin})")
    return "\n".join(lines)

def _navigation_text(memory: AgentMemory) -> str:
    recent = memory.working.navigation[-NAVIGATION_IN_CONTEXT:]
    return "\n".join(
        f"{number}. {clean_for_prompt(item.url, 300)}"
        + (f" - {clean_for_prompt(item.title, 120)}" if item.title else "")
        + (f": {clean_for_prompt(item.visible_elements_summary, 200)}" if item.visible_elements_summary else "")
        for number, item in enumerate(recent, start=1)
    )

def _extractions_text(memory: AgentMemory, available_tokens: int) -> str:
    """Extractions within their share of what remains: 20% (40% when scraping or researching),
    at most ``max_extraction_tokens``; big ones are compressed (keeping URLs, selectors and
    form fields) or cut head-and-tail to the per-extraction cap.
    """
    items = memory.context_store.extractions()
    if not items:
        return ""
    share = EXTRACTION_SHARE_BY_MODE.get(memory.operation_mode, memory.max_extraction_budget_percent)
    allowance = min(int(available_tokens * share), memory.max_extraction_tokens)
    if allowance <= 0:
        return ""
    per_item = min(memory.max_single_extraction_chars, allowance * 4 // len(items))
    while per_item >= 40:
        body = "\n\n".join(f"[{clean_for_prompt(key, 80)}]\n{_fit_extraction(data, per_item, memory.compressor)}"
                           for key, data in items.items())
        if memory.counter.count(body) <= allowance:
            return body
        per_item = per_item * 3 // 4
    return ""


def _fit_extraction(data: Any, max_chars: int, compressor: Compressor | Callable[[str, int], str] | None) -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    if len(text) <= max_chars:
        return text
    if isinstance(data, str):  # results handed over as JSON text are results all the same
        data = _parsed(data)
    if _linked_records(data):
        return _fit_records(data, max_chars)
    if isinstance(data, dict) and any(_linked_records(value) for value in data.values()):
        return _fit_page(data, max_chars, compressor)
    return _fitted(text, max_chars, compressor)


def _parsed(text: str) -> Any:
    if not text.lstrip().startswith(("[", "{")):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


_URL_KEYS = ("url", "href", "link")
_SELECTOR_KEYS = ("selector", "css_selector", "xpath")
_LABEL_KEYS = ("title", "name", "label", "text", "link_text")
#: How short a result's label may be cut, step by step, before whole results are left out.
_LABEL_CUTS = (120, 80, 60, 40)


def _linked_records(data: Any) -> bool:
    """A list of results or elements, most of them with a URL or a selector (search results, a page's
    links or buttons): kept as label-and-URL (or label-and-selector) pairs."""
    if not isinstance(data, list) or not data or not all(isinstance(item, dict) for item in data):
        return False
    linked = sum(1 for item in data if _reach(item) is not None)
    return linked * 2 >= len(data)


def _reach(item: dict[str, Any]) -> str | None:
    """How a result is reached: ``<url>``, or ``[selector]`` for an element."""
    url = next((item[key] for key in _URL_KEYS if isinstance(item.get(key), str)), None)
    if url is not None:
        return f"<{url}>"
    selector = next((item[key] for key in _SELECTOR_KEYS if isinstance(item.get(key), str)), None)
    return f"[{selector}]" if selector is not None else None


def _fit_page(data: dict[str, Any], max_chars: int,
              compressor: Compressor | Callable[[str, int], str] | None) -> str:
    """A page state whose lists of links or buttons keep each label with its URL or selector: the other
    fields in a third of the room at most, each list in a share of the rest as large as its own."""
    lists = {key: value for key, value in data.items() if _linked_records(value)}
    others = {key: value for key, value in data.items() if key not in lists}
    head = json.dumps(others, ensure_ascii=False) if others else ""
    if len(head) > max_chars // 3:
        head = _fitted(head, max_chars // 3, compressor)
    sizes = {key: len(json.dumps(value, ensure_ascii=False)) for key, value in lists.items()}
    room = max_chars - len(head) - sum(len(key) + 3 for key in lists)
    parts = [head] if head else []
    parts += [f"{key}:\n" + _fit_records(value, max(40, room * sizes[key] // sum(sizes.values())))
              for key, value in lists.items()]
    return "\n".join(parts)


def _fit_records(records: list[dict[str, Any]], max_chars: int) -> str:
    """Each result as ``- label <url>`` (an element as ``- label [selector]``) and its other fields. What gives
    way first: the other fields (snippets), then the end of long labels, then whole results from the end of
    the list; a URL or selector is never cut and never loses its label."""
    def line(item: dict[str, Any], *, details: bool, label_chars: int = 2000) -> str:
        reach = _reach(item)
        shown = (*_LABEL_KEYS, *(_URL_KEYS if reach and reach[0] == "<" else _SELECTOR_KEYS))
        label = clean_for_prompt(next((str(item[key]) for key in _LABEL_KEYS if item.get(key)), ""), label_chars)
        rest = [f"{key}: {value}" for key, value in item.items()
                if key not in shown and value not in (None, "")] if details else []
        return clean_for_prompt(" ".join(filter(None, ["-", label, reach, "— " + "; ".join(rest) if rest else ""])),
                                4000)

    attempts = [{"details": True}, {"details": False}, *({"details": False, "label_chars": cut} for cut in _LABEL_CUTS)]
    for options in attempts:
        lines = [line(item, **options) for item in records]
        if len("\n".join(lines)) <= max_chars:
            return "\n".join(lines)
    kept: list[str] = []
    for number, text in enumerate(lines):
        left = len(records) - number
        if len("\n".join([*kept, text, f"({left - 1} more results left out)"])) > max_chars:
            return "\n".join([*kept, f"({left} more results left out)"])
        kept.append(text)
    return "\n".join(kept)


@lru_cache(maxsize=256)
def _fitted(text: str, max_chars: int, compressor: Compressor | Callable[[str, int], str] | None) -> str:
    """Compressed (or cut head-and-tail) extraction; cached, since turns rebuild the same ones."""
    result = compress_with(compressor, text, max_chars=max_chars)
    return result.text if result.within_budget else head_tail(text, max_chars)
