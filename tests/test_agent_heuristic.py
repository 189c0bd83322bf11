"""HeuristicPolicy: its decisions on hand-built turns, and whole runs on MiniWoB++ tasks in real Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from webmem.agent import Agent, Policy
from webmem.agent.actions import REPLAYED, Action, Target
from webmem.agent.heuristic import HeuristicPolicy
from webmem.agent.observation import Observation, parse_snapshot
from webmem.agent.policy import StepOutcome, Turn
from webmem.core.models import SelectorEntry

LOGIN_GOAL = 'Enter the username "tora" and the password "VELhN" into the text fields and press login.'


def login_page(username: str = "", password: str = "", button: str = "Login") -> str:
    return "\n".join([
        f"- generic [ref=e1]: {LOGIN_GOAL}",
        "- paragraph [ref=e2]:",
        "  - text: Username",
        f"  - textbox [ref=e3]{': ' + username if username else ''}",
        "- paragraph [ref=e4]:",
        "  - text: Password",
        f"  - textbox [ref=e5]{': ' + password if password else ''}",
        f'- button "{button}" [ref=e6]',
    ])


def turn(goal: str, snapshot: str, *history: StepOutcome, known: tuple[SelectorEntry, ...] = ()) -> Turn:
    elements, texts = parse_snapshot(snapshot)
    observation = Observation("http://127.0.0.1/task", "Task", snapshot, elements, texts)
    return Turn(goal=goal, observation=observation, number=len(history) + 1, history=history, known_selectors=known)


def done(action: Action, *, ok: bool = True, verified: bool | None = True, error: str | None = None) -> StepOutcome:
    return StepOutcome(action=action, ok=ok, verified=verified, error=error)


def decide(policy: HeuristicPolicy, goal: str, snapshot: str, *history: StepOutcome, **options: Any) -> Action:
    if not history:
        policy.start(goal)
    return policy.decide(turn(goal, snapshot, *history, **options))


def selector_entry(element: str, successes: int) -> SelectorEntry:
    return SelectorEntry(domain="127.0.0.1", element=element, stable_selector=f"#{successes}",
                         success_count=successes, last_used=datetime.now(timezone.utc))


def test_it_is_a_policy_and_counts_its_decisions() -> None:
    policy = HeuristicPolicy()
    assert isinstance(policy, Policy) and policy.name == "heuristic"
    decide(policy, LOGIN_GOAL, login_page())
    decide(policy, LOGIN_GOAL, login_page())
    assert policy.stats.decisions == 2


def test_each_quoted_value_goes_into_the_field_its_label_names() -> None:
    policy = HeuristicPolicy()
    first = decide(policy, LOGIN_GOAL, login_page())
    assert (first.kind, first.target.ref, first.value) == ("fill", "e3", "tora")
    second = decide(policy, LOGIN_GOAL, login_page(username="tora"), done(first))
    assert (second.kind, second.target.ref, second.value) == ("fill", "e5", "VELhN")
    assert second.secret and not first.secret


def test_a_lone_value_goes_into_the_lone_field_in_the_case_asked() -> None:
    goal = 'Type "kasie" in all upper case letters in the text input and press Submit.'
    action = decide(HeuristicPolicy(), goal, '- textbox [ref=e2]\n- button "Submit" [ref=e3]')
    assert (action.kind, action.target.ref, action.value) == ("fill", "e2", "KASIE")


def test_unquoted_values_go_next_to_the_words_that_label_their_fields() -> None:
    goal = "Search for horror movies directed by Sutton from year 2007."
    snapshot = "\n".join([
        "- generic [ref=e1]: Released Date", "- textbox [ref=e2]",
        "- generic [ref=e3]: Director Name", "- textbox [ref=e4]",
        "- generic [ref=e5]: Movie Genre", "- textbox [ref=e6]",
        '- button "Go!" [ref=e7]',
    ])
    policy, history, values = HeuristicPolicy(), [], {}
    for _ in range(3):
        action = decide(policy, goal, snapshot, *history)
        assert action.kind == "fill"
        values[action.target.ref] = action.value
        snapshot = snapshot.replace(f"textbox [ref={action.target.ref}]", f"textbox [ref={action.target.ref}]: {action.value}")
        history.append(done(action))
    assert values == {"e2": "2007", "e4": "Sutton", "e6": "horror"}
    assert decide(policy, goal, snapshot, *history).target.name == "Go!"


def test_a_label_written_after_its_field_names_that_field() -> None:
    goal = "Search for satire movies directed by Kaufman from year 2003."
    snapshot = "\n".join([
        "- generic [ref=e1]:", "  - textbox [ref=e2]", "  - generic [ref=e3]: Year",
        "- generic [ref=e4]:", "  - textbox [ref=e5]", "  - generic [ref=e6]: Director",
    ])
    action = decide(HeuristicPolicy(), goal, snapshot)
    assert (action.kind, action.target.ref, action.value) == ("fill", "e2", "2003")


def test_the_named_button_is_clicked_not_typed_into_the_fields() -> None:
    goal = 'Click on the "Submit" button.'
    snapshot = '- textbox [ref=e2]\n- textbox [ref=e3]\n- button "Cancel" [ref=e4]\n- button "Submit" [ref=e5]'
    action = decide(HeuristicPolicy(), goal, snapshot)
    assert action.kind == "click" and action.target == Target(ref="e5", role="button", name="Submit")


def test_named_targets_are_clicked_in_the_order_the_goal_names_them() -> None:
    goal = "Click button ONE, then click button TWO."
    snapshot = '- button "TWO" [ref=e2]\n- button "ONE" [ref=e3]'
    policy = HeuristicPolicy()
    first = decide(policy, goal, snapshot)
    second = decide(policy, goal, snapshot, done(first))
    assert (first.target.name, second.target.name) == ("ONE", "TWO")


def test_submit_follows_the_filled_fields() -> None:
    policy = HeuristicPolicy()
    fills = [Action(kind="fill", target=Target(ref="e3"), value="tora"),
             Action(kind="fill", target=Target(ref="e5"), value="VELhN")]
    before = decide(policy, LOGIN_GOAL, login_page(username="tora", button="OK"), done(fills[0]))
    assert before.kind == "fill" and before.target.ref == "e5"
    action = decide(policy, LOGIN_GOAL, login_page(username="tora", password="VELhN", button="OK"),
                    *map(done, fills))
    assert action.kind == "click" and action.target.name == "OK"


def test_a_dialog_that_disables_the_fields_is_dismissed_first() -> None:
    snapshot = login_page().replace("textbox [ref=e3]", "textbox [disabled] [ref=e3]") + "\n".join([
        "", "- paragraph [ref=e8]: Exit to home page?", '- button "OK" [ref=e9]', '- button "Cancel" [ref=e10]'])
    action = decide(HeuristicPolicy(), LOGIN_GOAL, snapshot)
    assert action.kind == "click" and action.target.name == "Cancel"


def test_named_options_are_selected_and_checkboxes_checked_before_submit() -> None:
    goal = "Select Kathy from the list and click Submit."
    snapshot = '- combobox [ref=e2]:\n  - option "Kym" [selected]\n  - option "Kathy"\n- button "Submit" [ref=e3]'
    policy = HeuristicPolicy()
    select = decide(policy, goal, snapshot)
    assert (select.kind, select.target.ref, select.value) == ("select", "e2", "Kathy")
    picked = snapshot.replace('"Kym" [selected]', '"Kym"').replace('"Kathy"', '"Kathy" [selected]')
    assert decide(policy, goal, picked, done(select)).target.name == "Submit"

    goal = "Select qK, dZMNr and click Submit."
    boxes = '- checkbox "VELhNi" [ref=e2]\n- checkbox "qK" [ref=e3]\n- checkbox "dZMNr" [ref=e4]\n- button "Submit" [ref=e5]'
    policy, history, clicked = HeuristicPolicy(), [], []
    for _ in range(3):
        action = decide(policy, goal, boxes, *history)
        clicked.append(action.target.name)
        boxes = boxes.replace(f'"{action.target.name}" [ref', f'"{action.target.name}" [checked] [ref')
        history.append(done(action))
    assert clicked == ["qK", "dZMNr", "Submit"]


def test_it_finishes_when_what_the_goal_names_is_done() -> None:
    goal = 'Click on the "Submit" button.'
    snapshot = '- button "Submit" [ref=e2]'
    policy = HeuristicPolicy()
    click = decide(policy, goal, snapshot)
    finish = decide(policy, goal, snapshot, done(click))
    assert finish.kind == "finish" and finish.success is True


def test_known_selectors_rank_otherwise_equal_candidates() -> None:
    goal = "Find the report."
    snapshot = '- link "Alpha" [ref=e2]\n- link "Beta" [ref=e3]\n- link "Gamma" [ref=e4]'
    assert decide(HeuristicPolicy(), goal, snapshot).target.name == "Alpha"
    known = (selector_entry('link "Alpha"', 1), selector_entry('link "Gamma"', 4))
    assert decide(HeuristicPolicy(), goal, snapshot, known=known).target.name == "Gamma"


def test_known_selectors_do_not_outrank_what_the_goal_names() -> None:
    goal = 'Click on the link "Beta".'
    snapshot = '- link "Alpha" [ref=e2]\n- link "Beta" [ref=e3]'
    known = (selector_entry('link "Alpha"', 9),)
    assert decide(HeuristicPolicy(), goal, snapshot, known=known).target.name == "Beta"


def test_exploration_never_repeats_a_target() -> None:
    goal = "Find the report."
    snapshot = '- link "Alpha" [ref=e2]\n- link "Beta" [ref=e3]\n- tab "Gamma" [ref=e4]'
    policy, history, seen = HeuristicPolicy(), [], []
    for _ in range(4):
        action = decide(policy, goal, snapshot, *history)
        if action.kind == "finish":
            break
        seen.append(action.target.name)
        history.append(done(action, ok=len(seen) != 1, verified=None, error="timeout" if len(seen) == 1 else None))
    assert sorted(seen) == ["Alpha", "Beta", "Gamma"] and len(set(seen)) == len(seen)
    assert action.kind == "finish" and action.success is False


def test_exploration_after_a_replay_handed_over_may_click_again_what_the_replay_clicked() -> None:
    goal = 'Find and click the word "report".'
    snapshot = '- link "Alpha" [ref=e2]\n- link "Beta" [ref=e3]'
    replayed = [done(Action("click", Target(role="link", name=name), reason=REPLAYED)) for name in ("Alpha", "Beta")]
    policy, history, seen = HeuristicPolicy(), list(replayed), []
    for _ in range(3):
        action = decide(policy, goal, snapshot, *history)
        if action.kind == "finish":
            break
        seen.append(action.target.name)
        history.append(done(action, verified=None))
    assert seen == ["Alpha", "Beta"]  # its own look around, once each: the replay's clicks were not its own
    assert action.kind == "finish" and action.success is False


def test_a_named_text_without_an_element_is_clicked_at_most_twice() -> None:
    goal = 'Switch between the tabs to find and click on the link "dolor".'
    page_one = '- link "Tab #1" [ref=e2]\n- link "Tab #2" [ref=e3]\n- paragraph [ref=e4]: Ut dolor sit amet.'
    page_two = page_one.replace("Ut dolor sit amet.", "Lorem dolor ipsum.")
    policy, history = HeuristicPolicy(), []
    first = decide(policy, goal, page_one)
    assert first.kind == "click" and first.target.selector and '"dolor"' in first.target.selector
    history.append(done(first, ok=False, verified=None, error="no element on the page matches"))
    tab = decide(policy, goal, page_one, *history)
    assert tab.kind == "click" and tab.target.name in ("Tab #1", "Tab #2")
    history.append(done(tab, verified=True))
    again = decide(policy, goal, page_two, *history)
    assert again.target.selector == first.target.selector
    history.append(done(again, ok=False, verified=None, error="no element on the page matches"))
    page_three = page_one.replace("Ut dolor sit amet.", "Sed dolor magna.")
    later = decide(policy, goal, page_three, *history)
    assert later.kind == "finish" or later.target.selector != first.target.selector


def test_start_resets_what_a_run_tracked() -> None:
    goal = 'Switch between the tabs to find and click on the link "dolor".'
    snapshot = '- link "Tab #1" [ref=e2]\n- paragraph [ref=e4]: Ut dolor sit amet.'
    policy = HeuristicPolicy()
    first = decide(policy, goal, snapshot)
    assert decide(policy, goal, snapshot, done(first, ok=False, verified=None)).target.name == "Tab #1"
    policy.start(goal)
    assert policy.decide(turn(goal, snapshot)) == first


# Seeds checked to be solved by this policy: the test pins the behaviour, not a success rate.
MINIWOB_EPISODES = [
    ("click-button", "0-0"), ("click-button", "0-1"), ("click-button", "0-2"),
    ("enter-text", "0-0"), ("enter-text", "0-1"), ("enter-text", "0-2"),
    ("login-user", "0-3"), ("click-checkboxes", "0-4"), ("multi-layouts", "0-5"),
]


@pytest.fixture(scope="module")
def miniwob_url() -> Iterator[str]:
    from webmem.bench import serve_miniwob

    with serve_miniwob() as url:
        yield url


@pytest.mark.parametrize(("task", "seed"), MINIWOB_EPISODES)
def test_it_solves_simple_miniwob_tasks(page: Any, miniwob_url: str, task: str, seed: str) -> None:
    from webmem.bench import MiniWobEnvironment, TaskPage

    task_page = TaskPage(page, miniwob_url, task)
    goal = task_page.start(seed)
    result = Agent(page, policy=HeuristicPolicy(), memory=None, environment=MiniWobEnvironment(), max_turns=12).run(goal)
    state = task_page.finish()
    assert result.success and state.success, (goal, result.reason, [step.action.describe() for step in result.history])
    assert result.llm_calls == 0 and result.decisions == result.turns
