"""The lesson store: seeds, tier 1 and the system prompt, recall on error (trigger A) and on domain
(trigger B) through runs and their context, recall bookkeeping, deduplication, promotion, helpfulness
and demotion, pruning, import of the lesson agent's file, namespaces, a disabled memory, bad input, and
walkthroughs 1, 2 and 4 of the document."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import rows
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

import webmem
from webmem.core.clock import utcnow
from webmem.core.urls import domain_matches, scopes_on
from webmem.store.migrations import apply_migrations

FIXTURE_FILE = Path("/work/shared/fixtures/lessons-memory.json")
GOOGLE = "https://www.google.com/"
AMAZON = "https://www.amazon.com/"

FILL_SEED = "If fill does not work on a field, click the field to focus it, then type the text."
ENTER_SEED = (
    "After typing into a search box, press Enter to submit rather than clicking the submit button: "
    "suggestion lists often cover that button."
)
ESCAPE_SEED = (
    "When an overlay, banner or popup blocks an element, press Escape to dismiss it before using the page behind it."
)
FILL_ERROR = "too many arguments: expected 2, received 3"
VIEWPORT_ERROR = "Error: element is outside of the viewport"
SCROLL_TIP = "Scroll the element into view before clicking it."


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["event"] == kind]


def texts(lessons: list[webmem.Lesson]) -> list[str]:
    return [lesson.lesson for lesson in lessons]


def ids(lessons: list[webmem.Lesson]) -> list[str]:
    return [lesson.id for lesson in lessons]


def snapshot(mem: webmem.Memory) -> list[tuple[Any, ...]]:
    """Everything about a namespace's lessons that an import could change."""
    return sorted(
        (item.id, item.lesson, item.category, item.failed_command, item.error_pattern, item.domain, item.use_count,
         item.source, item.last_used, tuple(item.triggered_domains))
        for item in mem.lessons.list()
    )


def age(mem: webmem.Memory, lesson_id: str, moment: datetime) -> None:
    # Time travel: last_used is written directly in the database, as if the lesson was last used then.
    assert rows.change(mem, "lessons", {"lesson_id": lesson_id}, last_used=moment) == 1


def seed(mem: webmem.Memory, text: str) -> webmem.Lesson:
    return next(item for item in mem.lessons.list() if item.lesson == text)


def scroll_lesson(mem: webmem.Memory) -> webmem.Lesson:
    return mem.lessons.record(SCROLL_TIP, "error_recovery", "click", "outside of the viewport", recovery="scroll")


# --- seeds --------------------------------------------------------------------------------------------


def test_a_new_namespace_gets_three_seed_lessons(mem: webmem.Memory) -> None:
    lessons = mem.lessons.list()
    assert sorted((item.lesson, item.category) for item in lessons) == sorted([
        (FILL_SEED, "tool_fallback"), (ENTER_SEED, "best_practice"), (ESCAPE_SEED, "best_practice"),
    ])
    assert {item.source for item in lessons} == {"seed"}
    assert {item.domain for item in lessons} == {None}
    assert [item.use_count for item in lessons] == [0, 0, 0]
    fill = seed(mem, FILL_SEED)
    assert (fill.failed_command, fill.error_pattern) == ("fill", "too many arguments")
    assert "click" in fill.lesson and "type" in fill.lesson


def test_seeds_are_not_added_again_on_reopen(open_memory: Any) -> None:
    with open_memory() as first:
        seeded = ids(first.lessons.list())
    with open_memory() as again:
        assert ids(again.lessons.list()) == seeded


def test_a_deleted_seed_stays_deleted(open_memory: Any) -> None:
    with open_memory() as mem:
        escape = seed(mem, ESCAPE_SEED)
        rows.execute(mem, "DELETE FROM lessons WHERE lesson_id = :id", id=escape.id)  # the user removes a seed
    with open_memory() as mem:
        assert sorted(texts(mem.lessons.list())) == sorted([FILL_SEED, ENTER_SEED])


def test_each_namespace_gets_its_own_seeds(open_memory: Any) -> None:
    with open_memory(namespace="alpha") as alpha, open_memory(namespace="beta") as beta:
        assert sorted(texts(alpha.lessons.list())) == sorted(texts(beta.lessons.list()))
        assert len(beta.lessons.list()) == 3
        assert not set(ids(alpha.lessons.list())) & set(ids(beta.lessons.list()))


def test_seeds_are_never_pruned(open_memory: Any) -> None:
    with open_memory() as mem:
        seeds = ids(mem.lessons.list())
        assert mem.lessons.prune(now=utcnow() + timedelta(days=3650)) == 0
        for lesson_id in seeds:
            age(mem, lesson_id, datetime(2000, 1, 1, tzinfo=UTC))
    with open_memory() as mem:  # open prunes too
        assert ids(mem.lessons.list()) == seeds
        assert mem.lessons.prune() == 0


# --- tier 1 and the system prompt -------------------------------------------------------------------------


def test_tier1_holds_only_tool_fallbacks_and_best_practices_most_used_first(mem: webmem.Memory) -> None:
    for _ in range(6):  # used more than anything, but tier 2
        mem.lessons.record("Take a new snapshot after the frame reloads.", "error_recovery", "click", "detached")
        mem.lessons.record("Accept the cookies first.", "site_specific", domain="shop.example.com")
    for _ in range(2):
        mem.lessons.record("Wait for the spinner to go away.", "best_practice", "click", "spinner")
    mem.lessons.record("If select fails, click the option instead.", "tool_fallback", "select", "not a select")
    tier1 = mem.lessons.tier1()
    assert texts(tier1)[:2] == ["Wait for the spinner to go away.", "If select fails, click the option instead."]
    assert sorted(texts(tier1)[2:]) == sorted([FILL_SEED, ENTER_SEED, ESCAPE_SEED])
    assert {item.category for item in tier1} <= {"tool_fallback", "best_practice"}
    assert [item.use_count for item in tier1] == [2, 1, 0, 0, 0]


def test_tier1_puts_seeds_before_learned_lessons_at_equal_use(mem: webmem.Memory, tmp_path: Path) -> None:
    # A learned best practice OLDER than the seeds, with the same use count (0): only the seeds-first rule,
    # not the age, puts the seeds before it.
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"version": 1, "lessons": [{
        "lesson": "Prefer links to buttons.", "category": "best_practice", "use_count": 0,
        "created_at": "2020-01-01", "last_used": "2020-01-01", "source": "learned",
    }]}), encoding="utf-8")
    mem.lessons.import_file(path)
    assert texts(mem.lessons.tier1())[-1] == "Prefer links to buttons."
    mem.lessons.record("Prefer links to buttons.", "best_practice")  # used once: now before the seeds
    assert texts(mem.lessons.tier1())[0] == "Prefer links to buttons."


def test_tier1_has_at_most_ten_lessons(mem: webmem.Memory) -> None:
    for number in range(12):
        for _ in range(number + 1):
            mem.lessons.record(f"Best practice number {number}.", "best_practice", "click", f"pattern {number}")
    expected = [f"Best practice number {number}." for number in range(11, 1, -1)]
    assert texts(mem.lessons.tier1()) == expected
    assert texts(mem.lessons.tier1(max_items=50)) == expected
    assert texts(mem.lessons.tier1(max_items=2)) == expected[:2]
    assert len(mem.lessons.system_prompt_section().splitlines()) == 3 + 10


