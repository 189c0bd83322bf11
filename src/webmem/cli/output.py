"""How the command line writes: rich tables for people, plain JSON for machines, progress on stderr."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..core.vocabulary import MAX_COUNT

#: A count option (--limit, --episodes...): at least 1, at most what a database column holds.
COUNT = click.IntRange(min=1, max=MAX_COUNT)

PIPED_WIDTH = 200  # when stdout is not a terminal, tables are not squeezed to 80 columns
PROGRESS_THRESHOLD = 300  # bars are shown for work on more records than this


def refuse_to_overwrite(path: Path | None, force: bool) -> None:
    """A usage error when ``path`` (a command's ``-o``) exists and ``--force`` was not given."""
    if path is not None and path.exists() and not force:
        raise click.UsageError(f"{path} exists: give --force to overwrite it")


json_option = click.option("--json", "json_", is_flag=True, help="Print JSON (only data on stdout).")


def console() -> Console:
    screen = Console(soft_wrap=True)
    return screen if screen.is_terminal else Console(soft_wrap=True, width=PIPED_WIDTH)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else ""


def short(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None,
          no_wrap: Sequence[str] = ()) -> None:
    grid = Table(title=None if title is None else Text(title))
    for column in columns:
        grid.add_column(column, no_wrap=column in no_wrap)
    for row in rows:  # cells hold data: plain Text, never rich markup ('[/b]' in a goal is not a tag)
        grid.add_row(*(Text("" if cell is None else str(cell)) for cell in row))
    console().print(grid)


def webmem_command() -> str:
    """How to run webmem again from the user's shell: ``webmem`` when that is this webmem on the PATH, else
    the path of the script that is running (``.venv/bin/webmem``), else ``python -m webmem``."""
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    on_path = shutil.which("webmem")
    if on_path is not None and (script is None or Path(on_path).resolve() == script):
        return "webmem"
    if script is not None and script.name == "webmem" and script.is_file():
        return str(script)
    return f"{sys.executable} -m webmem"


def nothing(kind: str) -> None:
    click.echo(f"No {kind}.")


def nothing_on(kind: str, domain: str, known: Iterable[str]) -> None:
    """No records on ``domain``; when memory knows the same host under other ports (or the port under
    another host), say so: the domain key is the host with its port."""
    host = domain.rsplit(":", 1)[0] if not domain.endswith("]") else domain
    near = [other for other in known if other != domain and other.rsplit(":", 1)[0] == host]
    click.echo(f"No {kind} for {domain}." + (
        f" Memory files each port apart (the domain is host:port): {', '.join(sorted(near)[:5])} "
        f"{'has' if len(near) == 1 else 'have'} some." if near else ""
    ))


@contextmanager
def progress_bar(label: str, *, enabled: bool = True) -> Iterator[Callable[[int, int], None]]:
    """A callback ``(done, total)`` that draws a bar on stderr once the total passes the threshold."""
    bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(stderr=True), transient=True)
    task: list[Any] = []

    def update(done: int, total: int) -> None:
        if not enabled or total <= PROGRESS_THRESHOLD:
            return
        if not task:
            bar.start()
            task.append(bar.add_task(label, total=total))
        bar.update(task[0], completed=done)

    try:
        yield update
    finally:
        if task:
            bar.stop()
