"""``webmem forget``: delete a lesson, trajectory, fact, selector, session, or a run with what it produced."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from ..core.vocabulary import FACT_TYPES
from .output import emit_json, json_option

if TYPE_CHECKING:
    from ..forgetting import ForgetReport, Forgetting
    from . import Settings

SHOWN_IDS = 5
#: How each kind of record is named in a sentence: one, several.
NOUNS = {
    "runs": ("run", "runs"), "steps": ("step", "steps"), "trajectories": ("trajectory", "trajectories"),
    "lessons": ("lesson", "lessons"), "lesson_links": ("link of a lesson to the run", "links of lessons to the run"),
    "sessions": ("session", "sessions"), "facts": ("fact", "facts"), "selectors": ("selector", "selectors"),
    "episode_entries": ("episode step", "episode steps"),
    "working_entries": ("working memory entry", "working memory entries"),
    "working_state": ("working memory state", "working memory states"),
}
KEPT = {
    "child_runs": ("run resumed or forked from it (its parent is gone)",
                   "runs resumed or forked from it (their parent is gone)"),
    "lessons": ("lesson also learned from other runs", "lessons also learned from other runs"),
}

dry_run_option = click.option("--dry-run", is_flag=True, help="Show what would be deleted, delete nothing.")


@click.group("forget")
def forget() -> None:
    """Delete a wrong lesson, a poisoned trajectory, a stale fact, a selector, a session or a run."""


@forget.command("lesson")
@click.argument("lesson_id")
@dry_run_option
@json_option
@click.pass_obj
def forget_lesson(settings: Settings, lesson_id: str, dry_run: bool, json_: bool) -> None:
    """Delete a lesson (its id is in `webmem lessons --json`)."""
    _forget(settings, lambda forgetting: forgetting.lesson(lesson_id, dry_run=dry_run), json_)


@forget.command("trajectory")
@click.argument("trajectory_id")
@dry_run_option
@json_option
@click.pass_obj
def forget_trajectory(settings: Settings, trajectory_id: str, dry_run: bool, json_: bool) -> None:
    """Delete a trajectory: no run is offered it again as a reference or a replay."""
    _forget(settings, lambda forgetting: forgetting.trajectory(trajectory_id, dry_run=dry_run), json_)


@forget.command("fact")
@click.argument("domain")
@click.argument("key")
@click.option("--type", "fact_type", type=click.Choice(FACT_TYPES), help="Only the fact of this type.")
@click.option("--value", help="Only the fact with this value (default: every value of the key).")
@dry_run_option
@json_option
@click.pass_obj
def forget_fact(settings: Settings, domain: str, key: str, fact_type: str | None, value: str | None,
                dry_run: bool, json_: bool) -> None:
    """Delete what is known about a domain under KEY (every value, unless --type or --value say which)."""
    _forget(settings, lambda forgetting: forgetting.fact(domain, key, type=fact_type, value=value, dry_run=dry_run),
            json_)


@forget.command("selector")
@click.argument("domain")
@click.argument("element")
@dry_run_option
@json_option
@click.pass_obj
def forget_selector(settings: Settings, domain: str, element: str, dry_run: bool, json_: bool) -> None:
    """Delete the selectors cached for ELEMENT (as `webmem selectors DOMAIN` shows it) on a domain."""
    _forget(settings, lambda forgetting: forgetting.selector(domain, element, dry_run=dry_run), json_)


@forget.command("session")
@click.argument("session_id")
@click.option("--domain", help="Only on this domain (default: every domain the session was recorded on).")
@dry_run_option
@json_option
@click.pass_obj
def forget_session(settings: Settings, session_id: str, domain: str | None, dry_run: bool, json_: bool) -> None:
    """Delete a session from the site histories (its id is in `webmem sessions DOMAIN`)."""
    _forget(settings, lambda forgetting: forgetting.session(session_id, domain=domain, dry_run=dry_run), json_)


@forget.command("run")
@click.argument("run_id")
@dry_run_option
@json_option
@click.pass_obj
def forget_run(settings: Settings, run_id: str, dry_run: bool, json_: bool) -> None:
    """Delete a run with its steps, trajectory, session, episode steps, working memory and the lessons
    learned from it alone; runs resumed or forked from it stay."""
    _forget(settings, lambda forgetting: forgetting.run(run_id, dry_run=dry_run), json_)


def _forget(settings: Settings, forget_one: Callable[[Forgetting], ForgetReport], json_: bool) -> None:
    with settings.memory() as mem:
        report = forget_one(mem.forget)
    if json_:
        emit_json(report.to_dict())
        return
    for line in describe(report):
        click.echo(line)


def describe(report: ForgetReport) -> list[str]:
    """One line per kind deleted (or that would be), then what stays and why."""
    verb = "would delete" if report.dry_run else "deleted"
    lines = [f"{verb} {_counted(count, NOUNS.get(kind, (kind, kind)))}: {_listed(report.ids[kind])}"
             for kind, count in report.counts.items()]
    lines += [f"kept {_counted(len(ids), KEPT.get(kind, (kind, kind)))}: {_listed(ids)}"
              for kind, ids in report.kept.items()]
    lines += [f"note: {note}" for note in report.notes]
    if report.dry_run:
        lines.append(f"dry run: nothing was deleted in namespace {report.namespace}")
    return lines


def _counted(count: int, noun: tuple[str, str]) -> str:
    return f"{count} {noun[0] if count == 1 else noun[1]}"


def _listed(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:SHOWN_IDS])
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


COMMANDS = [forget]
