"""Short-term memory: the bounded history, eviction by priority, failures, frequency, loops, formatting,
and the one action signature all of them share.
"""

from __future__ import annotations

from typing import Any

import pytest

from webmem import InvalidInput
from webmem.working.short_term import (
    DEFAULT_MAX_ENTRIES,
    Action,
    ExecutionOutcome,
    MemoryPriority,
    ShortTermMemory,
    WorkingEntry,
    action_signature,
)

PAGE = "https://www.example-shop.com/search"
OTHER_PAGE = "https://www.example-shop.com/cart"
C, H, N, L = "critical", "high", "normal", "low"


def entry(
    entry_id: int,
    priority: str = N,
    outcome: str = "success",
    *,
    tool: str = "click",
    parameters: dict[str, Any] | None = None,
    url: str = PAGE,
    **extra: Any,
) -> WorkingEntry:
    params = {"selector": f"#item-{entry_id}"} if parameters is None else parameters
    return WorkingEntry(entry_id=entry_id, tool=tool, parameters=params, outcome=outcome, priority=priority,
                        url=url, **extra)


def ids(memory: ShortTermMemory) -> list[int]:
    return [item.entry_id for item in memory.entries]


# --- the signature ------------------------------------------------------------------------------


def test_the_signature_ignores_parameter_order() -> None:
    first = action_signature({"tool": "type", "parameters": {"selector": "#q", "text": "watch"}}, PAGE)
    second = action_signature({"tool": "type", "parameters": {"text": "watch", "selector": "#q"}}, PAGE)
    assert first == second
    assert first == action_signature(Action("type", {"text": "watch", "selector": "#q"}), PAGE)
    assert first == action_signature({"tool": "type", "params": {"text": "watch", "selector": "#q"}}, PAGE)


@pytest.mark.parametrize(
    "other",
    [
        ({"tool": "fill", "parameters": {"selector": "#q", "text": "watch"}}, PAGE),  # another tool
        ({"tool": "type", "parameters": {"selector": "#q", "text": "watches"}}, PAGE),  # another value
        ({"tool": "type", "parameters": {"selector": "#q"}}, PAGE),  # a parameter fewer
        ({"tool": "type", "parameters": {"selector": "#q", "text": "watch"}}, OTHER_PAGE),  # another page
        ({"tool": "type", "parameters": {"selector": "#q", "text": "watch"}}, None),  # no page
    ],
)
def test_the_signature_covers_tool_parameters_and_url(other: tuple[dict[str, Any], str | None]) -> None:
    base = action_signature({"tool": "type", "parameters": {"selector": "#q", "text": "watch"}}, PAGE)
    assert action_signature(*other) != base


def test_a_bare_tool_name_is_an_action_without_parameters() -> None:
    assert action_signature("scroll", PAGE) == action_signature({"tool": "scroll", "parameters": {}}, PAGE)
    assert action_signature("scroll", None) == action_signature("scroll", "")
    assert Action.of("  scroll ") == Action("scroll")


def test_an_entry_is_signed_with_the_same_function() -> None:
    item = entry(1, parameters={"text": "watch", "selector": "#q"}, tool="type")
    assert item.signature == action_signature({"tool": "type", "parameters": {"selector": "#q", "text": "watch"}}, PAGE)
    assert item.signature != entry(2, parameters={"text": "watch", "selector": "#q"}, tool="type",
                                   url=OTHER_PAGE).signature


@pytest.mark.parametrize(
    "action",
    [{"parameters": {"selector": "#q"}}, {"tool": ""}, {"tool": "   "}, {"tool": 3}, "", "  ", 42, None,
     {"tool": "click", "parameters": ["#q"]}, {"tool": "click", "parameters": {"at": object()}}],
)
def test_an_action_needs_a_tool_and_json_parameters(action: object) -> None:
    with pytest.raises(InvalidInput):
        Action.of(action)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        action_signature(action, PAGE)  # type: ignore[arg-type]


# --- bounded history and eviction ---------------------------------------------------------------


def test_the_history_holds_fifty_entries_by_default_and_drops_the_oldest_of_equal_priority() -> None:
    memory = ShortTermMemory()
    assert memory.max_entries == DEFAULT_MAX_ENTRIES == 50
    for number in range(1, 61):
        memory.add(entry(number))
    assert ids(memory) == list(range(11, 61))


@pytest.mark.parametrize("size", [0, -1, True, 2.5, "10", None])
def test_the_bound_must_be_a_positive_integer(size: object) -> None:
    with pytest.raises(InvalidInput):
        ShortTermMemory(size)  # type: ignore[arg-type]


