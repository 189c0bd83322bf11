"""Timing helpers shared by the benchmark scripts (run them as ``python benchmarks/<script>.py``)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(action: Callable[[], object], repeat: int) -> float:
    """The median wall time of ``repeat`` calls of ``action``, in milliseconds."""
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)
