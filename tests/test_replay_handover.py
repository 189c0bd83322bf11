"""Replay that fails hands over, in real headless Chromium on local pages, one per mechanism that made
replays fail blind: elements that share a role and name, a value converted from the goal, a success
that depended on what the page showed, and a fill that a later fill replaced. Each replay outcome is
kept with the run and counted in the replay gate of its task shape."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from test_agent_loop import ScriptedPolicy

import webmem
from webmem import InvalidInput, ReplayReport, Step
from webmem.agent import Action, Agent, EnvironmentOutcome, Target, Turn
from webmem.cli import cli
from webmem.demo.server import serve_site

PAGES = Path(__file__).parent / "sites" / "replay"


class PageVerdict:
    """The page's own verdict: ``window.verdict`` once it has one."""

    def outcome(self, page: Any) -> EnvironmentOutcome | None:
        verdict = page.evaluate("() => window.verdict || null")
        if not verdict or not verdict.get("done"):
            return None
        reward = float(verdict["reward"])
        return EnvironmentOutcome(success=reward >= 1, reward=reward, detail=f"reward {reward}")


def quoted(goal: str) -> str:
    return goal.split('"')[1]


def submit(turn: Turn) -> Action:
    return Action("click", Target(role="button", name="Submit"))


def fill_every_box(turn: Turn) -> Action:
    empty = [box for box in turn.observation.find("textbox", "") if not box.value]
    if empty:
        return Action("fill", Target(ref=empty[0].ref), value=quoted(turn.goal))
    return submit(turn)


def to_24_hours(turn: Turn) -> Action:
    hours, minutes, half = re.search(r"(\d{1,2}):(\d{2}) ([AP]M)", turn.goal).groups()
    value = f"{int(hours) % 12 + (12 if half == 'PM' else 0):02d}:{minutes}"
    box = turn.observation.find("textbox", "")[0]
    return Action("fill", Target(ref=box.ref), value=value) if box.value != value else submit(turn)


def generate_until_above_5(turn: Turn) -> Action:
    shown = next((int(text.split()[-1]) for text in turn.observation.texts if text.startswith("Number: ")), 0)
    return submit(turn) if shown > 5 else Action("click", Target(role="button", name="Generate"))


def run(page: Any, mem: Any, url: str, goal: str, policy: ScriptedPolicy) -> Any:
    return Agent(page, memory=mem, policy=policy, environment=PageVerdict(), max_turns=10).run(goal, url=url)


def test_boxes_that_share_a_role_and_name_are_replayed_one_by_one_by_their_place(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        first = run(page, mem, f"{base}boxes.html?word=hello", 'Write "hello" in every box and press Submit',
                    ScriptedPolicy(fill_every_box))
        assert first.success and first.replay_outcome is None
        steps = mem.runs.steps(first.run_id)
        assert [(s.target, s.target_index, s.target_count) for s in steps[:3]] == [
            ('textbox ""', 1, 3), ('textbox ""', 2, 3), ('textbox ""', 3, 3)]
        untouched = ScriptedPolicy(fill_every_box)
        # the same value pasted into three boxes is three actions, not one repeated three times
        second = run(page, mem, f"{base}boxes.html?word=howdy", 'Write "howdy" in every box and press Submit',
                     untouched)
    assert second.success and second.replay_outcome == "replayed" and untouched.stats.decisions == 0, second.replay_reason
    assert page.evaluate("() => Array.from(document.querySelectorAll('input')).map(b => b.value)") == ["howdy"] * 3
    report = mem.get_run(second.run_id).manifest.replay
    assert report.model_copy(update={"steps": []}) == ReplayReport(
        outcome="replayed", trajectory_id=second.replay_trajectory_id, step=4)
    assert [(step.step, step.target, step.status) for step in report.steps] == [
        (1, 'textbox ""', "hit"), (2, 'textbox ""', "hit"), (3, 'textbox ""', "hit"), (4, 'button "Submit"', "hit")]
    assert report.steps == second.replay_steps


def test_replay_hands_over_when_its_evidence_does_not_single_out_one_element(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}boxes.html?word=hello", 'Write "hello" in every box and press Submit',
                   ScriptedPolicy(fill_every_box)).success
        fallback = ScriptedPolicy(fill_every_box)
        four = run(page, mem, f"{base}boxes.html?boxes=4&word=hi", 'Write "hi" in every box and press Submit',
                   fallback)
    assert four.success and four.replay_outcome == "handed_over" and four.replay_step == 1
    assert "4 elements" in four.replay_reason and "saw 3" in four.replay_reason
    assert fallback.stats.decisions == 5  # the fallback did all of it: nothing was typed blind


