"""The MiniWoB++ benchmark with skills: the agent's replay options reach each episode's agent, and each episode counts
the skills its policy called and what became of them (real task pages in headless Chromium, real SQLite memories)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from webmem.agent import Action, PolicyStats
from webmem.agent.actions import SkillCall
from webmem.bench import run_benchmark
from webmem.skills.tools import asked

_SLOT = re.compile(r"\\\{(?P<name>[A-Za-z0-9_]+)\\\}")


class CallsSkills:
    """A policy that calls skills: the first skill offered whose template fits the goal, with the values the goal
    gives its slots (as a capable model would read them), once; then it gives up."""

    name = "calls-skills"
    calls_skills = True

    def __init__(self) -> None:
        self.stats = PolicyStats()

    def start(self, goal: str) -> None:
        pass

    def decide(self, turn: Any) -> Action:
        self.stats.decisions += 1
        if not any(step.action.kind == "skill" for step in turn.history):
            for skill in turn.skills:
                template = re.search(r"^Does: (?P<template>.+)$", skill.description, re.M)
                pattern = _SLOT.sub(r"(?P<\g<name>>.+?)", re.escape(template.group("template"))) if template else None
                found = re.fullmatch(pattern, turn.goal.strip()) if pattern else None
                if found is not None:
                    values = {parameter.name: found.group(parameter.name) for parameter in asked(skill)}
                    return Action(kind="skill", skill=SkillCall(id=skill.id, name=skill.name, values=values))
        return Action(kind="finish", success=False)


def test_skill_calls_without_the_replay_at_start_are_counted_and_replay_off_offers_none(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    report = run_benchmark(["enter-text"], episodes=2, policy=CallsSkills, memory="on", memory_from="heuristic",
                           memory_dir=kept, replay_at_start=False)
    recording, warm = report.select("recording"), report.select("warm")
    assert all(record.success for record in recording)
    assert any(record.replayed for record in recording)  # the recording's own agent kept its replay
    for record in warm:
        assert record.success and record.decisions == 1  # the policy's call: no replay at the start decided first
        assert "replay_at_start=False" in (record.replay_miss_reason or "")
        assert record.replay_outcome == "replayed"  # the run's replay is its skill call's
        assert (record.skill_calls, record.skill_calls_done, record.skill_calls_handed_over) == (1, 1, 0)
    episode = report.to_dict()["warm"]["episodes"][0]
    assert (episode["skill_calls"], episode["skill_calls_done"], episode["skill_calls_handed_over"]) == (1, 1, 0)

    unaided = run_benchmark(["enter-text"], episodes=1, policy=CallsSkills, memory="on", memory_dir=kept, seed=5,
                            replay=False)
    record, = unaided.select("warm")
    assert not record.success and record.skill_calls == 0 and record.replay_outcome is None
    assert "replay=False" in (record.replay_miss_reason or "")
