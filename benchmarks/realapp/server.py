"""Run the Django app on 127.0.0.1: migrate a fresh SQLite file, create the admin user, serve it with
``runserver --noreload`` in a subprocess, and set the books table to a given list between episodes."""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

APP_DIR = Path(__file__).resolve().parent
USERNAME = "admin"
PASSWORD = "realapp-bench-pw"
INSTALL_HINT = "The real-app benchmark needs Django in this environment: pip install django"
START_TIMEOUT_S = 60


@dataclass(frozen=True)
class Book:
    title: str
    author: str
    year: int
    genre: str  # stored lowercase, as the model's choices keep it


def require_django() -> None:
    """Exit with the install hint when Django is not importable."""
    try:
        import django  # noqa: F401
    except ImportError:
        sys.exit(INSTALL_HINT)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LibraryApp:
    """The running app: its base URL and its database (read and reset with sqlite3, never by the agent)."""

    def __init__(self, base_url: str, database: Path) -> None:
        self.base_url = base_url
        self.database = database

    @property
    def books_url(self) -> str:
        return f"{self.base_url}/admin/library/book/"

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.database, timeout=20)

    def reset(self, books: Iterable[Book]) -> None:
        """Make the books table hold exactly ``books``, with ids 1, 2, ... in order."""
        rows = [(number, book.title, book.author, book.year, book.genre) for number, book in enumerate(books, 1)]
        with contextlib.closing(self._connect()) as conn, conn:
            conn.execute("DELETE FROM library_book")
            conn.executemany("INSERT INTO library_book (id, title, author, year, genre) VALUES (?, ?, ?, ?, ?)", rows)

    def books(self) -> list[tuple[int, Book]]:
        """Every book with its id, by id."""
        with contextlib.closing(self._connect()) as conn:
            rows = conn.execute("SELECT id, title, author, year, genre FROM library_book ORDER BY id").fetchall()
        return [(row[0], Book(row[1], row[2], int(row[3]), row[4])) for row in rows]


def _manage(database: Path, *args: str, env: dict[str, str] | None = None) -> None:
    environment = {**os.environ, "REALAPP_DB": str(database), "PYTHONUNBUFFERED": "1", **(env or {})}
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=APP_DIR, env=environment,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}{done.stderr}")


def _wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"runserver exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status < 500:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code < 500:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"runserver did not answer {url} within {START_TIMEOUT_S} s:\n{log.read_text(errors='replace')}")


@contextlib.contextmanager
def serve_library(books: Iterable[Book], *, port: int = 0) -> Iterator[LibraryApp]:
    """Migrate a fresh database in a temporary directory, create the superuser, add ``books``, and serve
    the app on 127.0.0.1 (``port`` 0: a free one) until the block exits; the server is always stopped."""
    require_django()
    with tempfile.TemporaryDirectory(prefix="webmem-realapp-") as directory:
        database = Path(directory) / "library.sqlite3"
        _manage(database, "migrate", "--noinput")
        _manage(database, "createsuperuser", "--noinput", "--username", USERNAME, "--email", "admin@example.com",
                env={"DJANGO_SUPERUSER_PASSWORD": PASSWORD})
        port = port or free_port()
        base_url = f"http://127.0.0.1:{port}"
        app = LibraryApp(base_url, database)
        app.reset(books)
        log = Path(directory) / "runserver.log"
        with open(log, "w") as out:
            process = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"], cwd=APP_DIR,
                env={**os.environ, "REALAPP_DB": str(database), "PYTHONUNBUFFERED": "1"},
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
            try:
                _wait_until_up(f"{base_url}/admin/login/", process, log)
                yield app
            finally:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def log_in(page, app: LibraryApp) -> None:
    """Log the browser context in as the superuser (not part of any task) and land on the book list."""
    page.goto(f"{app.base_url}/admin/login/?next=/admin/library/book/")
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url("**/admin/library/book/")
