"""``webmem skills``: a site's remembered tasks as skills, with their parameters and their record."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .output import emit_json, json_option, nothing, short, table, when

if TYPE_CHECKING:
    from ..core.skill_records import Skill, SkillParameter
    from . import Settings


@click.command("skills")
@click.option("--site", help="Only this site's skills (its URL or domain, host[:port]); default: every site's.")
@json_option
@click.pass_obj
def skills(settings: Settings, site: str | None, json_: bool) -> None:
    """List the tasks memory can replay as skills: name, parameters, status (verified by a replay of a new
    instance, unverified, or withdrawn) and record (recorded, replays, successes, hand-overs)."""
    with settings.memory() as mem:
        sites = [site] if site is not None else sorted({domain for domain, _, _ in mem.trajectories.templates()})
        found = [skill for name in sites for skill in mem.skills.list(name)]
    if json_:
        emit_json([skill.model_dump(mode="json") for skill in found])
    elif not found:
        nothing("skills" + (f" on {site}" if site else ""))
    else:
        table(
            ("skill", "site", "status", "parameters", "recorded", "replays", "ok", "handed over", "last verified (UTC)",
             "does"),
            ((skill.name, skill.origin, skill.status, _parameters(skill), skill.record.recorded, skill.record.replays,
              skill.record.successes, skill.record.handovers, when(skill.record.last_verified),
              short(skill.template, 70)) for skill in found),
            no_wrap=("skill", "site", "status"),
        )


def _parameters(skill: Skill) -> str:
    return ", ".join(_parameter(parameter) for parameter in skill.parameters) or "none"


def _parameter(parameter: SkillParameter) -> str:
    if parameter.kind == "choice":
        return f"{parameter.name} ({'|'.join(parameter.options[:6])}{'|…' if len(parameter.options) > 6 else ''})"
    return f"{parameter.name} ({parameter.kind})"


COMMANDS = [skills]
