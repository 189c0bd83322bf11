"""The official MCP SDK, which the ``mcp`` extra installs."""

from __future__ import annotations

import importlib.util

INSTALL_HINT = "the MCP server needs the official MCP SDK: pip install 'webmem[mcp]'"


def require_sdk() -> None:
    """Raise an ImportError that says what to install when the SDK is missing (or too old)."""
    if importlib.util.find_spec("mcp") is None or importlib.util.find_spec("mcp.server.mcpserver") is None:
        raise ImportError(INSTALL_HINT) from None
