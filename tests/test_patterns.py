"""Long-term patterns: learning, lookup by domain, usage counts, pruning of the weakest, and the
pattern a successful run teaches on finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

import webmem
from webmem import InvalidInput, NotFound
from webmem.store.schema import patterns as patterns_table
from webmem.working.patterns import MAX_PATTERNS, Pattern, PatternStore

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
LOGIN_STEPS = [
    {"tool": "click", "selector": "#login-btn"},
    {"tool": "type", "selector": "#email", "text": "{email}"},
    {"tool": "type", "selector": "#password", "text": "{password}"},
    {"tool": "click", "selector": "#submit"},
]
BASE = datetime(2025, 1, 1, tzinfo=UTC)


def steps(number: int) -> list[dict[str, Any]]:
    return [{"tool": "click", "selector": f"#step-{number}"}]


def set_last_used(mem: webmem.Memory, pattern_id: str, when: datetime) -> None:
    with mem.store.write() as conn:
        conn.execute(update(patterns_table).where(patterns_table.c.pattern_id == pattern_id).values(last_used=when))


def ids(found: list[Pattern]) -> list[str]:
    return [pattern.id for pattern in found]


# --- learning ------------------------------------------------------------------------------------


def test_learn_pattern_stores_the_documented_fields(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    pattern = mem.patterns.learn_pattern("example.com", "Login flow for example.com", "login_flow", LOGIN_STEPS)
    assert pattern.id.startswith("pattern_")
    assert (pattern.domain, pattern.description, pattern.pattern_type) == (
        "example.com", "Login flow for example.com", "login_flow")
    assert pattern.steps == LOGIN_STEPS
    assert (pattern.success_count, pattern.failure_count, pattern.success_rate) == (0, 0, 0.0)
    assert pattern.created_at == pattern.last_used
    assert mem.patterns.get_patterns_for_domain("example.com") == [pattern]
    learned = [event for event in events if event["event"] == "pattern_learned"]
    assert learned == [{**learned[0], "pattern_id": pattern.id, "domain": "example.com",
                        "pattern_type": "login_flow", "steps": 4}]


def test_the_same_steps_on_the_same_domain_are_the_same_pattern(mem: webmem.Memory) -> None:
    first = mem.patterns.learn_pattern(DOMAIN, "Login", "login_flow", LOGIN_STEPS)
    reordered = [dict(reversed(list(step.items()))) for step in LOGIN_STEPS]  # key order does not matter
    again = mem.patterns.learn_pattern(DOMAIN, "Another description", "form_fill", reordered)
    assert again == first
    assert mem.patterns.learn_pattern(SHOP, "Login", "login_flow", LOGIN_STEPS) == first  # a URL names its domain
    other_domain = mem.patterns.learn_pattern("other-shop.com", "Login", "login_flow", LOGIN_STEPS)
    other_steps = mem.patterns.learn_pattern(DOMAIN, "Login", "login_flow", LOGIN_STEPS[:3])
    assert len({first.id, other_domain.id, other_steps.id}) == 3
    assert len(mem.patterns.get_patterns_for_domain(DOMAIN)) == 2


def test_secrets_in_a_pattern_become_placeholders(tmp_path: Path) -> None:
    memory = webmem.Memory.open(tmp_path / "m", secrets={"password": "hunter2-secret"})
    pattern = memory.patterns.learn_pattern(
        DOMAIN, "log in with hunter2-secret", "login_flow",
        [{"tool": "type", "selector": "#pw", "text": "hunter2-secret"}],
    )
    assert pattern.description == "log in with {password}"
    assert pattern.steps == [{"tool": "type", "selector": "#pw", "text": "{password}"}]
    memory.close()


@pytest.mark.parametrize(
    ("domain", "description", "pattern_type", "pattern_steps"),
    [
        (DOMAIN, "d", "login_flow", []),
        (DOMAIN, "d", "login_flow", "click #go"),
        (DOMAIN, "d", "login_flow", {"tool": "click"}),
        (DOMAIN, "d", "login_flow", [["click", "#go"]]),
        (DOMAIN, "d", "login_flow", [{"tool": "click", "nth": [2]}]),  # a number is a parameter; a list is not
        (DOMAIN, "d", "login_flow", [{1: "click"}]),
        (DOMAIN, "d", "Login Flow", steps(1)),
        (DOMAIN, "d", "", steps(1)),
        (DOMAIN, "", "navigation", steps(1)),
        (DOMAIN, None, "navigation", steps(1)),
        ("", "d", "navigation", steps(1)),
        ("not a domain/path", "d", "navigation", steps(1)),
        (None, "d", "navigation", steps(1)),
    ],
)
def test_bad_patterns_are_refused(
    mem: webmem.Memory, domain: Any, description: Any, pattern_type: Any, pattern_steps: Any
) -> None:
    with pytest.raises(InvalidInput):
        mem.patterns.learn_pattern(domain, description, pattern_type, pattern_steps)
    assert mem.patterns.get_patterns_for_domain(DOMAIN) == []


# --- lookup --------------------------------------------------------------------------------------


def test_patterns_of_parent_domains_apply(mem: webmem.Memory) -> None:
    parent = mem.patterns.learn_pattern("example.com", "parent", "navigation", steps(1))
    child = mem.patterns.learn_pattern("shop.example.com", "child", "navigation", steps(2))
    mem.patterns.learn_pattern("notexample.com", "lookalike", "navigation", steps(3))
    mem.patterns.learn_pattern("example.org", "other", "navigation", steps(4))
    assert set(ids(mem.patterns.get_patterns_for_domain("shop.example.com"))) == {parent.id, child.id}
    assert set(ids(mem.patterns.get_patterns_for_domain("https://a.shop.example.com/x"))) == {parent.id, child.id}
    assert ids(mem.patterns.get_patterns_for_domain("www.example.com")) == [parent.id]
    assert ids(mem.patterns.get_patterns_for_domain("example.com")) == [parent.id]
    assert mem.patterns.get_patterns_for_domain("unrelated.net") == []
    with pytest.raises(InvalidInput):
        mem.patterns.get_patterns_for_domain("")


def test_patterns_come_best_success_rate_first_then_most_recent(mem: webmem.Memory) -> None:
    store = mem.patterns
    older_perfect = store.learn_pattern(DOMAIN, "a", "navigation", steps(1))
    newer_perfect = store.learn_pattern(DOMAIN, "b", "navigation", steps(2))
    half = store.learn_pattern(DOMAIN, "c", "navigation", steps(3))
    unused = store.learn_pattern(DOMAIN, "d", "navigation", steps(4))
    failed = store.learn_pattern(DOMAIN, "e", "navigation", steps(5))
    store.record_usage(older_perfect.id, True)
    store.record_usage(newer_perfect.id, True)
    store.record_usage(half.id, True)
    store.record_usage(half.id, False)
    store.record_usage(failed.id, False)
    for pattern, hours in ((older_perfect, 1), (newer_perfect, 2), (half, 9), (unused, 8), (failed, 7)):
        set_last_used(mem, pattern.id, BASE + timedelta(hours=hours))
    assert ids(store.get_patterns_for_domain(DOMAIN)) == [
        newer_perfect.id, older_perfect.id, half.id, unused.id, failed.id]


def test_namespaces_do_not_share_patterns(mem: webmem.Memory, open_memory: Callable[..., webmem.Memory]) -> None:
    mine = mem.patterns.learn_pattern(DOMAIN, "mine", "navigation", steps(1))
    assert open_memory().patterns.get_patterns_for_domain(DOMAIN) == [mine]  # the same store, seen again
    other = open_memory(namespace="other")
    assert other.patterns.get_patterns_for_domain(DOMAIN) == []
    theirs = other.patterns.learn_pattern(DOMAIN, "theirs", "navigation", steps(1))  # the same steps
    assert theirs.id != mine.id
    assert mem.patterns.get_patterns_for_domain(DOMAIN) == [mine]


# --- usage ---------------------------------------------------------------------------------------


def test_record_usage_counts_and_computes_the_success_rate(mem: webmem.Memory) -> None:
    pattern = mem.patterns.learn_pattern(DOMAIN, "login", "login_flow", LOGIN_STEPS)
    set_last_used(mem, pattern.id, BASE)
    for success in (True, True, False, True):
        used = mem.patterns.record_usage(pattern.id, success)
    assert (used.success_count, used.failure_count, used.success_rate) == (3, 1, 0.75)
    assert used.last_used > BASE
    assert mem.patterns.get_patterns_for_domain(DOMAIN) == [used]
    failed_only = mem.patterns.learn_pattern(DOMAIN, "x", "navigation", steps(1))
    assert mem.patterns.record_usage(failed_only.id, False).success_rate == 0.0


def test_record_usage_is_atomic_across_handles(
    mem: webmem.Memory, open_memory: Callable[..., webmem.Memory]
) -> None:
    pattern = mem.patterns.learn_pattern(DOMAIN, "login", "login_flow", LOGIN_STEPS)
    handles = [open_memory() for _ in range(4)]
    errors: list[BaseException] = []

    def use(handle: webmem.Memory, success: bool) -> None:
        try:
            for _ in range(15):
                handle.patterns.record_usage(pattern.id, success)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=use, args=(handle, number % 2 == 0)) for number, handle in enumerate(handles)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    stored = mem.patterns.get_patterns_for_domain(DOMAIN)[0]
    assert (stored.success_count, stored.failure_count, stored.success_rate) == (30, 30, 0.5)


def test_record_usage_of_an_unknown_pattern_is_not_found(
    mem: webmem.Memory, open_memory: Callable[..., webmem.Memory]
) -> None:
    with pytest.raises(NotFound):
        mem.patterns.record_usage("pattern_0000000000000_nothing", True)
    pattern = mem.patterns.learn_pattern(DOMAIN, "login", "login_flow", LOGIN_STEPS)
    with pytest.raises(NotFound):
        open_memory(namespace="other").patterns.record_usage(pattern.id, True)  # another namespace's pattern
    for success in (1, "yes", None):
        with pytest.raises(InvalidInput):
            mem.patterns.record_usage(pattern.id, success)  # type: ignore[arg-type]
    assert mem.patterns.get_patterns_for_domain(DOMAIN)[0].success_count == 0


# --- pruning -------------------------------------------------------------------------------------


def test_over_the_maximum_the_weakest_fifth_is_pruned(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    store = PatternStore(mem.scope, max_patterns=10)
    made = [store.learn_pattern(DOMAIN, f"flow {number}", "navigation", steps(number)) for number in range(10)]
    for pattern in made[:7]:
        store.record_usage(pattern.id, True)
    store.record_usage(made[6].id, False)  # 0.5
    store.record_usage(made[7].id, False)  # 0.0, used
    last_used = {0: 5, 1: 5, 2: 5, 3: 5, 4: 5, 5: 5, 6: 0, 7: 3, 8: 1, 9: 2}  # hours after BASE
    for number, hours in last_used.items():
        set_last_used(mem, made[number].id, BASE + timedelta(hours=hours))
    assert len(store.get_patterns_for_domain(DOMAIN)) == 10  # at the maximum: nothing pruned
    assert not [event for event in events if event["event"] == "patterns_pruned"]

    newest = store.learn_pattern(DOMAIN, "flow 10", "navigation", steps(10))  # 11 > 10: down to 8
    kept = set(ids(store.get_patterns_for_domain(DOMAIN)))
    assert len(kept) == 8
    # the weakest by (success rate, last used): 8, 9 and 7 (rate 0, oldest); the new pattern, also at
    # rate 0, is newer; 6 is the oldest of all but has a better rate
    assert kept == {pattern.id for pattern in made[:7]} | {newest.id}
    assert [event["count"] for event in events if event["event"] == "patterns_pruned"] == [3]


def test_the_default_maximum_is_100(mem: webmem.Memory) -> None:
    assert MAX_PATTERNS == 100 and mem.patterns.max_patterns == 100
    for number in range(100):
        mem.patterns.learn_pattern(DOMAIN, f"flow {number}", "navigation", steps(number))
    assert len(mem.patterns.get_patterns_for_domain(DOMAIN)) == 100
    mem.patterns.learn_pattern(DOMAIN, "one more", "navigation", steps(100))
    assert len(mem.patterns.get_patterns_for_domain(DOMAIN)) == 80


def test_learning_a_known_pattern_when_full_prunes_nothing(mem: webmem.Memory) -> None:
    store = PatternStore(mem.scope, max_patterns=3)
    made = [store.learn_pattern(DOMAIN, f"flow {number}", "navigation", steps(number)) for number in range(3)]
    assert store.learn_pattern(DOMAIN, "again", "navigation", steps(0)) == made[0]
    assert len(store.get_patterns_for_domain(DOMAIN)) == 3


# --- derived from a run on finish ---------------------------------------------------------------


def patterns_of(mem: webmem.Memory) -> list[Pattern]:
    return mem.patterns.get_patterns_for_domain(DOMAIN)


def search_run(mem: webmem.Memory, value: str, *, goal: str = "search for smart watch") -> webmem.Run:
    run = mem.start_run(goal=goal, start_url=SHOP)
    run.record_step(action="click", target='textbox "Search"', selector="#q", url=SHOP)
    run.record_step(action="fill", target='textbox "Search"', selector="#q", value=value, url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#go", url=SHOP)
    return run


def test_a_successful_run_typing_a_value_from_its_goal_teaches_a_pattern(
    mem: webmem.Memory, events: list[dict[str, Any]]
) -> None:
    run = search_run(mem, "Smart Watch")
    run.record_step(action="click", target='link "Smart watch X"', selector="#r1", ok=False, error="detached")
    run.finish(success=True)
    [pattern] = patterns_of(mem)
    assert pattern.pattern_type == "search"
    assert pattern.steps == [
        {"tool": "click", "target": 'textbox "Search"', "selector": "#q", "value": None},
        {"tool": "fill", "target": 'textbox "Search"', "selector": "#q", "value": "{search}"},
        {"tool": "click", "target": 'button "Search"', "selector": "#go", "value": None},
    ]  # the failed step is left out
    assert "{search}" in pattern.description and "Smart Watch" not in pattern.description
    assert [e["run_id"] for e in events if e["event"] == "pattern_learned"] == [run.id]
    search_run(mem, "smart watch").finish(success=True)  # the same procedure again: the same pattern
    assert ids(patterns_of(mem)) == [pattern.id]


def test_a_successful_login_teaches_a_pattern_with_a_password_placeholder(tmp_path: Path) -> None:
    memory = webmem.Memory.open(tmp_path / "m", secrets={"email": "ann@example.com"})
    run = memory.start_run(goal="log in to my account", start_url=SHOP)
    run.record_step(action="fill", target='textbox "Email"', selector="#email", value="ann@example.com")
    run.record_step(action="fill", target='textbox "Password"', selector="#password", value="pa55word!")
    run.record_step(action="click", target='button "Log in"', selector="#submit")
    run.finish(success=True)
    [pattern] = memory.patterns.get_patterns_for_domain(DOMAIN)
    assert pattern.pattern_type == "login_flow"
    assert [step["value"] for step in pattern.steps] == ["{email}", "{password}", None]
    assert "pa55word!" not in repr(pattern) and "ann@example.com" not in repr(pattern)
    memory.close()


@pytest.mark.parametrize(
    "value",
    [
        "blue",  # not in the goal
        "",  # an emptied field is no value from the goal
        "art",  # inside "smart", but not a word of the goal
        "watch es",
    ],
)
def test_a_run_whose_values_did_not_come_from_its_goal_teaches_nothing(mem: webmem.Memory, value: str) -> None:
    search_run(mem, value).finish(success=True)
    assert patterns_of(mem) == []


def test_runs_without_typed_values_or_that_failed_teach_nothing(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="open the cart", start_url=SHOP)
    run.record_step(action="click", target='link "Cart"', selector="#cart", url=SHOP)
    run.finish(success=True)
    search_run(mem, "smart watch").finish(success=False, outcome="no results page")
    with search_run(mem, "smart watch"):
        pass  # ends without finish: a failed run
    assert patterns_of(mem) == []


def test_a_learned_pattern_reaches_a_later_runs_context(mem: webmem.Memory) -> None:
    search_run(mem, "smart watch").finish(success=True)
    later = mem.start_run(goal="search for fitness tracker", start_url=SHOP)
    assert "patterns" not in {report.name for report in later.context().report}  # working memory unused
    later.working.start_task("search for fitness tracker")
    pack = later.context(budget_tokens=5000)
    assert pack.part("patterns").status == "included"
    assert "## KNOWN PATTERNS\n- search: " in str(pack)
    assert "fill textbox \"Search\" {search}" in str(pack)
    assert "[search, 0% of 0 uses]" in str(pack)


def test_a_pattern_shows_every_parameter_and_its_placeholders_in_the_prompt(mem: webmem.Memory) -> None:
    mem.patterns.learn_pattern("example.com", "Login flow for example.com", "login_flow", [
        {"tool": "click", "selector": "#login-btn"},
        {"tool": "type", "selector": "#email", "text": "{email}"},
        {"tool": "type", "selector": "#password", "text": "{password}"},
        {"tool": "goto", "url": "https://example.com/account"},
        {"tool": "click", "selector": "#submit"},
    ])
    text = mem.patterns.format_for_prompt("example.com")
    assert "type #email text={email} -> type #password text={password} -> goto url=https://example.com/account" in text
    assert text.endswith("(fill in: {email}, {password})")
