"""What a replay does with suggestions that complete the goal's values (``trajectories.completions``): the
one element that completes them, the steps on them that need no replaying, and the repair after a menu
that put another suggestion in the field than the one clicked."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.models import Step
from ..trajectories.completions import GAP, completions, hover_before_pick, started_by
from ..trajectories.evidence import TEXT_ROLE, key, parse_identity
from ..trajectories.plans import ReplayPlan
from .actions import REPLAYED, Action, Target, text_selector
from .observation import Observation
from .policy import Turn

#: How many visible elements of the page have exactly this text.
Shown = Callable[[str], int]


@dataclass(frozen=True)
class Repair:
    """An action replay takes after a pick, what it is for, and why the pick's step was healed (if it was)."""

    action: Action
    doing: str
    healed: str | None = None


class Suggestions:
    """The suggestions one replay picked, and what is left to do about them."""

    def __init__(self, plan: ReplayPlan, shown: Shown | None) -> None:
        self.plan = plan
        self.shown = shown
        self.waited: int | None = None  # the step whose completion replay waited for
        self._picks: dict[str, str] = {}  # each name clicked, by the pattern it completed
        self._typed: tuple[str, Step] | None = None  # the last pick, and the step that typed its start
        self._close: Target | None = None  # a field typed into to repair a pick, whose suggestions to close

    def find(self, observation: Observation, role: str, pattern: str) -> tuple[Target | None, str]:
        """The one element of ``role`` (or visible text) whose name completes ``pattern`` ("Nica…ua"), and why
        (or why there is none)."""
        if role == TEXT_ROLE:
            names = [name for name in completions(pattern, observation.texts)
                     if self.shown is None or self.shown(name) == 1]
        else:
            names = [name for name in completions(pattern, [element.name for element in observation.find(role, None)])
                     if len(observation.find(role, name)) == 1]
        said = pattern.replace(GAP, "...")
        if len(names) > 1:
            listed = ", ".join(repr(name) for name in names[:5])
            return None, f"{len(names)} names complete {said!r} ({listed}): which one is meant is not certain"
        if not names:
            return None, f"no {role} on the page completes {said!r}"
        name = names[0]
        if role == TEXT_ROLE:
            return Target(role=role, name=name, selector=text_selector(name)), f"{name!r} completes {said!r}"
        element = observation.find(role, name)[0]
        return Target(ref=element.ref, role=role, name=name), f"{name!r} completes {said!r}"

    def needless(self, step: Step, number: int, pattern: str) -> str | None:
        """Why step ``number`` (on a suggestion) need not be replayed: the run picked it again after typing
        (the field reads the pick already), or it hovers over what the next step clicks (adding only a second
        copy of its name, which a menu announces)."""
        if pattern in self._picks:
            return f"{self._picks[pattern]!r} is picked already"
        if hover_before_pick(step, self.plan.steps[number] if number < len(self.plan.steps) else None):
            return "the click that follows picks it"
        return None

    def picked(self, pattern: str, name: str, position: int) -> None:
        """The suggestion ``name`` was clicked for ``pattern`` at the plan's step index ``position``."""
        self._picks[pattern] = name
        start = key(started_by(pattern))
        typed = next((earlier for earlier in reversed(self.plan.steps[:position])
                      if earlier.action in ("fill", "type") and key(earlier.value or "") == start), None)
        self._typed = (name, typed) if typed is not None else None

    def after_pick(self, turn: Turn) -> Repair | None:
        """After a pick, before the next step: when the field typed into reads another suggestion (a menu that
        acted on the item under the mouse), type the pick there as a person would; then close the
        suggestions that typing opened again."""
        if self._close is not None:
            field, self._close = self._close, None
            return Repair(Action(kind="press", target=field, value="Escape", reason=REPLAYED),
                          f"closing the suggestions of {field.describe()}")
        if self._typed is None:
            return None
        (picked, typed), self._typed = self._typed, None
        identity = parse_identity(typed.target)
        fields = turn.observation.find(identity[0], identity[1]) if identity is not None else []
        if len(fields) != 1 or key(fields[0].value or "") == key(picked):
            return None
        field = fields[0]
        self._close = Target(ref=field.ref, role=field.role, name=field.name)
        return Repair(Action(kind=typed.action, target=self._close, value=picked, reason=REPLAYED),
                      f"typing {picked!r} into {field.identity}",
                      f"picking {picked!r} left {field.identity} reading {field.value or ''!r}: typed {picked!r} there")
