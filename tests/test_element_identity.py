"""Elements known the way people know them: a field with no accessible name is found by its row header, its
name attribute, its options and its place, never by the value it shows (``core.elements``), in real headless
Chromium on a classic table layout (``sites/replay/issue.html``); and the comparison itself, signal by signal."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from test_agent_loop import ScriptedPolicy
from test_replay_handover import PageVerdict

import webmem
from webmem import ElementSignals, InvalidInput
from webmem.agent import Action, Agent, Target, Turn
from webmem.core.elements import (
    choose,
    compare,
    describe_element,
    naming_texts,
    selector_names,
)
from webmem.demo.server import serve_site

PAGES = Path(__file__).parent / "sites" / "replay"
HEADERS = {"status": "Status", "assignee": "Assigned to", "reviewer": "Reviewer", "priority": "Priority"}
GOALS = {"status": "Set the status of this issue to {value}", "assignee": "Assign this issue to {value}"}


def issue_url(base: str, title: str, field: str, value: str, layout: str = "", **shown: str) -> str:
    query = {"title": title, **shown, "expect": f"{field}:{value}"}
    return f"{base}issue.html?{urlencode({**query, 'layout': layout} if layout else query)}"


def set_field(field: str, value: str) -> Any:
    """Sets the select in the row headed for ``field`` (as a person reads the form), then saves."""

    def decide(turn: Turn) -> Action:
        boxes = [box for box in turn.observation.find("combobox", "") if box.label == HEADERS[field]]
        if boxes and not any(done.action.kind == "select" for done in turn.history):
            return Action("select", Target(ref=boxes[0].ref), value=value)
        return Action("click", Target(role="button", name="Save"))

    return decide


def run(page: Any, mem: Any, url: str, goal: str, policy: ScriptedPolicy) -> Any:
    return Agent(page, memory=mem, policy=policy, environment=PageVerdict(), max_turns=6).run(goal, url=url)


def record(page: Any, mem: Any, base: str, field: str, title: str, value: str, **shown: str) -> None:
    goal = GOALS[field].format(title=title, value=value)
    result = run(page, mem, issue_url(base, title, field, value, **shown), goal, ScriptedPolicy(set_field(field, value)))
    assert result.success, result.reason


def replay(page: Any, mem: Any, base: str, field: str, title: str, value: str, layout: str = "",
           **shown: str) -> tuple[Any, ScriptedPolicy]:
    fallback = ScriptedPolicy(set_field(field, value))
    goal = GOALS[field].format(title=title, value=value)
    return run(page, mem, issue_url(base, title, field, value, layout, **shown), goal, fallback), fallback


def test_an_unnamed_select_is_found_by_its_row_not_by_the_value_it_shows(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        record(page, mem, base, "status", "Export fails", "testing", status="unread")
        stored = mem.runs.steps(mem.runs.list()[0].run_id)[0]
        result, fallback = replay(page, mem, base, "status", "Login slow", "resolved", status="chatting")
    assert stored.target == 'combobox ""' and stored.element is not None
    assert (stored.element.row_header, stored.element.field_name, stored.element.tag) == ("Status", "status", "select")
    assert "chatting" in stored.element.options and stored.element.position == 1 and stored.element.of_kind == 4
    shown = [text for name, text in stored.element if isinstance(text, str)]
    assert "unread" not in shown and stored.label == "Status"  # the value it showed is state, not identity
    reference = mem.trajectories.format_reference(mem.trajectories.list()[-1])
    assert 'select combobox "" (row "Status", name=status) "testing"' in reference
    assert result.success and result.replay_outcome == "replayed" and fallback.stats.decisions == 0, result.replay_reason
    assert [(step.step, step.status) for step in result.replay_steps] == [(1, "hit"), (2, "hit")]


def test_two_alike_fields_are_told_apart_by_their_row_header_alone(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        record(page, mem, base, "assignee", "Export fails", "farid", layout="bare")
        result, fallback = replay(page, mem, base, "assignee", "Login slow", "mei", "swap,bare", assignee="olga")
    assert result.success and result.replay_outcome == "replayed" and fallback.stats.decisions == 0, result.replay_reason
    first = result.replay_steps[0]
    assert first.status == "healed" and first.reason == "found by its row 'Assigned to': the page put it elsewhere"


def test_a_renamed_row_header_is_healed_by_the_other_signals(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        record(page, mem, base, "status", "Export fails", "testing")
        result, fallback = replay(page, mem, base, "status", "Login slow", "resolved", "renamed", status="chatting")
    assert result.success and result.replay_outcome == "replayed" and fallback.stats.decisions == 0, result.replay_reason
    first = result.replay_steps[0]
    assert first.status == "healed" and "found by its name attribute 'status'" in first.reason
    assert "its row is 'State', not 'Status'" in first.reason


def test_two_candidates_that_tie_are_handed_over_naming_them(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        record(page, mem, base, "assignee", "Export fails", "farid")
        result, fallback = replay(page, mem, base, "assignee", "Login slow", "mei", "tie")
    assert result.replay_outcome == "handed_over" and result.replay_step == 1
    (step,) = result.replay_steps
    assert step.status == "missed" and "2 elements fit" in step.reason and "not certain" in step.reason
    assert "name attribute 'assignee'" in step.reason and "row 'Assigned to'" in step.reason
    assert fallback.stats.decisions > 0  # nothing was chosen between the two; the policy did the task


def test_a_step_recorded_without_signals_replays_as_before(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        record(page, mem, base, "status", "Export fails", "testing")
        run_id = mem.runs.list()[0].run_id
        steps = mem.runs.steps(run_id)
        old = mem.start_run(goal=GOALS["status"].format(title="Export fails", value="testing"),
                            start_url=issue_url(base, "Export fails", "status", "testing"))
        for step in steps:
            old.record_step(**step.model_dump(exclude={"element", "place_slot", "completes"}))
        old.finish(success=True)
        mem.forget.trajectory(mem.trajectories.list()[-1].id)  # only the one without signals is left
        assert [step.element for step in mem.trajectories.list()[0].steps] == [None, None]
        result, fallback = replay(page, mem, base, "status", "Login slow", "resolved", status="chatting")
    assert result.success and result.replay_outcome == "replayed" and fallback.stats.decisions == 0, result.replay_reason


def test_record_step_takes_signals_as_a_record_or_a_mapping_and_redacts_them(tmp_path: Path) -> None:
    with webmem.Memory.open(tmp_path / "mem") as mem:
        mem.secrets.add("hunter2-secret", name="password")
        run = mem.start_run(goal="Set the status", start_url="https://tracker.example.com/issue1")
        run.record_step(action="select", target='combobox ""', value="testing",
                        element={"row_header": "Status", "field_name": "status", "options": ["unread", "testing"]})
        run.record_step(action="fill", target='textbox ""', value="x",
                        element=ElementSignals(label="Token hunter2-secret", position=2, of_kind=3))
        for bad, problem in (("Status", "element"), ({"row_header": 3}, "row_header"),
                             ({"position": 0, "of_kind": 2}, "position"), ({"colour": "red"}, "colour")):
            with pytest.raises(InvalidInput, match=problem):
                run.record_step(action="click", target='button "Go"', element=bad)
        steps = mem.runs.steps(run.id)
    assert steps[0].element == ElementSignals(row_header="Status", field_name="status", options=("unread", "testing"))
    assert steps[1].element.label == "Token {password}" and len(steps) == 2


def signals(**given: Any) -> ElementSignals:
    return ElementSignals(**given)


def test_own_signals_that_differ_count_against_and_context_that_differs_says_nothing() -> None:
    recorded = signals(row_header="Status", field_name="status", tag="select", heading="Export fails",
                       options=("unread", "testing"))
    same_elsewhere = signals(row_header="Status:", field_name="status", tag="select", heading="Login slow",
                             options=("unread", "testing", "resolved"))
    other = signals(row_header="Priority", field_name="priority", tag="select", heading="Export fails")
    alike = compare(recorded, "", same_elsewhere, "")  # "Status:" is "Status"; the heading holds a value
    assert alike.score > 0.9 and not alike.disagreed and ("heading", "Export fails") not in alike.agreed
    assert compare(recorded, "", other, "").score < 0
    assert [kind for kind, _, _ in compare(recorded, "", other, "").disagreed] == ["field_name", "row_header"]
    numbered = compare(signals(field_name="0_priority", row_header="Priority"), "",
                       signals(field_name="2_priority", row_header="Priority"), "")
    assert 0.5 < numbered.score < 1 and not numbered.disagreed  # a list's numbered rows: one field


def test_choose_acts_only_on_a_clear_winner() -> None:
    recorded = signals(row_header="Assigned to", field_name="assignee", tag="select")
    clear = choose(recorded, "", [("", signals(row_header="Reviewer", field_name="reviewer", tag="select")),
                                  ("", signals(row_header="Assigned to", field_name="assignee", tag="select"))],
                   what="the field")
    assert clear.index == 1 and clear.reason == "found by its name attribute 'assignee', row 'Assigned to'"
    tied = choose(recorded, "", [("", signals(row_header="Assigned to", field_name="reviewer", tag="select")),
                                 ("", signals(row_header="Reviewer", field_name="assignee", tag="select"))],
                  what="the field")
    assert tied.index is None and tied.tie and not tied.alike
    alike = choose(signals(tag="input", input_type="text", position=1, of_kind=3), "",
                   [("", signals(tag="input", input_type="text", position=number, of_kind=3)) for number in (1, 2, 3)],
                   what="the box")
    assert alike.index is None and alike.alike  # only their place differs: the step's place evidence decides
    none = choose(recorded, "", [("", signals(row_header="Priority", field_name="priority", tag="select"))],
                  what="the field")
    assert none.index is None and not none.tie and "name attribute 'priority'" in none.reason
    assert describe_element("combobox", "", recorded) == 'combobox "" (row "Assigned to", name=assignee)'


def test_a_script_of_such_a_recording_finds_the_field_by_its_name_attribute_on_new_instances(
    open_memory: Any, page: Any
) -> None:
    import types

    mem = open_memory()
    with serve_site(PAGES) as base:
        record(page, mem, base, "status", "Export fails", "testing", status="unread")
        text = mem.script(mem.runs.list()[0].run_id)
        assert 'page.locator("select[name=\\"status\\"]")' in text and "labelled(" not in text
        module = types.ModuleType("status_script")
        exec(compile(text, "status.py", "exec"), module.__dict__)  # noqa: S102 (the script under test)
        for title, shown, value, layout in (("Login slow", "chatting", "resolved", ""),
                                            ("Crash on save", "testing", "done-cbb", "swap")):
            module.START_URL = issue_url(base, title, "status", value, layout, status=shown)
            module.run(page, status=value)
            assert page.evaluate("() => window.verdict") == {"done": True, "reward": 1}, (title, layout)


def open_and_assign(title: str, user: str) -> list[Any]:
    """Opens the issue by its link, then sets the select in the row "Assigned to" and saves."""
    return [lambda turn: Action("click", Target(role="link", name=title)), set_field("assignee", user)]


def test_a_goal_that_splits_two_ways_is_bound_as_the_page_shows_it(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    titles = "Login slow|Export to spreadsheet fails|Crash on save"
    with serve_site(PAGES) as base:
        def url(user: str) -> str:
            return f"{base}issues.html?{urlencode({'titles': titles, 'expect': f'assignee:{user}'})}"

        goal = "Assign the issue Login slow to anna"
        assert run(page, mem, url("anna"), goal, ScriptedPolicy(*open_and_assign("Login slow", "anna"))).success
        fallback = ScriptedPolicy(*open_and_assign("Export to spreadsheet fails", "farid"))
        result = run(page, mem, url("farid"), "Assign the issue Export to spreadsheet fails to farid", fallback)
    assert result.success and result.replay_outcome == "replayed" and fallback.stats.decisions == 0, result.replay_reason
    first = result.replay_steps[0]
    assert first.status == "healed" and first.reason == (
        "the goal read as {1} = 'Export to spreadsheet fails', {2} = 'farid': the page shows "
        'link "Export to spreadsheet fails"')


def test_a_target_drawn_after_the_page_loaded_is_looked_for_again(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    go = ScriptedPolicy(lambda turn: Action("click", Target(role="button", name="Go")))
    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}late.html", "Press the button Go", go).success
        fallback = ScriptedPolicy(lambda turn: Action("finish", success=False))
        late = run(page, mem, f"{base}late.html?delay=300", "Press the button Go", fallback)
        never = run(page, mem, f"{base}late.html?delay=5000", "Press the button Go", fallback)
    assert late.success and late.replay_outcome == "replayed" and fallback.stats.decisions == 1, late.replay_reason
    assert [outcome.action.kind for outcome in late.history] == ["wait", "click"]
    assert [step.action for step in mem.runs.steps(late.run_id)] == ["click"]  # the look again is no step of the run
    assert never.replay_outcome == "handed_over" and "is not on the page" in never.replay_reason
    assert [outcome.action.kind for outcome in never.history] == ["wait", "wait"]  # looked twice, then handed over


def test_unnamed_fields_keep_their_selectors_apart_by_their_signals(tmp_path: Path) -> None:
    with webmem.Memory.open(tmp_path / "mem") as mem:
        run = mem.start_run(goal="Set the status and the priority", start_url="https://tracker.example.com/issue1")
        for header, name in (("Status", "status"), ("Priority", "priority")):
            run.record_step(action="select", target='combobox ""', selector=f'select[name="{name}"]', value="x",
                            element={"row_header": header, "field_name": name, "tag": "select"})
        entries = {entry.element: entry.stable_selector for entry in mem.selectors.list("tracker.example.com")}
    assert entries == {'combobox "" (row "Status", name=status)': 'select[name="status"]',
                       'combobox "" (row "Priority", name=priority)': 'select[name="priority"]'}


def test_of_two_recordings_that_fit_the_one_whose_first_target_the_page_shows_is_followed(
    open_memory: Any, page: Any
) -> None:
    mem = open_memory()
    goal = "Press the button on this page"

    def press(role: str, name: str) -> ScriptedPolicy:
        return ScriptedPolicy(lambda turn: Action("click", Target(role=role, name=name)))

    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}late.html?name=Go&as=link", goal, press("link", "Go")).success
        first = mem.trajectories.list()[0].id
        assert run(page, mem, f"{base}late.html?name=Start", goal, press("button", "Start")).success  # newer
        fallback = ScriptedPolicy(lambda turn: Action("finish", success=False))
        result = run(page, mem, f"{base}late.html?name=Go&as=link", goal, fallback)
    assert result.success and result.replay_outcome == "replayed" and fallback.stats.decisions == 0, result.replay_reason
    assert result.replay_trajectory_id == first
    step = result.replay_steps[0]
    assert step.status == "healed" and step.reason == (
        f'followed {first}, another recording, whose target the page shows: link "Go"')
    assert [outcome.action.kind for outcome in result.history] == ["click"]  # no look again: the other one fit


def test_a_replay_whose_last_step_is_still_being_answered_looks_once_more_before_handing_over(
    open_memory: Any, page: Any
) -> None:
    mem = open_memory()
    go = ScriptedPolicy(lambda turn: Action("click", Target(role="button", name="Go")))
    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}late.html", "Press the button Go", go).success
        fallback = ScriptedPolicy(lambda turn: Action("finish", success=False))
        slow = run(page, mem, f"{base}late.html?answer=250", "Press the button Go", fallback)
        never = run(page, mem, f"{base}late.html?answer=5000", "Press the button Go", fallback)
    assert slow.success and slow.replay_outcome == "replayed", slow.replay_reason
    with serve_site(PAGES) as base:  # a policy that claims success is looked at once more too (no memory here)
        claimed = Agent(page, policy=ScriptedPolicy(lambda turn: Action("click", Target(role="button", name="Go")),
                                                    lambda turn: Action("finish", success=True)),
                        environment=PageVerdict(), max_turns=4).run("Press Go", url=f"{base}late.html?answer=250")
    assert claimed.success, claimed.reason
    assert never.replay_outcome == "handed_over" and never.replay_reason == "replayed all 1 steps, but the task is not over"


def test_signals_travel_with_an_export_and_a_bad_one_is_refused_by_name(tmp_path: Path) -> None:
    import json

    from webmem.interop.transfer import collect, import_path, render

    signals = {"row_header": "Status", "field_name": "status", "tag": "select", "options": ["unread", "testing"]}
    with webmem.Memory.open(tmp_path / "one") as mem:
        run = mem.start_run(goal="Set the status of this issue to testing", start_url="https://tracker.example.com/i/1")
        run.record_step(action="select", target='combobox ""', value="testing", element=signals)
        run.finish(success=True)
        text = render(mem, collect(mem, ["runs", "trajectories"]), "json")
    (tmp_path / "export.json").write_text(text, encoding="utf-8")
    body = json.loads(text)
    body["runs"][0]["steps"][0]["element"]["options"] = "unread"  # not a list
    (tmp_path / "bad.json").write_text(json.dumps(body), encoding="utf-8")
    with webmem.Memory.open(tmp_path / "two") as mem:
        assert import_path(mem, tmp_path / "export.json").problems == []
        [step] = mem.runs.steps(mem.runs.list()[0].run_id)
        [trajectory] = mem.trajectories.list()
        bad = import_path(mem, tmp_path / "bad.json", dry_run=True)
    assert step.element == trajectory.steps[0].element == ElementSignals(**signals)
    assert bad.problems and "options" in " ".join(str(problem) for problem in bad.problems)


def test_a_step_moved_to_the_place_the_goal_names_leaves_the_recorded_element_s_signals_behind() -> None:
    from webmem import Step
    from webmem.trajectories.places import placed

    recorded = Step(action="click", target='textbox ""', selector="#tt2", place_slot=1, target_index=2,
                    target_count=3, element=ElementSignals(dom_id="tt2", position=2, of_kind=3))
    [moved] = placed([recorded], [recorded], {1: "1st"})
    [kept] = placed([recorded], [recorded], {1: "2nd"})
    assert (moved.target_index, moved.selector, moved.element) == (1, None, None)  # they found the 2nd box
    assert (kept.target_index, kept.selector, kept.element) == (2, "#tt2", recorded.element)


def test_an_element_is_named_by_its_selectors_texts_and_its_own_signals_not_by_their_structure_or_context() -> None:
    assert selector_names('select[name="0_priority"]') == ["0_priority"]
    assert selector_names('internal:label="And"i') == ["And"]
    assert selector_names("form#query > tr:nth-of-type(2) > td.value > input[type=text]") == ["query", "value", "text"]
    assert selector_names(None) == []
    signals = ElementSignals(row_header="Priority", field_name="0_priority", heading="Slow search",
                             text_before="is", options=("major",), tag="select")
    assert naming_texts(signals) == ["0_priority", "Priority"]
    assert naming_texts(None) == []
