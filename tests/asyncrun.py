"""Running a coroutine function from a test, in a thread of its own.

Playwright's sync API keeps an event loop running in the thread that used it (the session's browser
fixture), where ``anyio.run`` refuses to start another one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


def run(main: Callable[..., Awaitable[T]], *args: Any) -> T:
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, main, *args).result()
