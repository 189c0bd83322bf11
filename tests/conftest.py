"""Shared fixtures: every test gets its own memory directory on a real SQLite file."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pg_cluster
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


BACKENDS = [name.strip() for name in os.environ.get("WEBMEM_TEST_BACKENDS", "sqlite,postgres").split(",") if name.strip()]


@pytest.fixture(scope="session")
def postgres() -> Iterator[pg_cluster.Cluster]:
    """A throwaway PostgreSQL cluster (or WEBMEM_TEST_POSTGRES_URL); failing to get one fails the tests."""
    cluster = pg_cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def memory_location(backend: str, memory_dir: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """Where the test's memory lives: its SQLite directory, or a fresh PostgreSQL database."""
    if backend == "sqlite":
        yield str(memory_dir)
        return
    cluster = request.getfixturevalue("postgres")
    name = f"webmem_test_{uuid.uuid4().hex[:16]}"
    url = pg_cluster.create_database(cluster, name)
    yield url
    pg_cluster.drop_database(cluster, name)


@pytest.fixture
def another_location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A second, empty store on the test's backend (a fresh directory, or a fresh database)."""
    if backend == "sqlite":
        yield str(tmp_path / "another")
        return
    cluster = request.getfixturevalue("postgres")
    name = f"webmem_test_{uuid.uuid4().hex[:16]}"
    url = pg_cluster.create_database(cluster, name)
    yield url
    pg_cluster.drop_database(cluster, name)


@pytest.fixture
def open_memory(memory_location: str, memory_dir: Path) -> Iterator[Any]:
    """Open more memories on the test's store (other namespaces, other options); all closed after."""
    opened: list[webmem.Memory] = []

    def open_one(**options: Any) -> webmem.Memory:
        memory = webmem.Memory.open(memory_location, local_dir=memory_dir, **options)
        opened.append(memory)
        return memory

    yield open_one
    for memory in opened:
        memory.close()


@pytest.fixture
def mem(open_memory: Any, events: list[dict[str, Any]]) -> webmem.Memory:
    return open_memory(on_event=events.append)


@pytest.fixture
def sqlite_mem(memory_dir: Path, events: list[dict[str, Any]]) -> Iterator[webmem.Memory]:
    """A memory on SQLite only, for the tests about SQLite itself (its file, pragmas and locks)."""
    memory = webmem.Memory.open(memory_dir, on_event=events.append)
    yield memory
    memory.close()


SHOP = "https://www.example-shop.com/"


@pytest.fixture(scope="session")
def site_url() -> Iterator[str]:
    """The packaged demo shop, served on 127.0.0.1."""
    from webmem.demo.server import serve_site

    with serve_site() as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One real headless Chromium for the whole session; no browser is a failure, not a skip."""
    from playwright.sync_api import sync_playwright

    from webmem.agent.browser import launch_chromium

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    yield tab
    context.close()
