"""The task instances of the real-app replay benchmarks (``realapp/`` on Django's admin, ``tracapp/`` on Trac).

Each app's ``catalog.py`` names its tasks' goals (an ``Instance`` class of its own, with its ``goals``) and
draws their values; what it draws with and checks them by is here: an instance, values dealt in turn from
a pool, and the values new instances share with recorded ones.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar


@dataclass(frozen=True)
class TaskInstance:
    """One task instance: ``phase`` "record" (the demonstrator's runs) or "test" (new instances); its goal is
    the task's template in ``goals`` (set by each app's subclass) filled with ``values``."""

    goals: ClassVar[Mapping[str, str]]

    task: str
    phase: str
    number: int
    values: dict[str, str] = field(hash=False)

    @property
    def goal(self) -> str:
        return self.goals[self.task].format(**self.values)


def cycle(pool: list, count: int, chooser: random.Random) -> list:
    """``count`` items of ``pool`` in a random order, each used once before any repeats."""
    drawn: list = []
    while len(drawn) < count:
        batch = list(pool)
        chooser.shuffle(batch)
        drawn += batch
    return drawn[:count]


def reused_values(instances: list[TaskInstance], repeatable: tuple[str, str]) -> dict[str, set[str]]:
    """The values (by name) that a new instance shares with a recorded one of the same task, but those of the
    value ``repeatable`` names (task, value name), which may repeat."""
    recorded: dict[str, set[str]] = {}
    for item in instances:
        if item.phase == "record":
            for name, value in item.values.items():
                recorded.setdefault(name, set()).add(value)
    reused: dict[str, set[str]] = {}
    for item in instances:
        if item.phase == "test":
            for name, value in item.values.items():
                if value in recorded.get(name, ()) and (item.task, name) != repeatable:
                    reused.setdefault(name, set()).add(value)
    return reused
