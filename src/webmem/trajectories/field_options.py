"""Options a page offered in a field where a run chose the value its goal named: each is a value of that task too.

A run for "Show the completed orders" that chose "Complete" in the "Status" select shows that on this site a status
is a value of the task, as a number is: "Which orders are pending?" asks for the same task with another of the
field's options. What a save shows is kept (table ``field_options``): each other option with the value as the goal
said it and the run's task. A new goal that names one of them, and fits no stored goal exactly, is read again with
that value in its place (:func:`.acts.read_by_acts`), to reach a goal of that task only, and the match says so:
'"pending" read as "completed" (both options of the field "Status" on this site)'. An option is matched by its words
or their stems ("cancelled" names "Canceled"); one the goal names as well as the chosen value ("from pending to
complete") is no other value of the task.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Connection, delete

from ..core.models import FieldOption, Step, Trajectory
from ..core.records import stored_record
from ..core.terms import STOP_WORDS, stem, words
from ..store.prepared import Prepared
from ..store.schema import field_options
from ..store.statements import insert_ignoring_duplicates, plain_select

#: The most words an option has to be read as a value (longer ones are descriptions, not values).
MAX_OPTION_WORDS = 3
_NAMED_TARGET = re.compile(r'^[a-z]+ "(.+)"$')
_PROMPTS = frozenset({"select", "choose", "pick", "please"})  # the first word of an option that asks for a choice
_LISTED = Prepared(plain_select([field_options.c.offered, field_options.c.chosen, field_options.c.field_label,
                                 field_options.c.task, field_options.c.trajectory_id, field_options.c.created_at],
                                "namespace = :ns AND origin = :origin", order_by="created_at, offered, chosen"))
_LISTED_FIELDS = ("option", "value", "field", "task", "trajectory_id", "learned_at")


def named(said: Sequence[str], phrase: Sequence[str]) -> tuple[int, int] | None:
    """Where the words ``said`` (a goal's ``words``) name ``phrase``: the same words, or the same stems."""
    count = len(phrase)
    stems = [stem(word) for word in phrase]
    for start in range(len(said) - count + 1):
        part = said[start:start + count]
        if list(part) == list(phrase) or [stem(word) for word in part] == stems:
            return start, start + count
    return None


def taught(goal: str, steps: Sequence[Step]) -> list[tuple[str, str, str]]:
    """What a run shows of its fields' options: ``(option, value, field)`` for each other option of each field where
    a step chose a value that the goal names (``value`` as the goal says it; ``field`` the field's label)."""
    said = words(goal)
    found: dict[str, tuple[str, str]] = {}
    for step in steps:
        element = step.element
        if element is None or len(element.options) < 2 or not step.value:
            continue
        options = {" ".join(words(option)): option for option in element.options}
        chosen = words(step.value)
        span = named(said, chosen) if " ".join(chosen) in options else None
        if span is None:
            continue
        value = " ".join(said[span[0]:span[1]])
        named_target = _NAMED_TARGET.match(step.target or "")  # 'combobox "Status"', as the MCP proxy records it
        field = (element.label or element.field_name or element.title or (named_target[1] if named_target else ""))
        field = field[:100]
        for option, written in options.items():
            if option != " ".join(chosen) and _usable(written) and named(said, option.split()) is None:
                found.setdefault(option, (value, field))
    return [(option, value, field) for option, (value, field) in found.items()]


def _usable(written: str) -> bool:
    """Whether an option can be a value a goal names: a few words, one of them not a function word, and no prompt
    to choose ("All", "--", "Select a status..." are not)."""
    option = words(written)
    return 0 < len(option) <= MAX_OPTION_WORDS and option[0] not in _PROMPTS \
        and not written.rstrip().endswith(("...", "…", "-")) \
        and any(word not in STOP_WORDS and not word.isdigit() for word in option)


def record(conn: Connection, namespace: str, origin: str, trajectory: Trajectory,
           learned: list[tuple[str, str, str]], now: datetime) -> None:
    """Keep what a saved trajectory showed, in the transaction that saves it, with its task (its goal template, or
    its goal): only a goal of that task is reached by reading a goal with the value put for an option."""
    task = task_of(trajectory.goal_template, trajectory.goal)
    insert_ignoring_duplicates(conn, field_options, [
        {"namespace": namespace, "origin": origin, "offered": option[:200], "chosen": value[:200],
         "trajectory_id": trajectory.id, "field_label": field, "task": task, "created_at": now}
        for option, value, field in learned])


def task_of(template: str | None, goal: str) -> str:
    """What names a stored goal's task here: its template, or its goal when it has none."""
    return template if template is not None else goal


def forget(conn: Connection, namespace: str, trajectory_ids: Sequence[str]) -> None:
    """Drop what deleted trajectories showed (what another run showed as well stays)."""
    if ids := list(trajectory_ids):
        column = field_options.c
        conn.execute(delete(field_options).where(column.namespace == namespace, column.trajectory_id.in_(ids)))


def known(conn: Connection, namespace: str, origin: str) -> dict[str, list[tuple[str, str, str, str]]]:
    """``(option, value, field, task)`` shown on ``origin``, each once, in the order they were shown, by the stem of
    the option's first word (a goal's words are looked up, not every option tried)."""
    found: dict[str, list[tuple[str, str, str, str]]] = {}
    for row in dict.fromkeys(tuple(row[:4]) for row in _LISTED.rows(conn, {"ns": namespace, "origin": origin})):
        if option := row[0].split():  # a row changed by hand to no option names nothing
            found.setdefault(stem(option[0]), []).append(row)
    return found


def listed(conn: Connection, namespace: str, origin: str) -> list[FieldOption]:
    """Every option shown on ``origin``, with the run that showed it, in the order they were shown."""
    return [stored_record(FieldOption, _LISTED_FIELDS, row)
            for row in _LISTED.rows(conn, {"ns": namespace, "origin": origin})]


def options_named(said: Sequence[str], options: dict[str, list[tuple[str, str, str, str]]]) -> list[
        tuple[str, tuple[str, str, str, str]]]:
    """The options (``known``) the words ``said`` name, each with the words that name it, unless they name its
    value too."""
    found = []
    for word in dict.fromkeys(said):
        for option in options.get(stem(word), ()):
            span = named(said, option[0].split())
            if span is not None and named(said, option[1].split()) is None:
                found.append((" ".join(said[span[0]:span[1]]), option))
    return found