def test_eviction_takes_low_first_then_normal_then_high_and_never_critical() -> None:
    memory = ShortTermMemory(max_entries=6)
    for number, priority in enumerate([C, L, N, H, L, N], start=1):
        assert memory.add(entry(number, priority)) == []
    steps = [  # (new entry, its priority, the entry evicted to make room, what remains)
        (7, H, [2], [1, 3, 4, 5, 6, 7]),  # the oldest LOW
        (8, N, [5], [1, 3, 4, 6, 7, 8]),  # the other LOW
        (9, C, [3], [1, 4, 6, 7, 8, 9]),  # no LOW left: the oldest NORMAL
        (10, H, [6], [1, 4, 7, 8, 9, 10]),
        (11, C, [8], [1, 4, 7, 9, 10, 11]),
        (12, C, [4], [1, 7, 9, 10, 11, 12]),  # no NORMAL left: the oldest HIGH
        (13, L, [13], [1, 7, 9, 10, 11, 12]),  # a LOW entry among higher ones goes at once
        (14, C, [7], [1, 9, 10, 11, 12, 14]),
        (15, C, [10], [1, 9, 11, 12, 14, 15]),
        (16, C, [], [1, 9, 11, 12, 14, 15, 16]),  # only CRITICAL left: nothing is evicted
    ]
    for number, priority, evicted, remaining in steps:
        gone = memory.add(entry(number, priority))
        assert [item.entry_id for item in gone] == evicted, number
        assert ids(memory) == remaining, number
    assert {item.priority for item in memory.entries} == {C}


def test_the_eviction_order_is_the_documented_one() -> None:
    memory = ShortTermMemory(max_entries=4)
    for number, priority in enumerate([H, N, L, C], start=1):
        memory.add(entry(number, priority))
    order = [item.entry_id for number in range(5, 9) for item in memory.add(entry(number, C))]
    assert order == [3, 2, 1]  # LOW, NORMAL, HIGH; the CRITICAL entry 4 stays
    assert ids(memory) == [4, 5, 6, 7, 8]
    assert [p.value for p in MemoryPriority] == ["critical", "high", "normal", "low"]


# --- reading the history ------------------------------------------------------------------------


def test_get_recent_returns_the_last_entries_oldest_first() -> None:
    memory = ShortTermMemory()
    for number in range(1, 8):
        memory.add(entry(number))
    assert [item.entry_id for item in memory.get_recent(3)] == [5, 6, 7]
    assert [item.entry_id for item in memory.get_recent()] == [3, 4, 5, 6, 7]  # five by default
    assert [item.entry_id for item in memory.get_recent(100)] == list(range(1, 8))
    assert memory.get_recent(0) == []
    assert ShortTermMemory().get_recent(3) == []


def test_get_by_outcome_accepts_the_enum_or_its_value() -> None:
    memory = ShortTermMemory()
    for number, outcome in enumerate(["success", "failure", "partial", "failure", "skipped"], start=1):
        memory.add(entry(number, outcome=outcome))
    assert [item.entry_id for item in memory.get_by_outcome(ExecutionOutcome.FAILURE)] == [2, 4]
    assert [item.entry_id for item in memory.get_by_outcome("failure")] == [2, 4]
    assert [item.entry_id for item in memory.get_by_outcome("partial")] == [3]
    assert memory.get_by_outcome("nonsense") == []


def test_has_failed_knows_failed_signatures_only_and_keeps_them_after_eviction() -> None:
    memory = ShortTermMemory(max_entries=2)
    failed = entry(1, L, "failure", parameters={"selector": "#buy"})
    worked = entry(2, N, "success", parameters={"selector": "#ok"})
    memory.add(failed)
    memory.add(worked)
    assert memory.has_failed(failed.signature)
    assert not memory.has_failed(worked.signature)
    assert not memory.has_failed(entry(3, parameters={"selector": "#buy"}, url=OTHER_PAGE).signature)
    memory.add(entry(3, N))  # evicts the LOW failure
    assert 1 not in ids(memory)
    assert memory.has_failed(failed.signature)
    assert memory.failed_signatures() == {failed.signature}
    memory.clear()
    assert not memory.has_failed(failed.signature) and memory.entries == []


def test_action_frequency_counts_one_signature_whatever_the_parameter_order() -> None:
    memory = ShortTermMemory()
    memory.add(entry(1, tool="scroll_page", parameters={"direction": "down", "by": 500}))
    memory.add(entry(2, tool="scroll_page", parameters={"by": 500, "direction": "down"}))
    memory.add(entry(3, tool="scroll_page", parameters={"by": 500, "direction": "down"}, url=OTHER_PAGE))
    memory.add(entry(4, tool="scroll_page", parameters={"by": 500, "direction": "up"}))
    action = {"tool": "scroll_page", "parameters": {"direction": "down", "by": 500}}
    assert memory.get_action_frequency(action, PAGE) == 2
    assert memory.get_action_frequency(action, OTHER_PAGE) == 1
    assert memory.get_action_frequency(action) == 0  # no url is not any url
    assert memory.get_action_frequency("scroll_page", PAGE) == 0


# --- loops ---------------------------------------------------------------------------------------


def submit(number: int, **extra: Any) -> WorkingEntry:
    return entry(number, parameters={"selector": "#submit"}, **extra)


