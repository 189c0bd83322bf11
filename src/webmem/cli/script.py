"""``webmem script``: a remembered run as a Playwright script."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..core.vocabulary import SCRIPT_LANGUAGES as LANGUAGES
from .output import refuse_to_overwrite

if TYPE_CHECKING:
    from . import Settings


@click.command("script")
@click.argument("source_id", metavar="RUN_ID|TRAJECTORY_ID|SKILL_ID")
@click.option("--lang", type=click.Choice(LANGUAGES), default="python", show_default=True,
              help="python (sync Playwright, runs on its own) or typescript (a @playwright/test spec).")
@click.option("-o", "--output", "target", type=click.Path(path_type=Path), help="Write here instead of stdout.")
@click.option("--force", is_flag=True, help="Overwrite the -o file when it exists.")
@click.pass_obj
def script(settings: Settings, source_id: str, lang: str, target: Path | None, force: bool) -> None:
    """Write a successful run's path (or a skill's newest recording) as a Playwright script: the goal's values become
    parameters (defaulting to the recorded ones), secrets environment variables, and each verified effect an
    assertion."""
    refuse_to_overwrite(target, force)
    with settings.memory() as mem:
        text = mem.script(source_id, lang=lang)
    if target is None:
        click.echo(text, nl=not text.endswith("\n"))
    else:
        target.write_text(text, encoding="utf-8")
        click.echo(f"Wrote the {lang} script of {source_id} to {target}", err=True)


COMMANDS = [script]
