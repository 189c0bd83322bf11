"""Threads run together with a thread switch allowed almost anywhere: races show at once."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable


def run_together(targets: list[Callable[[], None]]) -> None:
    """Run each target in a thread of its own, switching threads every microsecond, until all have ended."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=target) for target in targets]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
