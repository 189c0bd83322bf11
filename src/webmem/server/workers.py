"""Running the API in several worker processes.

uvicorn's own ``--workers`` binds one socket without naming its protocol, so asyncio does not turn off
Nagle's algorithm on the connections it accepts, and every answer waits for TCP's delayed ACK (~40 ms
on Linux: measured 44 ms per request with 2 workers, 0.6 ms with 1). Here the parent binds one TCP socket
(``IPPROTO_TCP``) and every worker accepts from it: a worker that is idle takes the next connection
(with a socket per worker and ``SO_REUSEPORT``, the kernel hashed connections to workers whatever their
load, and a few keep-alive clients could leave a worker idle while another queued their requests).
"""

from __future__ import annotations

import multiprocessing
import signal
import socket
import sys
from typing import Any

APP = "webmem.server.app:app_from_environment"
LOG_LEVEL = "warning"


def serve(host: str, port: int, workers: int) -> None:
    """Serve the API until stopped, in ``workers`` processes (one in this process when 1)."""
    import uvicorn

    if workers == 1:
        uvicorn.run(APP, factory=True, host=host, port=port, workers=workers, log_level=LOG_LEVEL)
        return
    bound = bind(host, port)  # fails here, in the parent, when the port is taken
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_worker, args=(bound,), daemon=True) for _ in range(workers)]
    for process in processes:
        process.start()

    def stop(signum: int, frame: Any) -> None:
        for process in processes:
            process.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for process in processes:
        process.join()
    if any(process.exitcode not in (0, -signal.SIGTERM) for process in processes):
        sys.exit(1)


def bind(host: str, port: int) -> socket.socket:
    family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                            proto=socket.IPPROTO_TCP)[0]
    listener = socket.socket(family, kind, protocol)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(address)
    listener.listen(2048)
    return listener


def _worker(listener: socket.socket) -> None:  # pragma: no cover - runs in a child process
    import uvicorn

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops its workers
    config = uvicorn.Config(APP, factory=True, log_level=LOG_LEVEL)
    uvicorn.Server(config).run(sockets=[listener])
