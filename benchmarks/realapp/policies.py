"""The two policies of the benchmark.

``Demonstrator`` stands in for a capable agent: told the instance it works on (as an LLM would read
it from the goal), it does the task through Actions on the page, each element chosen from the
observation by its role and the name the page shows. ``NullPolicy`` can do nothing: it ends every run
as a failure at once, so every success it is part of is the replay's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from webmem.agent import Action, Observation, PolicyStats, Target, Turn

from .catalog import Instance


class NullPolicy:
    """Gives up on its first decision."""

    name = "null"

    def __init__(self) -> None:
        self.stats = PolicyStats()

    def start(self, goal: str) -> None:
        pass

    def decide(self, turn: Turn) -> Action:
        self.stats.decisions += 1
        return Action("finish", success=False, reason="the null policy can do nothing")


class NotOnPage(Exception):
    """The element the demonstrator needs is not on the page (or not only once)."""


def _label(text: str) -> str:
    """A field's name as a person reads it: "Year:" and "year" are one label."""
    return text.strip().rstrip(":*").strip().casefold()


def element(observation: Observation, roles: tuple[str, ...], name: str, *, loose: bool = False) -> Target:
    """The one element with one of ``roles`` named ``name`` (``loose``: case and a trailing colon aside)."""
    found = [item for item in observation.elements if item.role in roles and (
        _label(item.name) == _label(name) if loose else item.name == name)]
    if len(found) != 1:
        raise NotOnPage(f"{len(found)} elements are {'/'.join(roles)} {name!r} on {observation.url}")
    return Target(ref=found[0].ref, role=found[0].role, name=found[0].name)


def option_label(observation: Observation, value: str) -> str:
    """The label the page shows for an option, found by the goal's word for it ("poetry" -> "Poetry")."""
    labels = [item.name for item in observation.elements
              if item.role == "option" and _label(item.name) == _label(value)]
    if len(labels) != 1:
        raise NotOnPage(f"{len(labels)} options read {value!r} on {observation.url}")
    return labels[0]


Step = Callable[[Observation, dict[str, str]], Action]


def click(roles: tuple[str, ...], name: str | None = None, *, key: str | None = None, loose: bool = False) -> Step:
    return lambda seen, values: Action("click", element(seen, roles, values[key] if key else name, loose=loose))


def fill(roles: tuple[str, ...], label: str, key: str) -> Step:
    return lambda seen, values: Action("fill", element(seen, roles, label, loose=True), value=values[key])


def select(label: str, key: str) -> Step:
    return lambda seen, values: Action("select", element(seen, ("combobox", "listbox"), label, loose=True),
                                       value=option_label(seen, values[key]))


BUTTON, LINK = ("button",), ("link",)
TEXT, NUMBER = ("textbox",), ("spinbutton", "textbox")

#: Each task's actions, in order, as a person would take them in the Django admin.
PLANS: dict[str, tuple[Step, ...]] = {
    "search_open": (fill(("searchbox", "textbox"), "Search", "term"), click(BUTTON, "Search"),
                    click(LINK, key="title")),
    "edit_year": (click(LINK, key="title"), fill(NUMBER, "Year", "year"), click(BUTTON, "Save")),
    "delete": (click(LINK, key="title"), click(LINK, "Delete"), click(BUTTON, "Yes, I’m sure")),
    "add": (click(LINK, "Add book"), fill(TEXT, "Title", "title"), fill(TEXT, "Author", "author"),
            fill(NUMBER, "Year", "year"), select("Genre", "genre"), click(BUTTON, "Save")),
    "filter_genre": (click(LINK, key="genre", loose=True),),
}


class Demonstrator:
    """Does the instance set with :meth:`begin`, one action of its task's plan in ``plans`` per turn; it gives
    up (a failed run) when an action failed or an element it needs is not on the page."""

    name = "demonstrator"
    plans: ClassVar[dict[str, tuple[Step, ...]]] = PLANS

    def __init__(self) -> None:
        self.stats = PolicyStats()
        self.instance: Instance | None = None

    def begin(self, instance: Instance) -> None:
        self.instance = instance

    def start(self, goal: str) -> None:
        if self.instance is None or goal != self.instance.goal:
            raise ValueError(f"the demonstrator was not told about the goal {goal!r}")

    def decide(self, turn: Turn) -> Action:
        self.stats.decisions += 1
        assert self.instance is not None
        if turn.history and not turn.history[-1].ok:
            return Action("finish", success=False, reason=f"the last action failed: {turn.history[-1].error}")
        return self.follow(turn, self.plans[self.instance.task], self.instance.values)

    def follow(self, turn: Turn, plan: tuple[Step, ...], values: dict[str, str]) -> Action:
        """The plan's next action (one per action taken so far), or the end of the run."""
        done = len(turn.history)
        if done >= len(plan):
            return Action("finish", success=True, reason="every planned action done")
        try:
            return plan[done](turn.observation, values)
        except NotOnPage as exc:
            return Action("finish", success=False, reason=str(exc))
