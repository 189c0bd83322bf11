"""A real Trac (the issue tracker, from PyPI) served on 127.0.0.1 for tests and benchmarks.

``serve_trac`` creates a Trac environment in a temporary directory (SQLite), lets anonymous users do
everything (no login), runs ``tracd`` in a subprocess on a free port, and sets the tickets table
between episodes by writing the environment's database with sqlite3 while tracd runs (tracd reads
tickets from the database on every request, so it shows the change at once).
"""

from __future__ import annotations

import contextlib
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import astuple, dataclass, fields
from pathlib import Path

INSTALL_HINT = "Trac is needed here: pip install trac"
START_TIMEOUT_S = 60
#: When every ticket was created and last changed (microseconds since the epoch, as Trac stores times).
TICKET_TIME_US = 1_700_000_000 * 1_000_000
#: The query page's default for visitors: every ticket, by id, no filter (Trac's own default hides closed ones).
DEFAULT_QUERY = "order=id"
#: tracd, started so that it parses forms: Trac uses the module ``multipart`` when it can import one, and
#: python-multipart (a FastAPI dependency) installs a ``multipart`` shim that lacks what Trac calls, which
#: fails every POST; hiding the shim makes Trac fall back on the standard library's ``cgi`` (Python < 3.13).
TRACD = """
import sys
try:
    import multipart
except ImportError:
    pass
else:
    if not hasattr(multipart, "parse_options_header") and sys.version_info < (3, 13):
        sys.modules["multipart"] = None
from trac.web.standalone import main
sys.argv[0] = "tracd"
main()
"""


@dataclass(frozen=True)
class Ticket:
    """A row of Trac's ticket table (its id and times aside); Trac's own empty value is ""."""

    summary: str
    owner: str = ""
    status: str = "new"
    resolution: str = ""
    priority: str = "major"
    type: str = "defect"
    component: str = "component1"
    severity: str = ""
    reporter: str = "admin"
    cc: str = ""
    version: str = ""
    milestone: str = ""
    description: str = ""
    keywords: str = ""


COLUMNS = tuple(field.name for field in fields(Ticket))


def require_trac() -> None:
    """Exit with the install hint when Trac is not importable."""
    try:
        import trac  # noqa: F401
    except ImportError:
        sys.exit(INSTALL_HINT)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TracApp:
    """The running Trac: its URLs and its database (read and reset with sqlite3, never by the agent)."""

    def __init__(self, base_url: str, database: Path) -> None:
        self.base_url = base_url
        self.database = database

    @property
    def query_url(self) -> str:
        """The custom query page, listing every ticket."""
        return f"{self.base_url}/query"

    def ticket_url(self, ticket_id: int) -> str:
        return f"{self.base_url}/ticket/{ticket_id}"

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.database, timeout=20)

    def reset(self, tickets: Iterable[Ticket]) -> None:
        """Make the tickets table hold exactly ``tickets`` (ids 1, 2, ... in order), with no change history,
        comment or custom field."""
        rows = [(number, TICKET_TIME_US, TICKET_TIME_US, *astuple(ticket)) for number, ticket in enumerate(tickets, 1)]
        columns = ", ".join(("id", "time", "changetime", *COLUMNS))
        marks = ", ".join("?" * (3 + len(COLUMNS)))
        with contextlib.closing(self._connect()) as conn, conn:
            for table in ("ticket", "ticket_change", "ticket_custom"):
                conn.execute(f"DELETE FROM {table}")
            conn.executemany(f"INSERT INTO ticket ({columns}) VALUES ({marks})", rows)

    def tickets(self) -> list[tuple[int, Ticket]]:
        """Every ticket with its id, by id."""
        with contextlib.closing(self._connect()) as conn:
            rows = conn.execute(f"SELECT id, {', '.join(COLUMNS)} FROM ticket ORDER BY id").fetchall()
        return [(row[0], Ticket(*(value if value is not None else "" for value in row[1:]))) for row in rows]

    def comments(self, ticket_id: int) -> list[str]:
        """The ticket's comments, oldest first (a change saved without a comment adds none)."""
        with contextlib.closing(self._connect()) as conn:
            rows = conn.execute("SELECT newvalue FROM ticket_change WHERE ticket = ? AND field = 'comment' "
                                "AND newvalue != '' ORDER BY time", (ticket_id,)).fetchall()
        return [row[0] for row in rows]


def _admin(environment: Path, *args: str) -> None:
    """Run ``trac-admin ENVIRONMENT ARGS...`` (the one installed next to this Python, else its module)."""
    script = Path(sys.executable).parent / "trac-admin"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "trac.admin.console"]
    done = subprocess.run([*command, str(environment), *args],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"trac-admin {' '.join(args)} failed:\n{done.stdout}{done.stderr}")


def _wait_until_up(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"tracd exited with {process.returncode}:\n{log.read_text(errors='replace')}")
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
    raise RuntimeError(f"tracd did not answer {url} within {START_TIMEOUT_S} s:\n{log.read_text(errors='replace')}")


@contextlib.contextmanager
def serve_trac(tickets: Iterable[Ticket], *, port: int = 0) -> Iterator[TracApp]:
    """Create a Trac environment in a temporary directory, add ``tickets``, and serve it on 127.0.0.1
    (``port`` 0: a free one) until the block exits; the server is always stopped and the environment removed."""
    require_trac()
    with tempfile.TemporaryDirectory(prefix="webmem-trac-") as directory:
        environment = Path(directory) / "env"
        _admin(environment, "initenv", "Trac Bench", "sqlite:db/trac.db")
        _admin(environment, "permission", "add", "anonymous", "TRAC_ADMIN")
        _admin(environment, "config", "set", "query", "default_anonymous_query", DEFAULT_QUERY)
        port = port or free_port()
        app = TracApp(f"http://127.0.0.1:{port}", environment / "db" / "trac.db")
        app.reset(tickets)
        log = Path(directory) / "tracd.log"
        with open(log, "w") as out:
            process = subprocess.Popen(
                [sys.executable, "-c", TRACD, "--single-env", "--hostname", "127.0.0.1",
                 "--port", str(port), str(environment)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
            try:
                _wait_until_up(app.query_url, process, log)
                yield app
            finally:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
