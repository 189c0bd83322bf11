"""A goal value that decides which element a later step acts on, where that step's target cannot follow it,
stays words of the goal template: "Show the tickets with priority major" and "... with owner alice" choose a
filter's field in one select and then fill a field that only the first value's name identifies
(``select[name="0_priority"]``, ``input[name="0_owner"]``), so they are two tasks, not one template."""

from __future__ import annotations

import webmem
from webmem import ElementSignals, Step

QUERY = "http://127.0.0.1:8000/query"


def add_filter(field: str, page: str | None = None) -> Step:
    """Choose a filter's field; ``page``: the fingerprint of the page chosen on (a row added changes it)."""
    return Step(action="select", target='combobox "And"', selector='internal:label="And"i', value=field, url=QUERY,
                snapshot_hash=page)


def update() -> Step:
    return Step(action="click", target='button "Update"', selector='role=button[name="Update"]', url=QUERY)


def by_priority(priority: str) -> list[Step]:
    """As the recording proxy writes a filter's value box that has no accessible name: its selector alone."""
    return [Step(action="goto", value=QUERY), add_filter("Priority"),
            Step(action="select", selector='select[name="0_priority"]', value=priority, url=QUERY), update()]


def by_owner(owner: str) -> list[Step]:
    return [Step(action="goto", value=QUERY), add_filter("Owner"),
            Step(action="fill", selector='input[name="0_owner"]', value=owner, url=QUERY), update()]


def test_the_field_a_filter_adds_stays_a_word_of_its_template(mem: webmem.Memory) -> None:
    for priority in ("blocker", "critical"):
        saved = mem.trajectories.save(goal=f"Show the tickets with priority {priority}", start_url=QUERY,
                                      steps=by_priority(priority))
        assert saved.goal_template == "Show the tickets with priority {1}"
    owner = mem.trajectories.save(goal="Show the tickets with owner farah", start_url=QUERY, steps=by_owner("farah"))
    assert owner.goal_template == "Show the tickets with owner {1}"
    assert [(step.action, step.selector, step.value) for step in owner.replay_steps[1:3]] == [
        ("select", 'internal:label="And"i', "Owner"), ("fill", 'input[name="0_owner"]', "{1}")]

    plan = mem.trajectories.find_replay("Show the tickets with owner alice", QUERY)
    assert plan is not None and [(step.selector, step.value) for step in plan.steps[2:3]] == [
        ('input[name="0_owner"]', "alice")]
    plan = mem.trajectories.find_replay("Show the tickets with priority major", QUERY)
    assert plan is not None and (plan.steps[2].selector, plan.steps[2].value) == ('select[name="0_priority"]', "major")
    assert mem.trajectories.find_replay("Show the tickets with status closed", QUERY) is None  # no field of its own


def test_a_second_filters_field_and_own_signals_decide_too_and_the_values_still_slot(mem: webmem.Memory) -> None:
    steps = [Step(action="goto", value=QUERY), add_filter("Priority", "no filter"), add_filter("Type", "a filter"),
             Step(action="select", target='combobox ""', selector="tr:nth-of-type(1) > td > select", value="minor",
                  url=QUERY, element=ElementSignals(row_header="Priority")),
             Step(action="select", target='combobox ""', selector="tr:nth-of-type(2) > td > select", value="task",
                  url=QUERY, element=ElementSignals(field_name="0_type")),
             update()]
    saved = mem.trajectories.save(goal="Show the tickets of type task with priority minor", start_url=QUERY,
                                  steps=steps)
    assert saved.goal_template == "Show the tickets of type {1} with priority {2}"
    assert [step.value for step in saved.replay_steps] == [QUERY, "Priority", "Type", "{2}", "{1}", None]


def test_text_around_a_field_and_a_selectors_structure_decide_nothing(mem: webmem.Memory) -> None:
    shown = [Step(action="goto", value=QUERY), add_filter("Priority"),
             Step(action="select", target='combobox ""', value="major", url=QUERY,
                  element=ElementSignals(heading="Priority", text_before="Priority")), update()]
    saved = mem.trajectories.save(goal="Show the tickets with priority major", start_url=QUERY, steps=shown)
    assert saved.goal_template == "Show the tickets with {1} {2}"  # no signal of its own names the field
    rows = [Step(action="fill", target='textbox ""', selector="tr:nth-of-type(2) > td > input", value="2", url=QUERY)]
    saved = mem.trajectories.save(goal="Enter 2 in the box", start_url=QUERY, steps=rows)
    assert saved.goal_template == "Enter {1} in the box"


def test_a_named_target_follows_the_slots_in_its_name_and_not_a_value_left_in_it(mem: webmem.Memory) -> None:
    opened = [Step(action="click", target='link "Slow search"', selector='role=link[name="Slow search"]', url=QUERY),
              Step(action="click", target='button "Edit"', selector="#edit-slow-search", url=QUERY)]
    saved = mem.trajectories.save(goal="Edit the ticket Slow search", start_url=QUERY, steps=opened)
    assert saved.goal_template is None  # the Edit button its selector names is that ticket's: no other one's
    renamed = [Step(action="click", target='link "Slow Search"', url=QUERY),
               Step(action="click", target='button "Close Slow Search"', url=QUERY)]
    saved = mem.trajectories.save(goal="Close the ticket slow search", start_url=QUERY, steps=renamed)
    assert saved.goal_template is None  # the button's name holds the title in another case, which no slot fills
    followed = [Step(action="click", target='link "Slow search"', url=QUERY),
                Step(action="click", target='button "Close Slow search"', url=QUERY)]
    saved = mem.trajectories.save(goal="Close the ticket Slow search", start_url=QUERY, steps=followed)
    assert saved.goal_template == "Close the ticket {1}"
    assert [step.target for step in saved.replay_steps] == ['link "{1}"', 'button "Close {1}"']
    partly = [Step(action="click", target='link "Slow search"', url=QUERY),
              Step(action="select", target='combobox "Field"', value="Priority", url=QUERY),
              Step(action="fill", target='textbox "Priority for Slow search"', value="high", url=QUERY)]
    saved = mem.trajectories.save(goal="Set the priority of Slow search to high", start_url=QUERY, steps=partly)
    assert saved.goal_template == "Set the priority of {1} to {2}"  # what the title's slot leaves names the field
    assert saved.replay_steps[2].target == 'textbox "Priority for {1}"'
