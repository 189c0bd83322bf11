"""Shared fixtures: every test gets its own memory directory on a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import webmem


@pytest.fixture(autouse=True)
def _isolated_memory_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point WEBMEM_DIR at a temporary directory so no test touches the working directory."""
    directory = tmp_path / "env-memory"
    monkeypatch.setenv("WEBMEM_DIR", str(directory))
    return directory


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def events() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def mem(memory_dir: Path, events: list[dict[str, Any]]) -> Iterator[webmem.Memory]:
    memory = webmem.Memory.open(memory_dir, on_event=events.append)
    yield memory
    memory.close()


SHOP = "https://www.example-shop.com/"
