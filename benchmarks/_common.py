"""What several benchmarks share: the median of timed calls, and the machine's CPU by name."""

from __future__ import annotations

import platform
import statistics
import time
from pathlib import Path


def timed(fn, repeats: int) -> tuple[float, object]:
    """The median seconds of ``repeats`` calls of ``fn``, and what the last call returned."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def median_time(fn, repeats: int) -> float:
    """The median seconds of ``repeats`` calls of ``fn``."""
    return timed(fn, repeats)[0]


def cpu_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what ``platform`` knows of it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
