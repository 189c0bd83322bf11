"""Replay for goals as people write them: values found by what the steps used, not by capitals; slots
that bind values of any length; one template per task; and a reason for every replay not offered."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import webmem
from webmem import Step
from webmem.cli import cli
from webmem.trajectories.binding import bind
from webmem.trajectories.evidence import used_spans
from webmem.trajectories.slots import goal_values, parameterise

ADMIN = "http://127.0.0.1:8000/admin/library/book/"
YES = 'button "Yes, I’m sure"'


def delete_steps(title: str) -> list[Step]:
    return [Step(action="click", target=f'link "{title}"', url=ADMIN), Step(action="click", target='link "Delete"'),
            Step(action="click", target=YES, verified=True)]


def add_steps(title: str, author: str, year: str, genre: str) -> list[Step]:
    return [Step(action="click", target='link "Add book"', url=ADMIN),
            Step(action="fill", target='textbox "Title:"', value=title),
            Step(action="fill", target='textbox "Author:"', value=author),
            Step(action="fill", target='spinbutton "Year:"', value=year),
            Step(action="select", target='combobox "Genre:"', value=genre),
            Step(action="click", target='button "Save"', verified=True)]


def add_goal(title: str, author: str, year: str, genre: str) -> str:
    return f"add a book titled {title} by {author}, published in {year}, genre {genre}"


def spans(goal: str, steps: list[Step]) -> list[str]:
    return [span.text for span in used_spans(goal, steps, [])]


def test_a_span_is_a_value_when_a_step_used_it_whole_in_any_case() -> None:
    goal = "Delete the book harbors and gardens"
    assert goal_values(goal) == []  # no capital, no number, no quotes: the old rules saw no value
    assert spans(goal, delete_steps("Harbors and Gardens")) == ["harbors and gardens"]
    template, slotted = parameterise(goal, delete_steps("Harbors and Gardens"))
    assert template == "Delete the book {1}" and slotted[0].target == 'link "{1}"'
    assert slotted[1].target == 'link "Delete"'  # the goal's first word and an instruction are no value


def test_connectors_field_labels_and_instructions_are_not_values() -> None:
    steps = [Step(action="click", target='link "The"'), Step(action="click", target='button "Search"'),
             Step(action="fill", target='textbox "Title"', value="x"), Step(action="click", target='textbox "Box"')]
    assert spans("Open the page and search the title box", steps) == []
    typed = [Step(action="fill", target='textbox "Word"', value="search")]
    assert spans("Type the word search into the box", typed) == ["search"]  # typed, it is a value


def test_a_title_of_any_length_binds_and_the_replay_clicks_it() -> None:
    template, _ = parameterise("delete the book The Quantum Garden", delete_steps("The Quantum Garden"))
    assert template == "delete the book {1}"
    for title in ("Blue Hour", "The Archive of Gardens", "the measure of light", "Harbors and Gardens"):
        assert bind(template, f"Delete the book {title}.") == {1: title}


def test_natural_goals_replay_with_their_own_values(mem: webmem.Memory) -> None:
    mem.trajectories.save(goal="delete the book The Quantum Garden", start_url=ADMIN,
                          steps=delete_steps("The Quantum Garden"))
    plan = mem.trajectories.find_replay("Delete the book harbors and gardens", ADMIN)
    assert plan is not None and plan.slots == {1: "harbors and gardens"}
    assert [step.target for step in plan.steps] == ['link "harbors and gardens"', 'link "Delete"', YES]
    assert plan.goal_targets == frozenset({0})  # found on the page in any letter case

    mem.trajectories.save(goal="show only the fiction books", start_url=ADMIN,
                          steps=[Step(action="click", target='link "Fiction"', url=ADMIN)])
    plan = mem.trajectories.find_replay("show only the science fiction books", ADMIN)
    assert plan is not None and plan.steps[0].target == 'link "science fiction"'


def test_a_lowercase_choice_is_selected_in_the_goals_words(mem: webmem.Memory) -> None:
    saved = mem.trajectories.save(goal=add_goal("Harbors and Gardens", "Mary Oliver", "1999", "poetry"),
                                  start_url=ADMIN, steps=add_steps("Harbors and Gardens", "Mary Oliver", "1999", "Poetry"))
    assert saved.goal_template == "add a book titled {1} by {2}, published in {3}, genre {4}"
    assert saved.replay_steps is not None and saved.replay_steps[4].value == "{4}"
    plan = mem.trajectories.find_replay(add_goal("Blue Hour Sonnets", "Ann Carson", "2011", "history"), ADMIN)
    assert plan is not None
    assert [step.value for step in plan.steps][1:5] == ["Blue Hour Sonnets", "Ann Carson", "2011", "history"]


def test_a_value_of_another_kind_does_not_bind(mem: webmem.Memory) -> None:
    mem.trajectories.save(goal=add_goal("The Silent River", "Tom Lee", "2003", "fiction"), start_url=ADMIN,
                          steps=add_steps("The Silent River", "Tom Lee", "2003", "Fiction"))
    lookup = mem.trajectories.search_replay(add_goal("Blue Hour", "Ann", "nineteen", "poetry"), ADMIN)
    assert lookup.plan is None
    assert 'slot {3} held a number ("2003") when recorded; this goal gives "nineteen"' in (lookup.reason or "")


@pytest.mark.parametrize(("recorded", "other"), [
    ("delete the book The Quantum Garden", "edit the book The Quantum Garden"),
    ("sort the watches by cheapest first and open Solar One", "sort the watches by most expensive first and open Solar One"),
])
def test_a_template_does_not_bind_another_task(mem: webmem.Memory, recorded: str, other: str) -> None:
    steps = delete_steps("The Quantum Garden") if "book" in recorded else [
        Step(action="click", target='link "Price: low to high"', url=ADMIN), Step(action="click", target='link "Solar One"')]
    saved = mem.trajectories.save(goal=recorded, start_url=ADMIN, steps=steps)
    assert saved.goal_template is not None
    lookup = mem.trajectories.search_replay(other, ADMIN)
    assert lookup.plan is None and "the goal does not read" in (lookup.reason or "")


def test_one_task_keeps_one_template_however_its_values_are_worded(mem: webmem.Memory) -> None:
    first = mem.trajectories.save(goal="delete the book The Quantum Garden", start_url=ADMIN,
                                  steps=delete_steps("The Quantum Garden"))
    for title in ("harbors and gardens", "Blue Hour"):
        again = mem.trajectories.save(goal=f"Delete the book {title}.", start_url=ADMIN,
                                      steps=delete_steps(title.title() if title.islower() else title))
        assert again.goal_template == first.goal_template == "delete the book {1}"
    search = [Step(action="fill", target='searchbox "Search"', value="gardens", url=ADMIN),
              Step(action="press", value="Enter"), Step(action="click", target='link "Harbors and Gardens"')]
    saved = mem.trajectories.save(goal="search the books for gardens and open the book Harbors and Gardens",
                                  start_url=ADMIN, steps=search)
    assert saved.goal_template == "search the books for {1} and open the book {2}"  # not one repeated slot
    plan = mem.trajectories.find_replay("search the books for light and open the book The Measure of Light", ADMIN)
    assert plan is not None and plan.steps[2].target == 'link "The Measure of Light"'


def test_every_miss_has_a_reason(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    assert mem.trajectories.search_replay("delete the book X", ADMIN).reason == \
        "no successful run is recorded on this origin"
    mem.trajectories.save(goal="delete the book The Quantum Garden", start_url=ADMIN,
                          steps=delete_steps("The Quantum Garden"))
    lookup = mem.trajectories.search_replay("archive the book The Quantum Garden", ADMIN)
    assert lookup.plan is None and not lookup.offered
    assert 'the goal does not read "delete the book" where the template "delete the book {1}" does' in lookup.reason
    misses = [event for event in events if event["event"] == "replay_not_found"]
    assert [event["reason"] for event in misses][-1] == lookup.reason

    read_off = [Step(action="fill", target='textbox "Code"', value="K7Q2", url=ADMIN), Step(action="click",
                                                                                          target='button "Go"')]
    mem.trajectories.save(goal="enter the code shown on the page", start_url=ADMIN, steps=read_off)
    lookup = mem.trajectories.search_replay("enter the code shown on the page", ADMIN)
    assert lookup.plan is None and 'step 1 types "K7Q2", which the goal does not give' in lookup.reason

    secret = [Step(action="fill", target='textbox "Password"', value="hunter22", url=ADMIN),
              Step(action="click", target='button "Log in"')]
    mem.trajectories.save(goal="log in to the admin", start_url=ADMIN, steps=secret)
    lookup = mem.trajectories.search_replay("log in to the admin", ADMIN)
    assert lookup.plan is None and "step 1 types a secret ({password}) that the goal does not give" in lookup.reason


def test_explain_shows_how_a_goal_binds_or_why_not(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        mem.trajectories.save(goal="delete the book The Quantum Garden", start_url=ADMIN,
                              steps=delete_steps("The Quantum Garden"))
        mem.trajectories.save(goal="show only the fiction books", start_url=ADMIN,
                              steps=[Step(action="click", target='link "Fiction"', url=ADMIN)])
    runner = CliRunner()
    found = runner.invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "explain",
                                "delete the book blue hour", "--origin", ADMIN, "--json"], catch_exceptions=False)
    data = json.loads(found.stdout)
    assert data["offered"] and data["template"] == "delete the book {1}" and data["values"] == {"1": "blue hour"}
    missed = runner.invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "explain",
                                 "show only the cheap books", "--origin", ADMIN], catch_exceptions=False)
    assert missed.exit_code == 0 and "No replay:" not in missed.stdout  # "cheap" fits the genre slot
    missed = runner.invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "explain",
                                 "hide the fiction books", "--origin", ADMIN], catch_exceptions=False)
    assert "No replay: no recorded run fits" in missed.stdout and "show only the {1} books" in missed.stdout


def test_one_menu_item_does_not_bind_a_path_of_them(mem: webmem.Memory) -> None:
    one = [Step(action="click", target='menuitem "Jacinda"', url=ADMIN)]
    two = [Step(action="hover", target='menuitem "Elita"', url=ADMIN), Step(action="click", target='menuitem "Rosa"')]
    mem.trajectories.save(goal="Select Elita>Rosa", start_url=ADMIN, steps=two)
    mem.trajectories.save(goal="Select Jacinda", start_url=ADMIN, steps=one)
    plan = mem.trajectories.find_replay("Select Glennie>Jeanne", ADMIN)
    assert plan is not None and [step.target for step in plan.steps] == ['menuitem "Glennie"', 'menuitem "Jeanne"']
    assert mem.trajectories.find_replay("Select Leisha>Henrieta>Matilda", ADMIN) is None
