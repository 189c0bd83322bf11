"""``webmem mcp``: the memory as an MCP server, alone or as a recording proxy in front of Playwright MCP."""

from __future__ import annotations

import functools
import os
import re
import shlex
from pathlib import Path

import click

from ..core.errors import InvalidInput

ENV_TOKEN = "WEBMEM_MCP_TOKEN"
_SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")


@click.command("mcp")
@click.option("--port", type=click.IntRange(1, 65535), help="Serve streamable HTTP on 127.0.0.1:PORT (default: stdio).")
@click.option("--token", envvar=ENV_TOKEN, help=f"Require 'Authorization: Bearer TOKEN' over HTTP (or ${ENV_TOKEN}).")
@click.option("--browser", metavar="COMMAND",
              help="Proxy mode: start this browser MCP server (e.g. 'npx @playwright/mcp@latest --headless'), "
                   "offer its tools and record every call.")
@click.option("--secret", "secret_names", multiple=True, metavar="NAME",
              help="An environment variable whose value is a secret: never stored or answered, shown as {NAME}.")
@click.option("--secrets-file", type=click.Path(dir_okay=False, path_type=Path),
              help="A file of NAME=value lines (dotenv): each value is a secret shown as {NAME}.")
@click.pass_context
def mcp_command(ctx: click.Context, port: int | None, token: str | None, browser: str | None,
                secret_names: tuple[str, ...], secrets_file: Path | None) -> None:
    """Serve the memory over MCP (stdio, or streamable HTTP with --port)."""
    if token is not None and port is None:
        if ctx.get_parameter_source("token") is not click.core.ParameterSource.ENVIRONMENT:
            raise click.UsageError("--token protects the HTTP transport: give --port as well")
        token = None  # over stdio the client is the process that started the server
    if token is not None and not token.strip():
        raise click.UsageError("--token is empty")
    secrets = _secrets(secret_names, secrets_file)
    command = shlex.split(browser) if browser is not None else None
    if browser is not None and not command:
        raise click.UsageError("--browser: give the command that starts the browser MCP server")
    try:
        import anyio

        from ..mcp.serving import run_server_opening
    except ImportError as exc:
        raise click.ClickException(str(exc)) from None
    # The memory opens while the server answers initialize (clients start a server for every session).
    open_memory = functools.partial(ctx.obj.memory, create=True, secrets=secrets)
    anyio.run(lambda: run_server_opening(open_memory, port=port, token=token, browser=command))


def _secrets(names: tuple[str, ...], path: Path | None) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in names:
        if not _SECRET_NAME.match(name):
            raise click.UsageError(f"--secret {name!r}: a name is letters, digits and _ (not starting with a digit)")
        value = os.environ.get(name)
        if not value:
            raise click.UsageError(f"--secret {name}: the environment variable {name} is not set")
        found[name] = value
    if path is not None:
        found.update(read_secrets_file(path))
    return found


def read_secrets_file(path: Path) -> dict[str, str]:
    """NAME=value lines; blank lines and # comments are skipped, and quotes around a value dropped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"--secrets-file {path}: cannot be read ({exc})") from exc
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, equals, value = line.removeprefix("export ").partition("=")
        name, value = name.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if not equals or not _SECRET_NAME.match(name) or not value:
            raise InvalidInput(f"--secrets-file {path}: line {number} is not NAME=value")
        found[name] = value
    return found


COMMANDS = [mcp_command]
