"""In-run working memory (``run.working``): the unified interface, working state, redaction,
persistence as the run goes, the sitemap, budget-aware formatting, and its parts in ``run.context()``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rows
from sqlalchemy import text

import webmem
import webmem.context as run_module
from webmem import ContextPack, InvalidInput, MemoryDisabled
from webmem.core.pack import SEPARATOR, TRUNCATION_MARKER
from webmem.core.tokens import TokenCounter
from webmem.working.compression import DEFAULT_MARKER
from webmem.working.memory import MAX_EXTRACTION_TOKENS, MAX_SINGLE_EXTRACTION_CHARS, AgentMemory, StateSnapshot
from webmem.working.prompt_parts import (
    HISTORY_IN_CONTEXT,
    PRIORITY_EXTRACTIONS,
    PRIORITY_HISTORY,
    PRIORITY_LOOP_WARNINGS,
    PRIORITY_NAVIGATION,
    PRIORITY_PATTERNS,
    PRIORITY_SCRATCH,
    PRIORITY_SITEMAP,
    PRIORITY_TASK,
    PRIORITY_USER_CONTEXT,
)
from webmem.working.short_term import ExecutionOutcome, MemoryPriority, action_signature
from webmem.working.sitemap import SitemapLimits

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
SEARCH = "https://www.example-shop.com/search"
CART = "https://www.example-shop.com/cart"
SECRET = "Tr0ub4dor-horse-42"
CUT_MARKER = re.compile(re.escape(DEFAULT_MARKER.strip()).replace(re.escape("{cut}"), r"\d+"))  # compression's
STATUSES = {"included", "truncated", "dropped", "empty"}

WORKING_PRIORITIES = {
    "task": 100, "loop_warnings": 80, "user_context": 70, "recent_history": 55, "extractions": 35,
    "patterns": 28, "navigation_path": 20, "scratch_pad": 15, "sitemap": 12,
}
PERSISTENT_PRIORITIES = {  # the foundation's parts, with the priorities webmem.run gives them
    "last_error": run_module.PRIORITY_LAST_ERROR, "replay_handover": run_module.PRIORITY_HANDOVER,
    "session_history": run_module.PRIORITY_SESSIONS,
    "site_tips": run_module.PRIORITY_SITE_TIPS, "episode_advice": run_module.PRIORITY_EPISODE_ADVICE,
    "reference_trajectory": run_module.PRIORITY_REFERENCE, "app_knowledge": run_module.PRIORITY_KNOWLEDGE,
    "known_selectors": run_module.PRIORITY_SELECTORS,
}


def words(text: str) -> int:
    return len(text.split())


class Clock:
    """A clock the test sets by hand."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def run(mem: webmem.Memory) -> webmem.Run:
    return mem.start_run(goal="search for smart watch", start_url=SHOP)


@pytest.fixture
def local_run(tmp_path: Path) -> Iterator[webmem.Run]:
    """A run on a SQLite memory of its own, for the tests of formatting (one backend is enough there)."""
    memory = webmem.Memory.open(tmp_path / "local")
    yield memory.start_run(goal="search for smart watch", start_url=SHOP)
    memory.close()


@pytest.fixture
def wmem(tmp_path: Path) -> Iterator[webmem.Memory]:
    """A memory that counts tokens as words (an exact tokenizer hook)."""
    memory = webmem.Memory.open(tmp_path / "words", tokenizer=words)
    yield memory
    memory.close()


def click(selector: str) -> dict[str, Any]:
    return {"tool": "click", "parameters": {"selector": selector}}


def stored_entries(mem: webmem.Memory, memory_dir: Path, run_id: str) -> list[tuple[int, bool, dict[str, Any]]]:
    """The run's rows of ``working_entries`` (entry id, evicted, entry), read through the store; on SQLite
    also read with sqlite3 from the file itself, which must say the same."""
    with mem.store.read() as conn:
        rows = conn.execute(
            text("SELECT entry_id, evicted, entry FROM working_entries WHERE run_id = :run ORDER BY entry_id"),
            {"run": run_id},
        ).all()
    found = [(row[0], bool(row[1]), row[2] if isinstance(row[2], dict) else json.loads(row[2])) for row in rows]
    database = memory_dir / "memory.db"
    if database.exists():
        with sqlite3.connect(database) as raw:
            on_disk = raw.execute("SELECT entry_id, evicted, entry FROM working_entries WHERE run_id = ? "
                                  "ORDER BY entry_id", (run_id,)).fetchall()
        assert [(row[0], bool(row[1]), json.loads(row[2])) for row in on_disk] == found
    return found


def links_page(count: int, *, prefix: str = "p") -> str:
    """A realistic product listing: navigation, product cards with links, filler text, a form."""
    cards = "\n".join(
        f'<li class="card"><a href="https://www.example-shop.com/{prefix}/{number}-smart-watch">'
        f"Smart watch model {number}</a><span class=\"price\">${number}.99</span>"
        f"<p>Water resistant, heart rate sensor, {number % 7 + 2} day battery life. In stock.</p></li>"
        for number in range(count)
    )
    filler = "<p>" + "Free shipping on orders over $50. Returns accepted within 30 days. " * 20 + "</p>"
    return (
        "<!doctype html><html><head><title>Smart watches</title></head><body>"
        '<nav><a href="/">Home</a> <a href="/cart">Cart</a> <a href="/account/login">Sign in</a></nav>'
        f'<h1>Smart watches</h1><ul id="results">{cards}</ul>{filler}'
        '<form action="/search" id="search-form"><label for="q">Search</label>'
        '<input id="q" name="q" type="search"><button id="go">Go</button></form>'
        "</body></html>"
    )


# --- the unified interface ---------------------------------------------------------------------


def test_run_working_is_one_agent_memory_per_handle(run: webmem.Run) -> None:
    working = run.working
    assert isinstance(working, AgentMemory)
    assert run.working is working
    assert working.run_id == run.id
    assert working.short_term.max_entries == 50


def test_working_memory_is_refused_when_memory_is_disabled(tmp_path: Path) -> None:
    disabled = webmem.Memory.open(tmp_path / "off", enabled=False)
    run = disabled.start_run(goal="search", start_url=SHOP)
    with pytest.raises(MemoryDisabled):
        _ = run.working


def test_start_task_sets_the_goal_and_user_context_and_resets_the_cycle_count(run: webmem.Run) -> None:
    working = run.working
    working.start_task("  Find the cheapest smart watch  ", user_context={"currency": "EUR"})
    assert working.working.goal == "Find the cheapest smart watch"
    assert working.context_store.get("currency") == "EUR"
    working.record_cycle("look", "scroll")
    working.record_cycle("look again", "scroll")
    assert working.working.cycle_count == 2
    working.start_task("Find the most expensive smart watch")
    assert working.working.goal == "Find the most expensive smart watch"
    assert working.working.cycle_count == 0
    assert working.context_store.get("currency") == "EUR"  # no new user context: the old one stays


def test_record_cycle_keeps_every_field_of_the_entry(run: webmem.Run) -> None:
    working = run.working
    working.start_task("search for smart watch")
    working.record_navigation({"url": SEARCH, "title": "Search"})
    entry = working.record_cycle(
        "type the query", {"tool": "type", "parameters": {"selector": "#q", "text": "smart watch"}},
        "Typed 'smart watch'", ExecutionOutcome.SUCCESS, MemoryPriority.HIGH,
        title="Search results", duration_ms=120.5, retry_count=1, error=None, tags=["search", "typing", "search"],
    )
    assert entry.entry_id == 1
    assert (entry.tool, entry.parameters) == ("type", {"selector": "#q", "text": "smart watch"})
    assert (entry.thought, entry.observation) == ("type the query", "Typed 'smart watch'")
    assert (entry.outcome, entry.priority) == ("success", "high")
    assert entry.url == SEARCH  # the current page when no url is given
    assert (entry.title, entry.duration_ms, entry.retry_count) == ("Search results", 120.5, 1)
    assert entry.tags == ["search", "typing"]
    assert entry.estimated_tokens == working.counter.count(entry.format_for_prompt()) > 0
    second = working.record_cycle("go", click("#go"), "failed", "failure", "critical", url=CART, error="Timeout")
    assert (second.entry_id, second.url, second.error, second.priority) == (2, CART, "Timeout", "critical")
    assert working.working.cycle_count == 2
    assert working.short_term.get_by_outcome("failure") == [second]


