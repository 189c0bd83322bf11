"""Where a replayed step's target is on the page now: by role and name, by the signals it was recorded with
(``core.elements``) when it has no name or shares it, by its label or place among alike elements, by role
alone where its name varies from run to run; or why it is not there, and whether its absence is evidence
that the site changed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.elements import choose, describe_element
from ..core.models import ElementSignals, ReplayStepStatus, Step
from ..trajectories.evidence import TEXT_ROLE, key
from ..trajectories.plans import ReplayPlan, TargetHistory
from .actions import Target, text_selector
from .observation import Element, Observation
from .suggestions import Shown

#: Finds the snapshot ref of the one element a selector matches, if it has this role and name.
Locate = Callable[[str, str, str], "str | None"]
#: Whether a selector reaches exactly the element with this snapshot ref.
Reaches = Callable[[str, str], bool]
#: The identity signals of the element with this snapshot ref (None when the page cannot say).
Identify = Callable[[str], "ElementSignals | None"]
#: The most elements of one role whose signals replay reads to find one target.
MAX_CANDIDATES = 60


@dataclass(frozen=True)
class Found:
    """Where a step's target is on the page now: the target to act on (None when it is not there), the
    step's status so far and why."""

    target: Target | None
    status: ReplayStepStatus
    reason: str | None = None


