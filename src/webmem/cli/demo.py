"""``webmem demo``: a run recorded in real Chromium, and the context a similar second run gets."""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

import click

from ..core.locations import DB_FILE
from .output import console, table, webmem_command


@click.command("demo")
@click.option(
    "--memory-dir", "demo_dir", type=click.Path(file_okay=False, path_type=Path),
    help="Where to keep the demo's memory (default: a fresh temporary directory).",
)
@click.option("--headed", is_flag=True, help="Show the browser window.")
def demo(demo_dir: Path | None, headed: bool) -> None:
    """Record a run in real Chromium, then show the context a similar second run gets."""
    from ..demo.walkthrough import FIRST_GOAL, PLAYWRIGHT_HINT, run_demo

    if importlib.util.find_spec("playwright") is None:  # say so before announcing anything
        raise click.ClickException(PLAYWRIGHT_HINT)
    directory = demo_dir or Path(tempfile.mkdtemp(prefix="webmem-demo-"))
    screen = console()
    screen.print(f"Serving the demo shop on 127.0.0.1 and driving headless Chromium (goal: {FIRST_GOAL!r})...")
    report = run_demo(directory, headless=not headed)
    screen.print(f"\n[bold]Run 1[/bold] {report.first_run.run_id}: {report.first_run.summary}")
    for number, step in enumerate(report.first_steps, start=1):
        verified = " [verified]" if step.verified else ""
        screen.print(f"  {number}. {step.action} {step.target}{verified}", markup=False)
    screen.print(f"\n[bold]Run 2[/bold] {report.second_run.run_id}: goal {report.second_run.goal!r}")
    screen.print("Context memory gave it before its first step:\n")
    screen.print(str(report.second_context), markup=False, highlight=False)
    screen.print()
    table(("part", "priority", "status", "tokens"),
          ((p.name, p.priority, p.status, p.tokens) for p in report.second_context.report),
          title=f"Context report (budget {report.second_context.budget_tokens} tokens)")
    screen.print(f"\nMemory lives in {report.memory_dir} ({DB_FILE}, events.jsonl); demo took {report.seconds:.1f}s.")
    screen.print(f"Look inside: {webmem_command()} --memory-dir {report.memory_dir} runs", markup=False)


COMMANDS = [demo]
