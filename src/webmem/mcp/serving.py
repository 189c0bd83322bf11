"""Running ``webmem mcp``: the plain server or the proxy, over the chosen transport.

``run_server_opening`` answers ``initialize`` before the memory is open: a worker thread imports the
library and opens the memory while the server starts, and a call waits for it. A memory that cannot be
opened stops the server with its error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from .server import build_server
from .transports import serve

if TYPE_CHECKING:
    from ..memory import Memory
    from ..service import MemoryService


async def run_server(memory: Memory, *, port: int | None = None, token: str | None = None,
                     browser: Sequence[str] | None = None) -> None:
    """Serve ``memory`` until the client goes away (stdio) or the process is stopped (HTTP)."""
    from ..service import MemoryService

    await _serve(MemoryService(memory), port=port, token=token, browser=browser)


async def run_server_opening(open_memory: Callable[[], AbstractContextManager[Memory]], *, port: int | None = None,
                             token: str | None = None, browser: Sequence[str] | None = None) -> None:
    """As :func:`run_server`, serving at once while ``open_memory()`` is entered in a worker thread; the
    memory is closed when the server stops. An error opening it stops the server and is raised here."""
    service = OpeningService()
    with ExitStack() as stack:

        def open_service() -> None:
            from ..service import MemoryService

            service.opened(MemoryService(stack.enter_context(open_memory())))

        try:
            async with anyio.create_task_group() as group:

                async def open_meanwhile() -> None:
                    try:
                        await anyio.to_thread.run_sync(open_service)
                    except Exception as exc:
                        service.failed(exc)
                        group.cancel_scope.cancel()

                group.start_soon(open_meanwhile)
                await _serve(service, port=port, token=token, browser=browser)
        except BaseExceptionGroup as group_error:  # the server's own error, as run_server raises it
            raise _sole(group_error) from None
        service.raise_failure()


def _sole(group_error: BaseExceptionGroup) -> BaseException:
    """The one error inside nested task groups, else the group itself."""
    while len(group_error.exceptions) == 1:
        inner = group_error.exceptions[0]
        if not isinstance(inner, BaseExceptionGroup):
            return inner
        group_error = inner
    return group_error


class OpeningService:
    """Stands for the :class:`MemoryService` being opened: each attribute waits for it, then is its own.

    The tools run in worker threads (the SDK runs plain functions there), so waiting blocks no other call.
    """

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._service: MemoryService | None = None
        self._failure: Exception | None = None

    def opened(self, service: MemoryService) -> None:
        self._service = service
        self._ready.set()

    def failed(self, failure: Exception) -> None:
        self._failure = failure
        self._ready.set()

    def raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def __getattr__(self, name: str) -> Any:
        self._ready.wait()
        if self._service is None:
            from ..core.errors import StoreError

            raise StoreError(f"the memory could not be opened: {self._failure}")
        return getattr(self._service, name)


async def _serve(service: Any, *, port: int | None, token: str | None, browser: Sequence[str] | None) -> None:
    if browser is None:
        await serve(build_server(service, log_level="WARNING"), port=port, token=token)
        return
    from .proxy import build_proxy

    proxy = build_proxy(service, browser, log_level="WARNING")
    async with proxy.connected():
        await serve(proxy, port=port, token=token)
