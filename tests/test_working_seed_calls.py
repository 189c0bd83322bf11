"""Seed 002's own calls on a run's working memory, written as the seed writes them: on
``memory.working`` (the working memory proper), the page-map readers on the memory, the context
store used directly, the constructor's options, and a working memory that starts from its run."""

from __future__ import annotations

import time
from typing import Any

import pytest

import webmem
from webmem import InvalidInput
from webmem.working import LearnedPattern, OperationMode, StateSnapshot, WorkingMemory

SHOP = "https://example.com/"
PRODUCTS = "https://example.com/products"
SECRET = "Tr0ub4dor-horse-42"


def test_the_seed_s_calls_on_memory_working_are_kept_as_the_same_calls_on_the_memory(open_memory: Any) -> None:
    mem = open_memory(secrets={"token": SECRET})
    run = mem.start_run(goal="Look around", start_url=SHOP)
    memory = run.working
    memory.working.set_goal("Find and extract all product prices")
    assert memory.working.current_goal == "Find and extract all product prices"
    print_cycle = f"Cycle: {memory.working.cycle_count}"
    assert print_cycle == "Cycle: 0"
    snapshot = StateSnapshot(
        snapshot_id="snap_001", timestamp=time.time(), url=PRODUCTS, page_title="Products",
        visible_elements_summary=f"Product list with 20 items, token {SECRET}", scroll_position=(0, 500),
    )
    memory.working.record_navigation(snapshot)
    memory.working.set_scratch("extracted_items", [])
    memory.working.set_scratch("current_page", 1)
    memory.working.set_scratch("api", f"key={SECRET}")
    assert memory.working.get_scratch("extracted_items", default=[]) == []
    history = memory.working.get_navigation_history()
    assert [(item.url, item.page_title, item.scroll_position) for item in history] == [(PRODUCTS, "Products", (0, 500))]
    assert memory.current_url() == PRODUCTS  # the owner saw the navigation
    again = mem.get_run(run.id).working  # as stored: each call was saved, secrets replaced
    assert again.working.current_goal == "Find and extract all product prices"
    assert [(item.title, item.visible_elements_summary) for item in again.working.get_navigation_history()] == [
        ("Products", "Product list with 20 items, token {token}")]
    assert again.working.get_scratch("current_page") == 1 and again.working.get_scratch("api") == "key={token}"
    with pytest.raises(InvalidInput, match="goal"):
        memory.working.set_goal("  ")
    with pytest.raises(InvalidInput, match="title or page_title"):
        StateSnapshot(url=PRODUCTS, title="a", page_title="b")


def test_a_working_memory_made_by_hand_keeps_the_seed_s_calls_in_memory() -> None:
    working = WorkingMemory()
    working.set_goal("Find prices")
    working.record_navigation({"url": PRODUCTS, "page_title": "Products"})
    working.set_scratch("page", 2)
    assert working.current_goal == "Find prices" and working.get_scratch("page") == 2
    assert working.get_navigation_history()[0].title == "Products"


def test_page_maps_are_read_on_the_memory_as_the_seed_reads_them(mem: webmem.Memory) -> None:
    memory = mem.start_run(goal="Map the shop", start_url=SHOP).working
    page_map = {"sections": [{"name": "header"}, {"name": "product grid"}]}
    memory.store_page_map("https://example.com", page_map, summary="Home page with a product grid")
    url = "https://example.com/"
    assert memory.has_page_map(url) and not memory.has_page_map(PRODUCTS)
    assert memory.get_page_map(url) == page_map and memory.get_page_map(PRODUCTS) is None
    assert memory.get_all_page_maps() == {"https://example.com/": page_map}  # by the page, normalised
    assert memory.get_page_summary("https://example.com") == "Home page with a product grid"


