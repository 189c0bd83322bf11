"""``webmem runs``: list, show, resume, fork and trace the lineage of runs."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from .output import COUNT, console, emit_json, json_option, nothing, short, table, when

if TYPE_CHECKING:
    from ..core.models import ReplayReport, RunManifest, Step
    from . import Settings


@click.group("runs", invoke_without_command=True, subcommand_metavar="[COMMAND] [ARGS]...")
@click.option("--domain", help="Only runs on this domain (host[:port]).")
@click.option("--session-id", help="Only runs of this session.")
@click.option("--status", type=click.Choice(["running", "completed", "failed", "abandoned"]),
              help="Only runs in this state (abandoned: running, but its process ended or it was not updated for "
                   "30 minutes).")
@click.option("--limit", type=COUNT, default=20, show_default=True, help="At most this many runs.")
@json_option
@click.pass_context
def runs_group(
    ctx: click.Context, domain: str | None, session_id: str | None, status: str | None, limit: int, json_: bool
) -> None:
    """List runs, newest first."""
    if ctx.invoked_subcommand is not None:
        return
    settings: Settings = ctx.obj
    with settings.memory() as mem:
        manifests = mem.runs.list(domain=domain, session_id=session_id, status=status, limit=limit)
        statuses = mem.runs.statuses(manifests)
    if json_:
        emit_json([manifest.model_dump(mode="json") for manifest in manifests])
    elif not manifests:
        nothing("runs")
    else:
        table(
            ("run id", "status", "domain", "goal", "turns", "started (UTC)", "session"),
            ((m.run_id, statuses[m.run_id], m.domain, short(m.goal, 60), m.turn_count, when(m.started_at), m.session_id)
             for m in manifests),
            no_wrap=("run id", "status", "domain", "started (UTC)", "session"),
        )


@runs_group.command("show")
@click.argument("run_id")
@json_option
@click.pass_obj
def runs_show(settings: Settings, run_id: str, json_: bool) -> None:
    """Show one run's manifest and steps."""
    with settings.memory() as mem:
        manifest = mem.runs.get(run_id)
        steps = mem.runs.steps(run_id)
        status = mem.runs.statuses([manifest])[run_id]
    if json_:
        emit_json({**manifest.model_dump(mode="json"), "steps": [step.model_dump(mode="json") for step in steps]})
        return
    details = Table.grid(padding=(0, 2))
    details.add_column(style="bold")
    details.add_column()
    for key, value in {**manifest.model_dump(exclude={"replay"}), "status": status}.items():
        if value not in (None, [], ""):
            details.add_row(key, Text(when(value) if isinstance(value, datetime) else str(value)))
    if manifest.replay is not None:
        details.add_row("replay", Text(describe_replay(manifest.replay)))
    console().print(details)
    if manifest.replay is not None and manifest.replay.steps:
        table(
            ("step", "action", "target", "status", "why"),
            ((s.step, s.action, s.target, s.status, s.reason) for s in manifest.replay.steps),
            title="Replay",
        )
    if steps:
        errors = any(step.error for step in steps)  # the column only when a step failed with an error
        table(
            ("#", "action", "target", "selector", "value", "ok", "verified", *(("error",) if errors else ()), "url"),
            ((n, s.action, _target(s), s.selector, short(s.value, 30), "yes" if s.ok else "no",
              {True: "yes", False: "no", None: ""}[s.verified], *((short(s.error, 80),) if errors else ()), s.url)
             for n, s in enumerate(steps, start=1)),
            title="Steps",
        )


@runs_group.command("close")
@click.argument("run_id")
@click.option("--outcome", default="Closed: the run was abandoned", show_default=True, help="Why it ended.")
@json_option
@click.pass_obj
def runs_close(settings: Settings, run_id: str, outcome: str, json_: bool) -> None:
    """Finish a run that will not finish itself (its process died) as failed; its steps are kept."""
    with settings.memory() as mem:
        run = mem.get_run(run_id)
        already = run.finished
        manifest = run.manifest if already else run.finish(success=False, outcome=outcome)
    if json_:
        emit_json({"run": manifest.model_dump(mode="json"), "closed": not already})
    elif already:
        click.echo(f"{run_id} was already {manifest.status}; nothing changed")
    else:
        click.echo(f"{run_id} closed as failed: {manifest.summary}")


