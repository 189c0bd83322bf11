"""The reference trajectory a run is shown: the path that worked, instructive failures marked, values from
the earlier instruction never offered for another one, and cuts by whole steps under a tight budget."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import webmem
from webmem import ContextPack, ContextPart, LineCut
from webmem.context import REFERENCE_HEADING
from webmem.core.pack import TRUNCATION_MARKER
from webmem.core.tokens import estimate
from webmem.trajectories.reference import FROM_INSTRUCTION, STEP_CUT, format_reference, omitted_steps

SHOP = "https://www.example-shop.com/"
PROPERTY = settings(derandomize=True, deadline=None, max_examples=300)
BOX = 'textbox "Box"'
TIMEOUT = "Timeout 5000ms exceeded.\nCall log:\n  - waiting for locator('#pay')"


def step(action: str = "click", target: str | None = 'button "Go"', **fields: object) -> webmem.Step:
    return webmem.Step(action=action, target=target, **fields)


def trajectory(goal: str, steps: list[webmem.Step]) -> webmem.Trajectory:
    return webmem.Trajectory(id="traj_1", goal=goal, origin="https://www.example-shop.com",
                             domain="www.example-shop.com", steps=steps, success=True, duration_ms=0,
                             created_at=datetime(2025, 6, 1, tzinfo=UTC))


def step_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"  \d+\. ", line)]


def reference_of(pack: ContextPack) -> str:
    """The body of the pack's reference section."""
    return str(pack).split(f"## {REFERENCE_HEADING}\n", 1)[1].split("\n\n", 1)[0]


# --- the path that worked ---------------------------------------------------------------------------------------


def test_a_failed_step_retried_in_place_is_left_out_and_counted() -> None:
    text = format_reference(trajectory("Pay the order", [
        step(target='button "Pay"', ok=False, error=TIMEOUT),
        step(target='button "Pay"'),
        step("press", "Enter"),
    ]))
    assert text == (
        "Goal: Pay the order\n"
        "Steps (2 that worked; 1 failed attempt left out):\n"
        '  1. click button "Pay"\n'
        "  2. press Enter"
    )


def test_a_value_overwritten_and_a_repeated_step_are_left_out_as_redundant() -> None:
    text = format_reference(trajectory("Write a note", [
        step("fill", 'textbox "Note"', value="gift"),
        step("fill", 'textbox "Note"', value="gift wrap"),
        step(),
        step(),
    ]))
    assert step_lines(text) == ['  1. fill textbox "Note" "gift wrap"', '  2. click button "Go"']
    assert "Steps (2 that worked; 2 redundant steps left out):" in text


def test_a_failure_the_run_learned_from_is_kept_and_marked_with_the_first_line_of_its_error() -> None:
    text = format_reference(trajectory("Pay the order", [
        step(target='button "Pay"', ok=False, error=TIMEOUT),
        step(target='link "Checkout"', verified=True),
        step(target='button "Pay"'),
    ]))
    assert text == (
        "Goal: Pay the order\n"
        "Steps (2 that worked and 1 marked [failed] to avoid):\n"
        '  1. click button "Pay" [failed: Timeout 5000ms exceeded.]\n'
        '  2. click link "Checkout" [verified]\n'
        '  3. click button "Pay"'
    )


def test_the_error_of_a_marked_failure_is_cut_to_80_characters_and_may_be_missing() -> None:
    long_error = "x" * 200 + "\nsecond line"
    text = format_reference(trajectory("Pay", [step(ok=False, error=long_error), step("press", "Enter")]))
    shown = re.search(r"\[failed: ([^\]]*)\]", text)
    assert shown is not None and len(shown.group(1)) <= 80 and shown.group(1).endswith("…")
    assert "second line" not in text
    bare = format_reference(trajectory("Pay", [step(ok=False), step("press", "Enter")]))
    assert '  1. click button "Go" [failed]' in bare


ACTIONS = st.sampled_from(["click", "fill", "press", "finish"])
TARGETS = st.sampled_from(['button "A"', 'button "B"', BOX])
STEPS = st.lists(st.tuples(ACTIONS, TARGETS, st.sampled_from([None, "1", "2"]), st.booleans()), max_size=12)


