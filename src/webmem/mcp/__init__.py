"""webmem as an MCP server (``webmem mcp``), alone or as a recording proxy in front of Playwright MCP.

Needs the ``mcp`` extra: ``pip install 'webmem[mcp]'``.
"""

from .sdk import require_sdk

require_sdk()

from .server import build_server  # noqa: E402

__all__ = ["build_server"]
