"""``webmem export`` and ``webmem import``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.vocabulary import TRANSFER_FORMATS as FORMATS
from ..core.vocabulary import TRANSFER_KINDS as KINDS
from .output import emit_json, progress_bar, refuse_to_overwrite, table

if TYPE_CHECKING:
    from ..interop.agent_memory import TransferReport
    from . import Settings

AGENT_MEMORY = "agent-memory"


@click.command("export")
@click.option("--kind", "kinds", multiple=True, type=click.Choice([*KINDS, "all"]), default=["all"],
              show_default=True, help="What to export (repeat for several).")
@click.option("--format", "output", type=click.Choice([*FORMATS, AGENT_MEMORY]), default="json", show_default=True,
              help=f"json, jsonl, csv (one kind), prompt (lessons or episodes), or {AGENT_MEMORY} (a directory).")
@click.option("-o", "--output", "target", type=click.Path(path_type=Path), help="Write here instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite the -o file when it exists.")
@click.option("--raw-csv", is_flag=True,
              help="CSV: write cells as they are (by default a cell that would start a spreadsheet formula, "
                   "=, +, -, @, tab or carriage return first, gets a leading ').")
@click.pass_obj
def export(settings: Settings, kinds: tuple[str, ...], output: str, target: Path | None, force: bool,
           raw_csv: bool) -> None:
    """Export the namespace's memory."""
    if output != AGENT_MEMORY:  # a directory to write into, not a file to replace
        refuse_to_overwrite(target, force)
    from ..interop.agent_memory import export_agent_memory
    from ..interop.transfer import collect, render

    chosen = list(KINDS) if "all" in kinds else list(dict.fromkeys(kinds))
    with settings.memory() as mem:
        if output == AGENT_MEMORY:
            if target is None:
                raise click.UsageError(f"--format {AGENT_MEMORY} writes a directory: give it with -o DIR")
            with progress_bar("Exporting") as progress:
                report = export_agent_memory(mem, target, progress=progress)
            click.echo(f"Wrote {_summary(report.added)} to {target}", err=True)
            for note in report.notes:
                click.echo(f"note: {note}", err=True)
            for problem in report.problems:
                click.echo(f"skipped: {problem}", err=True)
            return
        with progress_bar("Collecting"):
            text = render(mem, collect(mem, chosen), output, raw_csv=raw_csv)
    if target is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        target.write_text(text, encoding="utf-8")
        click.echo(f"Wrote {len(text.encode('utf-8'))} bytes to {target}", err=True)


@click.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Show what would change, change nothing.")
@click.option("--json", "json_", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def import_command(settings: Settings, path: Path, dry_run: bool, json_: bool) -> None:
    """Import an .agent-memory directory, a lesson memory.json, or a webmem export (detected)."""
    from ..interop.transfer import detect, import_path

    detect(path)  # an unusable path is refused before any memory is created
    with settings.memory(create=True) as mem, progress_bar("Importing", enabled=not json_) as progress:
        report = import_path(mem, path, dry_run=dry_run, progress=progress)
    if json_:
        emit_json(report.to_dict())
        return
    _show_report(report)


def _show_report(report: TransferReport) -> None:
    kinds = sorted(set(report.added) | set(report.merged) | set(report.skipped))
    verb = "would import" if report.dry_run else "imported"
    if kinds:
        table(("kind", "added", "merged", "skipped (already there)"),
              ((kind, report.added[kind], report.merged[kind], report.skipped[kind]) for kind in kinds),
              title=f"{'Dry run: nothing changed; ' if report.dry_run else ''}{verb}")
    else:
        click.echo(f"Nothing {verb}.")
    for note in report.notes:
        click.echo(f"note: {note}")
    for problem in report.problems:
        click.echo(f"skipped: {problem}")


def _summary(counts: dict[str, int]) -> str:
    return ", ".join(f"{count} {kind}" for kind, count in counts.items()) or "nothing"


COMMANDS = [export, import_command]