def test_the_same_action_three_times_in_the_last_ten_is_a_loop() -> None:
    memory = ShortTermMemory()
    memory.add(submit(1))
    memory.add(entry(2))
    memory.add(entry(3, parameters={"selector": "#submit"}, url=OTHER_PAGE))  # another page: not the same action
    memory.add(submit(4))
    assert memory.get_loop_warnings() == []  # twice: no warning
    memory.add(submit(5))
    warnings = memory.get_loop_warnings()
    assert len(warnings) == 1
    assert warnings[0] == 'Warning: click({"selector": "#submit"}) repeated 3 times in the last 5 actions!'
    memory.add(submit(6))
    assert memory.get_loop_warnings() == [
        'Warning: click({"selector": "#submit"}) repeated 4 times in the last 6 actions!']


def test_the_loop_counts_the_same_action_with_parameters_in_another_order() -> None:
    memory = ShortTermMemory()
    for number, params in enumerate([{"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 1, "b": 2}], start=1):
        memory.add(entry(number, parameters=params))
    assert len(memory.get_loop_warnings()) == 1


def test_three_repeats_spread_over_more_than_ten_actions_are_not_a_loop() -> None:
    memory = ShortTermMemory()
    memory.add(submit(1))
    for number in range(2, 7):
        memory.add(entry(number))
    memory.add(submit(7))
    for number in range(8, 11):
        memory.add(entry(number))
    memory.add(submit(11))  # 3 times in 11 actions: the first is outside the last ten
    assert memory.get_action_frequency({"tool": "click", "parameters": {"selector": "#submit"}}, PAGE) == 3
    assert memory.get_loop_warnings() == []
    assert len(memory.get_loop_warnings(window=11)) == 1
    assert len(memory.get_loop_warnings(threshold=2)) == 1


def test_each_looping_action_gets_its_own_warning() -> None:
    memory = ShortTermMemory()
    for number in range(1, 7):
        memory.add(submit(number) if number % 2 else entry(number, tool="scroll", parameters={}))
    warnings = memory.get_loop_warnings()
    assert len(warnings) == 2
    assert any("click(" in text for text in warnings) and any("scroll({})" in text for text in warnings)


# --- formatting ----------------------------------------------------------------------------------


def test_format_history_numbers_the_last_entries_after_the_loop_warnings() -> None:
    memory = ShortTermMemory()
    assert memory.format_history() == ""
    memory.add(entry(1, tool="goto", parameters={"url": "https://www.example-shop.com/"}, thought="open the shop",
                     observation="Navigated to: https://www.example-shop.com/"))
    for number in range(2, 5):
        memory.add(entry(number, "normal", "failure", tool="click", parameters={"selector": "#menu"},
                         observation="x" * 900, error="Element not found"))
    text = memory.format_history(last_n=2)
    lines = text.split("\n")
    assert lines[0] == 'Warning: click({"selector": "#menu"}) repeated 3 times in the last 4 actions!'
    assert lines[1] == '1. [Failure] click({"selector": "#menu"})'
    assert lines[2] == "   Error: Element not found"
    assert lines[3].startswith("   Result: ") and len(lines[3]) == len("   Result: ") + 500  # observation capped
    assert lines[4] == '2. [Failure] click({"selector": "#menu"})'
    assert "goto" not in text  # only the last two
    full = memory.format_history(last_n=4)
    assert '1. [Success] goto({"url": "https://www.example-shop.com/"})\n   Thought: open the shop\n' \
           "   Result: Navigated to: https://www.example-shop.com/" in full


def test_total_tokens_adds_the_entries_estimates() -> None:
    memory = ShortTermMemory()
    memory.add(entry(1, estimated_tokens=12))
    memory.add(entry(2, estimated_tokens=30))
    assert memory.total_tokens() == 42


def test_restore_brings_back_entries_and_failures() -> None:
    memory = ShortTermMemory(max_entries=3)
    failed = entry(9, outcome="failure")
    memory.restore([entry(1), entry(2)], {failed.signature})
    assert ids(memory) == [1, 2]
    assert memory.has_failed(failed.signature)
    memory.add(entry(3))
    memory.add(entry(4))
    assert ids(memory) == [2, 3, 4]


def test_one_action_has_one_signature_at_every_depth() -> None:
    first = {"tool": "fill_form", "parameters": {"fields": {"email": "a@b.c", "name": "Ann"}, "delay": 2}}
    second = {"tool": "fill_form", "parameters": {"delay": 2.0, "fields": {"name": "Ann", "email": "a@b.c"}}}
    assert action_signature(first, PAGE) == action_signature(second, PAGE)
    third = {"tool": "fill_form", "parameters": {"fields": {"email": "a@b.c", "name": "Bob"}, "delay": 2}}
    assert action_signature(first, PAGE) != action_signature(third, PAGE)
    memory = ShortTermMemory()
    for number, action in enumerate((first, second, first), start=1):
        memory.add(entry(number, outcome="failure", tool="fill_form", parameters=action["parameters"]))
    assert memory.get_action_frequency(second, PAGE) == 3 and memory.has_failed(action_signature(second, PAGE))
    assert len(memory.get_loop_warnings()) == 1
