"""A site's remembered tasks as skills: tools any agent may call by name and description, with typed parameters.

A skill is one goal template of one origin (``Create a ticket titled "{1}" assigned to {2}``), made from the
successful runs that recorded it (``derive``) and trusted by evidence (``standing``). Calling it fills its
template with the parameters and replays its newest recording with them, with every guarantee replay has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.errors import InvalidInput, NotFound
from ..core.models import Trajectory
from ..core.skill_records import Skill, SkillParameter
from ..core.urls import check_domain, domain_of, origin_of
from ..trajectories.binding import bind, value_kind
from ..trajectories.plans import ReplayPlan, changed_after, fit, read_gate, shape_of, target_history
from ..trajectories.slots import SLOT
from .derive import describe, named_template, names_for, parameters, skill_id
from .standing import standing

if TYPE_CHECKING:
    from ..memory import Memory

#: The runs of a site read for its skills' records (newest first).
MAX_RUNS_READ = 5000
_ORDER = {"verified": 0, "unverified": 1, "withdrawn": 2}
MAX_VALUE_CHARS = 1000

__all__ = ["Skills"]


class Skills:
    """The skills of this memory's sites: ``list`` a site's, ``get`` one, and ``plan`` a call of one."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def list(self, site: str) -> list[Skill]:  # noqa: A003
        """The skills of ``site`` (a URL or an origin: that origin's; a domain: all of its origins'), most
        trusted first: verified, then unverified, then withdrawn; within each, the most used first."""
        if not isinstance(site, str) or not site.strip():
            raise InvalidInput("site: expected a URL, an origin or a domain")
        origin = origin_of(site, field="site") if "://" in site else None
        found = self._of_domain(domain_of(origin) if origin else check_domain(site.strip()))
        chosen = [skill for skill in found if origin is None or skill.origin == origin]
        return sorted(chosen, key=lambda skill: (_ORDER[skill.status], -skill.record.successes,
                                                 -skill.record.recorded, skill.name))

    def get(self, name: str, site: str | None = None) -> Skill:
        """A skill by its id (``skill_…``), or by its name on ``site``; ``NotFound`` names the ones there are."""
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput("name: expected a skill's name or id")
        name = name.strip()
        if site is None:
            if not name.startswith("skill_"):
                raise InvalidInput(f"site: a skill named {name!r} is looked up on a site: give its URL or domain")
            domain = next((domain for domain, origin, template in self._memory.trajectories.templates()
                           if skill_id(origin, template) == name), None)
            found = [skill for skill in self._of_domain(domain) if skill.id == name] if domain else []
            if not found:
                raise NotFound(f"no skill has the id {name!r}")
            return found[0]
        skills = self.list(site)
        for skill in skills:
            if name in (skill.id, skill.name):
                return skill
        known = ", ".join(skill.name for skill in skills) or "none"
        raise NotFound(f"no skill named {name!r} on {site}; its skills: {known}")

    def goal(self, skill: Skill, values: Mapping[str, Any]) -> str:
        """The goal a call of ``skill`` with ``values`` (parameter name -> value) stands for: its template
        filled, each value checked against its parameter's kind; a secret is left for webmem to fill."""
        return self._call(skill, values)[2]

    def plan(self, name: str | Skill, values: Mapping[str, Any], *, site: str | None = None) -> ReplayPlan:
        """The replay plan of a call of skill ``name`` (or of the ``Skill`` itself, as listed) with ``values``: the
        plan memory finds for the goal the call stands for when it is this skill's with these values, else the
        skill's newest recording bound to the values themselves (a value may hold the template's own words, or the
        goal fit another task's template as well). ``NotFound`` when the skill cannot be replayed now, with the
        reason."""
        skill = name if isinstance(name, Skill) else self.get(name, site)
        if skill.status == "withdrawn":
            raise NotFound(f"skill {skill.name} is withdrawn: {skill.status_reason}")
        recording, filled, goal = self._call(skill, values)
        mem = self._memory
        found = mem.trajectories.search_replay(goal, skill.origin).plan
        if found is not None and found.shape == shape_of(recording) and found.slots == filled:
            return found
        own = fit(recording, goal, secrets=mem.secrets, split=filled)
        if isinstance(own, str):
            raise NotFound(f"skill {skill.name} cannot be replayed with these values: {own}")
        peers = [trajectory for trajectory in mem.trajectories.templated(domain=skill.domain)
                 if trajectory.origin == skill.origin and trajectory.goal_template == recording.goal_template
                 and trajectory.id != recording.id]
        with mem.store.read() as conn:
            gate = read_gate(conn, mem.namespace, skill.origin, own.shape)
        return replace(own, stop_step=gate.stop_step, history=target_history(own, peers))

    def _call(self, skill: Skill, values: Mapping[str, Any]) -> tuple[Trajectory, dict[int, str], str]:
        """The recording a call of ``skill`` replays, the values of its slots and the goal it stands for."""
        if not isinstance(values, Mapping):
            raise InvalidInput("parameters: expected an object of parameter name -> value")
        by_name = {parameter.name: parameter for parameter in skill.parameters}
        unknown = sorted(set(values) - set(by_name))
        if unknown:
            raise InvalidInput(f"parameters: {', '.join(map(str, unknown))} not among {skill.name}'s: "
                               f"{', '.join(p.name for p in skill.parameters if p.kind != 'secret') or 'none'}")
        recording = self._recording(skill)
        recorded = bind(recording.goal_template or "", recording.goal) or {}
        filled: dict[int, str] = {}
        for parameter in skill.parameters:
            if parameter.kind == "secret":
                if parameter.name in values:
                    raise InvalidInput(f"{parameter.name}: a registered secret: webmem types it, do not give it")
                filled[parameter.slot] = recorded.get(parameter.slot, "")
            elif parameter.name not in values:
                raise InvalidInput(f"{parameter.name}: required, but not given ({parameter.description})")
            else:
                filled[parameter.slot] = _checked(parameter, values[parameter.name])
        template = recording.goal_template or ""
        return recording, filled, SLOT.sub(lambda match: filled.get(int(match.group(1)), match.group(0)), template)

    def _recording(self, skill: Skill) -> Trajectory:
        return self._memory.trajectories.get(skill.trajectory_id)

    def _of_domain(self, domain: str) -> list[Skill]:
        mem = self._memory
        recorded = mem.trajectories.templated(domain=domain)
        if not recorded:
            return []
        by_task: dict[tuple[str, str], list[Trajectory]] = {}
        for trajectory in recorded:
            by_task.setdefault((trajectory.origin, trajectory.goal_template or ""), []).append(trajectory)
        runs = mem.runs.list(domain=domain, limit=MAX_RUNS_READ)
        with mem.store.read() as conn:
            pages = mem.site_changes.pages(conn, domain)
            gates = {key: read_gate(conn, mem.namespace, key[0], shape_of(recordings[0]))
                     for key, recordings in by_task.items()}
            held = mem.outcomes.held_back(conn, "reference", [t.id for t in recorded], demoted_too=True)
        skills = []
        for origin in sorted({origin for origin, _ in by_task}):
            tasks = [key for key in by_task if key[0] == origin]
            names = names_for([template for _, template in tasks])
            for key in tasks:
                recordings = by_task[key]
                newest = recordings[0]
                named = parameters(newest, recordings[1:])
                found = standing(recordings, runs, gates[key], changed_after(newest, pages),
                                 demoted=all(trajectory.id in held for trajectory in recordings))
                skills.append(Skill(
                    id=skill_id(origin, key[1]), name=names[key[1]], origin=origin, domain=domain,
                    description=describe(key[1], named, newest.goal), template=named_template(key[1], named),
                    parameters=named, record=found.record, status=found.status, status_reason=found.reason,
                    trajectory_id=newest.id,
                ))
        return skills


def _checked(parameter: SkillParameter, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InvalidInput(f"{parameter.name}: expected {_expected(parameter)}, got {type(value).__name__}")
    text = " ".join(str(value).split())
    if not text or len(text) > MAX_VALUE_CHARS:
        raise InvalidInput(f"{parameter.name}: expected {_expected(parameter)} of 1 to {MAX_VALUE_CHARS} characters")
    if parameter.kind == "choice":
        chosen = next((option for option in parameter.options if option.casefold() == text.casefold()), None)
        if chosen is None:
            raise InvalidInput(f"{parameter.name}: {text!r} is not one of the options: {', '.join(parameter.options)}")
        return chosen
    if parameter.kind in ("number", "date", "time") and value_kind(text) != parameter.kind:
        raise InvalidInput(f"{parameter.name}: expected {_expected(parameter)}, got {text!r}")
    if '"' in text or "“" in text or "”" in text:
        raise InvalidInput(f"{parameter.name}: a value may not hold double quotes")
    return text


def _expected(parameter: SkillParameter) -> str:
    return {"number": "a number", "date": "a date", "time": "a time", "choice": "one of the options"}.get(
        parameter.kind, "a text")
