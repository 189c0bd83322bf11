"""Parameterised trajectories: which goal values become slots, how a new goal binds them, and replay lookup."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webmem import InvalidInput, Step
from webmem.trajectories.slots import bind, fill, goal_values, parameterise

ORIGIN = "https://shop.example"


def test_goal_values_are_quoted_strings_numbers_and_names() -> None:
    goal = 'Select Audrye and 3 items, then type "big red" into the box; ignore It'
    assert [v.text for v in goal_values(goal)] == ["Audrye", "3", "big red", "It"]
    assert [v.text for v in goal_values("Click the button")] == []  # the first word is not a name
    assert [v.text for v in goal_values("Book flight AF447 to Paris")] == ["AF447", "Paris"]


def test_only_values_that_recur_in_the_steps_become_slots() -> None:
    steps = [Step(action="select", target='combobox ""', value="Audrye"), Step(action="click", target='button "Submit"')]
    template, slotted = parameterise("Select Audrye from the list and click Submit. Thanks Bob", steps)
    assert template == "Select {1} from the list and click {2}. Thanks Bob"
    assert [(s.target, s.value) for s in slotted] == [('combobox ""', "{1}"), ('button "{2}"', None)]


def test_a_value_inside_a_longer_word_is_not_a_slot() -> None:
    steps = [Step(action="click", target='button "Looking"')]
    assert parameterise('Click "Look"', steps) is None


def test_goals_or_steps_with_braces_are_not_parameterised() -> None:
    assert parameterise('Type "{x}"', [Step(action="fill", target='textbox ""', value="{x}")]) is None
    assert parameterise('Type "ab"', [Step(action="fill", target='textbox ""', value="{password}")]) is None


def test_bind_is_strict_about_the_literal_text() -> None:
    template = 'Click on the "{1}" button.'
    assert bind(template, 'Click on the "Next" button.') == {1: "Next"}
    assert bind(template, 'Click  on the "Next"   button.') == {1: "Next"}
    assert bind(template, 'Click on the "Next" link.') is None
    assert bind(template, 'click on the "Next" button.') is None
    assert bind(template, 'Click on the "" button.') is None
    assert bind("Select {1} from the list", "Select two words from the list") is None  # a name is one token


def test_a_slot_used_twice_must_bind_the_same_value() -> None:
    assert bind('Copy "{1}" and paste "{1}"', 'Copy "a" and paste "a"') == {1: "a"}
    assert bind('Copy "{1}" and paste "{1}"', 'Copy "a" and paste "b"') is None


@given(st.text(alphabet=st.characters(blacklist_characters='"\n\r“”', blacklist_categories=("Cs", "Cc")),
               min_size=1, max_size=30).filter(lambda v: v.strip() == v and v))
def test_any_quoted_value_round_trips_through_a_template(value: str) -> None:
    steps = [Step(action="fill", target='textbox "Name"', value="Kasie"), Step(action="click", target='button "Go"')]
    template, slotted = parameterise('Enter "Kasie" and press Go', steps)
    values = bind(template, f'Enter "{value}" and press Go')
    assert values is not None and values[1] == value
    assert fill(slotted, values)[0].value == value


def test_find_replay_is_stricter_than_match(mem: Any) -> None:
    steps = [Step(action="fill", target='textbox "Search"', value="smart watch", ok=True, verified=True),
             Step(action="click", target='button "Search"', ok=True, verified=True)]
    saved = mem.trajectories.save(goal='Search for "smart watch"', start_url=ORIGIN + "/", steps=steps)
    assert saved.goal_template == 'Search for "{1}"'
    assert mem.trajectories.match('Search "smart watch" reviews', origin=ORIGIN).best is not None
    assert mem.trajectories.find_replay('Search "smart watch" reviews', ORIGIN) is None
    plan = mem.trajectories.find_replay('Search for "e-reader"', ORIGIN)
    assert plan is not None and plan.trajectory_id == saved.id and plan.slots == {1: "e-reader"}
    assert [s.value for s in plan.steps] == ["e-reader", None]
    assert mem.trajectories.find_replay('Search for "e-reader"', "https://other.example") is None


def test_find_replay_prefers_the_newest_fitting_trajectory_and_skips_failed_steps(mem: Any) -> None:
    old = [Step(action="click", target='button "Old"', ok=True)]
    new = [Step(action="click", target='button "Broken"', ok=False, error="timeout"),
           Step(action="click", target='button "New"', ok=True)]
    mem.trajectories.save(goal="Open the menu", start_url=ORIGIN, steps=old)
    newest = mem.trajectories.save(goal="Open the menu", start_url=ORIGIN, steps=new)
    plan = mem.trajectories.find_replay("Open the menu", ORIGIN)
    assert plan.trajectory_id == newest.id and [s.target for s in plan.steps] == ['button "New"']


def test_find_replay_refuses_bad_input(mem: Any) -> None:
    with pytest.raises(InvalidInput, match="goal"):
        mem.trajectories.find_replay("  ", ORIGIN)
    with pytest.raises(InvalidInput, match="origin"):
        mem.trajectories.find_replay("Open the menu", "not a url")


def test_a_value_the_run_read_off_the_page_is_never_replayed(mem: Any) -> None:
    steps = [Step(action="fill", target='textbox ""', value="Spain", ok=True),
             Step(action="click", target='button "Submit"', ok=True)]
    goal = "Enter the value of Country into the text field and press Submit."
    mem.trajectories.save(goal=goal, start_url=ORIGIN, steps=steps)
    assert mem.trajectories.find_replay(goal, ORIGIN) is None
    assert mem.trajectories.find_replay("Enter the value of Religion into the text field and press Submit.",
                                        ORIGIN) is None


def test_a_password_typed_without_a_goal_reference_is_never_replayed(mem: Any) -> None:
    steps = [Step(action="fill", target='textbox "Password"', value="hunter22", ok=True)]
    mem.trajectories.save(goal="Log in", start_url=ORIGIN, steps=steps)
    assert mem.trajectories.list()[0].steps[0].value == "{password}"
    assert mem.trajectories.find_replay("Log in", ORIGIN) is None


def test_a_retried_step_is_replayed_once_and_waits_are_kept(mem: Any) -> None:
    fill_year = Step(action="fill", target='textbox ""', selector="#year", value="2007", ok=True)
    steps = [fill_year, fill_year, Step(action="hover", target='menuitem "Files"', ok=True),
             Step(action="wait", ok=True, duration_ms=400), Step(action="click", target='menuitem "Open"', ok=True)]
    mem.trajectories.save(goal="Find films from 2007 in Files", start_url=ORIGIN, steps=steps)
    plan = mem.trajectories.find_replay("Find films from 2011 in Files", ORIGIN)
    assert [(s.action, s.value) for s in plan.steps] == [
        ("fill", "2011"), ("hover", None), ("wait", None), ("click", None)]
