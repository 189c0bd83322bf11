"""The two policies of the benchmark.

``Demonstrator`` stands in for a capable agent: told the instance it works on (as an LLM would read
it from the goal), it does the task through Actions on the page, each element chosen from the
observation: a named one by its role and the name the page shows, an unnamed one (Trac's "resolve as"
select, its "reassign to" box, a query filter's value) by its snapshot ref, read off the snapshot as the
field that follows a row header or a text and offers the option wanted. ``NullPolicy`` (the Django
benchmark's) can do nothing: it ends every run as a failure at once, so every success it is part of is
the replay's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from realapp.policies import Demonstrator as AdminDemonstrator
from realapp.policies import NotOnPage, NullPolicy, element

from webmem.agent import Action, Observation, Target, Turn
from webmem.episodes.aria import INTERACTIVE_ROLES, snapshot_line_parts, snapshot_scalar

from .catalog import Instance

__all__ = ["PLANS", "Demonstrator", "NotOnPage", "NullPolicy"]

_REF = re.compile(r"\[ref=([A-Za-z0-9_-]+)\]")
#: Snapshot lines a person reads as the caption of the fields that follow them on the same row or line.
_CAPTION_ROLES = frozenset({"rowheader", "text"})


@dataclass(frozen=True)
class Field:
    """An interactive element of a snapshot: its ref, role and name, the row header or text it follows
    on its row or line (``after``), and a combobox's options."""

    ref: str
    role: str
    name: str
    after: str
    options: tuple[str, ...]


def _name(match: re.Match[str]) -> str:
    return (match.group("name") or "").replace('\\"', '"').replace("\\\\", "\\")


def read_fields(snapshot: str) -> list[Field]:
    """The snapshot's interactive elements (options aside), in page order. A row header or a text captions
    what follows it at its depth or deeper, until the snapshot goes back above that depth."""
    lines = snapshot.splitlines()
    depths = [len(line) - len(line.lstrip()) for line in lines]
    parsed = [snapshot_line_parts(line) for line in lines]
    found: list[Field] = []
    caption: tuple[int, str] | None = None
    for index, parts in enumerate(parsed):
        if parts is None:
            continue
        if caption is not None and depths[index] < caption[0]:
            caption = None
        match, raw = parts
        role = match.group("role")
        if role in _CAPTION_ROLES:
            if text := _name(match) or snapshot_scalar(raw):
                caption = (depths[index], text)
            continue
        ref = _REF.search(match.group("rest") or "")
        if role not in INTERACTIVE_ROLES or role == "option" or ref is None:
            continue
        options = []
        for below in range(index + 1, len(lines)):
            if depths[below] <= depths[index]:
                break
            if parsed[below] is not None and parsed[below][0].group("role") == "option":
                options.append(_name(parsed[below][0]))
        found.append(Field(ref.group(1), role, _name(match), caption[1] if caption else "", tuple(options)))
    return found


def _same(text: str, other: str) -> bool:
    return text.strip().rstrip(":").strip().casefold() == other.strip().rstrip(":").strip().casefold()


def _option(field: Field, value: str, url: str) -> str:
    """The option of ``field`` the goal's word names ("Priority" for "priority")."""
    labels = [option for option in field.options if _same(option, value)]
    if len(labels) != 1:
        raise NotOnPage(f"{len(labels)} options of the {field.role} {field.name or field.after!r} read {value!r} on {url}")
    return labels[0]


def field_after(observation: Observation, caption: str, role: str, option: str | None = None) -> Field:
    """The one ``role`` field that follows the row header or text ``caption`` (and offers ``option``)."""
    found = [field for field in read_fields(observation.snapshot) if field.role == role and _same(field.after, caption)
             and (option is None or any(_same(label, option) for label in field.options))]
    if len(found) != 1:
        raise NotOnPage(f"{len(found)} {role} fields follow {caption!r}"
                        f"{f' with an option {option!r}' if option else ''} on {observation.url}")
    return found[0]


Step = Callable[[Observation, dict[str, str]], Action]


def click(roles: tuple[str, ...], name: str | None = None, *, key: str | None = None) -> Step:
    return lambda seen, values: Action("click", element(seen, roles, values[key] if key else name))


def fill(label: str, key: str) -> Step:
    return lambda seen, values: Action("fill", element(seen, ("textbox",), label), value=values[key])