def test_the_document_bug_is_gone_a_repeated_failure_is_detected(run: webmem.Run) -> None:
    working = run.working
    working.start_task("buy a smart watch")
    action = {"tool": "click", "parameters": {"selector": "#buy", "nth": 2}}
    assert not working.is_repeated_failure(action, url=SEARCH)
    entry = working.record_cycle("buy it", action, "Element is not visible", "failure", url=SEARCH)
    # the same action on the same page, with the parameters in another order
    same = {"tool": "click", "parameters": {"nth": 2, "selector": "#buy"}}
    assert working.is_repeated_failure(same, url=SEARCH) is True
    assert working.short_term.has_failed(action_signature(same, SEARCH))
    assert entry.signature == action_signature(same, SEARCH)
    assert working.is_repeated_failure(action, url=CART) is False  # another page
    assert working.is_repeated_failure(click("#buy"), url=SEARCH) is False  # other parameters
    tapped = {"tool": "tap", "parameters": {"nth": 2, "selector": "#buy"}}
    assert working.is_repeated_failure(tapped, url=SEARCH) is False


def test_is_repeated_failure_uses_the_current_page_when_no_url_is_given(run: webmem.Run) -> None:
    working = run.working
    working.record_navigation({"url": SEARCH, "title": "Search"})
    working.record_cycle("buy", click("#buy"), "nothing happened", "failure")
    assert working.is_repeated_failure(click("#buy"))
    working.record_navigation({"url": CART, "title": "Cart"})
    assert not working.is_repeated_failure(click("#buy"))
    assert working.is_repeated_failure(click("#buy"), url=SEARCH)