def test_the_system_prompt_section(mem: webmem.Memory) -> None:
    section = mem.lessons.system_prompt_section()
    lines = section.splitlines()
    assert lines[0] == "## Browsing tips"  # only built-in lessons: nothing here was learned from experience
    assert lines[1] == ""
    assert lines[2] == "Built-in defaults (general browsing advice, not learned from your runs):"
    assert sorted(lines[3:]) == sorted(f"- {text}" for text in (FILL_SEED, ENTER_SEED, ESCAPE_SEED))
    assert len(lines) == 6


def test_the_system_prompt_section_is_empty_without_tier1_lessons(open_memory: Any,
                                                                  events: list[dict[str, Any]]) -> None:
    with open_memory(namespace="bare") as bare:  # the user deletes every lesson of the namespace
        rows.execute(bare, "DELETE FROM lessons WHERE namespace = 'bare'")
    with open_memory(namespace="bare", on_event=events.append) as mem:
        mem.lessons.record("Accept the cookies first.", "site_specific", domain="shop.example.com")
        assert mem.lessons.tier1() == []
        assert mem.lessons.system_prompt_section() == ""
        run = mem.start_run(goal="Buy a lamp", start_url="https://shop.example.com/")
        assert run.system_prompt() == ""
    # tier1(), system_prompt_section() and run.system_prompt() each load tier 1
    assert [(event["count"], event["lessons"]) for event in of(events, "tier1_loaded")] == [(0, [])] * 3


