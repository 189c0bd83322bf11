"""Where a memory lives: the default directory, the environment variables that choose it, and its file.

Kept free of heavy imports: the command line's help names these without opening a memory.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InvalidInput

DEFAULT_DIR = ".agent-memory"
ENV_DIR = "WEBMEM_DIR"
ENV_URL = "WEBMEM_URL"
DATABASE_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")
DB_FILE = "memory.db"


def database_url(location: str | os.PathLike[str] | None) -> str | None:
    """The PostgreSQL URL to use: an explicit one, else ``$WEBMEM_URL`` when no location is given."""
    if isinstance(location, str) and location.strip().startswith(DATABASE_SCHEMES):
        return location.strip()
    if location is None and os.environ.get(ENV_URL, "").strip():
        url = os.environ[ENV_URL].strip()
        if not url.startswith(DATABASE_SCHEMES):
            raise InvalidInput(f"{ENV_URL}: expected a postgresql:// URL")
        return url
    return None


def resolve_directory(location: str | os.PathLike[str] | None) -> Path:
    """An explicit location wins, then ``$WEBMEM_DIR``, then ``.agent-memory`` in the working directory."""
    if location is None:
        location = os.environ.get(ENV_DIR) or DEFAULT_DIR
    if not isinstance(location, str | os.PathLike):
        raise InvalidInput(f"location: expected a directory path, got {type(location).__name__}")
    text = os.fspath(location)
    if not text.strip():
        raise InvalidInput("location: the memory directory path is empty")
    if "://" in text:
        raise InvalidInput(f"location: {text.split('://')[0]}:// URLs are not supported; give a directory path")
    return Path(text).expanduser()