@runs_group.command("resume")
@click.argument("run_id")
@click.option("--goal", help="A new goal (default: the run's own).")
@json_option
@click.pass_obj
def runs_resume(settings: Settings, run_id: str, goal: str | None, json_: bool) -> None:
    """Print the scenario that continues a run: same session, starting where it ended."""
    with settings.memory() as mem:
        scenario = mem.runs.build_resume_scenario(run_id, goal)
    _show_scenario(scenario.model_dump(mode="json"), json_)


@runs_group.command("fork")
@click.argument("run_id")
@click.option("--goal", required=True, help="The goal of the new branch.")
@json_option
@click.pass_obj
def runs_fork(settings: Settings, run_id: str, goal: str, json_: bool) -> None:
    """Print the scenario that branches off a run into a new session."""
    with settings.memory() as mem:
        scenario = mem.runs.build_fork_scenario(run_id, goal)
    _show_scenario(scenario.model_dump(mode="json"), json_)


@runs_group.command("tree")
@click.argument("run_id")
@json_option
@click.pass_obj
def runs_tree(settings: Settings, run_id: str, json_: bool) -> None:
    """Show a run's lineage: its ancestors and every run resumed or forked from it."""
    with settings.memory() as mem:
        ancestors = mem.runs.lineage(run_id)
        descendants = _descendants(mem, run_id)
        statuses = mem.runs.statuses([*ancestors, *_flattened(descendants)])
    if json_:
        emit_json({"ancestors": [m.model_dump(mode="json") for m in ancestors[:-1]],
                   "run": ancestors[-1].model_dump(mode="json"), "descendants": _lineage_json(descendants)})
        return
    root = Tree(_label(ancestors[0], statuses))
    node = root
    for manifest in ancestors[1:]:
        node = node.add(_label(manifest, statuses))
    _grow(node, descendants, statuses)
    console().print(root)


Lineage = list[tuple["RunManifest", "Lineage"]]


def _descendants(mem: Any, run_id: str) -> Lineage:
    return [(child, _descendants(mem, child.run_id)) for child in mem.runs.children(run_id)]


def _lineage_json(nodes: Lineage) -> list[dict[str, Any]]:
    return [{"run": manifest.model_dump(mode="json"), "children": _lineage_json(children)}
            for manifest, children in nodes]


def _flattened(nodes: Lineage) -> list[RunManifest]:
    return [manifest for node, children in nodes for manifest in (node, *_flattened(children))]


def _grow(node: Tree, nodes: Lineage, statuses: dict[str, str]) -> None:
    for manifest, children in nodes:
        _grow(node.add(_label(manifest, statuses)), children, statuses)


def _label(manifest: RunManifest, statuses: dict[str, str]) -> Text:
    session = f" [session {manifest.session_id}]" if manifest.session_id else ""
    return Text(f"{manifest.run_id} ({statuses[manifest.run_id]}) {short(manifest.goal, 70)}{session}")  # not markup


def _show_scenario(scenario: dict[str, Any], json_: bool) -> None:
    if json_:
        emit_json(scenario)
        return
    for key, value in scenario.items():
        click.echo(f"{key}: {value if value is not None else ''}")


COMMANDS = [runs_group]


def describe_replay(report: ReplayReport) -> str:
    """``handed_over at step 2 of trajectory traj_…: <reason>`` (one line)."""
    where = f" at step {report.step}" if report.step is not None else ""
    why = f": {report.reason}" if report.reason else ""
    return f"{report.outcome}{where} of trajectory {report.trajectory_id}{why}"


def _target(step: Step) -> str | None:
    if step.target is not None and step.target_index is not None:
        return f"{step.target} ({step.target_index} of {step.target_count})"
    return step.target
