"""A stored trajectory as reference text for a run's prompt: the path that worked, in the run's own values.

The steps shown are those a replay would keep (see :func:`~webmem.trajectories.plans.path_taken`),
plus each failed step the run learned from, marked ``[failed: <error>]`` so that the agent does not
repeat it; the count line says how many steps were left out. Values that came from the earlier
run's instruction are never offered as values for another one: with the current goal given, they
show as the current goal's values when its slots map onto the earlier goal's, and as
:data:`FROM_INSTRUCTION` when they do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..core.elements import describe_element
from ..core.models import Step, Trajectory
from ..core.pack import LineCut
from ..core.text import clean_for_prompt
from .binding import bind
from .evidence import parse_identity
from .plans import instructive_failures, path_taken
from .slots import GOAL_VALUE, filled_or, goal_values, parameterise

FROM_INSTRUCTION = "<value from your instruction>"
GOAL_LIMIT = 300
STEP_TEXT_LIMIT = 160
ERROR_LIMIT = 80
_HEAD_LINES = 2  # the goal line and the count line


def omitted_steps(count: int) -> str:
    """The line that ends a reference cut short by ``count`` steps."""
    return f"  … {_counted(count, 'more step')} not shown"


#: How the pack cuts a reference that does not fit: by whole steps, keeping the goal and the first ones.
STEP_CUT = LineCut(head=_HEAD_LINES, omitted=omitted_steps)


def format_reference(trajectory: Trajectory, *, goal: str | None = None) -> str:
    """The trajectory as prompt text: its goal, a line counting its steps, then one numbered line per
    step shown. With ``goal`` (the current run's), values from the earlier goal show in its values."""
    steps = trajectory.steps
    taken = path_taken(steps)
    marked = instructive_failures(steps)
    shown = sorted({*taken, *marked})
    goal_line, in_values = _in_goal_values(trajectory.goal, [steps[index] for index in shown], goal)
    lines = [goal_line, _count_line(steps, len(taken), marked)]
    lines += [f"  {number}. {describe_step(step)}" for number, step in enumerate(in_values, start=1)]
    return "\n".join(lines)


def describe_step(step: Step) -> str:
    """One step as a line: action, target (one with no name as a person knows it: its row, name attribute...),
    value, page, and whether it was verified or failed."""
    identity = parse_identity(step.target) if step.element is not None else None
    target = describe_element(*identity, step.element) if identity is not None and not identity[1] else step.target
    words = [step.action, clean_for_prompt(target or step.selector or "", STEP_TEXT_LIMIT)]
    if step.value == FROM_INSTRUCTION:
        words.append(FROM_INSTRUCTION)
    elif step.value is not None:
        words.append(f'"{clean_for_prompt(step.value, STEP_TEXT_LIMIT)}"')
    line = " ".join(word for word in words if word)
    if step.url:
        line += f" (on {clean_for_prompt(step.url, STEP_TEXT_LIMIT)})"
    if step.verified:
        line += " [verified]"
    if not step.ok:
        error = clean_for_prompt((step.error or "").strip().split("\n", 1)[0], ERROR_LIMIT)
        line += f" [failed: {error}]" if error else " [failed]"
    return line


def _count_line(steps: list[Step], worked: int, marked: list[int]) -> str:
    failed_left = sum(1 for step in steps if not step.ok) - len(marked)
    redundant_left = len(steps) - worked - len(marked) - failed_left
    counts = f"{worked} that worked"
    if marked:
        counts += f" and {len(marked)} marked [failed] to avoid"
    leftovers = ((failed_left, "failed attempt"), (redundant_left, "redundant step"))
    left = [_counted(number, noun) for number, noun in leftovers if number]
    if left:
        counts += f"; {' and '.join(left)} left out"
    return f"Steps ({counts}):"


def _in_goal_values(stored: str, steps: list[Step], goal: str | None) -> tuple[str, list[Step]]:
    """The goal line and the steps, with the values that came from the earlier goal replaced when
    ``goal`` is another one. Without a current goal, or with the earlier goal itself, they show as
    they were, except that a secret typed from the goal's own words is never spelled out."""
    secret = [index for index, step in enumerate(steps) if step.value and GOAL_VALUE.match(step.value)]
    if goal is None or goal.split() == stored.split():
        text, shown = stored, steps
    else:
        text, shown = _mapped(stored, steps, goal)
    label = "Goal" if text == stored else "Goal (an earlier run's, in your instruction's values)"
    return f"{label}: {clean_for_prompt(text, GOAL_LIMIT)}", [
        step.model_copy(update={"value": FROM_INSTRUCTION}) if index in secret else step
        for index, step in enumerate(shown)
    ]


def _mapped(stored: str, steps: list[Step], goal: str) -> tuple[str, list[Step]]:
    """The earlier goal and the steps with each slot of the earlier goal's template filled with the
    current goal's value for it (bound by the template, or the same value named in the current goal),
    or with :data:`FROM_INSTRUCTION` when the current goal has none. The earlier values are replaced
    in the steps' pages and errors as well."""
    slotted = parameterise(stored, steps)
    if slotted is None:
        return _unslotted(stored, steps)
    template, slotted_steps = slotted
    earlier = bind(template, stored) or {}
    values = bind(template, goal, like=stored)
    if values is None:  # the earlier values the current goal names too, as words of it in any case
        values = {number: text for number, text in earlier.items()
                  if re.search(rf"(?<![\w]){re.escape(text)}(?![\w])", goal, re.IGNORECASE)}
    swaps = {text: values.get(number, FROM_INSTRUCTION) for number, text in earlier.items()}
    shown = [step.model_copy(update={
        "value": filled_or(step.value, values, FROM_INSTRUCTION),
        "target": filled_or(step.target, values, FROM_INSTRUCTION),
        "url": swapped(step.url, swaps), "error": swapped(step.error, swaps),
    }) for step in slotted_steps]
    return filled_or(template, values, FROM_INSTRUCTION) or template, shown


def _unslotted(stored: str, steps: list[Step]) -> tuple[str, list[Step]]:
    """Without a template (the goal or the steps hold braces of their own), a value typed just as the
    earlier goal names it is hidden: in the steps, their pages and errors, and in the goal."""
    own = {value.text for value in goal_values(stored)}
    swaps = {step.value: FROM_INSTRUCTION for step in steps if step.value in own}
    return swapped(stored, swaps) or stored, [step.model_copy(update={
        "value": swaps.get(step.value, step.value) if step.value else step.value,
        "url": swapped(step.url, swaps), "error": swapped(step.error, swaps),
    }) for step in steps]


def swapped(text: str | None, swaps: dict[str, str]) -> str | None:
    """``text`` with each whole-word occurrence of a key of ``swaps`` replaced by its value: from the left,
    the longest key where several start at one place (no pattern is compiled: each text's keys are new)."""
    if not text or not swaps:
        return text
    found: list[tuple[int, int, str]] = []  # (start, -length, key) of each whole-word occurrence
    for key in swaps:
        start = text.find(key) if key else -1
        while start >= 0:
            end = start + len(key)
            if not (start and _word_char(text[start - 1])) and not (end < len(text) and _word_char(text[end])):
                found.append((start, -len(key), key))
            start = text.find(key, start + 1)
    if not found:
        return text
    parts, position = [], 0
    for start, negative_length, key in sorted(found):
        if start >= position:
            parts += [text[position:start], swaps[key]]
            position = start - negative_length
    return "".join(parts) + text[position:]


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _counted(number: int, noun: str) -> str:
    return f"{number} {noun if number == 1 else noun + 's'}"


def answers_hidden(goal: str) -> Callable[[str, str], str]:
    """A function that hides, in a text about an earlier run, the values of that run's goal which
    ``goal`` does not name: one instruction's answer never becomes advice for another."""
    named = {value.text for value in goal_values(goal)}
    words = goal.split()
    swaps_of: dict[str, dict[str, str]] = {}  # an earlier goal's values to hide (a session's texts share one)

    def hide(earlier_goal: str, text: str) -> str:
        swaps = swaps_of.get(earlier_goal)
        if swaps is None:
            swaps = swaps_of[earlier_goal] = {} if earlier_goal.split() == words else {
                value.text: FROM_INSTRUCTION for value in goal_values(earlier_goal) if value.text not in named}
        return swapped(text, swaps) or text

    return hide
