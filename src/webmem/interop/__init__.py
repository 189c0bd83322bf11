"""Interop: memory in and out of webmem, over the public facade.

``transfer`` exports a namespace (``collect`` then ``render`` as json, jsonl, csv or prompt) and
imports webmem exports, lesson files and ``.agent-memory/`` directories (``import_path``, which
detects the kind); ``agent_memory`` reads and writes the ``.agent-memory/`` layout of the
TypeScript browser agent whose file-based memory webmem replaces.
"""

from .agent_memory import TransferReport, export_agent_memory, import_agent_memory
from .transfer import FORMATS, KINDS, collect, detect, import_path, render

__all__ = [
    "FORMATS", "KINDS", "TransferReport", "collect", "detect", "export_agent_memory", "import_agent_memory",
    "import_path", "render",
]
