"""A skill's face, read from the recordings of one goal template: its name, its parameters and its description.

A parameter is named as a person names the field its value went into (the field's label, else its accessible
name), else after the template's word before the slot; its kind comes from the step that used it (a select's
options make a choice) and from the values recorded (a number, a date, a time), and a registered secret is
filled by webmem, never asked.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from ..core.models import Step, Trajectory
from ..core.redaction import PLACEHOLDER
from ..core.skill_records import SkillParameter
from ..core.terms import STOP_WORDS, words
from ..trajectories.binding import bind, value_kind
from ..trajectories.slots import SLOT, SLOT_REFERENCE

#: How many of the template's first words of meaning make a skill's name (more only to tell two apart).
NAME_WORDS = 2
_NAMED_TARGET = re.compile(r'^[\w-]+ "(.+)"$')
_IDENTIFIER = re.compile(r"[^a-z0-9]+")


def skill_id(origin: str, template: str) -> str:
    """A skill's id: the same for a template on an origin in every process and version."""
    return "skill_" + hashlib.sha256(f"{origin}\n{template}".encode()).hexdigest()[:24]


def name_words(template: str) -> list[str]:
    """The words of meaning of a template's fixed text, in order: the candidates for its skill's name."""
    fixed = SLOT.sub(" ", template)
    return [word for word in (_identifier(word) for word in words(fixed) if word not in STOP_WORDS) if word]


def names_for(templates: Sequence[str]) -> dict[str, str]:
    """Each template's skill name, unique among ``templates`` (the skills of one origin): its first
    ``NAME_WORDS`` words of meaning, more where two templates would share a name, a number when nothing else
    tells them apart."""
    named: dict[str, str] = {}
    taken: set[str] = set()
    for template in templates:
        candidates = name_words(template) or ["task"]
        count = NAME_WORDS
        name = "_".join(candidates[:count])
        while count < len(candidates) and (name in taken or _shared_prefix(name, templates, template)):
            count += 1
            name = "_".join(candidates[:count])
        base, number = name, 2
        while name in taken:
            name, number = f"{base}_{number}", number + 1
        named[template] = name
        taken.add(name)
    return named


def _shared_prefix(name: str, templates: Sequence[str], own: str) -> bool:
    return any("_".join(name_words(other)[:name.count("_") + 1]) == name for other in templates if other != own)


def parameters(trajectory: Trajectory, others: Sequence[Trajectory] = ()) -> list[SkillParameter]:
    """The parameters of the template ``trajectory`` was recorded with, one per slot in order, with the values
    its goal gave as examples. A value chosen in a select is a choice of the options seen, unless ``others``
    (other recordings of the template) saw other options there: then the page's options change, and it is a text."""
    template = trajectory.goal_template or ""
    recorded = bind(template, trajectory.goal) or {}
    steps = trajectory.replay_steps or []
    found: list[SkillParameter] = []
    used: set[str] = set()
    for slot in _slots_in_order(template):
        step = _step_using(steps, slot)
        example = recorded.get(slot)
        name = _unique(_parameter_name(template, slot, step), used)
        options = _options(step)
        if example is not None and PLACEHOLDER.fullmatch(example):
            kind, example = "secret", None
        elif options and step is not None and step.action == "select" and all(
                set(_options(_step_using(other.replay_steps or [], slot))) in (set(), set(options)) for other in others):
            kind = "choice"
        else:
            kind = value_kind(example) if example else "text"
        found.append(SkillParameter(name=name, kind=kind, slot=slot, options=options if kind == "choice" else [],
                                    example=example,
                                    description=_described(step, kind)))
    return found


def named_template(template: str, named: Sequence[SkillParameter]) -> str:
    """The template with each slot named after its parameter: ``Create a ticket titled "{summary}"``."""
    names = {parameter.slot: parameter.name for parameter in named}
    return SLOT.sub(lambda match: "{" + names.get(int(match.group(1)), match.group(1)) + "}", template)


def describe(template: str, named: Sequence[SkillParameter], example_goal: str) -> str:
    """What the skill does, in words: its template with named slots, and a goal it was recorded with."""
    asked = [parameter for parameter in named if parameter.kind != "secret"]
    lines = [f"Does: {named_template(template, named)}", f"Example: {example_goal}"]
    if asked:
        lines.append("Parameters: " + "; ".join(
            f"{parameter.name} ({parameter.kind}" + (f": one of {', '.join(parameter.options)}" if parameter.options
                                                     else "") + ")" for parameter in asked))
    return "\n".join(lines)


def _slots_in_order(template: str) -> list[int]:
    seen: list[int] = []
    for match in SLOT.finditer(template):
        number = int(match.group(1))
        if number not in seen:
            seen.append(number)
    return seen


def _options(step: Step | None) -> list[str]:
    return list(step.element.options) if step is not None and step.element and step.element.options else []


def _step_using(steps: Sequence[Step], slot: int) -> Step | None:
    """The first step whose typed or selected value, or whose target, is the slot's value."""
    for step in steps:
        for text in (step.value, step.target, step.url):
            if text and any(int(match.group(1)) == slot for match in SLOT_REFERENCE.finditer(text)):
                return step
    return None


def _parameter_name(template: str, slot: int, step: Step | None) -> str:
    if step is not None and step.value and SLOT_REFERENCE.search(step.value):
        label = step.element.label if step.element and step.element.label else ""
        named = _NAMED_TARGET.match(step.target or "")
        for text in (label, named.group(1) if named else ""):
            if text and not SLOT_REFERENCE.search(text) and (name := "_".join(name_words(text)[:3])):
                return name
    before = template[:template.find("{" + str(slot) + "}")]
    preceding = name_words(before)
    return preceding[-1] if preceding else f"value_{slot}"


def _unique(name: str, used: set[str]) -> str:
    chosen, number = name, 2
    while chosen in used:
        chosen, number = f"{name}_{number}", number + 1
    used.add(chosen)
    return chosen


def _described(step: Step | None, kind: str) -> str:
    if kind == "secret":
        return "a registered secret: webmem types it, it is never asked for"
    if step is None:
        return "a value of the goal"
    verb = {"select": "chosen in", "fill": "typed into", "type": "typed into"}.get(step.action, "used by")
    named = _NAMED_TARGET.match(step.target or "")
    label = step.element.label if step.element and step.element.label else ""
    if named is None or not named.group(1):  # a field with no accessible name is known by its label
        role = (step.target or "").split(" ", 1)[0] or "field"
        return f'{verb} the {role} labelled "{label}"' if label else f"{verb} the step {step.action}"
    return f"{verb} {step.target}"


def _identifier(word: str) -> str:
    return _IDENTIFIER.sub("_", word.lower()).strip("_")
