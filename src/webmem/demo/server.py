"""Serve the demo shop ("Gadget Corner") from a local HTTP server."""

from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["SITE_DIR", "serve_site"]

#: The packaged demo site.
SITE_DIR = Path(__file__).resolve().parent / "site"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static file handler that logs nothing and disables caching."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # type: ignore[override]
        # Browsers drop connections at will (BrokenPipe, ConnectionReset);
        # the default prints a traceback to stderr.
        pass


@contextlib.contextmanager
def serve_site(directory: str | Path | None = None) -> Iterator[str]:
    """Serve ``directory`` (default: the packaged demo site) on 127.0.0.1.

    The server listens on a free port, runs in a daemon thread and is shut
    down when the block exits. Yields the base URL, e.g.
    ``http://127.0.0.1:PORT/``.
    """
    root = Path(directory) if directory is not None else SITE_DIR
    if not root.is_dir():
        raise NotADirectoryError(f"cannot serve {root}: not a directory")
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = _QuietServer(("127.0.0.1", 0), handler)
    host, port = server.server_address[:2]
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.1},
        name=f"webmem-demo-server-{port}",
        daemon=True,
    )
    thread.start()
    try:
        yield f"http://{host}:{port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
