"""Replay on real MiniWoB++ tasks: one solved episode teaches the memory, and new instances of the task
(other seeds, other values) are completed without a single policy decision."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from webmem.agent import Agent, HeuristicPolicy, PolicyStats, Turn
from webmem.bench import MiniWobEnvironment, TaskPage, serve_miniwob


class NeverAsked:
    """A policy that must not be consulted: replay alone has to finish the episode."""

    name = "never-asked"

    def __init__(self) -> None:
        self.stats = PolicyStats()

    def start(self, goal: str) -> None:
        pass

    def decide(self, turn: Turn) -> Any:
        raise AssertionError(f"the policy was asked on turn {turn.number} of {turn.goal!r}")


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serve_miniwob() as url:
        yield url


@pytest.mark.parametrize("task", ["enter-text", "login-user", "choose-list"])
def test_a_new_instance_is_replayed_with_zero_policy_calls(
    open_memory: Any, page: Any, base_url: str, task: str
) -> None:
    mem = open_memory()
    task_page = TaskPage(page, base_url, task)
    task_page.load()
    first_goal = task_page.start("1-0")
    learned = Agent(page, memory=mem, policy=HeuristicPolicy(), environment=MiniWobEnvironment()).run(first_goal)
    assert learned.success and learned.decisions > 0 and task_page.finish().success
    assert mem.trajectories.list()[0].goal_template is not None

    for seed in ("1-1", "1-2"):
        goal = task_page.start(seed)
        assert goal != first_goal
        result = Agent(page, memory=mem, policy=NeverAsked(), environment=MiniWobEnvironment()).run(goal)
        state = task_page.finish()
        assert result.success and result.replayed and result.decisions == 0, result.reason
        assert state.success and state.reward > 0
