"""The agent loop in real headless Chromium: steps recorded, lessons on a real Playwright error, replay
with zero policy calls, hand-over when the page changed, role refusal, and the guardrails."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from webmem import InvalidInput
from webmem.agent import Action, Agent, PolicyStats, Target, Turn
from webmem.agent.checks import SuccessCheck
from webmem.core.urls import domain_of
from webmem.demo.server import serve_site

SITES = Path(__file__).parent / "sites"
GOAL = 'Subscribe to the newsletter with the email "ann@example.com"'


class ScriptedPolicy:
    """A policy that plays a script of decisions (functions of the turn), and remembers every turn it saw."""

    name = "scripted"

    def __init__(self, *script: Callable[[Turn], Action]) -> None:
        self.script = list(script)
        self.turns: list[Turn] = []
        self.stats = PolicyStats()

    def start(self, goal: str) -> None:
        self.turns.clear()

    def decide(self, turn: Turn) -> Action:
        self.stats.decisions += 1
        self.turns.append(turn)
        step = self.script[min(len(self.turns), len(self.script)) - 1]
        return step(turn)


def click(role: str, name: str) -> Callable[[Turn], Action]:
    return lambda turn: Action("click", Target(role=role, name=name))


def fill_email(turn: Turn) -> Action:
    field = turn.observation.find("textbox", "Email")[0]
    value = turn.goal.split('"')[1]
    return Action("fill", Target(ref=field.ref), value=value)


def finish(success: bool = True) -> Callable[[Turn], Action]:
    return lambda turn: Action("finish", success=success)


def subscribe_policy(button: str = "Subscribe", role: str = "button") -> ScriptedPolicy:
    return ScriptedPolicy(fill_email, click(role, button), finish())


def test_the_loop_records_every_step_with_identity_selector_and_verification(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(SITES / "subscribe" / "v1") as url:
        agent = Agent(page, memory=mem, policy=subscribe_policy(), replay=False)
        result = agent.run(GOAL, url=url)
    assert result.success and result.steps == 2 and result.decisions == 3
    steps = mem.runs.steps(result.run_id)
    assert [(s.action, s.target, s.selector, s.value, s.ok, s.verified) for s in steps] == [
        ("fill", 'textbox "Email"', "#email", "ann@example.com", True, True),
        ("click", 'button "Subscribe"', "#go", None, True, True),
    ]
    assert steps[0].expected_effect == "field value set" and steps[1].expected_effect == "page changed"
    assert all(s.snapshot_hash and len(s.snapshot_hash) == 16 for s in steps)
    assert steps[0].snapshot_hash == steps[1].snapshot_hash  # filling a field changes no (role, name)
    manifest = mem.get_run(result.run_id).manifest
    assert manifest.status == "completed" and manifest.turn_count == 3
    assert "Thanks, ann@example.com" in page.inner_text("body")


def test_a_playwright_error_is_a_failed_step_and_its_lesson_reaches_the_next_decision(
    open_memory: Any, page: Any
) -> None:
    mem = open_memory()
    overlay = SITES / "overlay"
    escape = lambda turn: Action("press", value="Escape")  # noqa: E731
    with serve_site(overlay) as first, serve_site(overlay) as second:
        learner = ScriptedPolicy(click("button", "Continue"), escape, click("button", "Continue"), finish())
        result = Agent(page, memory=mem, policy=learner, replay=False, action_timeout_ms=800).run(
            "Continue past the newsletter", url=first)
        assert result.success
        steps = mem.runs.steps(result.run_id)
        assert [(s.action, s.ok) for s in steps] == [("click", False), ("press", True), ("click", True)]
        assert "intercepts pointer events" in steps[0].error
        learned = [lesson for lesson in mem.lessons.list() if lesson.source == "learned"]
        assert len(learned) == 1 and learned[0].failed_command == "click"

        follower = ScriptedPolicy(click("button", "Continue"), escape, click("button", "Continue"), finish())
        result = Agent(page, memory=mem, policy=follower, replay=False, action_timeout_ms=800).run(
            "Get past the popup", url=second)
    assert result.success
    assert not result.replay_offered and result.replay_miss_reason == "replay is turned off (Agent(replay=False))"
    after_error = follower.turns[1]
    assert after_error.last_error and "intercepts pointer events" in after_error.last_error
    assert after_error.context.startswith("Last action failed: click")
    assert f"- {learned[0].lesson}" in after_error.context
    assert domain_of(second) in mem.lessons.get(learned[0].id).triggered_domains


def test_replay_completes_a_new_instance_with_zero_policy_calls(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(SITES / "subscribe" / "v1") as url:
        first = Agent(page, memory=mem, policy=subscribe_policy()).run(GOAL, url=url)
        assert first.success and not first.replayed
        assert not first.replay_offered and first.replay_miss_reason == "no successful run is recorded on this origin"
        trajectory = mem.trajectories.list()[0]
        assert trajectory.goal_template == 'Subscribe to the newsletter with the email "{1}"'
        plan = mem.trajectories.find_replay('Subscribe to the newsletter with the email "bo@example.org"', url)
        assert plan is not None and plan.slots == {1: "bo@example.org"}
        assert [s.value for s in plan.steps] == ["bo@example.org", None]

        policy = subscribe_policy()
        second = Agent(page, memory=mem, policy=policy, environment=SuccessCheck(text="Thanks, bo@example.org")).run(
            'Subscribe to the newsletter with the email "bo@example.org"', url=url)
    assert second.success and second.replayed and second.decisions == 0 and policy.stats.decisions == 0
    assert second.replay_offered and second.replay_miss_reason is None and second.to_dict()["replay_offered"]
    assert second.replay_trajectory_id == trajectory.id
    assert "Thanks, bo@example.org" in page.inner_text("body")


def test_replay_hands_over_when_the_page_changed_and_the_healed_path_is_used_next_time(
    open_memory: Any, page: Any
) -> None:
    mem = open_memory()
    with serve_site(SITES / "subscribe" / "v1") as url:
        assert Agent(page, memory=mem, policy=subscribe_policy()).run(GOAL, url=url).success
    # the same site, a new release: the button was renamed (served on the same origin's port is not
    # possible twice, so the v2 trajectory is looked up on v2's origin after a copy of v1's memory there)
    with serve_site(SITES / "subscribe" / "v2") as url2:
        old = mem.trajectories.list()[0]
        mem.trajectories.save(goal=old.goal, start_url=url2, steps=old.steps, success=True)
        fallback = ScriptedPolicy(click("button", "Sign up"), finish())
        healed = Agent(page, memory=mem, policy=fallback, environment=SuccessCheck(text="Thanks, cy@example.net")).run(
            'Subscribe to the newsletter with the email "cy@example.net"', url=url2)
        assert healed.success and healed.replay_fallback and not healed.replayed
        assert healed.decisions == 1
        assert "Subscribe" in healed.handover_reason and "not on the page" in healed.handover_reason
        stored = mem.trajectories.list()[0]
        assert [s.target for s in stored.replay_steps] == ['textbox "Email"', 'button "Sign up"']

        untouched = subscribe_policy()
        again = Agent(page, memory=mem, policy=untouched, environment=SuccessCheck(text="Thanks, di@example.com")).run(
            'Subscribe to the newsletter with the email "di@example.com"', url=url2)
    assert again.success and again.replayed and untouched.stats.decisions == 0
    assert again.replay_trajectory_id == stored.id


def test_replay_refuses_an_element_of_another_role_with_the_stored_name(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(SITES / "subscribe" / "v1") as url:
        assert Agent(page, memory=mem, policy=subscribe_policy()).run(GOAL, url=url).success
        old = mem.trajectories.list()[0]
    with serve_site(SITES / "subscribe" / "v3") as url3:
        mem.trajectories.save(goal=old.goal, start_url=url3, steps=old.steps, success=True)
        fallback = ScriptedPolicy(finish(False))
        result = Agent(page, memory=mem, policy=fallback).run(
            'Subscribe to the newsletter with the email "eve@example.com"', url=url3)
    assert not result.success and result.replay_fallback
    assert "link" in result.handover_reason and "not a button" in result.handover_reason
    assert [outcome.action.kind for outcome in result.history] == ["fill"]  # the link was never clicked
    assert "Thanks" not in page.inner_text("body")


def test_a_trajectory_without_slots_is_replayed_only_for_the_identical_goal(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(SITES / "subscribe" / "v1") as url:
        policy = ScriptedPolicy(click("button", "Subscribe"), finish())
        assert Agent(page, memory=mem, policy=policy).run("sign me up", url=url).success
        assert mem.trajectories.list()[0].goal_template is None
        assert mem.trajectories.find_replay("sign me up", url) is not None
        assert mem.trajectories.find_replay("sign me up please", url) is None
        assert mem.trajectories.find_replay("sign   me up", url) is not None


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        ((click("button", "Subscribe"),), "the same action (click button \"Subscribe\") was chosen 3 times"),
        ((lambda t: Action("click", Target(role="button", name=f"Missing {len(t.history)}")),),
         "3 actions failed (error budget 3)"),
        ((lambda t: Action("scroll", value="down" if t.number % 2 else "up"),), "turn budget of 6 turns used up"),
    ],
    ids=["repeated-action", "error-budget", "turn-budget"],
)
def test_guardrails_end_the_run_as_failed_with_the_reason(
    open_memory: Any, page: Any, script: tuple[Callable[[Turn], Action], ...], reason: str
) -> None:
    mem = open_memory()
    with serve_site(SITES / "subscribe" / "v1") as url:
        result = Agent(page, memory=mem, policy=ScriptedPolicy(*script), max_turns=6, action_timeout_ms=500).run(
            "Loop forever", url=url)
    assert not result.success and reason in result.reason
    manifest = mem.get_run(result.run_id).manifest
    assert manifest.status == "failed" and reason in manifest.reason
    if "same action" in reason:
        assert result.steps == 2  # the third request of the same click was refused, not executed


def test_a_password_typed_from_the_goal_is_stored_as_a_reference_and_replayed(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(SITES / "login") as url:
        def fill_field(label: str, index: int) -> Callable[[Turn], Action]:
            return lambda turn: Action("fill", Target(role="textbox", name=label), value=turn.goal.split('"')[index])

        policy = ScriptedPolicy(fill_field("Username", 1), fill_field("Password", 3), click("button", "Log in"), finish())
        goal = 'Log in as "ann" with the password "hunter22"'
        first = Agent(page, memory=mem, policy=policy).run(goal, url=url)
        assert first.success
        assert [s.value for s in mem.runs.steps(first.run_id)] == ["ann", "{goal:2}", None]
        replayed = Agent(page, memory=mem, policy=ScriptedPolicy(finish(False)),
                         environment=SuccessCheck(text="Welcome, bob")).run(
            'Log in as "bob" with the password "s3cret!!"', url=url)
    assert replayed.success and replayed.replayed


def test_bad_agent_options_are_named() -> None:
    with pytest.raises(InvalidInput, match="max_turns"):
        Agent(object(), policy=ScriptedPolicy(finish()), max_turns=0)
    with pytest.raises(InvalidInput, match="policy"):
        Agent(object(), policy=object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="finish: success"):
        Action("finish")
    with pytest.raises(InvalidInput, match="click: needs a target"):
        Action("click")
    with pytest.raises(InvalidInput, match="not one of"):
        Action("teleport")
    with pytest.raises(InvalidInput, match="success check"):
        SuccessCheck()


def test_a_finish_the_environment_does_not_confirm_is_a_failure_and_teaches_nothing(
    open_memory: Any, page: Any
) -> None:
    mem = open_memory()
    with serve_site(SITES / "subscribe" / "v1") as url:
        result = Agent(page, memory=mem, policy=ScriptedPolicy(fill_email, finish()),
                       environment=SuccessCheck(text="Thanks")).run(GOAL, url=url)
    assert not result.success and "did not confirm" in result.reason
    assert mem.trajectories.list() == []


def test_a_password_never_shows_in_the_result_or_later_prompts(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(SITES / "login") as url:
        typed = lambda turn: Action("fill", Target(role="textbox", name="Password"), value="hunter22")  # noqa: E731
        policy = ScriptedPolicy(typed, finish())
        result = Agent(page, memory=mem, policy=policy, replay=False).run("Log in", url=url)
    assert "hunter22" not in repr(result.to_dict())
    assert "hunter22" not in policy.turns[1].history[0].action.describe()
    assert [s.value for s in mem.runs.steps(result.run_id)] == ["{password}"]
