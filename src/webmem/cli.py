"""The ``webmem`` command line: look inside an agent's memory.

Every command is a thin layer over the Python API. Known errors become one line on stderr and
exit code 1; usage errors exit with 2. With ``--json`` only the data is written to stdout.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from . import __version__
from .errors import WebmemError
from .memory import DEFAULT_DIR, ENV_DIR, Memory, resolve_directory
from .store import DB_FILE

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

class Settings:
    def __init__(self, memory_dir: str | None, namespace: str) -> None:
        self.memory_dir = memory_dir
        self.namespace = namespace

    @contextmanager
    def memory(self) -> Iterator[Memory]:
        """Open an existing memory; a command that only reads never creates one."""
        directory = resolve_directory(self.memory_dir)
        if not (directory / DB_FILE).is_file():
            raise click.ClickException(
                f"no webmem memory at {directory} (give --memory-dir or set {ENV_DIR})"
            )
        with Memory.open(directory, namespace=self.namespace) as mem:
            yield mem


PIPED_WIDTH = 200  # when stdout is not a terminal, tables are not squeezed to 80 columns


def _stdout() -> Console:
    console = Console(soft_wrap=True)
    return console if console.is_terminal else Console(soft_wrap=True, width=PIPED_WIDTH)


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else ""


class WebmemGroup(click.Group):
    """A command group that reports webmem errors as one line and exit code 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except WebmemError as exc:
            raise click.ClickException(str(exc)) from exc


json_option = click.option("--json", "json_", is_flag=True, help="Print JSON instead of a table.")


@click.group(cls=WebmemGroup, context_settings=CONTEXT_SETTINGS)
@click.option(
    "--memory-dir",
    type=click.Path(file_okay=False, path_type=str),
    envvar=ENV_DIR,
    help=f"Memory directory (default: ${ENV_DIR}, else ./{DEFAULT_DIR}).",
)
@click.option("--namespace", default="default", show_default=True, help="Namespace to read and write.")
@click.version_option(__version__, "--version", prog_name="webmem")
@click.pass_context
def cli(ctx: click.Context, memory_dir: str | None, namespace: str) -> None:
    """Inspect the persistent memory of a browser agent."""
    ctx.obj = Settings(memory_dir, namespace)


@cli.group("runs", invoke_without_command=True)
@click.option("--domain", help="Only runs on this domain (host[:port]).")
@click.option("--session-id", help="Only runs of this session.")
@click.option("--status", type=click.Choice(["running", "completed", "failed"]), help="Only runs in this state.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="At most this many runs.")
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
        manifests = mem.runs.list_runs(domain=domain, session_id=session_id, status=status, limit=limit)
    if json_:
        _emit_json([manifest.model_dump(mode="json") for manifest in manifests])
        return
    if not manifests:
        click.echo("No runs.")
        return
    table = Table()
    for title in ("run id", "status", "domain"):
        table.add_column(title, no_wrap=True)
    table.add_column("goal")
    table.add_column("turns", justify="right")
    table.add_column("started (UTC)", no_wrap=True)
    table.add_column("session", no_wrap=True)
    for manifest in manifests:
        table.add_row(
            manifest.run_id, manifest.status, manifest.domain, _short(manifest.goal, 60),
            str(manifest.turn_count), _when(manifest.started_at), manifest.session_id or "",
        )
    _stdout().print(table)


@runs_group.command("show")
@click.argument("run_id")
@json_option
@click.pass_obj
def runs_show(settings: Settings, run_id: str, json_: bool) -> None:
    """Show one run's manifest and steps."""
    with settings.memory() as mem:
        manifest = mem.runs.get_run(run_id)
        steps = mem.runs.steps(run_id)
    if json_:
        _emit_json({**manifest.model_dump(mode="json"), "steps": [step.model_dump(mode="json") for step in steps]})
        return
    console = _stdout()
    details = Table.grid(padding=(0, 2))
    details.add_column(style="bold")
    details.add_column()
    for key, value in manifest.model_dump().items():
        if value not in (None, [], ""):
            details.add_row(key, _when(value) if isinstance(value, datetime) else str(value))
    console.print(details)
    if steps:
        table = Table("#", "action", "target", "selector", "value", "ok", "verified", "url", title="Steps")
        for number, step in enumerate(steps, start=1):
            table.add_row(
                str(number), step.action, step.target or "", step.selector or "", _short(step.value or "", 30),
                "yes" if step.ok else "no", {True: "yes", False: "no", None: ""}[step.verified], step.url or "",
            )
        console.print(table)


@cli.command("demo")
@click.option(
    "--memory-dir", "demo_dir", type=click.Path(file_okay=False, path_type=Path),
    help="Where to keep the demo's memory (default: a fresh temporary directory).",
)
@click.option("--headed", is_flag=True, help="Show the browser window.")
def demo(demo_dir: Path | None, headed: bool) -> None:
    """Record a run in real Chromium, then show the context a similar second run gets."""
    from .demo.walkthrough import FIRST_GOAL, run_demo

    directory = demo_dir or Path(tempfile.mkdtemp(prefix="webmem-demo-"))
    console = _stdout()
    console.print(f"Serving the demo shop on 127.0.0.1 and driving headless Chromium (goal: {FIRST_GOAL!r})...")
    report = run_demo(directory, headless=not headed)
    console.print(f"\n[bold]Run 1[/bold] {report.first_run.run_id}: {report.first_run.summary}")
    for number, step in enumerate(report.first_steps, start=1):
        verified = " [verified]" if step.verified else ""
        console.print(f"  {number}. {step.action} {step.target}{verified}", markup=False)
    console.print(f"\n[bold]Run 2[/bold] {report.second_run.run_id}: goal {report.second_run.goal!r}")
    console.print("Context memory gave it before its first step:\n")
    console.print(str(report.second_context), markup=False, highlight=False)
    console.print()
    table = Table("part", "priority", "status", "tokens", title=f"Context report (budget {report.second_context.budget_tokens} tokens)")
    for part in report.second_context.report:
        table.add_row(part.name, str(part.priority), part.status, str(part.tokens))
    console.print(table)
    console.print(f"\nMemory lives in {report.memory_dir} ({DB_FILE}, events.jsonl); demo took {report.seconds:.1f}s.")
    console.print(f"Look inside: webmem --memory-dir {report.memory_dir} runs", markup=False)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main() -> None:
    """Entry point of the ``webmem`` command."""
    cli(prog_name="webmem")
