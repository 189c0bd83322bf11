"""Parameterised trajectories: which goal values become slots, how a new goal binds them, and replay lookup."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webmem import InvalidInput, Step
from webmem.trajectories.binding import bind
from webmem.trajectories.slots import fill, fill_checked, goal_spans, goal_values, parameterise

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
    assert bind(template, 'click on the "Next" button.') == {1: "Next"}  # letter case of the fixed text is no matter
    assert bind(template, 'Click on the "" button.') is None
    assert bind(template, 'Click on the "Next" button now.') is None


def test_a_slot_between_fixed_text_binds_a_value_of_any_length() -> None:
    template = "Delete the book {1}."
    assert bind(template, "Delete the book Blue Hour.") == {1: "Blue Hour"}
    assert bind(template, "delete the book the measure of light.") == {1: "the measure of light"}
    assert bind(template, "Delete the book .") is None
    assert bind("Select {1} {2} from the list", "Select two words from the list") == {1: "two", 2: "words"}
    assert bind("Select {1} {2} from the list", "Select three more words from the list") is None


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


# Slots with evidence: a typed value derived from a goal value by a known conversion.

ENTER_TIME = "Enter 11:20 AM as the time and press submit."
TIME_STEPS = [Step(action="fill", target='textbox ""', value="11:20"), Step(action="click", target='button "Submit"')]


def _replayed(template: str, slotted: list[Step], goal: str) -> tuple[str | None, dict[int, str]]:
    values = bind(template, goal)
    assert values is not None, goal
    steps, unresolved = fill_checked(slotted, values)
    return steps[0].value, unresolved


def test_goal_spans_take_times_dates_and_grouped_numbers_whole_and_goal_values_do_not() -> None:
    goal = 'Enter 11:20 AM on Nov 20, 2016 for 1,000 guests named "9:05 PM", then 11/20/2016 at 3pm'
    assert [v.text for v in goal_spans(goal)] == [
        "11:20 AM", "Nov 20, 2016", "1,000", "9:05 PM", "11/20/2016", "3pm"]
    assert [v.text for v in goal_values(ENTER_TIME)] == ["11", "20", "AM"]  # the recall matcher's values, unchanged


def test_the_enter_time_bug_converts_the_whole_time_to_24_hours() -> None:
    template, slotted = parameterise(ENTER_TIME, TIME_STEPS)
    assert template == "Enter {1} as the time and press submit."
    assert [s.value for s in slotted] == ["{1|time24}", None]
    for spoken, typed in [("12:21 AM", "00:21"), ("3:15 PM", "15:15"), ("12:05 PM", "12:05"), ("9:05 am", "09:05"),
                          ("11:59 p.m.", "23:59"), ("12:00 AM", "00:00")]:
        assert _replayed(template, slotted, f"Enter {spoken} as the time and press submit.") == (typed, {})


def test_a_time_the_conversion_cannot_read_is_left_unfilled_with_a_reason() -> None:
    template, slotted = parameterise(ENTER_TIME, TIME_STEPS)
    assert _replayed(template, slotted, "Enter noon as the time and press submit.") == (None, {
        0: 'value of {1} "noon": time24 cannot read it as a 12-hour time with AM or PM'})
    assert _replayed(template, slotted, "Enter 12:21 as the time and press submit.")[1][0].startswith(
        'value of {1} "12:21": time24 cannot read')
    steps, _ = fill_checked(slotted, {1: "noon"})
    assert (steps[0].action, steps[0].target, steps[1].target) == ("fill", 'textbox ""', 'button "Submit"')


def test_a_time_typed_as_it_stands_is_one_slot() -> None:
    as_typed = [Step(action="fill", target='textbox ""', value="7:30 PM")]
    assert parameterise("Book at 7:30 PM", as_typed) == ("Book at {1}", [
        Step(action="fill", target='textbox ""', value="{1}")])


def test_a_time_whose_meridiem_is_selected_apart_keeps_its_parts() -> None:
    twelve_hour = [Step(action="fill", target='textbox ""', value="11:20"),
                   Step(action="select", target='combobox ""', value="AM")]
    template, slotted = parameterise("Enter 11:20 AM", twelve_hour)
    assert (template, [s.value for s in slotted]) == ("Enter {1} {2}", ["{1}", "{2}"])
    assert bind(template, "Enter 9:05 PM") == {1: "9:05", 2: "PM"}


def test_a_time_with_a_part_referenced_as_a_secret_keeps_its_parts() -> None:
    secret_part = [Step(action="fill", target='textbox ""', value="11:20"),
                   Step(action="fill", target='textbox "Code"', value="{goal:3}")]
    template, slotted = parameterise("Enter 11:20 AM", secret_part)
    assert (template, [s.value for s in slotted]) == ("Enter {1} {2}", ["{1}", "{2}"])


def test_a_value_several_conversions_reproduce_is_filled_only_where_they_agree() -> None:
    steps = [Step(action="fill", target='textbox "Date"', value="11/20/2016")]
    template, slotted = parameterise("Enter Nov 20, 2016 as the date", steps)
    assert (template, slotted[0].value) == ("Enter {1} as the date", "{1|us_date|us_date_short}")
    assert _replayed(template, slotted, "Enter Dec 25, 2016 as the date") == ("12/25/2016", {})
    assert _replayed(template, slotted, "Enter Nov 5, 2016 as the date") == (None, {0: (
        'value of {1} "Nov 5, 2016": conversions disagree (us_date -> "11/05/2016", us_date_short -> "11/5/2016")')})


def test_identity_and_lower_disagree_on_a_value_with_capitals() -> None:
    slotted = [Step(action="fill", target='textbox ""', value="{1|identity|lower}")]
    assert fill_checked(slotted, {1: "abc"})[0][0].value == "abc"
    steps, unresolved = fill_checked(slotted, {1: "AbC"})
    assert steps[0].value is None
    assert unresolved == {0: 'value of {1} "AbC": conversions disagree (identity -> "AbC", lower -> "abc")'}
    assert fill(slotted, {1: "AbC"})[0].value is None


def test_a_value_typed_as_the_goal_says_stays_a_plain_slot() -> None:
    template, slotted = parameterise('Type "abc" and press Go', [Step(action="fill", target='textbox ""', value="abc")])
    assert (template, slotted[0].value) == ('Type "{1}" and press Go', "{1}")
    assert fill_checked(slotted, bind(template, 'Type "AbC" and press Go')) == (
        [Step(action="fill", target='textbox ""', value="AbC")], {})


def test_slashed_dates_numbers_and_case_are_converted() -> None:
    cases = [
        ("Enter 11/20/2016 as the date", "2016-11-20", "{1|iso_date}", "Enter 3/5/2016 as the date", "2016-03-05"),
        ("Buy 1,000 shares", "1000", "{1|number}", "Buy 12,500.5 shares", "12500.5"),
        ("Buy 1,000 shares", "1000", "{1|number}", "Buy 12 shares", "12"),
        ('Search for "Smart Watch"', "smart watch", "{1|lower}", 'Search for "E-Reader"', "e-reader"),
        ('Name it "kasie"', "KASIE", "{1|upper}", 'Name it "Bob"', "BOB"),
    ]
    for goal, typed, reference, new_goal, expected in cases:
        template, slotted = parameterise(goal, [Step(action="fill", target='textbox ""', value=typed)])
        assert slotted[0].value == reference, goal
        assert _replayed(template, slotted, new_goal) == (expected, {}), new_goal


def test_a_value_two_goal_values_convert_to_is_not_derived() -> None:
    assert parameterise('Type "ABC" or "Abc"', [Step(action="fill", target='textbox ""', value="abc")]) is None


def test_goal_references_and_plain_slots_keep_their_meaning() -> None:
    steps = [Step(action="fill", target='textbox "User"', value="Kasie"),
             Step(action="fill", target='textbox "Password"', value="{goal:2}"),
             Step(action="fill", target='textbox "Code"', value="{goal:9}")]
    template, slotted = parameterise("Log in as Kasie with password Hunter2", steps)
    assert template == "Log in as {1} with password {2}"
    assert [s.value for s in slotted] == ["{1}", "{2}", None]
    assert [s.value for s in fill(slotted, {1: "Bob", 2: "pw9"})] == ["Bob", "pw9", None]
    assert fill([Step(action="click", target='button "{3}"')], {1: "x"})[0].target == 'button "{3}"'


def test_fill_checked_reports_a_slot_without_a_value() -> None:
    steps, unresolved = fill_checked([Step(action="fill", target='textbox "{2}"', value="{1}")], {2: "Name"})
    assert (steps[0].value, steps[0].target, unresolved) == (None, 'textbox "Name"', {0: "no value for {1}"})


def test_bind_takes_a_time_or_spaced_date_whole_only_when_one_token_does_not_fit() -> None:
    assert bind("Set {1} {2}", "Set 8:00 AM") == {1: "8:00", 2: "AM"}
    assert bind("Meet at {1} on {2}", "Meet at 7:45 p.m. on 5 March 2016") == {1: "7:45 p.m.", 2: "5 March 2016"}
    assert bind("Meet at {1}", "Meet at half past seven") == {1: "half past seven"}  # plan_for checks its kind
    assert bind("Meet at {1}:{2} AM", "Meet at 7:45 PM") is None


def test_find_replay_converts_the_time_for_a_new_goal(mem: Any) -> None:
    steps = [Step(action="fill", target='textbox ""', value="11:20", ok=True, verified=True),
             Step(action="click", target='button "Submit"', ok=True)]
    saved = mem.trajectories.save(goal=ENTER_TIME, start_url=ORIGIN, steps=steps)
    assert saved.goal_template == "Enter {1} as the time and press submit."
    plan = mem.trajectories.find_replay("Enter 3:15 PM as the time and press submit.", ORIGIN)
    assert plan is not None and [s.value for s in plan.steps] == ["15:15", None]


def test_a_time_typed_as_written_then_converted_slots_the_whole_time(mem: Any) -> None:
    # the heuristic's enter-time run: "9:12 PM" refused by the time field, then "21:12" typed into it
    steps = [Step(action="fill", target='textbox ""', value="9:12 PM", verified=False),
             Step(action="fill", target='textbox ""', value="21:12", verified=True),
             Step(action="click", target='button "Submit"', verified=True)]
    template, slotted = parameterise("Enter 9:12 PM as the time and press submit.", steps)
    assert template == "Enter {1} as the time and press submit."
    assert [step.value for step in slotted] == ["{1}", "{1|time24}", None]
    saved = mem.trajectories.save(goal="Enter 9:12 PM as the time and press submit.",
                                  start_url="http://127.0.0.1:9/enter-time.html", steps=steps)
    assert [step.value for step in saved.replay_steps] == ["{1|time24}", None]  # the refused fill was replaced
    plan = mem.trajectories.find_replay("Enter 12:05 AM as the time and press submit.", saved.origin)
    assert plan is not None and [step.value for step in plan.steps] == ["00:05", None]


def _placed(action: str, role: str, place: int, value: str | None = None) -> Step:
    return Step(action=action, target=f'{role} ""', value=value, target_index=place, target_count=3)


def test_each_ordinal_that_places_a_step_is_a_slot_of_its_own_tied_by_the_role_it_names() -> None:
    from webmem.trajectories.places import place_of

    goal = 'Check the 1st radio button and enter the number "-8" into the 1st textbox.'
    # the textbox was filled first: the words after each ordinal say which step it places
    steps = [_placed("fill", "textbox", 1, "-8"), _placed("check", "radio", 1), Step(action="click", target='button "Go"')]
    template, slotted = parameterise(goal, steps)
    assert template == 'Check the {1} radio button and enter the number "{2}" into the {3} textbox.'
    assert [step.place_slot for step in slotted] == [3, 1, None]  # two "1st", two slots
    assert bind(template, 'Check the 3rd radio button and enter the number "5" into the 2nd textbox.') == {
        1: "3rd", 2: "5", 3: "2nd"}
    assert [place_of(word, 3) for word in ("1st", "second", "Third", "last", "4th", "2", "")] == [1, 2, 3, 3, None,
                                                                                                None, None]


def test_an_ordinal_that_places_no_step_stays_part_of_the_template() -> None:
    steps = [_placed("fill", "textbox", 2, "Kasie")]
    template, slotted = parameterise('Type "Kasie" into the box. This is the 1st try.', steps)
    assert template == 'Type "{1}" into the box. This is the 1st try.' and slotted[0].place_slot is None


def test_a_negative_number_is_one_value_with_its_sign() -> None:
    assert [v.text for v in goal_values("Select -10 with the spinner")] == ["-10"]
    assert [v.text for v in goal_values("COVID-19 cases from 10-12 and (-4)")] == ["COVID-19", "10-12", "-4"]
    steps = [Step(action="fill", target='spinbutton ""', value="-10"), Step(action="click", target='button "Submit"')]
    template, slotted = parameterise("Select -10 with the spinner and hit Submit.", steps)
    assert template == "Select {1} with the spinner and hit {2}." and slotted[0].value == "{1}"
    assert bind(template, "Select 6 with the spinner and hit Submit.") == {1: "6", 2: "Submit"}


def test_a_goal_binds_a_template_as_before_and_splits_where_a_joining_word_recurs() -> None:
    from webmem.trajectories.binding import bind, bindings

    template = "Select {1}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12} and click {2}."
    goal = "Select 54BYYc, 66UO4K, ZvFqzN, s0Tbs, yPxjz, gu4Op, 5dpY, soJpkj and click Submit."  # 8 of 11 values
    assert bind(template, goal) is None and bindings(template, goal) == []  # (refused at once: an atomic group)
    assert bind("Pay {1} to {2}", "Pay $ 5 to (Ann)") == {1: "$ 5", 2: "(Ann)"}  # a value's first letter may come late
    assert bind("Pay {1} to {2}", "Pay $ to Ann") is None  # a value has a letter or a digit
    assert bindings("Assign the issue {1} to {2}", "Assign the issue Export to spreadsheet fails to farid") == [
        {1: "Export", 2: "spreadsheet fails to farid"}, {1: "Export to spreadsheet fails", 2: "farid"}]
