"""Suggestions that complete the goal's values ("an item that starts with "Nica" and ends with "ua"" picks
"Nicaragua"): how a run's step is slotted, and how replay picks the one suggestion that completes the
new goal's values in real headless Chromium, hands over when several do, and repairs a menu that put
another suggestion in the field."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from test_agent_loop import ScriptedPolicy
from test_replay_steps import run

from webmem import Step
from webmem.agent import Action, Target, Turn
from webmem.demo.server import serve_site
from webmem.trajectories.binding import bind
from webmem.trajectories.completions import completes, completions
from webmem.trajectories.slots import parameterise

PAGES = Path(__file__).parent / "sites" / "replay"
GOAL = 'Enter an item that starts with "{}" and ends with "{}".'


def picking_steps(start: str, item: str) -> list[Step]:
    return [Step(action="fill", target='textbox "Tags:"', value=start),
            Step(action="click", target=f'text "{item}"'), Step(action="click", target='button "Submit"')]


def test_a_clicked_name_that_begins_and_ends_with_the_goals_values_is_stored_as_their_completion() -> None:
    template, slotted = parameterise(GOAL.format("Nica", "ua"), picking_steps("Nica", "Nicaragua"))
    assert template == GOAL.format("{1}", "{2}")
    assert [(step.target, step.completes) for step in slotted] == [
        ('textbox "Tags:"', None), ('text "{1}…{2}"', True), ('button "Submit"', None)]
    assert bind(template, GOAL.format("Egyp", "ypt")) == {1: "Egyp", 2: "ypt"}
    # the values may overlap in the name
    _, slotted = parameterise(GOAL.format("Egyp", "ypt"), picking_steps("Egyp", "Egypt"))
    assert slotted[1].target == 'text "{1}…{2}"'
    # only the start: the end of the name stays open
    _, slotted = parameterise('Enter an item that starts with "Nica".', picking_steps("Nica", "Nicaragua"))
    assert slotted[1].target == 'text "{1}…"' and slotted[1].completes
    # a name holding a goal value as a word of its own is slotted as it stands, and one letter completes nothing
    _, slotted = parameterise('Open "Nica" and pick "Nica Town"', [Step(action="click", target='link "Nica Town Hall"')])
    assert slotted[0].target == 'link "{2} Hall"' and not slotted[0].completes
    assert parameterise('Enter an item that starts with "N".', picking_steps("N", "Niger"))[1][1].target == 'text "Niger"'
    # a name that begins with a value no step typed is no suggestion (test_trajectory_slots: "Look" is no "Looking")
    assert parameterise('Click "Look"', [Step(action="click", target='button "Looking"')]) is None


def test_a_name_completes_a_pattern_when_it_begins_and_ends_with_its_parts() -> None:
    assert completes("Egyp…ypt", "Egypt") and completes("nica…UA", "Nicaragua") and completes("Nica…", "Nicaragua")
    assert not completes("Nica…", "Nica") and not completes("Nica…ua", "Nicaragu") and not completes("Al…ia", "Bolivia")
    assert completions("Al…ia", ["Albania", "Algeria", "Albania", "Aland Islands"]) == ["Albania", "Algeria"]


def suggest(base: str, start: str, end: str, **page: Any) -> str:
    return f"{base}suggest.html?{urlencode({'start': start, 'end': end, **page})}"


def pick_suggestion(turn: Turn) -> Action:
    """Types the goal's start, clicks the suggestion that begins and ends as the goal says, submits."""
    start, end = turn.goal.split('"')[1::2]
    (box,) = turn.observation.find("textbox", "Tags:")
    if not box.value:
        return Action("fill", Target(ref=box.ref), value=start)
    fitting = [text for text in turn.observation.texts if text.lower().startswith(start.lower())
               and text.lower().endswith(end.lower()) and len(text) > len(start)]
    if box.value == start and fitting:
        return Action("click", Target(role="text", name=fitting[0]))
    return Action("click", Target(role="button", name="Submit"))