def test_calls_made_on_the_context_store_directly_are_kept(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Buy a laptop", start_url=SHOP)
    memory = run.working
    memory.context_store.set_user_context({"username": "john_doe", "preferred_format": "csv"})
    memory.context_store.add_inferred_context("site_requires_login", True, source="login page seen")
    memory.context_store.cache_extraction("product_list", [{"name": "Laptop", "price": 999}])
    again = mem.get_run(run.id).working  # no other call on the working memory saved them
    assert again.context_store.get("username") == "john_doe"
    assert again.context_store.get("site_requires_login") is True
    assert again.context_store.get_cached_extraction("product_list") == [{"name": "Laptop", "price": 999}]


def test_the_seed_s_constructor_options_pass_through_memory_open(open_memory: Any) -> None:
    mem = open_memory(working_memory={
        "context_window_budget": 1000, "short_term_max_entries": 3, "long_term_max_patterns": 7,
        "max_extraction_budget_percent": 0.5, "max_extraction_tokens": 200, "max_single_extraction_chars": 900,
    })
    memory = mem.start_run(goal="Browse", start_url=SHOP).working
    assert memory.context_window_budget == 1000 and memory.short_term.max_entries == 3
    assert (memory.max_extraction_budget_percent, memory.max_extraction_tokens,
            memory.max_single_extraction_chars) == (0.5, 200, 900)
    assert mem.patterns.max_patterns == 7
    for number in range(5):
        memory.record_cycle(f"step {number}", {"tool": "click", "parameters": {"n": number}}, "ok")
    assert len(memory.short_term.entries) == 3
    with pytest.raises(InvalidInput, match="unknown option short_term_size"):
        open_memory(working_memory={"short_term_size": 3})
    with pytest.raises(InvalidInput, match="max_extraction_budget_percent"):
        open_memory(working_memory={"max_extraction_budget_percent": 2})
    with pytest.raises(InvalidInput, match="short_term_max_entries"):
        open_memory(working_memory={"short_term_max_entries": 0})


def test_a_run_s_working_memory_starts_with_the_run_s_goal_and_start_page(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Compare laptop prices", start_url=SHOP)
    memory = run.working
    assert memory.working.current_goal == "Compare laptop prices"
    assert memory.current_url() == SHOP
    summary = memory.get_task_summary()
    assert summary["goal"] == "Compare laptop prices" and summary["current_url"] == SHOP
    assert "Compare laptop prices" in memory.format_for_prompt()
    memory.start_task("Compare desk prices")  # the agent's own goal wins
    assert mem.get_run(run.id).working.working.current_goal == "Compare desk prices"


def test_a_pattern_learned_as_the_seed_writes_it_keeps_its_id_for_record_usage(mem: webmem.Memory) -> None:
    memory = mem.start_run(goal="Sign in", start_url=SHOP).working
    pattern = LearnedPattern(
        pattern_id="login_example_com", domain="example.com", description="Login flow for example.com",
        pattern_type="login_flow",
        steps=[
            {"tool": "click", "selector": "#login-btn"},
            {"tool": "type", "selector": "#email", "text": "{email}"},
            {"tool": "type", "selector": "#password", "text": "{password}"},
            {"tool": "click", "selector": "#submit"},
        ],
    )
    learned = memory.learn_pattern(pattern)
    assert learned.id == "login_example_com" and learned.domain == "example.com"
    assert [found.id for found in memory.get_patterns_for_domain("example.com")] == ["login_example_com"]
    used = memory.long_term.record_usage("login_example_com", success=True)
    assert (used.success_count, used.success_rate) == (1, 1.0)
    assert memory.learn_pattern(pattern).id == "login_example_com"  # the same pattern again: as it is
    other = LearnedPattern(pattern_id="login_example_com", domain="example.com", description="Another flow",
                           pattern_type="navigation", steps=[{"tool": "click", "selector": "#home"}])
    with pytest.raises(InvalidInput, match="login_example_com"):
        memory.learn_pattern(other)
    assert mem.patterns.record_usage("login_example_com", success=False).failure_count == 0 + 1


def test_the_operation_mode_is_set_and_read_as_the_seed_does(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Scrape prices", start_url=SHOP)
    memory = run.working
    assert memory.get_operation_mode() is OperationMode.AUTO
    memory.set_operation_mode(OperationMode.SCRAPE)
    assert memory.get_operation_mode() is OperationMode.SCRAPE and memory.operation_mode == "scrape"
    assert mem.get_run(run.id).working.get_operation_mode() is OperationMode.SCRAPE
    memory.set_operation_mode("research")
    assert memory.get_operation_mode() is OperationMode.RESEARCH
    with pytest.raises(InvalidInput, match="mode"):
        memory.set_operation_mode("sleep")


def test_only_a_value_that_is_a_placeholder_whole_counts_as_one_in_a_learned_pattern() -> None:
    from webmem.working.patterns import derive_pattern

    typed = [webmem.Step(action="fill", target='textbox "Email"', value="{email}.backup")]
    assert derive_pattern("Back up the account", typed) is None  # text around a placeholder is no placeholder
    secret = [webmem.Step(action="fill", target='textbox "Password"', value="{password}")]
    draft = derive_pattern("Sign in", secret)
    assert draft is not None and draft.pattern_type == "login_flow" and draft.steps[0]["value"] == "{password}"


def test_an_entry_answers_to_the_seed_s_names(mem: webmem.Memory) -> None:
    memory = mem.start_run(goal="Check out", start_url=SHOP).working
    entry = memory.record_cycle("submit the form", {"tool": "click", "parameters": {"selector": "#submit"}},
                                "nothing happened", "failure", url=PRODUCTS, title="Products", error="Timeout")
    assert (entry.action.tool_name, dict(entry.action.parameters)) == ("click", {"selector": "#submit"})
    assert (entry.page_title, entry.error_message) == ("Products", "Timeout")
    assert memory.short_term.has_failed(entry.action_signature) and entry.action_signature == entry.signature