@PROPERTY
@given(STEPS)
def test_no_failed_step_is_ever_shown_as_a_plain_step_and_the_counts_add_up(specs: list[tuple]) -> None:
    steps = [step(action, target, value=value, ok=ok, error="boom", url=f"https://x.test/{index}")
             for index, (action, target, value, ok) in enumerate(specs)]
    text = format_reference(trajectory("Do it", steps))
    lines = step_lines(text)
    for line in lines:
        index = int(re.search(r"\(on https://x\.test/(\d+)\)", line).group(1))
        assert ("[failed: boom]" in line) == (not steps[index].ok)
        if not steps[index].ok:  # only a failure followed directly by a different successful action
            following = steps[index + 1]
            assert following.ok and (following.action, following.target, following.value) != (
                steps[index].action, steps[index].target, steps[index].value)
    counts = re.match(r"Steps \((\d+) that worked(?: and (\d+) marked \[failed\] to avoid)?(?:; (.*) left out)?\):",
                      text.splitlines()[1])
    worked, marked = int(counts.group(1)), int(counts.group(2) or 0)
    left = sum(int(number) for number in re.findall(r"(\d+) ", counts.group(3) or ""))
    assert worked + marked == len(lines)
    assert marked == sum("[failed" in line for line in lines)
    assert worked + marked + left == len(steps)


# --- values from the earlier instruction --------------------------------------------------------------------------


FORTY_TWO = trajectory("Enter 42 into the box", [step("fill", BOX, value="42"), step("press", "Enter")])


def test_a_value_from_the_earlier_goal_shows_as_the_current_goals_value() -> None:
    text = format_reference(FORTY_TWO, goal="Enter 17 into the box")
    assert '  1. fill textbox "Box" "17"' in text
    assert "Enter 17 into the box" in text.splitlines()[0]
    assert "42" not in text


def test_a_value_the_current_goal_cannot_supply_shows_as_a_placeholder_never_as_the_old_value() -> None:
    text = format_reference(FORTY_TWO, goal="Type the number seventeen in the field")
    assert f'  1. fill textbox "Box" {FROM_INSTRUCTION}' in text
    assert text.splitlines()[0].endswith(f"Enter {FROM_INSTRUCTION} into the box")
    assert "42" not in text


def test_a_value_the_current_goal_names_as_well_is_kept_even_when_its_wording_differs() -> None:
    text = format_reference(FORTY_TWO, goal="Please type 42 in the box")
    assert '  1. fill textbox "Box" "42"' in text
    assert FROM_INSTRUCTION not in text


def test_without_a_current_goal_or_with_the_same_goal_the_values_show_as_they_were() -> None:
    for goal in (None, "Enter  42 into the box"):
        text = format_reference(FORTY_TWO, goal=goal)
        assert text.startswith("Goal: Enter 42 into the box\n")
        assert '  1. fill textbox "Box" "42"' in text


def test_a_clicked_label_from_the_earlier_goal_follows_the_current_goal() -> None:
    kasie = trajectory('Open the profile of "Kasie"', [step(target='link "Kasie"'), step(target='button "Profile"')])
    bound = format_reference(kasie, goal='Open the profile of "Bob"')
    assert '  1. click link "Bob"' in bound and "Kasie" not in bound
    unbound = format_reference(kasie, goal="Open my own profile")
    assert f'  1. click link "{FROM_INSTRUCTION}"' in unbound and "Kasie" not in unbound


def test_a_constant_value_stays_whatever_the_goal() -> None:
    text = format_reference(trajectory("Enter 42 into the box", [
        step("fill", BOX, value="42"), step("fill", 'textbox "Note"', value="gift wrap"),
    ]), goal="Type seventeen")
    assert '"gift wrap"' in text and "42" not in text


def test_a_value_derived_from_the_earlier_goal_is_derived_from_the_current_one() -> None:
    timed = trajectory("Enter 11:20 AM as the time", [step("fill", 'textbox "Time"', value="11:20")])
    assert '  1. fill textbox "Time" "21:05"' in format_reference(timed, goal="Enter 9:05 PM as the time")
    unbound = format_reference(timed, goal="Enter the time")
    assert f'fill textbox "Time" {FROM_INSTRUCTION}' in unbound and "11:20" not in unbound


def test_without_a_template_a_goal_value_typed_as_it_stands_is_still_hidden() -> None:
    braced = trajectory("Type {x} and 42", [step("fill", BOX, value="42")])
    text = format_reference(braced, goal="Type {x} and 17")
    assert f'  1. fill textbox "Box" {FROM_INSTRUCTION}' in text and "42" not in text


def test_the_earlier_values_are_replaced_in_the_steps_pages_and_errors_too() -> None:
    paged = trajectory("Enter 42 into the box", [
        step("fill", BOX, value="42", url="https://x.test/form?n=42"),
        step(target='button "Send"', ok=False, error="Value 42 was refused\nCall log"),
        step("press", "Enter"),
    ])
    bound = format_reference(paged, goal="Enter 17 into the box")
    assert '(on https://x.test/form?n=17)' in bound and "[failed: Value 17 was refused]" in bound
    unbound = format_reference(paged, goal="Enter the number")
    assert f"[failed: Value {FROM_INSTRUCTION} was refused]" in unbound and "42" not in unbound
    braced = format_reference(paged.model_copy(update={"goal": "Enter {x} 42"}), goal="Enter {x} 17")
    assert "42" not in braced and f"form?n={FROM_INSTRUCTION}" in braced