def test_a_time_converted_from_the_goal_is_replayed_right_at_midnight_and_after_noon(
    open_memory: Any, page: Any
) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}time.html?expect=11:20", "Enter 11:20 AM as the time and press Submit",
                   ScriptedPolicy(to_24_hours)).success
        for said, typed in (("12:21 AM", "00:21"), ("3:15 PM", "15:15"), ("12:05 PM", "12:05")):
            untouched = ScriptedPolicy(to_24_hours)
            result = run(page, mem, f"{base}time.html?expect={typed}", f"Enter {said} as the time and press Submit",
                         untouched)
            assert result.success, (said, result.reason)
            assert result.replay_outcome == "replayed" and untouched.stats.decisions == 0
            assert page.input_value("input") == typed


def test_a_replay_that_failed_hands_over_before_that_step_next_time(
    open_memory: Any, page: Any, events: list[dict[str, Any]]
) -> None:
    mem = open_memory(on_event=events.append)
    goal = "Generate a number greater than 5 and press Submit"
    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}generate.html?numbers=7", goal, ScriptedPolicy(generate_until_above_5)).success
        blind = run(page, mem, f"{base}generate.html?numbers=2,8", goal, ScriptedPolicy(generate_until_above_5))
        assert not blind.success and blind.replay_outcome == "replay_failed" and blind.replay_step == 2
        assert blind.decisions == 0
        fallback = ScriptedPolicy(generate_until_above_5)
        careful = run(page, mem, f"{base}generate.html?numbers=3,9", goal, fallback)
    assert careful.success and careful.replay_outcome == "handed_over" and careful.replay_step == 2
    assert "earlier replay" in careful.replay_reason
    assert [o.action.describe() for o in careful.history][:1] == ['click button "Generate"']  # step 1 replayed
    assert fallback.stats.decisions == 2  # Generate again (3 is too small), then Submit on 9
    manifest = mem.get_run(blind.run_id).manifest
    assert manifest.replay is not None and manifest.replay.outcome == "replay_failed" and manifest.replay.step == 2
    told = [(e["run_id"], e["outcome"], e["step"]) for e in events if e["event"] == "replay_outcome"]
    assert told == [(blind.run_id, "replay_failed", 2), (careful.run_id, "handed_over", 2)]


def test_a_fill_that_a_later_fill_replaced_is_not_replayed(open_memory: Any, page: Any) -> None:
    mem = open_memory()

    def guess_then_correct(turn: Turn) -> Action:
        box = turn.observation.find("textbox", "Name")[0]
        if not turn.history:
            return Action("fill", Target(ref=box.ref), value="guest")  # read off nothing: a guess
        if box.value != quoted(turn.goal):
            return Action("fill", Target(ref=box.ref), value=quoted(turn.goal))
        return submit(turn)

    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}name.html?expect=Ann", 'Enter "Ann" as the name and press Submit',
                   ScriptedPolicy(guess_then_correct)).success
        plan = mem.trajectories.find_replay('Enter "Bo" as the name and press Submit', base)
        assert plan is not None and [(s.action, s.value) for s in plan.steps] == [("fill", "Bo"), ("click", None)]
        untouched = ScriptedPolicy(guess_then_correct)
        second = run(page, mem, f"{base}name.html?expect=Bo", 'Enter "Bo" as the name and press Submit', untouched)
    assert second.success and second.replay_outcome == "replayed" and untouched.stats.decisions == 0, second.replay_reason


def test_the_repeat_guard_makes_a_replay_hand_over_instead_of_ending_the_run(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    goal = "Generate a number greater than 5 and press Submit"
    generate = Step(action="click", target='button "Generate"', verified=True)
    wait = Step(action="wait", duration_ms=50)  # keeps the repeats apart: repeats in a row collapse into one
    with serve_site(PAGES) as base:
        mem.trajectories.save(goal=goal, start_url=base, steps=[generate, wait, generate, wait, generate,
                                                               Step(action="click", target='button "Submit"')])
        fallback = ScriptedPolicy(generate_until_above_5)
        result = run(page, mem, f"{base}generate.html?numbers=1,9", goal, fallback)
    assert result.success and result.replay_outcome == "handed_over" and result.replay_step == 5
    assert "chosen 3 times" in result.replay_reason and fallback.stats.decisions == 1  # Submit on 9


def test_a_replayed_step_that_fails_hands_over_instead_of_spending_the_error_budget(
    open_memory: Any, page: Any
) -> None:
    mem = open_memory()
    fill_name = lambda turn: Action(  # noqa: E731
        "fill", Target(role="textbox", name="Name"), value=quoted(turn.goal)) if not turn.history else submit(turn)
    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}name.html?expect=Ann", 'Enter "Ann" as the name and press Submit',
                   ScriptedPolicy(fill_name)).success
        fallback = ScriptedPolicy(lambda turn: Action("finish", success=False, reason="the button is locked"))
        result = Agent(page, memory=mem, policy=fallback, environment=PageVerdict(), max_errors=1,
                       action_timeout_ms=300).run('Enter "Bo" as the name and press Submit',
                                                  url=f"{base}name.html?expect=Bo&locked=1")
    assert result.replay_outcome == "handed_over" and result.replay_step == 2
    assert result.replay_reason.startswith("step 2 failed") and fallback.stats.decisions == 1
    assert result.reason == "the button is locked"  # not "error budget"