def test_a_success_is_not_a_failure_and_frequency_and_loops_share_the_signature(run: webmem.Run) -> None:
    working = run.working
    for order in ({"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1, "b": 2}):
        working.record_cycle("again", {"tool": "scroll", "parameters": order}, "ok", url=SEARCH)
    assert not working.is_repeated_failure({"tool": "scroll", "parameters": {"a": 1, "b": 2}}, url=SEARCH)
    assert working.short_term.get_action_frequency({"tool": "scroll", "parameters": {"b": 2, "a": 1}}, SEARCH) == 3
    assert working.short_term.get_action_frequency({"tool": "scroll", "parameters": {"b": 2, "a": 1}}, CART) == 0
    assert len(working.short_term.get_loop_warnings()) == 1
    assert working.get_task_summary()["loop_warnings"] == working.short_term.get_loop_warnings()


def test_a_repeated_failure_of_an_action_carrying_a_secret_is_detected(tmp_path: Path) -> None:
    memory = webmem.Memory.open(tmp_path / "m", secrets={"password": SECRET})
    working = memory.start_run(goal="log in", start_url=SHOP).working
    action = {"tool": "type", "parameters": {"selector": "#password", "text": SECRET}}
    login = f"https://www.example-shop.com/login?next={SECRET}"
    working.record_cycle("type the password", action, "Wrong password", "failure", url=login)
    assert working.is_repeated_failure(action, url=login)
    assert working.short_term.get_action_frequency(action, login) == 1
    assert not working.is_repeated_failure(action, url=SEARCH)
    memory.close()


def test_visited_urls_are_normalised(run: webmem.Run) -> None:
    working = run.working
    assert not working.has_visited_url(SEARCH)
    working.mark_url_visited("https://WWW.example-shop.com/search/#results")
    assert working.has_visited_url(SEARCH)
    assert working.has_visited_url("https://www.example-shop.com/search/")
    assert not working.has_visited_url(CART)
    with pytest.raises(InvalidInput):
        working.mark_url_visited("")


def test_operation_mode(run: webmem.Run) -> None:
    working = run.working
    assert working.operation_mode == "auto"
    for mode in ("navigate", "execute", "scrape", "research", "auto"):
        working.set_operation_mode(mode)
        assert working.operation_mode == mode
    with pytest.raises(InvalidInput):
        working.set_operation_mode("crawl")
    assert working.operation_mode == "auto"


def test_task_summary_counts_cycles_outcomes_and_pages(run: webmem.Run) -> None:
    working = run.working
    working.start_task("collect prices")
    working.set_operation_mode("scrape")
    working.record_navigation({"url": SEARCH})
    working.record_cycle("a", click("#a"), "ok")
    working.record_cycle("b", click("#b"), "no", "failure")
    working.record_cycle("c", click("#c"), "ok")
    working.mark_url_visited(SEARCH)
    working.mark_url_visited(CART)
    summary = working.get_task_summary()
    assert {key: value for key, value in summary.items() if key != "text"} == {
        "goal": "collect prices", "mode": "scrape", "cycles": 3, "successes": 2, "failures": 1,
        "pages_visited": 2, "current_url": SEARCH, "loop_warnings": [], "explored_pages": [],
        "recent_successful_actions": ["click"],
    }


def test_task_summary_shows_the_explored_pages_and_the_recent_successful_actions_as_the_seed_does(
    run: webmem.Run,
) -> None:
    working = run.working
    working.start_task("Extract product data")
    working.init_sitemap_graph("https://www.example-shop.com/")
    working.add_sitemap_links("https://www.example-shop.com/", [
        {"url": "https://www.example-shop.com/products", "text": "Products"},
        {"url": "https://www.example-shop.com/electronics", "text": "Electronics"},
    ], "main_nav")
    working.update_sitemap_visited("https://www.example-shop.com/products", title="Products",
                                   summary="Main product listing with categories")
    working.update_sitemap_visited("https://www.example-shop.com/electronics", title="Electronics",
                                   summary="Electronic products including phones")
    for tool, outcome in (("click", "success"), ("extract_text", "success"), ("type", "failure"),
                          ("scroll", "success"), ("click", "success")):
        working.record_cycle("step", tool, "done", outcome, url=SEARCH)
    text = working.get_task_summary()["text"]
    assert "Goal: Extract product data" in text and "Actions: 5 total (4 successful, 1 failed)" in text
    assert "Explored pages (2 total):\n  - Products: Main product listing with categories\n" \
           "  - Electronics: Electronic products including phones" in text
    assert text.endswith("Recent successful actions: extract_text, scroll, click")


def test_clear_task_clears_short_term_and_working_memory_and_keeps_the_rest(
    run: webmem.Run, mem: webmem.Memory, memory_dir: Path
) -> None:
    """Seed 002's lifecycle: "clear_task(): Clear short-term + working". Working memory is the goal, cycle
    count, navigation path, scratch pad and page maps; the context store, the visited pages and the
    sitemap are not the task's own and stay for the next task."""
    working = run.working
    working.start_task("collect prices", {"currency": "EUR"})
    working.record_cycle("a", click("#a"), "no", "failure", url=SEARCH)
    working.record_cycle("b", click("#b"), "ok", url=SEARCH)
    working.set_scratch("page", 2)
    working.record_navigation({"url": SEARCH, "page_title": "Search"})
    working.store_page_map(SEARCH, {"sections": 2}, "results")
    working.add_extraction("prices", [12, 14])
    working.mark_url_visited(SEARCH)
    working.init_sitemap_graph(SHOP)
    working.clear_task()
    assert working.short_term.entries == [] and not working.is_repeated_failure(click("#a"), url=SEARCH)
    assert working.working.goal is None and working.working.scratch == {} and working.working.cycle_count == 0
    assert working.working.navigation == [] and not working.has_page_map(SEARCH)
    assert working.has_visited_url(SEARCH) and working.sitemap is not None
    assert working.context_store.get("currency") == "EUR" and working.context_store.get_cached_extraction("prices")
    assert [row[:2] for row in stored_entries(mem, memory_dir, run.id)] == [(1, True), (2, True)]
    again = mem.get_run(run.id).working  # as stored
    assert again.short_term.entries == [] and again.working.goal is None and not again.has_page_map(SEARCH)
    assert again.has_visited_url(SEARCH) and again.sitemap is not None and again.context_store.get("currency") == "EUR"
    entry = again.record_cycle("c", click("#c"), "ok")
    assert entry.entry_id == 3  # ids go on after a clear


# --- working memory ----------------------------------------------------------------------------


def test_navigation_snapshots_keep_the_page_state(run: webmem.Run) -> None:
    working = run.working
    first = working.record_navigation(StateSnapshot(
        url=SEARCH, title="Search", visible_elements_summary="A search box and 20 results",
        form_state={"q": "smart watch"}, scroll_position=(0, 500), snapshot_id="snap_001",
    ))
    second = working.record_navigation({
        "url": CART, "title": "Cart", "visible_elements_summary": "2 items", "scroll_position": [0, 120],
        "form_state": {"coupon": "SAVE10"},
    })
    history = working.working.get_navigation_history()
    assert history == [first, second]
    assert (history[0].url, history[0].title, history[0].visible_elements_summary) == (
        SEARCH, "Search", "A search box and 20 results")
    assert history[0].form_state == {"q": "smart watch"} and history[0].scroll_position == (0, 500)
    assert history[1].scroll_position == (0, 120)
    assert working.current_url() == CART
    with pytest.raises(InvalidInput):
        working.record_navigation({"title": "no url"})
    with pytest.raises(InvalidInput):
        working.record_navigation({"url": SEARCH, "unknown_field": 1})


def test_password_like_form_fields_are_stored_as_a_placeholder(run: webmem.Run) -> None:
    snapshot = run.working.record_navigation({
        "url": "https://www.example-shop.com/login",
        "form_state": {"email": "ann@example.com", "password": "pa55word!", "user_passwd": "x1", "pin": "1234",
                       "new-passcode": "9876", "remember": True},
    })
    assert snapshot.form_state == {
        "email": "ann@example.com", "password": "{password}", "user_passwd": "{password}", "pin": "{password}",
        "new-passcode": "{password}", "remember": True,
    }


def test_scratch_pad(run: webmem.Run) -> None:
    working = run.working
    working.set_scratch("extracted_items", [{"name": "Watch 1", "price": 99.5}])
    working.set_scratch("current_page", 1)
    working.set_scratch("current_page", 2)
    assert working.working.get_scratch("current_page") == 2
    assert working.working.get_scratch("extracted_items") == [{"name": "Watch 1", "price": 99.5}]
    assert working.working.get_scratch("missing", default=[]) == []


def test_page_maps_are_kept_per_url_with_their_summary(run: webmem.Run) -> None:
    working = run.working
    page_map = {"regions": [{"name": "header", "bbox": [0, 0, 1280, 80]}, {"name": "results", "items": 20}]}
    working.store_page_map("https://www.example-shop.com/search/#top", page_map, summary="Search page: 20 results")
    maps = working.working
    assert maps.has_page_map(SEARCH)
    assert maps.get_page_map(SEARCH) == page_map
    assert maps.get_page_summary(SEARCH) == "Search page: 20 results"
    assert not maps.has_page_map(CART) and maps.get_page_map(CART) is None and maps.get_page_summary(CART) is None
    working.store_page_map(CART, {"items": 2})
    assert maps.get_all_page_maps() == {SEARCH: page_map, CART: {"items": 2}}
    assert maps.get_page_summary(CART) == ""


def test_registered_secrets_never_reach_the_working_memory_or_the_store(tmp_path: Path) -> None:
    directory = tmp_path / "secret"
    memory = webmem.Memory.open(directory, secrets={"password": SECRET})
    run = memory.start_run(goal="log in to my account", start_url=SHOP)
    working = run.working
    working.start_task(f"log in with {SECRET}", user_context={"login": f"ann / {SECRET}"})
    entry = working.record_cycle(
        f"I will type {SECRET}", {"tool": "type", "parameters": {"selector": "#pw", "text": SECRET,
                                                                 "nested": [{"again": SECRET}]}},
        f"The field now shows {SECRET}", "failure", title=f"Login {SECRET}", error=f"rejected {SECRET}",
    )
    assert SECRET not in json.dumps(entry.to_dict())
    assert entry.parameters == {"selector": "#pw", "text": "{password}", "nested": [{"again": "{password}"}]}
    assert entry.thought == "I will type {password}" and entry.observation == "The field now shows {password}"
    working.set_scratch("credentials", {"password": SECRET, "list": [SECRET]})
    assert working.working.get_scratch("credentials") == {"password": "{password}", "list": ["{password}"]}
    snapshot = working.record_navigation({
        "url": "https://www.example-shop.com/login", "title": f"Hi {SECRET}",
        "visible_elements_summary": f"banner says {SECRET}", "form_state": {"note": f"my {SECRET}"},
    })
    assert SECRET not in json.dumps(snapshot.__dict__)
    working.store_page_map("https://www.example-shop.com/login", {"text": SECRET}, summary=f"login {SECRET}")
    working.add_inferred_context("account", f"ann:{SECRET}", source=f"the page said {SECRET}")
    working.add_extraction("profile", {"password": SECRET})
    working.init_sitemap_graph(SHOP)
    working.update_sitemap_visited(SHOP, title=f"Home {SECRET}", summary=f"welcome {SECRET}")
    prompt = working.format_for_prompt(domain=DOMAIN)
    assert SECRET not in prompt and "{password}" in prompt
    assert SECRET not in str(run.context(budget_tokens=20_000))
    memory.close()
    for path in directory.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path.name


# --- persistence -------------------------------------------------------------------------------


def fill_everything(working: AgentMemory) -> None:
    working.start_task("collect smart watch prices", user_context={"currency": "EUR", "max_items": 40})
    working.set_operation_mode("scrape")
    working.record_cycle("buy", click("#buy"), "Element is covered", "failure", "low", url=SEARCH,
                         error="covered by a modal")
    for number in range(2, 6):
        working.record_cycle(f"routine {number}", click(f"#r{number}"), "ok", priority="low", url=SEARCH)
    working.record_cycle("key finding", {"tool": "extract", "parameters": {"what": "prices"}}, "20 prices",
                         "success", "critical", url=SEARCH, tags=["found"])
    working.record_navigation({"url": SEARCH, "title": "Search", "visible_elements_summary": "20 results",
                               "form_state": {"q": "smart watch", "password": "x"}, "scroll_position": (0, 800)})
    working.set_scratch("page", 3)
    working.store_page_map(SEARCH, {"regions": ["header", "results"]}, summary="results page")
    working.mark_url_visited(SEARCH)
    working.add_inferred_context("pagination_type", "infinite_scroll", source="page analysis")
    working.add_extraction("prices", [{"name": "Watch", "price": "$99"}])
    working.init_sitemap_graph(SHOP, SitemapLimits(max_depth=2, max_pages_per_level=5, max_pages=10))
    working.add_sitemap_links(SHOP, [{"url": "/search", "text": "Search"}, {"url": "/cart", "text": "Cart"}],
                              link_type="main_nav")
    working.update_sitemap_visited(SHOP, title="Home", summary="the shop's homepage", section_count=4)


def same_state(loaded: AgentMemory, original: AgentMemory) -> None:
    assert [entry.to_dict() for entry in loaded.short_term.entries] == [
        entry.to_dict() for entry in original.short_term.entries]
    assert loaded.working == original.working
    assert loaded.operation_mode == original.operation_mode
    assert loaded.context_store.to_dict() == original.context_store.to_dict()
    assert loaded.short_term.failed_signatures() == original.short_term.failed_signatures()
    assert loaded.sitemap is not None and original.sitemap is not None
    assert loaded.sitemap.to_dict() == original.sitemap.to_dict()
    assert loaded.get_task_summary() == original.get_task_summary()


def test_a_new_handle_sees_everything_written_as_the_run_went(mem: webmem.Memory, memory_dir: Path) -> None:
    run = mem.start_run(goal="collect smart watch prices", start_url=SHOP)
    working = run.working
    working.short_term.max_entries = 3  # a small history, so that some entries are evicted
    fill_everything(working)
    assert [entry.entry_id for entry in working.short_term.entries] == [4, 5, 6]

    loaded = mem.get_run(run.id).working
    same_state(loaded, working)
    assert [entry.entry_id for entry in loaded.short_term.entries] == [4, 5, 6]  # evicted ones stay out
    assert loaded.working.goal == "collect smart watch prices" and loaded.working.cycle_count == 6
    assert loaded.working.navigation[0].scroll_position == (0, 800)
    assert loaded.working.navigation[0].form_state == {"q": "smart watch", "password": "{password}"}
    assert loaded.working.get_scratch("page") == 3
    assert loaded.working.get_page_summary(SEARCH) == "results page"
    assert loaded.has_visited_url(SEARCH) and not loaded.has_visited_url(CART)
    assert loaded.operation_mode == "scrape"
    assert loaded.context_store.get("currency") == "EUR"
    assert loaded.context_store.source_of("pagination_type") == "page analysis"
    assert loaded.context_store.get_cached_extraction("prices") == [{"name": "Watch", "price": "$99"}]
    assert loaded.get_next_page_to_visit() == working.get_next_page_to_visit() == SEARCH
    # the failure was evicted from the history but is still known
    assert loaded.is_repeated_failure(click("#buy"), url=SEARCH)
    assert loaded.format_for_prompt(domain=DOMAIN) == working.format_for_prompt(domain=DOMAIN)

    same_state(AgentMemory.load(mem.scope, run.id, patterns=mem.patterns), working)
    rows = stored_entries(mem, memory_dir, run.id)
    assert [row[:2] for row in rows] == [(1, True), (2, True), (3, True), (4, False), (5, False), (6, False)]
    assert rows[0][2]["error"] == "covered by a modal"  # evicted, but still inspectable


def test_a_run_that_never_used_working_memory_loads_empty(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="nothing", start_url=SHOP)
    loaded = AgentMemory.load(mem.scope, run.id, patterns=mem.patterns)
    assert loaded.short_term.entries == [] and loaded.working.goal is None and loaded.sitemap is None
    assert loaded.format_for_prompt() == ""


def test_runs_do_not_share_working_memory(mem: webmem.Memory) -> None:
    first = mem.start_run(goal="one", start_url=SHOP)
    second = mem.start_run(goal="two", start_url=SHOP)
    first.working.start_task("one")
    first.working.record_cycle("a", click("#a"), "no", "failure", url=SEARCH)
    assert second.working.working.goal == "two"  # its own run's goal, never the first's
    assert not second.working.is_repeated_failure(click("#a"), url=SEARCH)
    assert mem.get_run(second.id).working.short_term.entries == []


def test_a_crashed_process_leaves_a_state_that_loads_and_continues(memory_dir: Path) -> None:
    script = textwrap.dedent(f"""
        import os, webmem
        mem = webmem.Memory.open({str(memory_dir)!r})
        run = mem.start_run(goal="collect smart watch prices", start_url={SHOP!r})
        working = run.working
        working.start_task("collect smart watch prices")
        working.record_navigation({{"url": {SEARCH!r}, "title": "Search"}})
        working.record_cycle("buy", {{"tool": "click", "parameters": {{"selector": "#buy"}}}}, "covered", "failure")
        working.record_cycle("scroll", "scroll", "ok")
        working.set_scratch("page", 2)
        print(run.id, flush=True)
        os._exit(1)  # no finish, no close
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    run_id = done.stdout.strip()
    memory = webmem.Memory.open(memory_dir)
    run = memory.get_run(run_id)
    assert run.manifest.status == "running"
    working = run.working
    assert working.working.goal == "collect smart watch prices" and working.working.cycle_count == 2
    assert [entry.tool for entry in working.short_term.entries] == ["click", "scroll"]
    assert working.working.get_scratch("page") == 2
    assert working.is_repeated_failure(click("#buy"))
    entry = working.record_cycle("go on", click("#next"), "ok")
    assert entry.entry_id == 3 and entry.url == SEARCH
    assert [e.entry_id for e in memory.get_run(run_id).working.short_term.entries] == [1, 2, 3]
    memory.close()


# --- sitemap -----------------------------------------------------------------------------------


def test_sitemap_exploration_through_working_memory_is_persisted(mem: webmem.Memory, run: webmem.Run) -> None:
    working = run.working
    with pytest.raises(InvalidInput):
        working.get_next_page_to_visit()
    with pytest.raises(InvalidInput):
        working.add_sitemap_links(SHOP, [], link_type="main_nav")
    working.init_sitemap_graph(SHOP, SitemapLimits(max_depth=1, max_pages_per_level=2, max_pages=10))
    added = working.add_sitemap_links(SHOP, [
        {"url": "https://www.example-shop.com/products/", "text": "Products"},
        {"url": "/products#top", "text": "Products again"},
        {"url": "https://elsewhere.example.org/", "text": "Partner"},
        {"url": "mailto:help@example-shop.com", "text": "Mail"},
        {"url": "/about", "text": "About"},
        {"url": "/contact", "text": "Contact"},  # beyond 2 pages per level
    ], link_type="main_nav")
    assert added == ["https://www.example-shop.com/products", "https://www.example-shop.com/about"]
    assert working.get_next_page_to_visit() == SHOP
    working.update_sitemap_visited(SHOP, title="Home", summary="Homepage", section_count=3)
    assert working.get_next_page_to_visit() == "https://www.example-shop.com/products"
    assert working.add_sitemap_links("https://www.example-shop.com/products", [{"url": "/products/1"}],
                                     link_type="content") == []  # beyond max_depth
    working.update_sitemap_visited("https://www.example-shop.com/products/", title="Products",
                                   summary="Product catalog with 50 items", section_count=5)
    assert not working.is_sitemap_exploration_complete()

    loaded = mem.get_run(run.id).working
    assert loaded.get_next_page_to_visit() == "https://www.example-shop.com/about"
    assert loaded.format_site_exploration_summary() == working.format_site_exploration_summary()
    loaded.update_sitemap_visited("https://www.example-shop.com/about", title="About")
    assert loaded.is_sitemap_exploration_complete() and loaded.get_next_page_to_visit() is None
    summary = mem.get_run(run.id).working.format_site_exploration_summary()
    assert summary.startswith(f"Site exploration of {SHOP} (complete): 3 of 3 discovered pages visited.")
    assert "- Products (https://www.example-shop.com/products, depth 1, main_nav): Product catalog with 50 items " \
           "[5 sections]" in summary
    assert "## SITE EXPLORATION\n" + summary in loaded.format_for_prompt()


# --- formatting for the prompt -----------------------------------------------------------------


def test_format_for_prompt_shows_every_section_in_priority_order(mem: webmem.Memory, run: webmem.Run) -> None:
    working = run.working
    mem.patterns.learn_pattern(DOMAIN, "Search flow", "search", [
        {"tool": "fill", "selector": "#q", "value": "{query}"}, {"tool": "click", "selector": "#go"}])
    working.start_task("search for smart watch", user_context={"currency": "EUR"})
    working.add_inferred_context("search_box", "#q", source="page analysis")  # relevant to the goal
    working.add_inferred_context("footer_color", "blue", source="css")  # not relevant
    working.record_navigation({"url": SEARCH, "title": "Search", "visible_elements_summary": "search box"})
    for number in range(12):
        working.record_cycle(f"step {number}", click("#same" if number >= 9 else f"#s{number}"), "ok")
    working.add_extraction("results", "Smart watch A $99\nSmart watch B $149")
    working.set_scratch("seen", 2)
    working.init_sitemap_graph(SHOP)
    text = working.format_for_prompt(domain=DOMAIN)
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == ["TASK", "LOOP WARNINGS", "CONTEXT", "RECENT ACTIONS", "EXTRACTED DATA", "KNOWN PATTERNS",
                        "NAVIGATION PATH", "SCRATCH PAD", "SITE EXPLORATION"]
    assert text.startswith("## TASK\nGoal: search for smart watch\nMode: auto, cycle 12\n"
                           f"Current page: {SEARCH} (Search)\nVisible: search box")
    assert '- currency: "EUR" (given by the user)' in text
    assert '- search_box: "#q" (inferred from page analysis)' in text
    assert "footer_color" not in text
    history = text.split("## RECENT ACTIONS\n")[1].split("\n\n")[0]
    assert history.count("[Success]") == HISTORY_IN_CONTEXT == 10
    assert "step 1\n" not in history and "step 2" in history and "step 11" in history
    assert "Search flow [search, 0% of 0 uses]: fill #q {query} -> click #go" in text
    assert "[results]\nSmart watch A $99\nSmart watch B $149" in text
    assert "- seen: 2" in text
    assert "KNOWN PATTERNS" not in working.format_for_prompt()  # patterns need a domain


def test_format_for_prompt_respects_the_budget(wmem: webmem.Memory) -> None:
    working = wmem.start_run(goal="collect prices", start_url=SHOP).working
    working.start_task("collect every smart watch price on the site", user_context={"currency": "EUR"})
    for number in range(30):
        working.record_cycle(f"thought number {number} " + "reasoning " * 20, click(f"#s{number}"),
                             "observation " * 30, url=SEARCH)
        working.record_navigation({"url": f"{SHOP}p/{number}", "title": f"Page {number}"})
    working.add_extraction("page", links_page(40))
    working.set_scratch("notes", "word " * 200)
    full = words(working.format_for_prompt())
    assert full > 1500
    for budget in (1, 5, 20, 50, 120, 400, 1000, 1500):
        text = working.format_for_prompt(budget_tokens=budget)
        assert 0 < words(text) <= budget, budget
        assert "Goal:" in text or budget < 3  # the task is there, cut if it must be
    assert working.format_for_prompt(budget_tokens=64_000) == working.format_for_prompt()  # the window budget
    with pytest.raises(InvalidInput):
        working.format_for_prompt(budget_tokens=0)


def test_the_task_part_is_never_dropped_even_with_a_tiny_budget(local_run: webmem.Run) -> None:
    working = local_run.working
    working.start_task("search for smart watch reviews and compare the three best rated models " * 3)
    working.record_navigation({"url": SEARCH, "title": "Search", "visible_elements_summary": "a search box"})
    for number in range(5):
        working.record_cycle(f"step {number}", click(f"#s{number}"), "ok " * 50)
    for budget in (1, 2, 3, 5, 8, 13, 21, 29, 30, 34, 55, 81):
        pack = ContextPack.assemble(working.context_parts(), budget, counter=working.counter)
        task = pack.part("task")
        assert task is not None and task.status == "truncated", (budget, task)
        assert 0 < task.tokens <= budget
        assert pack.tokens <= budget
        assert str(pack) and str(pack) == working.format_for_prompt(budget_tokens=budget)
        assert pack.included[0] == "task"
        assert str(pack).startswith(("## TASK\nGoal: search", "Goal: search"[: len(str(pack))])), budget


def extraction_body(text: str) -> str:
    """The EXTRACTED DATA section's body (it must be the last section of the text)."""
    return text.split("## EXTRACTED DATA\n", 1)[1]


def room_for_extractions(pack: ContextPack) -> int:
    """The tokens left when the extractions' turn came: the budget minus the parts before and their separators."""
    before = []
    for report in pack.report:
        if report.name == "extractions":
            break
        if report.status in ("included", "truncated"):
            before.append(report.tokens)
    return pack.budget_tokens - sum(before) - len(before)  # one separator per earlier part, one before this one


def extractions_memory(run: webmem.Run, count: int = 5) -> AgentMemory:
    working = run.working
    working.start_task("collect the prices of every smart watch")
    for number in range(count):
        working.add_extraction(f"page-{number}", links_page(100, prefix=f"c{number}"))
    return working


def test_extractions_take_at_most_a_fifth_of_what_remains(local_run: webmem.Run) -> None:
    working = extractions_memory(local_run)
    assert all(len(links_page(100, prefix=f"c{n}")) > 20_000 for n in range(5))
    for budget in (1_000, 3_000, 8_000, 15_000):
        pack = ContextPack.assemble(working.context_parts(), budget, counter=working.counter)
        room = room_for_extractions(pack)
        body = extraction_body(str(pack))
        assert working.counter.count(body) <= int(room * 0.20), budget
        assert working.counter.count(body) > int(room * 0.20) // 3, budget  # the share is used, not wasted
        assert pack.part("extractions").status == "included"
        assert body.count("[page-") == 5


def test_scraping_gives_extractions_two_fifths(local_run: webmem.Run) -> None:
    working = extractions_memory(local_run)
    budget = 8_000
    auto = ContextPack.assemble(working.context_parts(), budget, counter=working.counter)
    working.set_operation_mode("scrape")
    scrape = ContextPack.assemble(working.context_parts(), budget, counter=working.counter)
    auto_tokens = working.counter.count(extraction_body(str(auto)))
    scrape_tokens = working.counter.count(extraction_body(str(scrape)))
    assert auto_tokens <= int(room_for_extractions(auto) * 0.20)
    assert int(room_for_extractions(auto) * 0.20) < scrape_tokens <= int(room_for_extractions(scrape) * 0.40)
    working.set_operation_mode("research")
    research = ContextPack.assemble(working.context_parts(), budget, counter=working.counter)
    assert working.counter.count(extraction_body(str(research))) == scrape_tokens


def test_each_extraction_is_capped_and_all_of_them_by_the_token_cap(local_run: webmem.Run) -> None:
    working = extractions_memory(local_run)
    pack = ContextPack.assemble(working.context_parts(), 64_000, counter=working.counter)
    body = extraction_body(str(pack))
    assert working.counter.count(body) <= MAX_EXTRACTION_TOKENS == 4000
    chunks = re.split(r"^\[page-\d\]\n", body, flags=re.M)[1:]
    assert len(chunks) == 5
    assert all(0 < len(chunk.rstrip("\n")) <= MAX_SINGLE_EXTRACTION_CHARS == 8000 for chunk in chunks)


def test_a_large_extraction_is_compressed_and_keeps_its_urls(local_run: webmem.Run) -> None:
    working = local_run.working
    working.start_task("collect the prices of every smart watch")
    page = links_page(120)
    assert len(page) > 20_000
    working.add_extraction("results", page)
    text = working.format_for_prompt(budget_tokens=64_000)
    body = extraction_body(text)
    assert len(body) <= len("[results]\n") + MAX_SINGLE_EXTRACTION_CHARS
    for number in range(120):
        assert f"https://www.example-shop.com/p/{number}-smart-watch" in body, number
    assert not CUT_MARKER.search(body)  # compressed, not cut
    assert 'name="q"' in body  # the form field is kept too


def test_an_extraction_whose_links_cannot_fit_is_cut_head_and_tail(local_run: webmem.Run) -> None:
    working = local_run.working
    working.start_task("collect every link")
    lines = [f"Result {n}: https://docs.example.org/manual/chapter-{n}/section-{n * 7}/a-rather-long-page-name"
             for n in range(400)]
    data = "\n".join(lines)
    assert len(data) > 30_000
    working.add_extraction("links", data)
    body = extraction_body(working.format_for_prompt(budget_tokens=64_000))
    chunk = body[len("[links]\n"):]
    assert CUT_MARKER.search(chunk)
    assert len(chunk) <= MAX_SINGLE_EXTRACTION_CHARS
    head, tail = CUT_MARKER.split(chunk)
    assert data.startswith(head.rstrip("\n")) and data.endswith(tail.lstrip("\n"))
    assert len(head) > len(tail) > 100


def test_a_compressor_hook_is_used_when_it_keeps_the_urls(mem: webmem.Memory, run: webmem.Run) -> None:
    page = links_page(120)
    calls: list[int] = []

    def keeps_links(text: str, max_chars: int) -> str:
        calls.append(max_chars)
        return "Summary: smart watches\n" + "\n".join(re.findall(r'(?:href|action)="([^"]+)"', text))

    def drops_links(text: str, max_chars: int) -> str:
        return "Summary: a page of smart watches"

    run.working.start_task("collect prices")
    run.working.add_extraction("results", page)
    hooked = AgentMemory.load(mem.scope, run.id, patterns=mem.patterns, compressor=keeps_links)
    assert "Summary: smart watches" in hooked.format_for_prompt(budget_tokens=64_000) and calls
    fallback = AgentMemory.load(mem.scope, run.id, patterns=mem.patterns, compressor=drops_links)
    body = extraction_body(fallback.format_for_prompt(budget_tokens=64_000))
    assert "Summary: a page" not in body
    assert all(f"https://www.example-shop.com/p/{n}-smart-watch" in body for n in range(120))


def test_expired_extractions_leave_the_context(mem: webmem.Memory, run: webmem.Run) -> None:
    clock = Clock()
    working = AgentMemory.load(mem.scope, run.id, patterns=mem.patterns, clock=clock)
    working.start_task("collect prices")
    working.add_extraction("prices", "Watch A $99")
    clock.now += 300
    assert "Watch A $99" in working.format_for_prompt()
    clock.now += 1
    assert "EXTRACTED DATA" not in working.format_for_prompt()
    later = AgentMemory.load(mem.scope, run.id, patterns=mem.patterns, clock=Clock(1_000_000.0 + 10))
    assert later.context_store.get_cached_extraction("prices") == "Watch A $99"  # its time is stored


# --- tokens and the one budget -----------------------------------------------------------------


def test_an_exact_tokenizer_replaces_the_estimate_everywhere(tmp_path: Path, wmem: webmem.Memory) -> None:
    seen: list[str] = []

    def tokenizer(text: str) -> int:
        seen.append(text)
        return len(text.split())

    counted = webmem.Memory.open(tmp_path / "counted", tokenizer=tokenizer)
    estimated = webmem.Memory.open(tmp_path / "estimated")
    packs = []
    for memory in (counted, estimated):
        run = memory.start_run(goal="search for smart watch", start_url=SHOP)
        working = run.working
        working.start_task("search for smart watch", user_context={"currency": "EUR"})
        working.record_navigation({"url": SEARCH, "title": "Search"})
        entry = working.record_cycle("type the query into the search box", click("#q"), "typed it")
        working.set_scratch("page", 1)
        packs.append((run.context(budget_tokens=5000), entry))
    (pack, entry), (plain, plain_entry) = packs
    assert entry.estimated_tokens == words(entry.format_for_prompt()) != plain_entry.estimated_tokens
    assert seen
    sections = str(pack).split(SEPARATOR)
    included = [report for report in pack.report if report.status == "included"]
    assert [report.name for report in included] == ["task", "user_context", "recent_history", "navigation_path",
                                                    "scratch_pad"]
    assert [report.tokens for report in included] == [words(section) for section in sections]
    assert pack.tokens == sum(words(section) for section in sections) + len(sections) - 1
    assert [r.tokens for r in pack.report] != [r.tokens for r in plain.report]
    assert str(pack) == str(plain)
    counted.close()
    estimated.close()


def fill_persistent(mem: webmem.Memory) -> None:
    """A trajectory, sessions, facts, selectors and a site lesson on the shop."""
    earlier = mem.start_run(goal="search for smart watch reviews", start_url=SHOP)
    earlier.record_step(action="click", target='button "Accept cookies"', selector="#accept", url=SHOP)
    earlier.record_step(action="fill", target='textbox "Search"', selector="#q", value="smart watch", url=SHOP)
    earlier.record_step(action="click", target='button "Search"', selector="#go", url=SHOP)
    earlier.finish(success=True, outcome="Found 12 reviews",
                   facts=[{"type": "quirk", "key": "cookie-banner", "value": "a cookie banner covers the page"}])
    mem.lessons.record("Accept the cookie banner before searching", "site_specific", domain=DOMAIN)


def fill_working(run: webmem.Run, *, history: int = 12) -> AgentMemory:
    working = run.working
    working.start_task("search for smart watch reviews", user_context={"currency": "EUR"})
    working.record_navigation({"url": SEARCH, "title": "Search", "visible_elements_summary": "a search box"})
    for number in range(history):
        working.record_cycle(f"thought {number}: " + "consider the results " * 8,
                             click("#next" if number >= history - 3 else f"#s{number}"),
                             "observation " * 40, url=SEARCH)
    working.add_extraction("results", links_page(60))
    working.set_scratch("seen", list(range(30)))
    working.init_sitemap_graph(SHOP)
    working.learn_pattern(DOMAIN, "Search flow", "search", [{"tool": "fill", "selector": "#q", "value": "{query}"}])
    return working


def test_run_context_includes_the_working_parts_beside_the_persistent_ones(mem: webmem.Memory) -> None:
    fill_persistent(mem)
    run = mem.start_run(goal="search for smart watch reviews", start_url=SHOP)
    without = run.context(budget_tokens=50_000)
    assert {report.name for report in without.report} == set(PERSISTENT_PRIORITIES)
    fill_working(run)
    run.on_error("click #buy", "Timeout 5000ms exceeded")
    pack = run.context(budget_tokens=50_000)
    assert {report.name: report.priority for report in pack.report} == {**WORKING_PRIORITIES, **PERSISTENT_PRIORITIES}
    assert (PRIORITY_TASK, PRIORITY_LOOP_WARNINGS, PRIORITY_USER_CONTEXT, PRIORITY_HISTORY, PRIORITY_EXTRACTIONS,
            PRIORITY_PATTERNS, PRIORITY_NAVIGATION, PRIORITY_SCRATCH, PRIORITY_SITEMAP) == tuple(
        WORKING_PRIORITIES.values())
    priorities = {**WORKING_PRIORITIES, **PERSISTENT_PRIORITIES}
    assert [report.name for report in pack.report] == sorted(priorities, key=lambda name: -priorities[name])
    assert [report.name for report in pack.report][:3] == ["task", "loop_warnings", "user_context"]
    assert {r.name for r in pack.report if r.status == "included"} == (
        set(WORKING_PRIORITIES) | set(PERSISTENT_PRIORITIES)) - {"episode_advice", "replay_handover"}  # no episode, no replay
    text = str(pack)
    for heading in ("TASK", "LOOP WARNINGS", "CONTEXT", "RECENT ACTIONS", "SESSION HISTORY", "REFERENCE TRAJECTORY",
                    "EXTRACTED DATA", "APP KNOWLEDGE", "KNOWN PATTERNS", "KNOWN SELECTORS", "NAVIGATION PATH",
                    "SCRATCH PAD", "SITE EXPLORATION"):
        assert f"## {heading}" in text, heading
    assert "Last action failed: click #buy" in text and "Accept the cookie banner" in text
    assert pack.tokens <= 50_000
    # a resumed handle joins the working parts once it uses its working memory
    resumed = mem.get_run(run.id)
    assert "task" not in {r.name for r in resumed.context().report}
    _ = resumed.working
    assert resumed.context(budget_tokens=50_000).part("task").status == "included"


CUT_BY_LINES = ("recent_history", "reference_trajectory")  # parts cut by whole lines, not with the marker


def check_report(pack: ContextPack, budget: int, counter: TokenCounter) -> None:
    """The invariants of a fitted pack and its report."""
    assert pack.tokens <= budget
    kept = [report for report in pack.report if report.status in ("included", "truncated")]
    assert pack.tokens == sum(report.tokens for report in kept) + max(0, len(kept) - 1)
    keys = [(report.name == "task", report.priority) for report in pack.report]
    assert keys == sorted(keys, reverse=True)  # critical first, then by priority
    for report in pack.report:
        assert report.status in STATUSES
        if report.status == "included":
            assert 0 < report.tokens == report.full_tokens
        elif report.status == "truncated":
            assert 0 < report.tokens < report.full_tokens
        elif report.status == "dropped":
            assert report.tokens == 0 < report.full_tokens
        else:
            assert report.tokens == report.full_tokens == 0
    assert pack.part("task").status in ("included", "truncated")  # never dropped
    for high in pack.report:
        if high.status != "dropped":
            continue
        for low in pack.report:
            if low.priority < high.priority and low.status in ("included", "truncated"):
                assert low.tokens < high.full_tokens, (low.name, high.name)  # only smaller ones got in after it
    text = str(pack)
    headless_task = pack.part("task").status == "truncated" and not text.startswith("## TASK\n")  # a tiny budget
    positions = [text.find(f"## {report.heading}\n") for report in kept
                 if report.heading and not (report.name == "task" and headless_task)]
    assert all(position >= 0 for position in positions) and positions == sorted(positions)
    for report in pack.report:
        if report.status == "dropped" and report.heading:
            assert f"## {report.heading}\n" not in text
        if report.status == "truncated" and report.name in CUT_BY_LINES:
            # cut by whole lines (actions, steps): it says what was left out, and the next section has a heading
            start = text.find(f"## {report.heading}\n")
            end = text.find(SEPARATOR + "## ", start)
            section = text[start:end if end >= 0 else len(text)]
            assert "left out" in section or "not shown" in section, section
            assert TRUNCATION_MARKER not in section
            assert counter.count(section) == report.tokens
        elif report.status == "truncated" and report.name != "task":
            # a truncated section ends with the marker (the part after it may have no heading of its own)
            start = text.find(f"## {report.heading}\n")
            end = text.find(TRUNCATION_MARKER, start)
            section = text[start:end + len(TRUNCATION_MARKER)]
            assert end > start and text[end + len(TRUNCATION_MARKER):][:len(SEPARATOR)] in ("", SEPARATOR), report.name
            assert counter.count(section) == report.tokens


def test_an_over_budget_pack_is_trimmed_in_priority_order_with_a_correct_report(mem: webmem.Memory) -> None:
    fill_persistent(mem)
    run = mem.start_run(goal="search for smart watch reviews", start_url=SHOP)
    fill_working(run)
    full = run.context(budget_tokens=100_000)
    assert all(r.status in ("included", "empty") for r in full.report)
    assert full.tokens > 3000
    seen = set()
    for budget in (10, 40, 100, 250, 500, 800, 1200, 2000, 3000, full.tokens - 1):
        run.on_error("click #buy", "Timeout 5000ms exceeded")
        pack = run.context(budget_tokens=budget)
        check_report(pack, budget, mem.token_counter)
        seen |= {report.status for report in pack.report}
    assert seen == STATUSES


def test_a_dropped_part_lets_a_smaller_lower_one_in(wmem: webmem.Memory) -> None:
    run = wmem.start_run(goal="search for smart watch reviews", start_url=SHOP)
    working = run.working
    working.start_task("search for smart watch reviews", user_context={"currency": "EUR"})
    for number in range(10):
        working.record_cycle(f"thought {number} " + "weighing the options " * 10, click(f"#s{number}"), "ok",
                             url=SEARCH)
    for number in range(5):
        working.record_navigation({"url": f"{SHOP}p/{number}", "title": f"Product page number {number}",
                                   "visible_elements_summary": "a gallery, a price and an add to cart button"})
    working.set_scratch("page", 3)
    parts = {part.name: part for part in working.context_parts(DOMAIN)}
    task = words(parts["task"].render())
    user = words(parts["user_context"].render())
    budget = task + 1 + user + 1 + 20  # 20 tokens are left for the history: under 30, so it is dropped
    pack = run.context(budget_tokens=budget)
    statuses = {report.name: report.status for report in pack.report}
    assert {name: statuses[name] for name in WORKING_PRIORITIES} == {
        "task": "included", "loop_warnings": "empty", "user_context": "included", "recent_history": "dropped",
        "extractions": "empty", "patterns": "empty", "navigation_path": "dropped", "scratch_pad": "included",
        "sitemap": "empty",
    }
    assert str(pack).endswith("## SCRATCH PAD\n- page: 3")
    check_report(pack, budget, wmem.token_counter)
    # with more room the history is cut rather than dropped, and the parts after it have no room left
    bigger = run.context(budget_tokens=budget + 60)
    assert bigger.part("recent_history").status == "truncated"
    check_report(bigger, budget + 60, wmem.token_counter)


# --- bad input ---------------------------------------------------------------------------------


BAD_CYCLES = [
    ({"thought": "t", "action": "click", "outcome": "maybe"}, "outcome"),
    ({"thought": "t", "action": "click", "priority": "urgent"}, "priority"),
    ({"thought": "t", "action": {"parameters": {"selector": "#q"}}}, "action"),
    ({"thought": "t", "action": {"tool": "", "parameters": {}}}, "action"),
    ({"thought": "t", "action": 7}, "action"),
    ({"thought": "t", "action": {"tool": "click", "parameters": {"when": object()}}}, "parameters"),
    ({"thought": None, "action": "click"}, "thought"),
    ({"thought": 42, "action": "click"}, "thought"),
    ({"thought": "t", "action": "click", "observation": {"a": 1}}, "observation"),
]


def test_bad_cycles_are_refused_and_leave_nothing_behind(
    mem: webmem.Memory, run: webmem.Run, memory_dir: Path
) -> None:
    working = run.working
    for arguments, message in BAD_CYCLES:
        with pytest.raises(InvalidInput, match=message):
            working.record_cycle(**arguments)
        assert working.short_term.entries == [] and working.working.cycle_count == 0
    assert stored_entries(mem, memory_dir, run.id) == []
    assert working.record_cycle("fine", "click").entry_id == 1


def test_scratch_and_page_map_values_must_be_json(run: webmem.Run) -> None:
    for value in ({1, 2}, object(), b"bytes", float, {"nested": {"x": object()}}):
        with pytest.raises(InvalidInput):
            run.working.set_scratch("key", value)
        with pytest.raises(InvalidInput):
            run.working.store_page_map(SEARCH, value)
    assert run.working.working.scratch == {} and run.working.working.page_maps == {}


def test_other_bad_input_is_refused(mem: webmem.Memory, run: webmem.Run) -> None:
    working = run.working
    for goal in ("", "   ", None, 5):
        with pytest.raises(InvalidInput):
            working.start_task(goal)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        working.start_task("ok", user_context=["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        working.set_scratch("", 1)
    with pytest.raises(InvalidInput):
        working.add_inferred_context("login_required", True, source="")
    with pytest.raises(InvalidInput):
        working.add_extraction("data", {"when": object()})
    with pytest.raises(InvalidInput):
        working.format_for_prompt(budget_tokens=-5)
    with pytest.raises(InvalidInput):
        AgentMemory(mem.scope, run.id, patterns=working.patterns, short_term_max_entries=0)
    with pytest.raises(InvalidInput):
        AgentMemory(mem.scope, run.id, patterns=working.patterns, max_extraction_budget_percent=1.5)


@pytest.mark.parametrize(
    "details",
    [{"error": 5}, {"duration_ms": "x"}, {"duration_ms": -1}, {"tags": "abc"}, {"retry_count": -1}, {"title": 3}],
)
def test_bad_cycle_details_are_refused_with_the_field_named(mem: webmem.Memory, details: dict) -> None:
    run = mem.start_run(goal="Check the cycle details", start_url="https://a.example/")
    with pytest.raises(webmem.InvalidInput, match=next(iter(details))):
        run.working.record_cycle("think", "click", **details)
    assert run.working.short_term.entries == []


def test_secrets_in_urls_and_tags_never_reach_the_store(open_memory: Any) -> None:
    mem = open_memory(secrets={"api_token": "tok-998877"})
    run = mem.start_run(goal="Read the report", start_url="https://reports.example/")
    working = run.working
    secret_url = "https://reports.example/r?key=tok-998877"
    working.mark_url_visited(secret_url)
    working.store_page_map(secret_url, {"links": 3}, summary="report")
    working.init_sitemap_graph("https://reports.example/")
    working.add_sitemap_links("https://reports.example/", [{"url": secret_url, "text": "tok-998877"}], link_type="content")
    working.record_cycle("think", "click", tags=["tok-998877"], url=secret_url)
    assert working.has_visited_url(secret_url)
    assert working.working.has_page_map(secret_url)
    again = mem.get_run(run.id).working
    assert again.has_visited_url(secret_url) and again.working.get_page_summary(secret_url) == "report"
    assert "tok-998877" not in rows.dump(mem)


def test_start_task_clears_short_term_memory_as_the_seed_lifecycle_says(run: webmem.Run) -> None:
    working = run.working
    working.start_task("Find the cheapest smart watch")
    failed = {"tool": "click", "parameters": {"selector": "#buy"}}
    working.record_cycle("buy", failed, "not visible", "failure", url=SEARCH)
    working.record_cycle("look", "scroll", url=SEARCH)
    working.start_task("Find the most expensive smart watch")
    assert working.short_term.entries == [] and working.working.cycle_count == 0
    assert not working.is_repeated_failure(failed, url=SEARCH)  # the earlier task's failures went with it
    assert "RECENT ACTIONS" not in working.format_for_prompt()
    again = run._memory.get_run(run.id).working  # as stored: the same
    assert again.short_term.entries == [] and again.working.goal == "Find the most expensive smart watch"
    working.record_cycle("look", "scroll", url=SEARCH)
    working.set_goal("Find the most expensive smart watch under 300 EUR")  # the same task, reworded
    assert len(working.short_term.entries) == 1 and working.working.cycle_count == 1
    with pytest.raises(webmem.InvalidInput):
        working.start_task("   ")
    assert len(working.short_term.entries) == 1  # a refused goal changes nothing


def test_under_a_tight_budget_the_latest_actions_stay_and_the_oldest_go(run: webmem.Run) -> None:
    working = run.working
    working.start_task("Compare the prices of ten watches")
    for number in range(1, 11):
        working.record_cycle(f"open watch {number}", click(f"#watch-{number}"),
                             f"Watch {number} costs {number}0 EUR. " + "Its page lists straps, colours and sizes. " * 4,
                             url=SEARCH)
    text = working.format_for_prompt(budget_tokens=300)
    assert "## RECENT ACTIONS" in text
    history = text.split("## RECENT ACTIONS\n", 1)[1].split("\n\n## ", 1)[0]
    assert "#watch-10" in history  # the latest cycle, whole
    assert "Watch 10 costs 100 EUR" in history
    assert "earlier action" in history.splitlines()[0]  # what went is said, before what stayed
    first_kept = history.splitlines()[1]
    assert first_kept[0].isdigit()  # an action starts where the cut is: never its continuation lines alone


def test_compressed_search_results_keep_each_url_with_its_title(run: webmem.Run) -> None:
    working = run.working
    working.start_task("Find a review of a running watch")
    results = [{"title": f"Result {number}: the best running watch of {2000 + number}",
                "url": f"https://reviews.example.com/watch-{number}",
                "snippet": f"A long snippet about watch {number}, its battery, its GPS and its strap. " * 3}
               for number in range(40)]
    working.add_extraction("search results", results)
    text = working.format_for_prompt(budget_tokens=6000)
    shown = text.split("## EXTRACTED DATA\n", 1)[1].split("\n\n## ", 1)[0]
    urls = re.findall(r"https://reviews\.example\.com/watch-\d+", shown)
    assert urls, shown[:500]
    for url in urls:  # every URL shown is shown with its title
        number = url.rsplit("-", 1)[1]
        assert f"Result {number}: the best running watch of {2000 + int(number)} <{url}>" in shown
    assert "snippet" not in shown or len(urls) == 40  # snippets go before any result does
    assert "Result 0:" in shown  # the top results stay; the last ones go first


def search_results(count: int = 40) -> list[dict[str, str]]:
    return [{"title": f"Result {number}: the best running watch of {2000 + number} for trail and road",
             "url": f"https://reviews.example.com/watch-{number}",
             "snippet": f"A long snippet about watch {number}, its battery, its GPS and its strap. " * 3}
            for number in range(count)]


def shown_results(text: str) -> tuple[str, list[str]]:
    shown = text.split("## EXTRACTED DATA\n", 1)[1].split("\n\n## ", 1)[0]
    return shown, re.findall(r"https://reviews\.example\.com/watch-\d+", shown)


def assert_each_url_has_its_title(shown: str, urls: list[str]) -> None:
    for url in urls:
        number = int(url.rsplit("-", 1)[1])
        line = next(line for line in shown.splitlines() if f"<{url}>" in line)
        title = f"Result {number}: the best running watch of {2000 + number} for trail and road"
        label = line.removeprefix("- ").split(f" <{url}>")[0]
        assert label and (label == title or (label.endswith("…") and title.startswith(label[:-1]))), line


@pytest.mark.parametrize("given", ["a list", "JSON text", "one result without a URL"])
def test_search_results_keep_their_titles_however_they_are_given(local_run: webmem.Run, given: str) -> None:
    """Seed 002 keeps "ALL URLs, titles, snippets" of search results: results handed over as JSON text, or
    with one result that has no URL, are results too, not text whose URLs are kept and titles lost."""
    results = search_results()
    data: Any = {"a list": results, "JSON text": json.dumps(results),
                 "one result without a URL": [*results[:-1], {"title": "Sponsored", "snippet": "an ad"}]}[given]
    working = local_run.working
    working.start_task("Find a review of a running watch")
    working.add_extraction("search results", data)
    shown, urls = shown_results(str(local_run.context()))
    assert len(urls) >= 10, shown[:600]
    assert_each_url_has_its_title(shown, urls)


def test_when_room_is_short_titles_are_shortened_before_results_are_left_out(local_run: webmem.Run) -> None:
    working = local_run.working
    working.start_task("Find a review of a running watch")
    results = search_results()
    working.add_extraction("search results", results)
    shown, urls = shown_results(str(local_run.context()))
    assert "more results left out" in shown and urls == [result["url"] for result in results[:len(urls)]]
    assert_each_url_has_its_title(shown, urls)
    whole_lines = [f"- {result['title']} <{result['url']}>" for result in results]
    fitting_whole = max(count for count in range(len(results) + 1)
                        if len("\n".join(whole_lines[:count])) <= len(shown))
    assert len(urls) > fitting_whole  # the same room holds more results than whole titles would


def test_task_summary_lists_pages_explored_through_their_maps(run: webmem.Run) -> None:
    """Seed 002's summary lists the explored pages with their summaries: a page whose map was kept with a
    summary and that was visited is explored, with or without a sitemap."""
    working = run.working
    working.start_task("Extract product data")
    products, electronics, unseen = (f"{SHOP}{path}" for path in ("products", "electronics", "unseen"))
    working.record_navigation({"url": products, "title": "Products"})
    working.store_page_map(products, {"links": ["a"]}, summary="Main product listing with categories")
    working.mark_url_visited(electronics)
    working.store_page_map(electronics, {"title": "Electronics"}, summary="Electronic products including phones")
    working.store_page_map(unseen, {"links": []}, summary="A page mapped but never visited")
    working.store_page_map(f"{SHOP}nosummary", {"links": []})
    working.mark_url_visited(f"{SHOP}nosummary")
    summary = working.get_task_summary()
    assert [page["title"] for page in summary["explored_pages"]] == ["Products", "Electronics"]
    assert "Explored pages (2 total):\n  - Products: Main product listing with categories\n" \
           "  - Electronics: Electronic products including phones" in summary["text"]


def test_a_compressed_page_state_keeps_each_link_and_button_with_its_label(run: webmem.Run) -> None:
    """A page-state extraction nests its links (text, href) and buttons (text, selector): when it must
    shrink, every URL and selector shown keeps its label on its line, as search results do."""
    working = run.working
    working.start_task("Find the returns policy")
    page = {
        "url": SHOP, "title": "Example shop", "text": "Welcome to the shop. " * 40,
        "links": [{"text": f"Category {number}: garden tools and more", "href": f"https://www.example-shop.com/c/{number}"}
                  for number in range(80)],
        "buttons": [{"text": f"Add item {number} to cart", "selector": f"#add-{number}"} for number in range(40)],
    }
    working.add_extraction("page state", page)
    text = working.format_for_prompt(budget_tokens=6000)
    shown = text.split("## EXTRACTED DATA\n", 1)[1].split("\n\n## ", 1)[0]
    urls = re.findall(r"https://www\.example-shop\.com/c/\d+", shown)
    selectors = re.findall(r"#add-\d+", shown)
    assert urls and selectors, shown[:800]
    for url in urls:
        number = url.rsplit("/", 1)[1]
        assert f"- Category {number}: garden tools and more <{url}>" in shown
    for selector in selectors:
        assert f"- Add item {selector.split('-')[1]} to cart [{selector}]" in shown
    assert "Category 0:" in shown and "Add item 0 to cart" in shown  # the first of each list stay
    assert "more results left out" in shown  # and what went is said
    assert "Example shop" in shown


def test_the_seed_s_own_calls_work_frequency_page_title_and_removing_a_pattern(run: webmem.Run,
                                                                               mem: webmem.Memory) -> None:
    working = run.working
    working.start_task("read the catalogue")
    working.record_navigation({"url": SEARCH, "page_title": "Products"})
    assert working.working.get_navigation_history()[-1].title == "Products"
    with pytest.raises(webmem.InvalidInput, match="title or page_title"):
        working.record_navigation({"url": SEARCH, "page_title": "A", "title": "B"})
    for page in (SEARCH, CART, SEARCH):
        working.record_cycle("scroll", {"tool": "scroll_page", "parameters": {"direction": "down"}}, url=page)
    assert working.short_term.get_action_frequency("scroll_page", {"direction": "down"}) == 3  # any page
    assert working.short_term.get_action_frequency("scroll_page", {"direction": "up"}) == 0
    assert working.short_term.get_action_frequency({"tool": "scroll_page", "parameters": {"direction": "down"}},
                                                   SEARCH) == 2
    with pytest.raises(webmem.InvalidInput, match="url"):
        working.short_term.get_action_frequency("scroll_page", 3)  # type: ignore[arg-type]
    pattern = mem.patterns.learn_pattern("shop.example", "Scroll the catalogue", "navigation",
                                         [{"tool": "scroll_page", "direction": "down"}])
    mem.patterns.remove_pattern(pattern.id)
    assert mem.patterns.get_patterns_for_domain("shop.example") == []
    with pytest.raises(webmem.NotFound):
        mem.patterns.remove_pattern(pattern.id)


def test_pattern_steps_take_numbers_and_true_false_as_the_seed_s_steps_do(mem: webmem.Memory) -> None:
    pattern = mem.patterns.learn_pattern("shop.example", "Pay a bill", "form_fill", [
        {"tool": "type", "selector": "#amount", "amount": 500},
        {"tool": "check", "selector": "#terms", "checked": True},
    ])
    assert pattern.steps[0]["amount"] == "500" and pattern.steps[1]["checked"] == "true"
    assert "amount=500" in mem.patterns.format_for_prompt("shop.example")
    with pytest.raises(webmem.InvalidInput, match="finite"):
        mem.patterns.learn_pattern("shop.example", "Bad", "form_fill", [{"tool": "type", "amount": float("nan")}])
    with pytest.raises(webmem.InvalidInput, match="values must be"):
        mem.patterns.learn_pattern("shop.example", "Bad", "form_fill", [{"tool": "type", "amount": [1, 2]}])