class TargetFinder:
    """Finds the targets of ``plan``'s steps on the page, with what the page can tell through Playwright
    (``locate``, ``reaches``, ``shown``, ``identify``; each optional)."""

    def __init__(self, plan: ReplayPlan, *, locate: Locate | None = None, reaches: Reaches | None = None,
                 shown: Shown | None = None, identify: Identify | None = None) -> None:
        self.plan = plan
        self.locate = locate
        self.reaches = reaches
        self.shown = shown
        self.identify = identify

    def for_plan(self, plan: ReplayPlan) -> TargetFinder:
        """A finder of ``plan``'s targets with what this one asks the page."""
        return TargetFinder(plan, locate=self.locate, reaches=self.reaches, shown=self.shown, identify=self.identify)

    def find(self, observation: Observation, target: Target, step: Step, index: int) -> Found:
        """Where the target of step ``index`` is on the page, with the step's status so far and why."""
        role, name = target.role or "", target.name or ""
        if role == TEXT_ROLE:
            count = self.shown(name) if self.shown is not None and name else 0
            if count == 1:
                return Found(Target(role=role, name=name, selector=text_selector(name)), "hit")
            if count > 1:
                return Found(None, "missed", f"{count} texts read {name!r}: which one is meant is not certain")
            return self._missing(observation, target, index)
        present = observation.find(role, name)
        if not present and index in self.plan.goal_targets:  # the goal may write a name in another case
            present = [element for element in observation.find(role, None) if key(element.name) == key(name)]
        if step.element is not None and self.identify is not None and step.place_slot is None \
                and not (name and len(present) == 1):  # a place the goal names ("the 3rd textbox") decides
            found = self._by_signals(observation, target, step, present, renamed=not present and bool(name)
                                     and index not in self.plan.goal_targets)
            if found is not None:
                return found
        if len(present) == 1:
            element = present[0]
            if step.selector and element.ref and self.reaches is not None \
                    and not self.reaches(step.selector, element.ref):
                return Found(_at(element, target), "healed",
                              "found by role and name: the remembered selector no longer reaches it")
            return Found(_at(element, target), "hit")
        if present:
            return self._one_of(present, target, step)
        return self._missing(observation, target, index)

    def _by_signals(self, observation: Observation, target: Target, step: Step, present: list[Element], *,
                    renamed: bool) -> Found | None:
        """Find the target by the signals it was recorded with (``core.elements``): among the elements with
        its role and name when there are several, else among every element of its role (a field without a
        name, or, with ``renamed``, one whose name changed while its other signals stayed). None when there
        is nothing to compare, or a named target is simply absent (the caller says so)."""
        assert step.element is not None and self.identify is not None
        role, name = target.role or "", target.name or ""
        if present:
            candidates = present
        elif not name or renamed:
            candidates = observation.find(role, None)
        else:
            return None
        candidates = [element for element in candidates if element.ref][:MAX_CANDIDATES]
        if not candidates:
            return None
        what = describe_element(role, name, step.element)
        choice = choose(step.element, name, [(element.name, self.identify(element.ref or ""))
                                             for element in candidates], what=what)
        if choice.index is None:
            if renamed or choice.alike:
                return None  # absent (no element clearly renamed), or alike but for their place: other evidence decides
            return Found(None, "missed", choice.reason)
        element = candidates[choice.index]
        assert choice.comparison is not None
        if choice.comparison.disagreed or choice.comparison.moved or element.name != name:
            return Found(_at(element, target), "healed", choice.reason)
        return Found(_at(element, target), "hit")

    def _one_of(self, present: list[Element], target: Target, step: Step) -> Found:
        """Of several elements with the target's role and name, the one the step's evidence points to:
        its label (when each of them has a label of its own), else its stored selector, else its place
        among them when there are as many as before."""
        moved = step.target_index is None or step.target_count != len(present)
        labels = [_label_key(element.label) for element in present]
        if step.label and all(labels) and len(set(labels)) == len(labels):  # each field has a label of its own
            labelled = [element for element in present if _label_key(element.label) == _label_key(step.label)]
            if not labelled:  # another layout: the fields' places say nothing either
                shown = ", ".join(repr(element.label) for element in present[:6])
                return Found(None, "missed", f"no {target.describe()} labelled {step.label!r} is on the page "
                                              f"(the page's are labelled {shown})")
            element = labelled[0]
            if not moved and present.index(element) + 1 == step.target_index:
                return Found(_at(element, target), "hit")
            return Found(_at(element, target), "healed", f"found by its label {step.label!r}: the page put it elsewhere")
        if step.selector and self.locate is not None and target.role is not None:
            ref = self.locate(step.selector, target.role, target.name or "")
            chosen = next((element for element in present if ref is not None and element.ref == ref), None)
            if chosen is not None:
                return Found(_at(chosen, target), "hit")
        if not moved and step.target_index is not None:
            return Found(_at(present[step.target_index - 1], target), "hit")
        if step.target_count is not None:
            return Found(None, "missed", f"{len(present)} elements are {target.describe()} where the earlier run "
                                          f"saw {step.target_count}: which one is meant is not certain")
        return Found(None, "missed",
                      f"{len(present)} elements are {target.describe()} and the earlier run did not say which one")

    def _missing(self, observation: Observation, target: Target, index: int) -> Found:
        """The target is not on the page: heal by role where its name varies from run to run, else say
        whether its absence is evidence that the site changed (``stale``) or just a miss."""
        history = self.plan.history.get(index)
        role, name = target.role or "", target.name or ""
        if history is not None and history.varies and role != TEXT_ROLE:
            named = all(history.names)
            candidates = [element for element in observation.find(role, None) if element.name or not named]
            if len(candidates) == 1:
                return Found(_at(candidates[0], target), "healed", (
                    f"{target.describe()} is not on the page; earlier runs found this {role} under "
                    f"{len(history.names)} different names, and the page has one: {candidates[0].identity}"))
        others = observation.find(None, name) if name and role != TEXT_ROLE else []
        if others:
            reason = f"the page has a {others[0].role} named {name!r}, not a {role}"
        elif role == TEXT_ROLE:
            reason = f"the page shows no text {name!r}"
        else:
            reason = f"{target.describe()} is not on the page"
        return Found(None, "stale" if _remembered(history, index, self.plan) else "missed", reason)


def _remembered(history: TargetHistory | None, index: int, plan: ReplayPlan) -> bool:
    """Whether a target's absence is evidence that the site changed: the goal does not name it, and
    every earlier run of the task (two at least) found it under this same name."""
    return history is not None and history.established and index not in plan.goal_targets


def _label_key(label: str) -> str:
    """A label as fields are told apart by it: "Year:", "year" and "Year *" are one label."""
    return key(label.strip().rstrip(":*"))


def _at(element: Element, target: Target) -> Target:
    return Target(ref=element.ref, role=element.role, name=element.name, selector=target.selector)