def test_repeated_replay_failures_close_the_shape_and_a_bad_report_is_refused(open_memory: Any) -> None:
    mem = open_memory()
    goal = "Generate a number greater than 5 and press Submit"
    url = "http://127.0.0.1:9/generate.html"
    steps = [Step(action="click", target='button "Generate"', verified=True), Step(action="click", target='button "Submit"')]
    saved = mem.trajectories.save(goal=goal, start_url=url, steps=steps)
    assert mem.trajectories.find_replay(goal, url).stop_step is None
    mem.trajectories.record_replay(ReplayReport(outcome="replay_failed", trajectory_id=saved.id, step=2))
    assert mem.trajectories.find_replay(goal, url).stop_step == 2
    mem.trajectories.record_replay(ReplayReport(outcome="handed_over", trajectory_id=saved.id, step=2))
    mem.trajectories.record_replay(ReplayReport(outcome="replay_failed", trajectory_id=saved.id, step=1))
    assert mem.trajectories.find_replay(goal, url) is None  # two failures, no success: not replayed at all
    other = mem.trajectories.save(goal="Press Submit", start_url=url, steps=steps)
    assert mem.trajectories.find_replay("Press Submit", url).trajectory_id == other.id  # another shape is open
    report = ReplayReport(outcome="replay_failed", trajectory_id=other.id, step=2)
    mem.trajectories.record_replay(report)
    handed_over = ReplayReport(outcome="handed_over", trajectory_id=other.id, step=2)
    mem.trajectories.record_replay(handed_over, success=True)  # the policy made it from the stop: fine
    mem.trajectories.record_replay(handed_over.model_copy(update={"step": 1}), success=False)  # not at the stop
    assert mem.trajectories.find_replay("Press Submit", url).stop_step == 2
    mem.trajectories.record_replay(handed_over, success=False)  # handed over at the stop, and still failed
    assert mem.trajectories.find_replay("Press Submit", url) is None
    with pytest.raises(InvalidInput, match="report"):
        mem.trajectories.record_replay({"outcome": "replayed"})
    with pytest.raises(ValidationError):
        ReplayReport(outcome="won", trajectory_id=saved.id)


def test_runs_show_tells_what_became_of_the_replay_and_which_box_a_step_used(tmp_path: Path) -> None:
    with webmem.Memory.open(tmp_path) as mem:
        saved = mem.trajectories.save(goal="Press Submit", start_url="http://127.0.0.1:9/",
                                      steps=[Step(action="click", target='button "Submit"')])
        run_ = mem.start_run(goal="Write hi in every box", start_url="http://127.0.0.1:9/boxes.html")
        run_.record_step(action="fill", target='textbox ""', value="hi", target_index=2, target_count=3)
        with pytest.raises(InvalidInput, match="target_index"):
            run_.record_step(action="fill", target='textbox ""', value="hi", target_index=4, target_count=3)
        run_.finish(success=False, replay=ReplayReport(outcome="handed_over", trajectory_id=saved.id, step=1,
                                                       reason="step 1: 4 elements are textbox"))
    shown = CliRunner().invoke(cli, ["--memory-dir", str(tmp_path), "runs", "show", run_.id], catch_exceptions=False)
    assert shown.exit_code == 0, shown.stderr
    assert f"handed_over at step 1 of trajectory {saved.id}: step 1: 4 elements" in shown.stdout
    assert 'textbox "" (2 of 3)' in shown.stdout
    as_json = CliRunner().invoke(cli, ["--memory-dir", str(tmp_path), "runs", "show", run_.id, "--json"])
    assert json.loads(as_json.stdout)["replay"]["outcome"] == "handed_over"


