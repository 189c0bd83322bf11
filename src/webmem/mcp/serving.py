"""Running ``webmem mcp``: the plain server or the proxy, over the chosen transport."""

from __future__ import annotations

from collections.abc import Sequence

from ..memory import Memory
from ..service import MemoryService
from .proxy import build_proxy
from .server import build_server
from .transports import serve


async def run_server(memory: Memory, *, port: int | None = None, token: str | None = None,
                     browser: Sequence[str] | None = None) -> None:
    """Serve ``memory`` until the client goes away (stdio) or the process is stopped (HTTP)."""
    service = MemoryService(memory)
    if browser is None:
        await serve(build_server(service, log_level="WARNING"), port=port, token=token)
        return
    proxy = build_proxy(service, browser, log_level="WARNING")
    async with proxy.connected():
        await serve(proxy, port=port, token=token)
