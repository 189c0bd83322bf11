"""``webmem serve``: the memory as an HTTP API (and, with --mcp, an MCP server) for agents in any language."""

from __future__ import annotations

import ipaddress
import os

import click

from ..core.locations import DATABASE_SCHEMES, ENV_DIR, database_url, resolve_directory

LOOPBACK = "127.0.0.1"


@click.command("serve")
@click.option("--host", default=LOOPBACK, show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="Port to listen on.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True, help="Worker processes.")
@click.option("--token", envvar="WEBMEM_API_TOKEN",
              help="Require 'Authorization: Bearer TOKEN' (or $WEBMEM_API_TOKEN); required off loopback.")
@click.option("--mcp", "with_mcp", is_flag=True, help="Also serve the MCP server at /mcp (streamable HTTP).")
@click.pass_context
def serve_command(ctx: click.Context, host: str, port: int, workers: int, token: str | None, with_mcp: bool) -> None:
    """Serve the memory over HTTP (/v1, the viewer at /, OpenAPI at /docs)."""
    if token is not None and not token.strip():
        raise click.UsageError("--token is empty")
    if not _loopback(host) and not token:
        raise click.UsageError(f"--host {host} is reachable from other machines: give --token (or $WEBMEM_API_TOKEN)")
    try:
        from ..server import app as server_app
        from ..server import workers as server_workers
    except ImportError:
        raise click.ClickException("the HTTP server needs FastAPI, uvicorn and fastapi-offline: "
                                   "pip install 'webmem[server]'") from None
    url = database_url(None)
    location = url if url is not None else str(resolve_directory(ctx.obj.memory_dir))
    os.environ[server_app.ENV_LOCATION] = location
    os.environ[server_app.ENV_MCP] = "1" if with_mcp else ""
    if token:
        os.environ[server_app.ENV_TOKEN] = token
    if url is None and ctx.obj.memory_dir is not None:
        os.environ[ENV_DIR] = ctx.obj.memory_dir
    click.echo(banner(location, host, port), err=True)
    try:
        server_workers.serve(host, port, workers)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


def banner(location: str, host: str, port: int) -> str:
    """What ``webmem serve`` says on start: the memory it serves, and the addresses of the API, the viewer and
    the API's docs."""
    if location.startswith(DATABASE_SCHEMES):
        from sqlalchemy.engine import make_url

        location = make_url(location).render_as_string(hide_password=True)
    base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    return (f"webmem serving {location}\n"
            f"  API     {base}/v1\n"
            f"  viewer  {base}/\n"
            f"  docs    {base}/docs")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


COMMANDS = [serve_command]
