"""Serving an MCP server over stdio, or over streamable HTTP on 127.0.0.1 with an optional bearer token."""

from __future__ import annotations

import hmac
import json
from typing import Any

from mcp.server import MCPServer

LOOPBACK = "127.0.0.1"
MCP_PATH = "/mcp"

ASGIApp = Any


class BearerToken:
    """An ASGI wrapper that answers 401 to any HTTP request without ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = json.dumps({"error": "unauthorized",
                                   "detail": "send Authorization: Bearer <token> (the token given to webmem mcp)"})
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="webmem"')]})
                await send({"type": "http.response.body", "body": body.encode()})
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer, *, token: str | None = None) -> ASGIApp:
    """The server's streamable HTTP app (at ``/mcp``), behind the token when one is given."""
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=LOOPBACK)
    return BearerToken(app, token) if token else app


async def serve(server: MCPServer, *, port: int | None = None, token: str | None = None) -> None:
    """Serve until stopped: over stdio without ``port``, else over streamable HTTP on 127.0.0.1:``port``."""
    if port is None:
        await server.run_stdio_async()
        return
    import uvicorn

    config = uvicorn.Config(http_app(server, token=token), host=LOOPBACK, port=port, log_level="warning",
                            lifespan="on")
    await uvicorn.Server(config).serve()
