"""The ``webmem`` command line: look inside, export, import and repair an agent's memory.

Every command is a thin layer over the Python API. Known errors become one line on stderr and
exit code 1; usage errors exit with 2. With ``--json`` only the data is written to stdout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from ..core.errors import WebmemError
from ..core.version import __version__
from ..core.locations import DB_FILE, DEFAULT_DIR, ENV_DIR, database_url, resolve_directory

if TYPE_CHECKING:
    from ..memory import Memory

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Settings:
    """The global options, and how commands open the memory they name."""

    def __init__(self, memory_dir: str | None, namespace: str) -> None:
        self.memory_dir = memory_dir
        self.namespace = namespace

    @contextmanager
    def memory(self, *, create: bool = False, memory_dir: str | None = None, **options: Any) -> Iterator[Memory]:
        """Open the memory; a command that only reads never creates one.

        With ``$WEBMEM_URL`` the memory is that PostgreSQL database, and the memory directory only
        holds local files such as the event log. ``memory_dir`` overrides the global option;
        ``options`` go to :meth:`Memory.open`.
        """
        # Stale lessons are pruned by `webmem prune` only, and a command that only reads never seeds a
        # namespace: a command that looks (or a dry run) changes nothing.
        options = {"namespace": self.namespace, "prune_lessons": False, "seed_lessons": True if create else None,
                   **options}
        from ..memory import Memory

        chosen = memory_dir if memory_dir is not None else self.memory_dir
        url = database_url(None)
        if url is not None:
            with Memory.open(url, local_dir=chosen, **options) as mem:
                yield mem
            return
        directory = resolve_directory(chosen)
        if not create and not (directory / DB_FILE).is_file():
            raise click.ClickException(f"no webmem memory at {directory} (give --memory-dir or set {ENV_DIR})")
        with Memory.open(directory, **options) as mem:
            yield mem


class WebmemGroup(click.Group):
    """A command group that reports webmem errors as one line and exit code 1, never a traceback."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for number, arg in enumerate(args, start=1):
            try:
                arg.encode("utf-8")
            except UnicodeEncodeError:
                shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                raise click.UsageError(f"argument {number} ({shown!r}) is not valid UTF-8", ctx=ctx) from None
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except WebmemError as exc:
            raise click.ClickException(str(exc)) from exc
        except ImportError as exc:
            if "pip install" not in str(exc):  # not an extra that is missing: a bug, with its traceback
                raise
            raise click.ClickException(str(exc)) from exc


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


def main() -> None:
    """Entry point of the ``webmem`` command."""
    cli(prog_name="webmem")


def _register() -> None:
    from . import agent, bench, demo, events, forget, inspect, maintenance, mcp, runs, script, serve, skills, transfer

    for module in (runs, inspect, transfer, maintenance, forget, agent, demo, bench, mcp, serve, events, script, skills):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()