def test_replay_picks_the_one_suggestion_that_completes_the_new_goals_values(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        first = run(page, mem, suggest(base, "Nica", "ua"), GOAL.format("Nica", "ua"), ScriptedPolicy(pick_suggestion))
        assert first.success
        (trajectory,) = mem.trajectories.list()
        assert [step.target for step in trajectory.replay_steps or []][1] == 'text "{1}…{2}"'
        # suggestions that appear a moment after typing, and values that overlap in the name
        untouched = ScriptedPolicy(pick_suggestion)
        egypt = run(page, mem, suggest(base, "Egyp", "ypt", delay=300), GOAL.format("Egyp", "ypt"), untouched)
        assert egypt.success and egypt.replay_outcome == "replayed" and untouched.stats.decisions == 0, egypt.reason
        assert [(s.step, s.status, s.reason) for s in egypt.replay_steps] == [
            (1, "hit", None), (2, "hit", "'Egypt' completes 'Egyp...ypt'"), (3, "hit", None)]
        assert [(s.action, s.value or s.target) for s in mem.runs.steps(egypt.run_id)] == [
            ("fill", "Egyp"), ("wait", None), ("click", 'text "Egypt"'), ("click", 'button "Submit"')]
        # two suggestions complete the values: which one is meant is not certain, so the policy takes over
        fallback = ScriptedPolicy(pick_suggestion)
        both = run(page, mem, suggest(base, "Al", "ia"), GOAL.format("Al", "ia"), fallback)
    assert both.success and both.replay_outcome == "handed_over" and fallback.stats.decisions == 2
    assert both.replay_steps[-1].reason == ("2 names complete 'Al...ia' ('Albania', 'Algeria'): which one is "
                                            "meant is not certain")


def test_a_menu_that_puts_another_suggestion_in_the_field_is_repaired_by_typing_the_pick(
    open_memory: Any, page: Any
) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        assert run(page, mem, suggest(base, "Nica", "ua"), GOAL.format("Nica", "ua"),
                   ScriptedPolicy(pick_suggestion)).success
        untouched = ScriptedPolicy(pick_suggestion)
        albania = run(page, mem, suggest(base, "Al", "ania", quirk=1), GOAL.format("Al", "ania"), untouched)
    assert albania.success and albania.replay_outcome == "replayed" and untouched.stats.decisions == 0, albania.reason
    picked = albania.replay_steps[1]
    assert picked.status == "healed"
    assert picked.reason == "picking 'Albania' left textbox \"Tags:\" reading 'Aland Islands': typed 'Albania' there"
    assert [(s.action, s.value) for s in mem.runs.steps(albania.run_id)][2:4] == [("fill", "Albania"),
                                                                                  ("press", "Escape")]


def test_a_picked_suggestion_becomes_a_script_step_that_finds_the_one_completion(
    sqlite_mem: Any, page: Any, tmp_path: Path
) -> None:
    from test_scripts import run_spec

    mem = sqlite_mem
    with serve_site(PAGES) as base:
        recorded = run(page, mem, suggest(base, "Nica", "ua"), GOAL.format("Nica", "ua"), ScriptedPolicy(pick_suggestion))
        assert recorded.success
        text = mem.script(recorded.run_id)
        assert "page.get_by_text(completing(tags, text_name)).filter(visible=True)" in text
        module = types.ModuleType("suggest_script")
        exec(compile(text, "suggest.py", "exec"), module.__dict__)  # noqa: S102 (the script under test)
        module.START_URL = suggest(base, "Egyp", "ypt")
        module.run(page, tags="Egyp", text_name="ypt")
        assert page.evaluate("() => window.verdict") == {"done": True, "reward": 1}
        module.START_URL = suggest(base, "Al", "ia")  # Albania and Algeria: the step fails, it does not guess
        with pytest.raises(AssertionError, match="strict mode violation"):
            module.run(page, tags="Al", text_name="ia")
        spec = mem.script(recorded.run_id, lang="typescript").replace(suggest(base, "Nica", "ua"), suggest(base, "Egyp", "ypt"))
        (tmp_path / "suggest.spec.ts").write_text(spec.replace('?? "Nica"', '?? "Egyp"').replace('?? "ua"', '?? "ypt"'),
                                                  encoding="utf-8")
        passed = run_spec(tmp_path, "suggest.spec.ts")
    assert passed.returncode == 0 and "1 passed" in passed.stdout, passed.stdout[-3000:]


def test_only_steps_marked_as_completions_are_treated_as_picks() -> None:
    """A hover and a click on one named link, after typing that name, are replayed as they are: neither is
    skipped as a needless hover, and no field is "repaired" after the click."""
    from datetime import UTC, datetime

    from webmem import Trajectory
    from webmem.agent.observation import Observation, parse_snapshot
    from webmem.agent.policy import StepOutcome
    from webmem.agent.replay import ReplayPolicy
    from webmem.trajectories.plans import ReplayPlan

    steps = [Step(action="fill", target='textbox "Search"', value="tea"), Step(action="hover", target='link "tea"'),
             Step(action="click", target='link "tea"')]
    trajectory = Trajectory(id="traj_1", goal='Open "tea"', origin="http://127.0.0.1:9", domain="127.0.0.1:9", steps=steps,
                            success=True,
                            duration_ms=1, created_at=datetime.now(UTC))
    replay = ReplayPolicy(ReplayPlan(trajectory, steps, {}, None), ScriptedPolicy(lambda turn: Action("finish")))
    snapshot = '- textbox "Search" [ref=e1]: tea\n- link "tea" [ref=e2]'
    page = Observation("http://127.0.0.1:9/", "Shop", snapshot, *parse_snapshot(snapshot))
    history: list[StepOutcome] = []
    kinds = []
    for number in range(1, 5):
        action = replay.decide(Turn(goal='Open "tea"', observation=page, number=number, history=tuple(history)))
        kinds.append(action.kind)
        history.append(StepOutcome(action=action, ok=True, verified=None))
    assert kinds == ["fill", "hover", "click", "finish"], replay.steps
    assert [step.status for step in replay.steps] == ["hit", "hit", "hit"]
