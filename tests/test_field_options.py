"""A field's options as values of the task: a run that chose in a select the value its goal names ("Show the completed
orders", "Complete") shows that the select's other options ("Pending", "On hold") are values of that task too. A later
goal that names one of them reaches that task, and only that task; what is no value (a placeholder, an option the goal
names as well, a choice the goal does not name) teaches nothing, and what a deleted run showed goes with it."""

from __future__ import annotations

import json

from click.testing import CliRunner

import rows
import webmem
from webmem.cli import cli
from webmem.trajectories.field_options import taught

SHOP = "http://shop.example.test"
STATUS = webmem.ElementSignals(label="Status", tag="select",
                               options=("Select a status...", "All", "Pending", "Processing", "Complete", "Canceled",
                                        "On hold"))
SORT = webmem.ElementSignals(label="Sort by", tag="select", options=("Price", "Name", "Rating"))


def orders(status: str = "Complete") -> list[webmem.Step]:
    return [webmem.Step(action="goto", url=f"{SHOP}/admin/orders"),
            webmem.Step(action="select", target='combobox "Status"', value=status, element=STATUS),
            webmem.Step(action="click", target='button "Search"')]


def shop(mem: webmem.Memory, goal: str = "Show the completed orders") -> webmem.Trajectory:
    saved = mem.trajectories.save(goal=goal, start_url=SHOP, steps=orders())
    mem.trajectories.save(goal="Export the customer list as CSV", start_url=SHOP,
                          steps=[webmem.Step(action="click", target='button "Export"')])
    mem.trajectories.save(goal="Refund the order of Bob Smith", start_url=SHOP,
                          steps=[webmem.Step(action="click", target='button "Refund"')])
    return saved


def test_another_option_of_the_field_a_run_chose_in_reaches_that_task(mem: webmem.Memory) -> None:
    saved = shop(mem)
    for query, option in (("Which orders are pending?", "pending"), ("List the cancelled orders", "cancelled"),
                          ("Show me all orders on hold", "on hold"), ("Orders that are processing", "processing")):
        report = mem.trajectories.match(query, origin=SHOP, limit=1)
        assert report.best is not None and report.best.id == saved.id, query
        assert f'"{option}" read as "completed" (both options of the field "Status" on this site)' in \
            report.candidates[0].why
        assert [(value.written, value.kind) for value in report.values_read] == [(option, "option")]
    assert mem.trajectories.match("Which orders are shipped?", origin=SHOP).best is None  # offered by no field


def test_an_option_reaches_only_the_task_whose_run_chose_in_its_field(mem: webmem.Memory) -> None:
    """"Rating" is an option of the field a sort chose "price" in: "Open the rating alerts" is no sort, and is not
    read as the price alerts another task opened."""
    mem.trajectories.save(goal="Sort the products by price", start_url=SHOP, steps=[
        webmem.Step(action="select", target='combobox "Sort by"', value="Price", element=SORT)])
    mem.trajectories.save(goal="Open the price alerts", start_url=SHOP, steps=[
        webmem.Step(action="click", target='link "Alerts"')])
    mem.trajectories.save(goal="Delete the customer Ann", start_url=SHOP, steps=[
        webmem.Step(action="click", target='button "Delete"')])
    assert mem.trajectories.match("Open the rating alerts", origin=SHOP).best is None
    report = mem.trajectories.match("Show the products sorted by their rating", origin=SHOP)
    assert report.best is not None and report.best.goal == "Sort the products by price"
    assert '"rating" read as "price"' in report.candidates[0].why


def test_what_is_no_value_of_the_task_teaches_nothing() -> None:
    assert sorted(option for option, *_ in taught("Show the completed orders", orders())) == \
        ["canceled", "on hold", "pending", "processing"]  # not the placeholder, not "All"
    prompting = webmem.ElementSignals(label="Status", tag="select", options=("Choose a status", "Complete", "Pending"))
    assert taught("Show the completed orders", [webmem.Step(action="select", target='combobox "Status"',
                                                            value="Complete", element=prompting)]) == \
        [("pending", "completed", "Status")]
    unlabelled = webmem.ElementSignals(options=STATUS.options)  # as the MCP proxy records a select
    assert {field for *_, field in taught("Show the completed orders", [webmem.Step(
        action="select", target='combobox "Order status"', value="Complete", element=unlabelled)])} == {"Order status"}
    assert taught("Show the orders", orders()) == []  # the goal does not name what was chosen
    assert taught("Move the pending orders to complete", orders()) == \
        [(option, "complete", "Status") for option in ("processing", "canceled", "on hold")]  # "pending" is named too
    assert taught("Show the completed orders", orders("Shipped")) == []  # a value the field does not offer
    assert taught("Show the completed orders", [webmem.Step(action="fill", target='textbox "Status"',
                                                            value="Complete")]) == []  # no options


def test_what_a_deleted_run_showed_goes_with_it_and_an_import_shows_it_again(mem: webmem.Memory) -> None:
    saved = shop(mem)
    assert rows.count(mem, "field_options") == 4
    mem.forget.trajectory(saved.id)
    assert rows.count(mem, "field_options") == 0
    assert mem.trajectories.match("Which orders are pending?", origin=SHOP).best is None
    mem.trajectories.import_trajectories([saved])
    report = mem.trajectories.match("Which orders are pending?", origin=SHOP)
    assert report.best is not None and report.best.id == saved.id


def test_an_option_changed_by_hand_to_nothing_is_passed_over(mem: webmem.Memory) -> None:
    saved = shop(mem)
    rows.execute(mem, "UPDATE field_options SET offered = '' WHERE offered = 'pending'")
    assert mem.trajectories.match("Which orders are pending?", origin=SHOP).best is None
    report = mem.trajectories.match("Which orders are on hold?", origin=SHOP)
    assert report.best is not None and report.best.id == saved.id


def test_the_api_and_the_cli_show_what_a_site_s_fields_offered(sqlite_mem: webmem.Memory, memory_dir) -> None:
    saved = shop(sqlite_mem)
    found = sqlite_mem.trajectories.field_options(f"{SHOP}/admin/orders")
    assert sorted((option.option, option.value, option.field, option.task, option.trajectory_id) for option in found) \
        == sorted((option, "completed", "Status", saved.goal_template or saved.goal, saved.id)
                  for option in ("pending", "processing", "canceled", "on hold"))
    shown = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "options", "--url", SHOP,
                                     "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == [option.model_dump(mode="json") for option in found]
    plain = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "options", "--url", SHOP])
    assert "on hold" in plain.output and "Status" in plain.output and saved.id in plain.output
    empty = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "options", "--url",
                                     "http://elsewhere.example.test"])
    assert empty.exit_code == 0 and "No field options." in empty.output
    bad = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "options", "--url", "not a url"])
    assert bad.exit_code != 0 and "origin" in bad.output and "Traceback" not in bad.output