def test_of_several_same_named_links_the_stored_selector_picks_the_one_that_fits(open_memory: Any, page: Any) -> None:
    mem = open_memory()

    def open_named(turn: Turn) -> Action:
        return Action("click", Target(ref=turn.observation.find("link", quoted(turn.goal))[-1].ref))

    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}results.html?names=Ann,Bo,Cy&expect=3", 'Open the result "Cy"',
                   ScriptedPolicy(open_named)).success
        step = mem.trajectories.list()[0].steps[0]
        assert step.target_index is None and "nth-of-type(3)" in step.selector  # one "Cy" then: no place kept
        untouched = ScriptedPolicy(open_named)
        # two links named "Ann" now: the selector of the earlier run singles out the third item
        result = run(page, mem, f"{base}results.html?names=Ann,Bo,Ann&expect=3", 'Open the result "Ann"', untouched)
        assert result.success and result.replay_outcome == "replayed" and untouched.stats.decisions == 0
        assert mem.runs.steps(result.run_id)[0].target_index == 2  # and now the place among the two is kept
        again = ScriptedPolicy(open_named)
        # three "Ann" where the newest run saw two: the place is no evidence, the selector still is
        third = run(page, mem, f"{base}results.html?names=Ann,Ann,Ann&expect=3", 'Open the result "Ann"', again)
    assert third.success and third.replay_outcome == "replayed" and again.stats.decisions == 0


def test_a_selector_that_singles_out_the_element_outranks_its_recorded_place(open_memory: Any, page: Any) -> None:
    mem = open_memory()

    def answer_box(turn: Turn) -> Action:
        box = next(element for element in turn.observation.find("textbox", "") if "Answer" in element.label)
        return Action("fill", Target(ref=box.ref), value=quoted(turn.goal)) if not box.value else submit(turn)

    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}swap.html?word=one", 'Write "one" as the answer', ScriptedPolicy(answer_box)).success
        step = mem.trajectories.list()[0].steps[0]
        assert (step.selector, step.target_index, step.target_count) == ("#answer", 2, 2)
        untouched = ScriptedPolicy(answer_box)
        swapped = run(page, mem, f"{base}swap.html?word=two&swap=1", 'Write "two" as the answer', untouched)
    assert swapped.success and swapped.replay_outcome == "replayed" and untouched.stats.decisions == 0
    assert page.input_value("#source") == ""  # the box at the recorded place was left alone


SIGN_IN_SECRET = "Tr0ub4dor&3 x"


def sign_in(turn: Turn) -> Action:
    user, password = turn.observation.find("textbox", "Username")[0], turn.observation.find("textbox", "Password")[0]
    if not user.value:
        return Action("fill", Target(ref=user.ref), value=quoted(turn.goal))
    if not password.value:
        return Action("fill", Target(ref=password.ref), value=SIGN_IN_SECRET)
    return Action("click", Target(role="button", name="Sign in"))


def test_a_flow_that_types_a_registered_secret_is_replayed_with_it_never_stored(
    open_memory: Any, page: Any, memory_dir: Path,
) -> None:
    mem = open_memory(secrets={"password": SIGN_IN_SECRET})
    with serve_site(PAGES) as base:
        first = run(page, mem, f"{base}signin.html", 'Sign in as "ann"', ScriptedPolicy(sign_in))
        assert first.success and [s.value for s in mem.runs.steps(first.run_id)][:2] == ["ann", "{password}"]
        untouched = ScriptedPolicy(sign_in)
        second = run(page, mem, f"{base}signin.html", 'Sign in as "bob"', untouched)
        assert second.success and second.replay_outcome == "replayed" and untouched.stats.decisions == 0, second.replay_reason
        assert page.evaluate("() => document.getElementById('hello').textContent") == "Welcome, bob"
        assert [s.value for s in mem.runs.steps(second.run_id)][:2] == ["bob", "{password}"]
        plan = mem.trajectories.find_replay('Sign in as "cyd"', base)
        assert plan is not None and plan.steps[1].value == "{password}"  # the plan never holds the value

        stranger = open_memory()  # the same store, the secret not registered: nothing to type, no replay
        lookup = stranger.trajectories.search_replay('Sign in as "cyd"', base)
        assert lookup.plan is None and "types a secret ({password})" in lookup.reason
    on_disk = b"".join(path.read_bytes() for path in memory_dir.iterdir() if path.is_file())  # db, WAL, events
    assert SIGN_IN_SECRET.encode() not in on_disk and b"{password}" in on_disk
    if mem.store.dialect == "sqlite":
        export = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "export"])
        assert SIGN_IN_SECRET not in export.stdout and "{password}" in export.stdout