def test_tier1_loaded_event(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    run = mem.start_run(goal="Search for padel rackets", start_url=GOOGLE)
    prompt = run.system_prompt()
    [event] = of(events, "tier1_loaded")
    assert event["count"] == 3
    assert sorted(event["lessons"]) == sorted([FILL_SEED, ENTER_SEED, ESCAPE_SEED])
    assert event["run_id"] == run.id
    assert all(text in prompt for text in event["lessons"])


# --- trigger A: recall on error ------------------------------------------------------------------------------


def test_recall_on_error_needs_the_pattern_and_ranks_the_command_first(
    mem: webmem.Memory, events: list[dict[str, Any]]
) -> None:
    for _ in range(3):
        command_only = mem.lessons.record("Hover the parent menu first.", "error_recovery", "hover", "menu is closed")
    command_only_rarer = mem.lessons.record("Scroll before hovering.", "error_recovery", "hover", "never in errors")
    pattern_only = mem.lessons.record("Take a new snapshot: the element was replaced.", "error_recovery",
                                      "dblclick", "not attached")
    both = mem.lessons.record("Wait for the list to settle, then hover again.", "tool_fallback",
                              "HOVER", "Element Is Not Attached")
    nothing = mem.lessons.record("Pick the option by its label.", "error_recovery", "select", "option missing")
    error = "Error: Element is NOT ATTACHED to the DOM"
    # the pattern and the command, then the pattern alone; the command alone is not enough (a hover lesson
    # about a closed menu says nothing about a detached element)
    expected = [both.id, pattern_only.id]
    assert ids(mem.lessons.recall_on_error("HOVER", error)) == expected
    assert ids(mem.lessons.recall_on_error("playwright-cli hover e3", error)) == expected
    assert command_only.id not in expected and command_only_rarer.id not in expected and nothing.id not in expected
    [first, second] = of(events, "error_recall")
    assert first["command"] == "HOVER" and first["error_snippet"] == error
    assert first["matched"] == 2 and first["lessons"] == [both.lesson, pattern_only.lesson]
    assert second["command"] == "playwright-cli hover e3"


def test_a_lesson_scoring_zero_is_never_recalled(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    lesson = mem.lessons.record("Pick the option by its label.", "error_recovery", "select", "option missing")
    assert mem.lessons.recall_on_error("press", "Error: the keyboard layout is unknown") == []
    assert of(events, "error_recall")[-1]["matched"] == 0
    assert mem.lessons.get(lesson.id).use_count == 1


def test_the_error_snippet_is_bounded(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    mem.lessons.recall_on_error("click", "x" * 5000)
    assert len(of(events, "error_recall")[-1]["error_snippet"]) <= 120


def test_site_lessons_are_recalled_on_error_only_on_their_site(mem: webmem.Memory) -> None:
    site = mem.lessons.record("Close the cookie banner first.", "site_specific", "click", "cookie-banner",
                              domain="shop.example.com")
    error = 'Error: <div id="cookie-banner"> blocks the click'
    assert site.id not in ids(mem.lessons.recall_on_error("click", error))
    assert site.id not in ids(mem.lessons.recall_on_error("click", error, domain="other.example.com"))
    assert site.id not in ids(mem.lessons.recall_on_error("click", error, domain="notshop.example.com"))
    assert ids(mem.lessons.recall_on_error("click", error, domain="www.shop.example.com"))[0] == site.id
    run = mem.start_run(goal="Buy a lamp", start_url="https://www.shop.example.com/")
    assert ids(run.on_error("click", error))[0] == site.id
    run.context(url="https://blog.example.net/")
    assert site.id not in ids(run.on_error("click", error))


def test_a_pattern_naming_an_element_inside_markup_matches(mem: webmem.Memory) -> None:
    # The lesson agent's amazon.com lesson: its pattern is the id of the element in the error's markup.
    popover = mem.lessons.record("Press Escape to close the 'Deliver to' popover first.", "site_specific", "click",
                                 "nav-global-location-popover", domain="amazon.com")
    error = '    - <div id="nav-global-location-popover" class="a-popover">…</div> intercepts pointer events'
    assert popover.id in ids(mem.lessons.recall_on_error("hover", error, domain="www.amazon.com"))  # +3 alone


def test_on_error_tips_appear_in_the_next_context_only(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Search for padel rackets", start_url=GOOGLE)
    assert str(run.context()) == ""
    tips = run.on_error("playwright-cli fill e37 padel rackets", FILL_ERROR)
    assert texts(tips) == [FILL_SEED]
    pack = run.context(url=GOOGLE)
    part = pack.part("last_error")
    assert part is not None and (part.priority, part.status) == (60, "included")
    assert str(pack) == (
        f"Last action failed: playwright-cli fill e37 padel rackets\n{FILL_ERROR}\n\n"
        f"Tips from previous experience:\n- {FILL_SEED} (built-in default)"
    )
    after = run.context(url=GOOGLE)
    assert "Last action failed" not in str(after) and "Tips from previous experience" not in str(after)
    assert after.part("last_error").status == "empty"


def test_an_error_without_tips_is_shown_alone(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Search", start_url=GOOGLE)
    assert run.on_error("press", "Error: the keyboard layout is unknown") == []
    assert str(run.context()) == "Last action failed: press\nError: the keyboard layout is unknown"


# --- trigger B: recall on domain -----------------------------------------------------------------------------


@pytest.mark.parametrize(("site", "matches"), [
    ("google.com", True),
    ("www.google.com", True),
    ("maps.google.com", True),
    ("WWW.Google.COM", True),
    ("https://www.google.com/search?q=x", True),
    ("notgoogle.com", False),
    ("www.notgoogle.com", False),
    ("google.com.evil.org", False),
    ("google.co", False),
    ("oogle.com", False),
])
def test_domain_lessons_match_the_host_or_a_parent_at_a_label_boundary(mem: webmem.Memory, site: str,
                                                                       matches: bool) -> None:
    lesson = mem.lessons.record("Use the search box, not the doodle.", "site_specific", domain="google.com")
    assert ids(mem.lessons.recall_on_domain(site)) == ([lesson.id] if matches else [])


def test_domain_matches() -> None:
    assert domain_matches("google.com", "www.google.com") and domain_matches("google.com", "google.com")
    assert not domain_matches("google.com", "notgoogle.com")
    assert domain_matches("localhost", "localhost:5173")
    assert not domain_matches("localhost:5173", "localhost:3000")


_LABEL = st.sampled_from(["www", "maps", "google", "com", "co", "uk", "localhost", "127", "0", "1", "a-b", "x"])
_HOST = st.lists(_LABEL, min_size=1, max_size=5).map(".".join)
_DOMAIN_KEY = st.tuples(_HOST, st.sampled_from(["", ":5173", ":8080"])).map("".join)


@settings(max_examples=400, deadline=None)
@given(scope=st.one_of(_DOMAIN_KEY, _DOMAIN_KEY.map(str.upper)), site=_DOMAIN_KEY)
def test_the_scopes_looked_up_on_a_site_are_every_scope_that_matches_it(scope: str, site: str) -> None:
    if domain_matches(scope, site):
        assert scope.lower() in scopes_on(site)


def test_lessons_about_a_parent_domain_or_one_port_are_found_on_their_site_only(mem: webmem.Memory) -> None:
    parent = mem.lessons.record("Close the cookie banner first.", "site_specific", domain="example.co.uk")
    port = mem.lessons.record("The dev server needs a hard reload.", "site_specific", domain="localhost:5173")
    everywhere = mem.lessons.record("Wait for the spinner", "error_recovery", failed_command="click",
                                    error_pattern="spinner still visible")
    assert ids(mem.lessons.peek_domain("shop.example.co.uk")) == [parent.id]
    assert ids(mem.lessons.peek_domain("localhost:5173")) == [port.id]
    assert ids(mem.lessons.peek_domain("localhost:3000")) == [] == ids(mem.lessons.peek_domain("co.uk"))
    scoped = mem.lessons.record("Scroll the list first", "site_specific", failed_command="click",
                                error_pattern="list not loaded", domain="localhost:5173")
    error = "Timeout: spinner still visible, list not loaded"
    assert ids(mem.lessons.peek_error("click", error, domain="localhost:5173")) == [scoped.id, everywhere.id]
    assert ids(mem.lessons.peek_error("click", error, domain="localhost:3000")) == [everywhere.id]
    assert ids(mem.lessons.peek_error("click", error)) == [everywhere.id]


def test_a_sites_lessons_and_a_failures_lessons_are_read_through_an_index(sqlite_mem: webmem.Memory) -> None:
    for number in range(30):
        sqlite_mem.lessons.record(f"Tip {number}", "site_specific", domain=f"shop{number}.example.org")
    statements: list[str] = []
    with sqlite_mem.store.read() as conn:
        conn.connection.driver_connection.set_trace_callback(statements.append)
    sqlite_mem.lessons.peek_domain("www.shop7.example.org")
    sqlite_mem.lessons.peek_error("click", "Timeout 3000ms exceeded", domain="www.shop7.example.org")
    sqlite_mem.lessons.record("Close the banner first", "error_recovery", failed_command="click",
                              error_pattern="covered by a banner", domain="www.shop7.example.org")
    with sqlite_mem.store.read() as conn:
        conn.connection.driver_connection.set_trace_callback(None)
        reads = [sql for sql in statements if sql.startswith("SELECT") and "FROM lessons" in sql]
        plans = [" ".join(row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}").all()) for sql in reads]
    lookups = [found for plan in plans for found in re.findall(r"(?:SEARCH|SCAN) lessons[^)]*\)?", plan)]
    indexed = ("domain=?)", "lesson_id=?)", "error_pattern=?)")
    assert len(plans) >= 5 and all(found.endswith(indexed) for found in lookups), plans


def test_domain_recall_gives_the_three_most_used(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    for number, uses in enumerate([1, 4, 2, 3]):
        for _ in range(uses):
            mem.lessons.record(f"Shop tip {number} (used {uses} times).", "site_specific", domain="shop.example.com")
    mem.lessons.record("A tip for another shop.", "site_specific", domain="othershop.example.com")
    recalled = mem.lessons.recall_on_domain("www.shop.example.com")
    assert texts(recalled) == ["Shop tip 1 (used 4 times).", "Shop tip 3 (used 3 times).", "Shop tip 2 (used 2 times)."]
    event = of(events, "domain_recall")[-1]
    assert (event["domain"], event["matched"], event["lessons"]) == ("www.shop.example.com", 3, texts(recalled))


def test_context_recalls_site_tips_once_per_domain_change(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    tip = mem.lessons.record("Close the 'Deliver to' popover first.", "site_specific", domain="amazon.com")
    run = mem.start_run(goal="Find a kindle", start_url=AMAZON)
    pack = run.context(url=AMAZON)
    part = pack.part("site_tips")
    assert part is not None and (part.priority, part.status) == (45, "included")
    assert f"Tips for this site:\n- {tip.lesson}" in str(pack)
    assert mem.lessons.get(tip.id).use_count == 2
    for url in (AMAZON, "https://www.amazon.com/s?k=kindle", AMAZON + "dp/1"):
        again = run.context(url=url)
        assert f"Tips for this site:\n- {tip.lesson}" in str(again)  # stays while on the domain
    assert mem.lessons.get(tip.id).use_count == 2  # counted once, not on every context call
    elsewhere = run.context(url="https://www.example.org/")
    assert "Tips for this site" not in str(elsewhere)
    assert elsewhere.part("site_tips").status == "empty"
    assert mem.lessons.get(tip.id).use_count == 2
    back = run.context(url="https://www.amazon.com/gp/cart")  # a new change of domain: recalled again
    assert "Tips for this site" in str(back)
    assert mem.lessons.get(tip.id).use_count == 3
    assert [event["domain"] for event in of(events, "domain_recall")] == [
        "www.amazon.com", "www.example.org", "www.amazon.com",
    ]


def test_on_domain_returns_the_tips(mem: webmem.Memory) -> None:
    tip = mem.lessons.record("Close the 'Deliver to' popover first.", "site_specific", domain="amazon.com")
    run = mem.start_run(goal="Find a kindle", start_url="https://www.example.org/")
    assert ids(run.on_domain("https://www.amazon.com/s?k=kindle")) == [tip.id]
    assert ids(run.on_domain("https://www.amazon.com/dp/1")) == [tip.id]  # same domain: same tips, not counted
    assert mem.lessons.get(tip.id).use_count == 2
    assert f"Tips for this site:\n- {tip.lesson}" in str(run.context(url="https://www.amazon.com/dp/1"))
    assert run.on_domain("https://www.example.org/") == []


# --- what a recall records --------------------------------------------------------------------------------------


def test_a_recall_counts_use_time_domain_and_run(mem: webmem.Memory) -> None:
    lesson = mem.lessons.record("Take a new snapshot: the frame reloaded.", "error_recovery", "click", "detached")
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    age(mem, lesson.id, long_ago)
    assert lesson.triggered_domains == [] and lesson.recalled_in == []
    run = mem.start_run(goal="Book a room", start_url="https://a.example.com/")
    assert lesson.id in ids(run.on_error("click", "Error: locator.click: Frame was detached"))
    after = mem.lessons.get(lesson.id)
    assert after.use_count == 2
    assert after.last_used > long_ago
    assert after.triggered_domains == ["a.example.com"]
    assert after.recalled_in == [run.id]
    run.on_error("click", "Error: locator.click: Frame was detached")
    again = mem.lessons.get(lesson.id)
    assert again.use_count == 3
    assert again.triggered_domains == ["a.example.com"]  # no duplicates
    assert again.recalled_in == [run.id]
    run.context(url="https://b.example.com/")
    run.on_error("click", "Error: locator.click: Frame was detached")
    assert mem.lessons.get(lesson.id).triggered_domains == ["a.example.com", "b.example.com"]


def test_a_domain_recall_counts_too(mem: webmem.Memory) -> None:
    tip = mem.lessons.record("Use the list view.", "site_specific", domain="example.com")
    run = mem.start_run(goal="List orders", start_url="https://app.example.com/")
    run.context()
    after = mem.lessons.get(tip.id)
    assert (after.use_count, after.triggered_domains, after.recalled_in) == (2, ["app.example.com"], [run.id])


def test_learning_records_the_runs_it_learned_from(mem: webmem.Memory) -> None:
    runs = []
    for _ in range(2):
        run = mem.start_run(goal="Book a room", start_url="https://a.example.com/")
        run.record_step(action="click", ok=False, error="Error: locator.click: Frame was detached",
                        url="https://a.example.com/")
        run.record_step(action="goto", url="https://a.example.com/rooms")
        run.finish(success=True)
        runs.append(run.id)
    [lesson] = [item for item in mem.lessons.list() if item.source == "learned"]
    assert lesson.learned_from == runs
    assert lesson.recalled_in == []


# --- deduplication ---------------------------------------------------------------------------------------------


def test_the_same_command_and_pattern_count_again(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    first = mem.lessons.record("Take a new snapshot.", "error_recovery", "click", "detached",
                               triggered_domains=["a.example.com"])
    again = mem.lessons.record("Reload the page.", "error_recovery", "playwright-cli CLICK", "DETACHED",
                               triggered_domains=["b.example.com", "a.example.com"])
    assert again.id == first.id
    assert again.lesson == "Take a new snapshot."
    assert again.use_count == 2
    assert again.triggered_domains == ["a.example.com", "b.example.com"]
    assert len(mem.lessons.list()) == 4
    dedup = of(events, "lesson_deduplicated")[-1]
    assert (dedup["lesson"], dedup["new_use_count"]) == ("Take a new snapshot.", 2)
    assert [event["lesson"] for event in of(events, "lesson_recorded")] == ["Take a new snapshot."]


def test_lessons_without_command_and_pattern_are_the_same_by_category_domain_and_text(mem: webmem.Memory) -> None:
    first = mem.lessons.record("Accept the cookies first.", "site_specific", domain="shop.example.com")
    assert mem.lessons.record("Accept the cookies first.", "site_specific", domain="shop.example.com").id == first.id
    assert mem.lessons.get(first.id).use_count == 2
    others = [
        mem.lessons.record("Accept the cookies first.", "site_specific", domain="blog.example.com"),
        mem.lessons.record("Accept the cookies first.", "best_practice", domain="shop.example.com"),
        mem.lessons.record("Accept the cookies first.", "best_practice"),
    ]
    assert len({first.id, *ids(others)}) == 4


def test_two_site_lessons_without_command_and_pattern_stay_apart(mem: webmem.Memory,
                                                                events: list[dict[str, Any]]) -> None:
    # The lesson agent merged these two (fixture B): the stackoverflow.com text was lost.
    hacker_news = mem.lessons.record("On news.ycombinator.com, use the 'More' link at the bottom to see older posts.",
                                     "site_specific", domain="news.ycombinator.com")
    stack_overflow = mem.lessons.record("On stackoverflow.com, dismiss the cookie consent dialog first.",
                                        "site_specific", domain="stackoverflow.com")
    assert hacker_news.id != stack_overflow.id
    assert mem.lessons.get(hacker_news.id).use_count == 1
    assert texts(mem.lessons.recall_on_domain("stackoverflow.com")) == [stack_overflow.lesson]
    assert len(of(events, "lesson_recorded")) == 2 and of(events, "lesson_deduplicated") == []


# --- promotion ---------------------------------------------------------------------------------------------------


def record_on(mem: webmem.Memory, domains: list[str], category: str = "error_recovery",
              domain: str | None = None) -> webmem.Lesson:
    for triggered in domains:
        lesson = mem.lessons.record("Take a new snapshot: the frame reloaded.", category, "click", "detached",
                                    domain=domain, triggered_domains=[triggered])
    return lesson


def test_promotion_after_five_uses_on_three_domains(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    lesson = record_on(mem, ["a.com", "b.com", "c.com", "a.com"])
    assert lesson.category == "error_recovery" and of(events, "lesson_promoted") == []
    lesson = record_on(mem, ["b.com"])
    assert (lesson.category, lesson.use_count, lesson.source) == ("best_practice", 5, "learned")
    assert lesson.id in ids(mem.lessons.tier1())
    [event] = of(events, "lesson_promoted")
    assert (event["lesson"], event["use_count"], event["triggered_domains"]) == (
        lesson.lesson, 5, ["a.com", "b.com", "c.com"],
    )
    record_on(mem, ["d.com"])
    assert len(of(events, "lesson_promoted")) == 1


def test_a_recall_that_promotes_a_lesson_returns_it_promoted(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    mem.lessons.record("Wait for the overlay to go", "error_recovery", failed_command="click",
                       error_pattern="covered by an overlay", triggered_domains=["a.com"])
    recalled = [mem.lessons.recall_on_error("click", "Timeout: covered by an overlay", domain=site)
                for site in ("b.com", "c.com", "a.com", "b.com")]
    assert [found[0].category for found in recalled] == ["error_recovery"] * 3 + ["best_practice"]
    assert recalled[-1][0].use_count == 5 and len(of(events, "lesson_promoted")) == 1
    assert mem.lessons.peek_error("click", "covered by an overlay", domain="d.com")[0].category == "best_practice"


@pytest.mark.parametrize(("domains", "extra"), [
    (["a.com", "b.com", "c.com", "d.com"], {}),                    # 4 uses
    (["a.com", "b.com", "a.com", "b.com", "a.com", "b.com"], {}),  # 2 domains
    (["a.com", "b.com", "c.com", "d.com", "e.com"], {"domain": "shop.example.com"}),  # a site lesson
    (["a.com", "b.com", "c.com", "d.com", "e.com"], {"category": "site_specific"}),   # not error_recovery
])
def test_no_promotion(mem: webmem.Memory, events: list[dict[str, Any]], domains: list[str],
                      extra: dict[str, Any]) -> None:
    category = extra.get("category", "error_recovery")
    lesson = record_on(mem, domains, **extra)
    assert lesson.category == category
    assert lesson.id not in ids(mem.lessons.tier1())
    assert of(events, "lesson_promoted") == []


# --- helpfulness and demotion --------------------------------------------------------------------------------------


def counts(mem: webmem.Memory, lesson_id: str) -> tuple[int, int]:
    lesson = mem.lessons.get(lesson_id)
    return lesson.helpful_count, lesson.unhelpful_count


def failed(run: webmem.Run, error: str = VIEWPORT_ERROR, action: str = "click") -> None:
    run.record_step(action=action, ok=False, error=error, url="https://a.example.com/")


def worked(run: webmem.Run, action: str = "scroll") -> None:
    run.record_step(action=action, url="https://a.example.com/")


@pytest.fixture
def tip_run(mem: webmem.Memory) -> tuple[webmem.Run, webmem.Lesson]:
    lesson = scroll_lesson(mem)
    run = mem.start_run(goal="Press the buy button", start_url="https://a.example.com/")
    assert lesson.id in ids(run.on_error("click", VIEWPORT_ERROR))
    return run, lesson


def test_a_tip_followed_by_a_success_was_helpful(mem: webmem.Memory, tip_run: tuple[webmem.Run, webmem.Lesson]) -> None:
    run, lesson = tip_run
    failed(run)  # the failed step that triggered the recall, recorded after on_error: not a repeat
    assert counts(mem, lesson.id) == (0, 0)
    worked(run)
    assert counts(mem, lesson.id) == (1, 0)
    worked(run)
    assert counts(mem, lesson.id) == (1, 0)  # judged once


def test_a_success_two_steps_later_still_counts(mem: webmem.Memory, tip_run: tuple[webmem.Run, webmem.Lesson]) -> None:
    run, lesson = tip_run
    failed(run)
    failed(run, "Error: the keyboard layout is unknown", action="press")
    worked(run)
    assert counts(mem, lesson.id) == (1, 0)


def test_a_success_three_steps_later_does_not_count(mem: webmem.Memory,
                                                    tip_run: tuple[webmem.Run, webmem.Lesson]) -> None:
    run, lesson = tip_run
    failed(run)
    failed(run, "Error: the keyboard layout is unknown", action="press")
    failed(run, "Error: the mouse wheel is unknown here", action="hover")
    worked(run)
    assert counts(mem, lesson.id) == (0, 0)


def test_a_followed_tip_that_failed_was_unhelpful(mem: webmem.Memory,
                                                  tip_run: tuple[webmem.Run, webmem.Lesson]) -> None:
    run, lesson = tip_run
    failed(run)
    failed(run, "Error: the page cannot scroll", action="scroll")
    assert counts(mem, lesson.id) == (0, 1)
    worked(run)
    assert counts(mem, lesson.id) == (0, 1)  # judged once


def test_a_tip_the_agent_did_not_follow_is_not_judged(mem: webmem.Memory,
                                                       tip_run: tuple[webmem.Run, webmem.Lesson]) -> None:
    run, lesson = tip_run
    failed(run)
    worked(run, action="press")  # something else worked: the tip did not help
    failed(run, VIEWPORT_ERROR + " (second attempt)", action="playwright-cli click e7")  # nor did it fail
    worked(run)
    assert counts(mem, lesson.id) == (0, 0)


def test_a_press_tip_is_followed_only_by_its_key(mem: webmem.Memory) -> None:
    tip = mem.lessons.record("Press Enter to submit.", "error_recovery", "click", "outside of the viewport",
                             recovery="press Enter")
    run = mem.start_run(goal="Press the buy button", start_url="https://a.example.com/")
    assert tip.id in ids(run.on_error("click", VIEWPORT_ERROR))
    failed(run)
    run.record_step(action="press", value="Tab", url="https://a.example.com/")
    assert counts(mem, tip.id) == (0, 0)
    run.record_step(action="press", value="enter", url="https://a.example.com/")
    assert counts(mem, tip.id) == (1, 0)


def test_a_tip_without_advice_to_follow_is_never_judged(mem: webmem.Memory) -> None:
    tip = mem.lessons.record("Scroll first.", "error_recovery", "click", "outside of the viewport")
    run = mem.start_run(goal="Press the buy button", start_url="https://a.example.com/")
    assert tip.id in ids(run.on_error("click", VIEWPORT_ERROR))
    failed(run)
    worked(run)
    assert counts(mem, tip.id) == (0, 0)


def test_the_trigger_may_be_recorded_before_the_recall(mem: webmem.Memory) -> None:
    lesson = scroll_lesson(mem)
    run = mem.start_run(goal="Press the buy button", start_url="https://a.example.com/")
    failed(run)
    run.on_error("click", VIEWPORT_ERROR)
    worked(run)
    assert counts(mem, lesson.id) == (1, 0)


def test_a_long_error_recorded_after_the_recall_is_still_the_trigger(mem: webmem.Memory) -> None:
    # record_step keeps the first 4000 characters of an error; the recall saw all of it.
    lesson = scroll_lesson(mem)
    error = VIEWPORT_ERROR + "\nCall log:\n" + "  - retrying click action\n" * 400
    run = mem.start_run(goal="Press the buy button", start_url="https://a.example.com/")
    assert lesson.id in ids(run.on_error("click", error))
    failed(run, error)
    assert counts(mem, lesson.id) == (0, 0)
    worked(run)
    assert counts(mem, lesson.id) == (1, 0)


def test_an_error_with_a_secret_recorded_after_the_recall_is_still_the_trigger(open_memory: Any) -> None:
    # record_step stores the error with registered secrets replaced by placeholders.
    with open_memory(secrets={"api_key": "sk-live-123456"}) as mem:
        lesson = scroll_lesson(mem)
        error = VIEWPORT_ERROR + " while posting sk-live-123456"
        run = mem.start_run(goal="Press the buy button", start_url="https://a.example.com/")
        assert lesson.id in ids(run.on_error("click", error))
        failed(run, error)
        assert counts(mem, lesson.id) == (0, 0)
        worked(run)
        assert counts(mem, lesson.id) == (1, 0)


def test_advice_that_keeps_failing_is_demoted(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    lesson = scroll_lesson(mem)
    escape = mem.lessons.record("Press Escape, then click again.", "best_practice", "click", "the viewport",
                                recovery="press Escape")  # recalled alongside, never followed
    run = mem.start_run(goal="Press the buy button", start_url="https://a.example.com/")
    for _ in range(3):
        recalled = ids(run.on_error("click", VIEWPORT_ERROR))
        assert lesson.id in recalled and escape.id in recalled
        failed(run)  # the trigger
        failed(run, "Error: the page cannot scroll", action="scroll")  # the tip, followed, failed
    assert counts(mem, lesson.id) == (0, 3)
    assert counts(mem, escape.id) == (0, 0)
    stored = mem.lessons.get(lesson.id)
    assert stored.demoted
    assert lesson.id in ids(mem.lessons.list())  # kept, marked
    [demoted] = of(events, "lesson_demoted")
    assert (demoted["lesson"], demoted["helpful"], demoted["unhelpful"]) == (SCROLL_TIP, 0, 3)
    # no longer recalled; the other tip, never judged, still is
    again = ids(run.on_error("click", VIEWPORT_ERROR))
    assert lesson.id not in again and escape.id in again
    assert ids(mem.lessons.recall_on_error("click", VIEWPORT_ERROR, domain="a.example.com")).count(lesson.id) == 0
    mem.lessons.rate([lesson.id], helpful=False)
    assert len(of(events, "lesson_demoted")) == 1  # emitted once


def test_a_demoted_site_lesson_is_not_recalled_on_its_domain(mem: webmem.Memory) -> None:
    tip = mem.lessons.record("Use the list view.", "site_specific", domain="example.com")
    for _ in range(3):
        mem.lessons.rate([tip.id], helpful=False)
    assert mem.lessons.recall_on_domain("app.example.com") == []
    run = mem.start_run(goal="List orders", start_url="https://app.example.com/")
    assert run.on_domain("https://app.example.com/") == []
    assert "Tips for this site" not in str(run.context())


def test_a_demoted_best_practice_leaves_tier1(mem: webmem.Memory) -> None:
    practice = mem.lessons.record("Wait for the spinner to go away.", "best_practice", "click", "spinner")
    for _ in range(3):
        mem.lessons.rate([practice.id], helpful=False)
    assert practice.id not in ids(mem.lessons.tier1())
    assert practice.lesson not in mem.lessons.system_prompt_section()


@pytest.mark.parametrize(("helpful", "unhelpful", "demoted"), [
    (0, 2, False), (0, 3, True), (3, 3, True), (4, 3, False), (5, 6, True),
])
def test_demotion_needs_three_unhelpful_and_no_more_helpful(mem: webmem.Memory, helpful: int, unhelpful: int,
                                                            demoted: bool) -> None:
    lesson = scroll_lesson(mem)
    for _ in range(unhelpful):
        mem.lessons.rate([lesson.id], helpful=False)
    for _ in range(helpful):
        mem.lessons.rate([lesson.id], helpful=True)
    assert mem.lessons.get(lesson.id).demoted is demoted
    assert (lesson.id in ids(mem.lessons.recall_on_error("click", VIEWPORT_ERROR))) is not demoted


def test_a_demoted_lesson_is_never_promoted(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    lesson = scroll_lesson(mem)
    for _ in range(3):
        mem.lessons.rate([lesson.id], helpful=False)
    for domain in ["a.com", "b.com", "c.com", "d.com", "e.com"]:
        mem.lessons.record(SCROLL_TIP, "error_recovery", "click", "outside of the viewport", triggered_domains=[domain])
    stored = mem.lessons.get(lesson.id)
    assert (stored.use_count, len(stored.triggered_domains), stored.category) == (6, 5, "error_recovery")
    assert of(events, "lesson_promoted") == []


def test_seeds_are_never_demoted(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    fill = seed(mem, FILL_SEED)
    for _ in range(5):
        mem.lessons.rate([fill.id], helpful=False)
    assert not mem.lessons.get(fill.id).demoted
    assert ids(mem.lessons.recall_on_error("fill", FILL_ERROR)) == [fill.id]
    assert fill.id in ids(mem.lessons.tier1())
    assert of(events, "lesson_demoted") == []


# --- pruning -------------------------------------------------------------------------------------------------------


def test_prune_removes_stale_rarely_used_learned_lessons(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    lesson = scroll_lesson(mem)
    used = mem.lessons.get(lesson.id).last_used
    assert mem.lessons.prune(now=used + timedelta(days=89)) == 0
    assert mem.lessons.prune(now=used + timedelta(days=90)) == 0
    assert of(events, "lessons_pruned") == []
    assert mem.lessons.prune(now=used + timedelta(days=91)) == 1
    assert lesson.id not in ids(mem.lessons.list())
    [event] = of(events, "lessons_pruned")
    assert (event["pruned_count"], event["remaining_count"]) == (1, 3)


def test_prune_keeps_lessons_used_five_times(mem: webmem.Memory) -> None:
    for _ in range(5):
        often = mem.lessons.record("Take a new snapshot.", "error_recovery", "click", "detached")
    for _ in range(4):
        rarely = mem.lessons.record("Reload the page.", "error_recovery", "goto", "net::err")
    assert mem.lessons.prune(now=utcnow() + timedelta(days=1000)) == 1
    assert often.id in ids(mem.lessons.list()) and rarely.id not in ids(mem.lessons.list())


def test_opening_a_memory_prunes(open_memory: Any, events: list[dict[str, Any]]) -> None:
    with open_memory() as mem:
        stale = scroll_lesson(mem)
        recent = mem.lessons.record("Take a new snapshot.", "error_recovery", "click", "detached")
        old_but_used = mem.lessons.record("Reload the page.", "error_recovery", "goto", "net::err")
        for _ in range(4):
            mem.lessons.record("Reload the page.", "error_recovery", "goto", "net::err")
        now = utcnow()
        age(mem, stale.id, now - timedelta(days=91))
        age(mem, recent.id, now - timedelta(days=89))
        age(mem, old_but_used.id, now - timedelta(days=400))
    with open_memory(on_event=events.append) as mem:
        assert sorted(ids(mem.lessons.list())) == sorted(
            [recent.id, old_but_used.id, *(seed(mem, text).id for text in (FILL_SEED, ENTER_SEED, ESCAPE_SEED))]
        )
    [event] = of(events, "lessons_pruned")
    assert (event["pruned_count"], event["remaining_count"]) == (1, 5)


def test_opening_a_memory_with_nothing_to_prune_waits_for_no_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pruning looks before it writes: an open that finds nothing stale takes no write lock, so another process's
    long write does not hold it up; with a stale lesson it must wait for the lock (and here gives up)."""
    from webmem.store import sqlite_connections

    with webmem.Memory.open(tmp_path) as mem:
        lesson = scroll_lesson(mem)
    monkeypatch.setattr(sqlite_connections, "LOCK_WAIT_SECONDS", 0.3)
    monkeypatch.setattr(sqlite_connections, "BUSY_TIMEOUT_MS", 100)

    def opened_while_another_writes() -> list[str]:
        holder = sqlite3.connect(tmp_path / "memory.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with webmem.Memory.open(tmp_path) as mem:
                return ids(mem.lessons.list())
        finally:
            holder.execute("ROLLBACK")
            holder.close()

    assert lesson.id in opened_while_another_writes()
    with webmem.Memory.open(tmp_path) as mem:
        age(mem, lesson.id, utcnow() - timedelta(days=91))
    with pytest.raises(webmem.StoreLocked):
        opened_while_another_writes()
    with webmem.Memory.open(tmp_path) as mem:
        assert lesson.id not in ids(mem.lessons.list())


# --- import of the lesson agent's file ----------------------------------------------------------------------------


def fixture_lessons() -> list[dict[str, Any]]:
    return json.loads(FIXTURE_FILE.read_text(encoding="utf-8"))["lessons"]


def by_text(mem: webmem.Memory) -> dict[str, webmem.Lesson]:
    return {item.lesson: item for item in mem.lessons.list()}


def test_imported_lessons_are_filed_under_their_domain_key(mem: webmem.Memory) -> None:
    given = webmem.Lesson(id="lesson_cart", lesson="Open the cart from the header", category="site_specific",
                          domain="Shop.Example.COM", triggered_domains=["https://Shop.Example.COM/cart"],
                          created_at=utcnow(), last_used=utcnow())
    mem.lessons.import_lessons([given])
    [found] = mem.lessons.peek_domain("shop.example.com")
    assert (found.domain, found.triggered_domains) == ("shop.example.com", ["shop.example.com"])
    with pytest.raises(webmem.InvalidInput, match="domain"):
        mem.lessons.import_lessons([given.model_copy(update={"id": "lesson_other"}),
                                    given.model_copy(update={"id": "lesson_bad", "domain": "not a/domain"})])
    assert len(mem.lessons.list(domain="shop.example.com")) == 1  # nothing of the refused batch was stored


def test_a_lesson_imported_with_an_upper_case_domain_before_0013_is_found_after(open_memory: Any,
                                                                                memory_location: str) -> None:
    store = rows.open_store(memory_location)
    try:
        apply_migrations(store, target="0012_site_changes")
        with store.write() as conn:
            conn.execute(text(
                "INSERT INTO lessons (namespace, lesson_id, lesson, category, domain, use_count, helpful_count,"
                " unhelpful_count, source, created_at, last_used) VALUES ('default', 'lesson_old', 'Use the top menu',"
                " 'site_specific', 'Shop.Example.COM', 1, 0, 0, 'learned', :at, :at)"), {"at": utcnow()})
    finally:
        store.close()
    assert ids(open_memory().lessons.peek_domain("www.shop.example.com")) == ["lesson_old"]


def test_import_into_a_namespace_without_seeds_brings_all_nine_lessons(open_memory: Any,
                                                                     events: list[dict[str, Any]]) -> None:
    with open_memory(namespace="imported") as imported:  # the user deleted the seeds: the file's lessons
        rows.execute(imported, "DELETE FROM lessons WHERE namespace = 'imported'")  # arrive as they are
    with open_memory(namespace="imported", on_event=events.append) as mem:
        report = mem.lessons.import_file(FIXTURE_FILE)
        assert (report.added, report.merged) == (9, 0)
        lessons = by_text(mem)
        assert len(lessons) == 9
        for item in fixture_lessons():
            text = item["lesson"].replace("<Title>", "").replace("  ", " ")  # markup is removed on import
            got = lessons[text]
            assert (got.category, got.failed_command, got.error_pattern, got.domain, got.use_count, got.source) == (
                item["category"], item["failed_command"], item["error_pattern"], item["domain"], item["use_count"],
                item["source"],
            ), text
            assert sorted(got.triggered_domains) == sorted(item["triggered_domains"])
            assert got.created_at.date().isoformat() == item["created_at"]
            assert got.last_used.date().isoformat() == item["last_used"]
        assert any("—" in text for text in lessons)  # the seed's em dash survives
        promoted = lessons["When click fails with 'TimeoutError: locator.click: Timeout 5000ms exceeded.', try press instead."]
        assert (promoted.category, promoted.use_count) == ("best_practice", 8)
        assert texts(mem.lessons.tier1())[0] == promoted.lesson
        assert not any("<" in text for text in lessons)
    [imported] = of(events, "lessons_imported")
    assert (imported["added"], imported["merged"]) == (9, 0)


def test_import_merges_the_files_seeds_into_the_namespaces_seeds(mem: webmem.Memory) -> None:
    report = mem.lessons.import_file(FIXTURE_FILE)
    assert (report.added, report.merged) == (6, 3)
    lessons = by_text(mem)
    assert len(lessons) == 9
    # The file's three seeds have the same (failed_command, error_pattern) as webmem's: max counts, union of domains.
    fill, enter, escape = lessons[FILL_SEED], lessons[ENTER_SEED], lessons[ESCAPE_SEED]
    assert (fill.use_count, sorted(fill.triggered_domains)) == (3, ["www.booking.com", "www.google.com"])
    assert (enter.use_count, len(enter.triggered_domains)) == (5, 4)
    assert (escape.use_count, len(escape.triggered_domains)) == (3, 3)
    amazon = lessons["On amazon.com, press Escape to close the 'Deliver to' location popover before using the search box."]
    assert (amazon.category, amazon.domain, amazon.use_count) == ("site_specific", "amazon.com", 5)
    assert sorted(amazon.triggered_domains) == ["www.amazon.com", "www.booking.com"]
    goto = lessons["If goto times out on a heavy page, take a snapshot first: the page is often usable before the load event."]
    assert (goto.category, goto.use_count, goto.triggered_domains) == ("tool_fallback", 2, [])
    click = lessons["When click fails with 'TimeoutError: locator.click: Timeout 5000ms exceeded.', try press instead."]
    assert (click.category, click.source, click.use_count) == ("best_practice", "learned", 8)
    detached = lessons["When click fails with 'Error: locator.click: Frame was detached', try goto instead."]
    assert (detached.category, detached.error_pattern, detached.triggered_domains) == (
        "error_recovery", "frame was detached", ["www.booking.com"],
    )
    # imported lessons are recalled like any other
    assert amazon.id in ids(mem.lessons.recall_on_domain("www.amazon.com"))


def test_importing_twice_does_not_double_counts(mem: webmem.Memory) -> None:
    mem.lessons.import_file(FIXTURE_FILE)
    before = snapshot(mem)
    report = mem.lessons.import_file(str(FIXTURE_FILE))
    assert (report.added, report.merged) == (0, 9)
    assert snapshot(mem) == before


def _lesson(**changes: Any) -> dict[str, Any]:
    return {**fixture_lessons()[0], **changes}


CORRUPT_FILES = {
    "bad_json": '{"version": 1, "lessons": [',
    "not_utf8": b"\xff\xfe\x00not json",
    "wrong_version": {"version": 2, "lessons": []},
    "no_version": {"lessons": []},
    "top_level_list": [_lesson()],
    "lessons_not_a_list": {"version": 1, "lessons": {"0": _lesson()}},
    "unknown_top_level_key": {"version": 1, "lessons": [], "extra": True},
    "unknown_key_in_a_lesson": {"version": 1, "lessons": [_lesson(weight=3)]},
    "bad_category": {"version": 1, "lessons": [_lesson(category="tips")]},
    "bad_source": {"version": 1, "lessons": [_lesson(source="curated")]},
    "negative_use_count": {"version": 1, "lessons": [_lesson(use_count=-1)]},
    "bad_date": {"version": 1, "lessons": [_lesson(last_used="yesterday")]},
    "empty_text": {"version": 1, "lessons": [_lesson(lesson="")]},
    "markup_only_text": {"version": 1, "lessons": [_lesson(lesson="<b></b>")]},
    "good_then_bad_domain": {"version": 1, "lessons": [_lesson(), _lesson(lesson="x", domain="not a/domain")]},
    "good_then_bad_triggered_domain": {"version": 1, "lessons": [_lesson(), _lesson(triggered_domains=["a b"])]},
}


@pytest.mark.parametrize("name", sorted(CORRUPT_FILES))
def test_a_corrupt_file_is_refused_and_changes_nothing(mem: webmem.Memory, events: list[dict[str, Any]],
                                                       tmp_path: Path, name: str) -> None:
    content = CORRUPT_FILES[name]
    path = tmp_path / f"{name}.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    mem.lessons.recall_on_error("fill", FILL_ERROR)
    before = snapshot(mem)
    with pytest.raises(webmem.InvalidInput) as caught:
        mem.lessons.import_file(path)
    assert str(path) in str(caught.value)
    assert snapshot(mem) == before
    assert of(events, "lessons_imported") == []


@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_a_missing_file_or_a_directory_is_refused(mem: webmem.Memory, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "nowhere.json"
    if kind == "directory":
        path.mkdir()
    before = snapshot(mem)
    with pytest.raises(webmem.InvalidInput) as caught:
        mem.lessons.import_file(path)
    assert str(path) in str(caught.value)
    assert snapshot(mem) == before


# --- namespaces and a disabled memory --------------------------------------------------------------------------------


def test_lessons_belong_to_their_namespace(open_memory: Any) -> None:
    with open_memory(namespace="alpha") as alpha, open_memory(namespace="beta") as beta:
        tip = alpha.lessons.record("Use the list view.", "site_specific", domain="example.com")
        learned = alpha.lessons.record(SCROLL_TIP, "error_recovery", "click", "outside of the viewport")
        alpha.lessons.import_file(FIXTURE_FILE)
        assert tip.id in ids(alpha.lessons.list())
        assert len(beta.lessons.list()) == 3
        assert beta.lessons.recall_on_domain("app.example.com") == []
        assert learned.id not in ids(beta.lessons.recall_on_error("click", VIEWPORT_ERROR))
        # the same lesson learned in beta is new there, and alpha's count does not move
        assert beta.lessons.record(SCROLL_TIP, "error_recovery", "click", "outside of the viewport").id != learned.id
        assert alpha.lessons.get(learned.id).use_count == 1
        with pytest.raises(webmem.InvalidInput):
            beta.lessons.get(learned.id)
        assert beta.lessons.prune(now=utcnow() + timedelta(days=1000)) == 1
        assert learned.id in ids(alpha.lessons.list())


def test_a_disabled_memory_recalls_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "off"
    with webmem.Memory.open(directory, enabled=False) as mem:
        run = mem.start_run(goal="Search", start_url=GOOGLE)
        assert run.on_error("fill", FILL_ERROR) == []
        assert run.on_domain(AMAZON) == []
        assert run.system_prompt() == ""
        assert str(run.context(url=GOOGLE)) == ""
        run.record_step(action="fill", ok=False, error=FILL_ERROR)
        run.record_step(action="click")
        run.finish(success=True)
        with pytest.raises(webmem.MemoryDisabled):
            mem.lessons.list()
    assert not directory.exists()


# --- bad input --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "kwargs"), [
    (("Use the list view.", "tips"), {}),
    (("Use the list view.", "best_practice"), {"source": "curated"}),
    (("", "best_practice"), {}),
    (("   \n\t ", "best_practice"), {}),
    (("<div><span></span></div>", "best_practice"), {}),
    (("`` ** ##", "best_practice"), {}),
    ((42, "best_practice"), {}),
    (("Use the list view.", "site_specific"), {"domain": "not a/domain"}),
    (("Use the list view.", "site_specific"), {"domain": 7}),
])
def test_record_refuses_bad_lessons(mem: webmem.Memory, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    before = snapshot(mem)
    with pytest.raises(webmem.InvalidInput):
        mem.lessons.record(*args, **kwargs)
    assert snapshot(mem) == before


def test_record_keeps_the_text_without_markup(mem: webmem.Memory) -> None:
    lesson = mem.lessons.record("Use the <b>list</b> view\x00 `now`.", "best_practice")
    assert lesson.lesson == "Use the list view now ."


@pytest.mark.parametrize(("command", "error"), [(None, "boom boom boom"), ("click", 42), (["click"], "boom"),
                                               ("click", None)])
def test_recall_on_error_refuses_non_strings(mem: webmem.Memory, command: Any, error: Any) -> None:
    with pytest.raises(webmem.InvalidInput):
        mem.lessons.recall_on_error(command, error)


@pytest.mark.parametrize("max_items", [0, -1, True, "3", 2.5, None])
def test_tier1_refuses_a_bad_size(mem: webmem.Memory, max_items: Any) -> None:
    with pytest.raises(webmem.InvalidInput):
        mem.lessons.tier1(max_items=max_items)


def test_other_bad_input(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Search", start_url=GOOGLE)
    for bad in [("", FILL_ERROR), ("   ", FILL_ERROR), (None, FILL_ERROR), ("fill", None), ("fill", 3)]:
        with pytest.raises(webmem.InvalidInput):
            run.on_error(*bad)
    with pytest.raises(webmem.InvalidInput):
        run.on_domain("not a url")
    with pytest.raises(webmem.InvalidInput):
        mem.lessons.recall_on_domain("a/b")
    with pytest.raises(webmem.InvalidInput):
        mem.lessons.list(category="tips")
    with pytest.raises(webmem.InvalidInput):
        mem.lessons.extract_from_steps("click")
    with pytest.raises(webmem.InvalidInput):
        mem.lessons.extract_from_steps([{"action": "click", "ok": False, "error": FILL_ERROR}])
    with pytest.raises(webmem.InvalidInput):
        mem.lessons.import_file(42)
    assert [item.use_count for item in mem.lessons.list()] == [0, 0, 0]


# --- walkthroughs ------------------------------------------------------------------------------------------------------


def test_walkthrough_1_fill_error_recall_and_learning_merged_into_the_seed(mem: webmem.Memory,
                                                                           events: list[dict[str, Any]]) -> None:
    run = mem.start_run(goal="Search for padel rackets", start_url=GOOGLE)
    run.context(url=GOOGLE)
    run.record_step(action="goto", url=GOOGLE)
    run.record_step(action="click", target="e12", url=GOOGLE)
    tips = run.on_error("fill", FILL_ERROR)  # step 3 failed: trigger A
    assert texts(tips) == [FILL_SEED]
    run.record_step(action="fill", target="e37", value="padel rackets", ok=False, error=FILL_ERROR, url=GOOGLE)
    context = str(run.context(url=GOOGLE))
    assert f"{FILL_ERROR}\n\nTips from previous experience:\n- {FILL_SEED}" in context
    run.record_step(action="click", target="e37", url=GOOGLE)
    run.record_step(action="type", value="padel rackets", url=GOOGLE)
    run.record_step(action="press", value="Enter", url="https://www.google.com/search?q=padel+rackets")
    run.finish(success=True)
    # post-run learning found fill -> click, which is the seed: counted again, nothing added
    assert [item.source for item in mem.lessons.list()] == ["seed"] * 3
    fill = seed(mem, FILL_SEED)
    assert fill.use_count == 2  # recalled once, learned once
    assert fill.triggered_domains == ["www.google.com"]
    assert (fill.recalled_in, fill.learned_from) == ([run.id], [run.id])
    assert (fill.helpful_count, fill.unhelpful_count) == (1, 0)  # the click after the failure worked
    [dedup] = of(events, "lesson_deduplicated")
    assert (dedup["lesson"], dedup["new_use_count"], dedup["run_id"]) == (FILL_SEED, 2, run.id)
    assert of(events, "lesson_recorded") == []


def test_walkthrough_2_the_amazon_cookie_banner_lesson_on_www_amazon_com(mem: webmem.Memory,
                                                                         events: list[dict[str, Any]]) -> None:
    text = "Click the cookie acceptance banner before interacting with product elements."
    for _ in range(4):
        lesson = mem.lessons.record(text, "site_specific", domain="amazon.com")
    assert (lesson.use_count, lesson.domain) == (4, "amazon.com")
    run = mem.start_run(goal="Find a kindle", start_url="https://www.amazon.com")
    run.record_step(action="goto", url="https://www.amazon.com")
    pack = run.context(url="https://www.amazon.com/")  # step 2: the domain is www.amazon.com, trigger B fires
    assert str(pack) == f"Tips for this site:\n- {text}"
    assert pack.part("site_tips").priority == 45
    event = of(events, "domain_recall")[-1]
    assert (event["domain"], event["matched"], event["lessons"]) == ("www.amazon.com", 1, [text])
    after = mem.lessons.get(lesson.id)
    assert (after.use_count, after.category, after.triggered_domains) == (5, "site_specific", ["www.amazon.com"])


def test_walkthrough_4_what_the_llm_sees(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    run = mem.start_run(goal='Search for "padel rackets" on Google', start_url=GOOGLE)
    assert run.system_prompt() == (
        "## Browsing tips\n"
        "\n"
        "Built-in defaults (general browsing advice, not learned from your runs):\n"
        "- If fill does not work on a field, click the field to focus it, then type the text.\n"
        "- After typing into a search box, press Enter to submit rather than clicking the submit button: "
        "suggestion lists often cover that button.\n"
        "- When an overlay, banner or popup blocks an element, press Escape to dismiss it before using the page "
        "behind it."
    )
    assert str(run.context(url=GOOGLE)) == ""
    run.on_error("fill", FILL_ERROR)
    pack = run.context(url=GOOGLE)
    assert str(pack) == (
        "Last action failed: fill\n"
        "too many arguments: expected 2, received 3\n"
        "\n"
        "Tips from previous experience:\n"
        "- If fill does not work on a field, click the field to focus it, then type the text. (built-in default)"
    )
    assert pack.included == ["last_error"]
    memory_events = [event for event in events if event["event"] in ("tier1_loaded", "domain_recall", "error_recall")]
    assert [
        {key: event[key] for key in event if key in ("event", "count", "domain", "command", "error_snippet", "matched")}
        for event in memory_events
    ] == [
        {"event": "tier1_loaded", "count": 3},
        {"event": "domain_recall", "domain": "www.google.com", "matched": 0},
        {"event": "error_recall", "command": "fill", "error_snippet": FILL_ERROR, "matched": 1},
    ]
    assert memory_events[2]["lessons"] == [FILL_SEED]
