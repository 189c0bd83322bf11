"""A recorded list of values replayed for a goal naming more or fewer of them (trajectories.lists)."""

from __future__ import annotations

import webmem
from webmem import Step

ADMIN = "http://127.0.0.1:8000/admin/library/book/"


def checks(*names: str, button: str = "Submit") -> list[Step]:
    return [*(Step(action="check", target=f'checkbox "{name}"', selector=f"#ch{number}", url=ADMIN)
              for number, name in enumerate(names)), Step(action="click", target=f'button "{button}"', selector="#sub")]


def targets(plan: webmem.ReplayPlan | None) -> list[str | None]:
    assert plan is not None
    return [step.target for step in plan.steps]


def test_one_value_replays_once_per_value_of_a_longer_list(mem: webmem.Memory) -> None:
    mem.trajectories.save(goal="Select Q3IjC0 and click Submit.", start_url=ADMIN, steps=checks("Q3IjC0"))
    lookup = mem.trajectories.search_replay("Select a, b, c and click Submit.", ADMIN)
    assert lookup.plan is not None, lookup.reason
    assert targets(lookup.plan) == ['checkbox "a"', 'checkbox "b"', 'checkbox "c"', 'button "Submit"']
    assert lookup.plan.template == "Select {1}, {3}, {4} and click {2}."
    assert lookup.plan.slots == {1: "a", 2: "Submit", 3: "b", 4: "c"}
    assert lookup.plan.goal_targets == frozenset({0, 1, 2, 3})  # each box is found by the name the goal gives
    # the recorded step keeps its selector; the copies do not carry a selector of another box
    assert [step.selector for step in lookup.plan.steps] == ["#ch0", None, None, "#sub"]


def test_a_list_replays_with_fewer_values_and_other_separators(mem: webmem.Memory) -> None:
    mem.trajectories.save(goal="Select bk, Zq1, mm and click Submit.", start_url=ADMIN, steps=checks("bk", "Zq1", "mm"))
    assert targets(mem.trajectories.find_replay("Select k9 and click Submit.", ADMIN)) == [
        'checkbox "k9"', 'button "Submit"']
    plan = mem.trajectories.find_replay("Select k9; jS and click Submit", ADMIN)
    assert targets(plan) == ['checkbox "k9"', 'checkbox "jS"', 'button "Submit"']
    assert plan is not None and [step.selector for step in plan.steps] == ["#ch0", "#ch1", "#sub"]


def test_a_list_is_not_resized_when_its_steps_differ_from_value_to_value(mem: webmem.Memory) -> None:
    uneven = [Step(action="check", target='checkbox "bk"', url=ADMIN), Step(action="click", target='link "Zq1"'),
              Step(action="click", target='button "Submit"')]
    mem.trajectories.save(goal="Select bk, Zq1 and click Submit.", start_url=ADMIN, steps=uneven)
    assert mem.trajectories.find_replay("Select k9, jS and click Submit.", ADMIN) is not None  # same length
    lookup = mem.trajectories.search_replay("Select a, b, c and click Submit.", ADMIN)
    assert lookup.plan is None and "no recorded run fits" in lookup.reason


def test_a_list_of_numbers_does_not_take_words(mem: webmem.Memory) -> None:
    steps = [Step(action="click", target='button "12"', url=ADMIN), Step(action="click", target='button "OK"')]
    mem.trajectories.save(goal="Press 12 then OK", start_url=ADMIN, steps=steps)
    assert targets(mem.trajectories.find_replay("Press 3, 4 then OK", ADMIN)) == [
        'button "3"', 'button "4"', 'button "OK"']
    assert mem.trajectories.find_replay("Press red, blue then OK", ADMIN) is None


def test_a_run_of_the_same_length_is_preferred_to_a_resized_one(mem: webmem.Memory) -> None:
    mem.trajectories.save(goal="Select bk, Zq1 and click Submit.", start_url=ADMIN, steps=checks("bk", "Zq1"))
    mem.trajectories.save(goal="Select Q3IjC0 and click Submit.", start_url=ADMIN, steps=checks("Q3IjC0"))
    plan = mem.trajectories.find_replay("Select k9, jS and click Submit.", ADMIN)
    assert plan is not None and plan.trajectory.goal == "Select bk, Zq1 and click Submit."
    assert [step.selector for step in plan.steps] == ["#ch0", "#ch1", "#sub"]


def test_the_same_goal_is_preferred_to_a_newer_template_that_binds_it(mem: webmem.Memory) -> None:
    mem.trajectories.save(goal="Select nothing and click Submit.", start_url=ADMIN,
                          steps=[Step(action="click", target='button "Submit"', url=ADMIN)])
    mem.trajectories.save(goal="Select Q3IjC0 and click Submit.", start_url=ADMIN, steps=checks("Q3IjC0"))
    plan = mem.trajectories.find_replay("Select nothing and click Submit.", ADMIN)
    assert targets(plan) == ['button "Submit"']


def test_a_path_is_not_a_list(mem: webmem.Memory) -> None:
    one = [Step(action="click", target='menuitem "Jacinda"', url=ADMIN)]
    mem.trajectories.save(goal="Select Jacinda", start_url=ADMIN, steps=one)
    assert mem.trajectories.find_replay("Select Leisha>Henrieta", ADMIN) is None


def test_one_typed_value_is_one_value_whatever_commas_it_holds(mem: webmem.Memory) -> None:
    ticket = "http://127.0.0.1:8000/ticket/9"
    mem.trajectories.save(goal="Add the comment Looks good to the ticket Slow search", start_url=ticket, steps=[
        Step(action="click", target='link "Slow search"', url=ticket),
        Step(action="fill", target='textbox "Comment"', value="Looks good", url=ticket),
        Step(action="click", target='button "Submit changes"', url=ticket)])
    lookup = mem.trajectories.search_replay("Add the comment Good catch, thanks to the ticket Crash on save", ticket)
    assert lookup.plan is not None, lookup.reason
    assert [(step.action, step.value) for step in lookup.plan.steps] == [
        ("click", None), ("fill", "Good catch, thanks"), ("click", None)]  # typed once, never once per "item"