def test_a_secret_typed_from_the_goal_is_never_spelled_out() -> None:
    login = trajectory('Log in as Alice with "hunter2"', [step("fill", 'textbox "Password"', value="{goal:2}")])
    for goal in (None, 'Log in as Alice with "hunter2"', 'Log in as Bob with "swordfish"'):
        line = step_lines(format_reference(login, goal=goal))[0]
        assert line == f'  1. fill textbox "Password" {FROM_INSTRUCTION}'


def test_the_store_delegates_with_the_goal(mem: webmem.Memory) -> None:
    saved = mem.trajectories.save(goal="Enter 42 into the box", start_url=SHOP, steps=FORTY_TWO.steps)
    assert mem.trajectories.format_reference(saved, goal="Enter 17 into the box") == format_reference(
        saved, goal="Enter 17 into the box")
    assert webmem.TrajectoryStore.format_reference(saved) == format_reference(saved)


# --- cut by whole steps -------------------------------------------------------------------------------------------


LONG = trajectory("search smart watch reviews", [
    step(target=f'button "Step {index:02d}"', url=SHOP, verified=True) for index in range(40)
])


def reference_part(body: str) -> ContextPart:
    return ContextPart("reference_trajectory", REFERENCE_HEADING, 40, body, by_lines=STEP_CUT)


def test_a_reference_that_does_not_fit_is_cut_by_whole_steps_with_a_count_of_those_left_out() -> None:
    full = format_reference(LONG)
    full_lines = full.splitlines()
    one_step = estimate(reference_part(full).render("\n".join([*full_lines[:3], omitted_steps(39)]))).tokens
    for budget in range(one_step, estimate(reference_part(full).render()).tokens, 37):
        pack = ContextPack.assemble([reference_part(full)], budget_tokens=budget)
        lines = str(pack).splitlines()
        assert pack.tokens <= budget and pack.part("reference_trajectory").status == "truncated"
        assert lines[1:3] == full_lines[:2]  # the goal and the count line stay
        shown = lines[3:-1]
        assert shown and shown == full_lines[2:2 + len(shown)]  # whole steps, from the first
        assert lines[-1] == omitted_steps(40 - len(shown)) == f"  … {40 - len(shown)} more steps not shown"
        assert TRUNCATION_MARKER not in str(pack)


def test_a_reference_without_room_for_one_step_is_dropped_and_smaller_parts_still_fit() -> None:
    full = format_reference(LONG)
    one_step = reference_part(full).render("\n".join([*full.splitlines()[:3], omitted_steps(39)]))
    room = estimate(one_step).tokens
    fits = ContextPack.assemble([reference_part(full)], budget_tokens=room)
    assert step_lines(str(fits)) == ['  1. click button "Step 00" (on https://www.example-shop.com/) [verified]']
    small = ContextPart("known_selectors", "KNOWN SELECTORS", 25, "- a -> #a")
    pack = ContextPack.assemble([reference_part(full), small], budget_tokens=room - 1)
    assert pack.part("reference_trajectory").status == "dropped" and pack.included == ["known_selectors"]


def test_a_line_cut_keeps_its_head_and_a_critical_part_is_cut_anyway() -> None:
    rule = LineCut(head=1, omitted=lambda count: f"({count} left out)", least=2)
    body = "HEAD\n" + "\n".join(f"line {index} " + "word " * 10 for index in range(10))
    part = ContextPart("p", "P", 1, body, by_lines=rule)
    three = ContextPack.assemble([part], budget_tokens=estimate(part.render("\n".join(
        [*body.splitlines()[:4], "(7 left out)"]))).tokens)
    assert str(three).splitlines()[1:] == [*body.splitlines()[:4], "(7 left out)"]
    assert ContextPack.assemble([part], budget_tokens=30).part("p").status == "dropped"  # room for one line only
    critical = ContextPart("p", "P", 1, body, by_lines=rule, critical=True)
    assert ContextPack.assemble([critical], budget_tokens=30).part("p").status == "truncated"


# --- run.context() on a real memory -------------------------------------------------------------------------------


#: An earlier run's answer: digits no date or time a context shows can hold ("10:42 UTC" holds 42).
ANSWER = "4242"