def select(label: str, *, key: str | None = None, option: str | None = None) -> Step:
    """Select, in the combobox named ``label``, the option ``option`` or the instance's value ``key``."""
    def step(seen: Observation, values: dict[str, str]) -> Action:
        target = element(seen, ("combobox",), label, loose=True)
        field = next(field for field in read_fields(seen.snapshot) if field.ref == target.ref)
        return Action("select", target, value=_option(field, option or values[key], seen.url))
    return step


def select_after(caption: str, key: str) -> Step:
    """Select the instance's value ``key`` in the unnamed combobox after ``caption`` that offers it."""
    def step(seen: Observation, values: dict[str, str]) -> Action:
        field = field_after(seen, caption, "combobox", values[key])
        return Action("select", Target(ref=field.ref, role=field.role, name=field.name),
                      value=_option(field, values[key], seen.url))
    return step


def fill_after(caption: str, key: str) -> Step:
    """Fill the unnamed textbox after ``caption`` with the instance's value ``key``."""
    def step(seen: Observation, values: dict[str, str]) -> Action:
        field = field_after(seen, caption, "textbox")
        return Action("fill", Target(ref=field.ref, role=field.role, name=field.name), value=values[key])
    return step


BUTTON, LINK, RADIO = ("button",), ("link",), ("radio",)
OPEN_TICKET, MODIFY, SUBMIT = click(LINK, key="title"), click(LINK, "Modify Ticket"), click(BUTTON, "Submit changes")
UPDATE = click(BUTTON, "Update")

#: Each task's actions, in order, as a person would take them in Trac, from the custom query page.
PLANS: dict[str, tuple[Step, ...]] = {
    "set_priority": (OPEN_TICKET, MODIFY, select("Priority", key="priority"), SUBMIT),
    "resolve": (OPEN_TICKET, MODIFY, click(RADIO, "resolve"), select_after("resolve as", "resolution"), SUBMIT),
    "reassign": (OPEN_TICKET, MODIFY, click(RADIO, "reassign"), fill_after("reassign to", "user"), SUBMIT),
    "comment": (OPEN_TICKET, fill("You may use WikiFormatting here.", "text"), SUBMIT),
    "filter_priority": (select("And", option="Priority"), select_after("Priority", "priority"), UPDATE),
    "filter_type_priority": (select("And", option="Priority"), select("And", option="Type"),
                             select_after("Priority", "priority"), select_after("Type", "type"), UPDATE),
    "filter_owner": (select("And", option="Owner"), fill_after("Owner", "user"), UPDATE),
}


def _waits_in_a_row(turn: Turn) -> int:
    """How many of the last actions were waits."""
    count = 0
    for outcome in reversed(turn.history):
        if outcome.action.kind != "wait":
            break
        count += 1
    return count


class Demonstrator(AdminDemonstrator):
    """The Django benchmark's demonstrator on Trac's plans: it does the instance set with :meth:`begin`, one
    planned action per turn, and gives up (a failed run) when an action failed or an element it needs is
    not on the page. It waits, ``MAX_WAITS`` times at most in a row, for an element missing (Trac's scripts
    make some, such as the "Modify Ticket" link that unfolds the form, once the page has loaded) and, before
    it claims success, for the page to leave the URL where it took the last planned action (each plan ends
    by submitting a form)."""

    MAX_WAITS = 3
    WAIT_MS = 300

    plans = PLANS

    def __init__(self) -> None:
        super().__init__()
        self.submitted_at: str | None = None

    def begin(self, instance: Instance) -> None:
        super().begin(instance)
        self.submitted_at = None

    def follow(self, turn: Turn, plan: tuple[Step, ...], values: dict[str, str]) -> Action:
        """The plan's next action (one per action taken so far, waits aside), a wait, or the end of the run."""
        done = sum(outcome.action.kind != "wait" for outcome in turn.history)
        if done >= len(plan):
            if turn.observation.url == self.submitted_at and _waits_in_a_row(turn) < self.MAX_WAITS:
                return Action("wait", wait_ms=self.WAIT_MS, reason="waiting for the form's answer")
            return Action("finish", success=True, reason="every planned action done")
        try:
            action = plan[done](turn.observation, values)
        except NotOnPage as exc:
            if _waits_in_a_row(turn) < self.MAX_WAITS:
                return Action("wait", wait_ms=self.WAIT_MS, reason=f"waiting: {exc}")
            return Action("finish", success=False, reason=str(exc))
        if done == len(plan) - 1:
            self.submitted_at = turn.observation.url
        return action