def record_the_answer(mem: webmem.Memory) -> None:
    run = mem.start_run(goal=f"Enter {ANSWER} into the box", start_url=SHOP)
    run.record_step(action="click", target=BOX, url=SHOP, ok=False, error=TIMEOUT)
    run.record_step(action="click", target=BOX, url=SHOP)
    run.record_step(action="fill", target=BOX, value=ANSWER, url=SHOP)
    run.record_step(action="click", target='button "Send"', url=SHOP, ok=False, error="Element is disabled")
    run.record_step(action="press", target="Enter", url=SHOP, verified=True)
    run.finish(success=True, outcome=f"Sent {ANSWER}")


def test_run_context_shows_the_honest_reference_in_the_runs_values(mem: webmem.Memory) -> None:
    record_the_answer(mem)
    pack = mem.start_run(goal="Enter 17 into the box", start_url=SHOP).context()
    assert pack.part("reference_trajectory").status == "included"
    reference = reference_of(pack)
    assert reference.splitlines()[1] == "Steps (3 that worked and 1 marked [failed] to avoid; 1 failed attempt left out):"
    assert step_lines(reference) == [
        f'  1. click {BOX} (on {SHOP})',
        f'  2. fill {BOX} "17" (on {SHOP})',
        f'  3. click button "Send" (on {SHOP}) [failed: Element is disabled]',
        f"  4. press Enter (on {SHOP}) [verified]",
    ]
    assert ANSWER not in reference and "Timeout" not in reference


def test_no_earlier_answer_reaches_a_run_given_another_instruction(mem: webmem.Memory) -> None:
    record_the_answer(mem)
    other = str(mem.start_run(goal="Enter 17 into the box", start_url=SHOP).context())
    assert not re.search(rf"(?<!\w){ANSWER}(?!\w)", other)  # not in the reference nor the sessions (ids aside)
    assert f"Goal: Enter {FROM_INSTRUCTION} into the box" in other and f"Outcome: Sent {FROM_INSTRUCTION}" in other
    same = str(mem.start_run(goal=f"Enter {ANSWER} into the box", start_url=SHOP).context())
    assert f"Outcome: Sent {ANSWER}" in same  # the same instruction: its own answer is the answer


def test_run_context_shows_a_placeholder_where_the_runs_goal_has_no_value(mem: webmem.Memory) -> None:
    record_the_answer(mem)
    pack = mem.start_run(goal="Enter the number into the box", start_url=SHOP).context()
    assert pack.part("reference_trajectory").status == "included"
    reference = reference_of(pack)
    assert f"  2. fill {BOX} {FROM_INSTRUCTION} (on {SHOP})" in reference and ANSWER not in reference


def test_run_context_cuts_the_reference_by_whole_steps_before_dropping_it(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    for index in range(40):
        run.record_step(action="click", target=f'button "Step {index:02d}"', selector=f"#step-{index:02d}", url=SHOP)
    run.finish(success=True, outcome="Found 12 reviews")
    later = mem.start_run(goal="search smart watch reviews please", start_url=SHOP)
    full = later.context(budget_tokens=100_000)
    full_lines = str(full).splitlines()
    minimum = estimate(reference_part(format_reference(LONG)).render("\n".join(
        [*format_reference(LONG).splitlines()[:3], omitted_steps(39)]))).tokens
    cut_seen = False
    for budget in range(20, full.tokens, 25):
        pack = later.context(budget_tokens=budget)
        report = pack.part("reference_trajectory")
        before = [part for part in pack.report[:pack.report.index(report)] if part.status in ("included", "truncated")]
        room = budget - sum(part.tokens for part in before) - len(before)
        if report.status == "dropped":  # only when not even its goal and first step fit
            assert room < minimum
            continue
        lines = str(pack).splitlines()
        shown = step_lines(str(pack))
        assert shown == [line for line in full_lines if line in shown]
        if report.status == "truncated":
            cut_seen = True
            assert lines[lines.index(shown[-1]) + 1] == omitted_steps(40 - len(shown))
    assert cut_seen


@pytest.mark.parametrize("budget", [120, 200])
def test_under_a_tight_budget_the_reference_still_appears(mem: webmem.Memory, budget: int) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    for index in range(40):
        run.record_step(action="click", target=f'button "Step {index:02d}"', url=SHOP)
    run.finish(success=True, outcome="Found 12 reviews")
    pack = mem.start_run(goal="search smart watch reviews please", start_url=SHOP).context(budget_tokens=budget)
    assert pack.part("reference_trajectory").status == "truncated"
    assert '  1. click button "Step 00"' in str(pack) and re.search(r"  … \d+ more steps not shown", str(pack))
