"""The processes a test or a benchmark starts: the PYTHONPATH of a child Python, ending a server process (stdlib
only, so benchmarks import it too)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_HELPERS = Path(__file__).resolve().parent
#: The PYTHONPATH of a child Python (a CLI run, a Ray worker, a measurement) that imports the test helpers
#: (``fakes`` ...) and this checkout's ragdiag.
CHILD_PYTHONPATH = os.pathsep.join([str(_HELPERS), str(_HELPERS.parents[1])])


def child_pythonpath(*more: str | os.PathLike) -> str:
    """:data:`CHILD_PYTHONPATH`, then ``more`` (a plugin's folder, say), then this process's own PYTHONPATH."""
    return os.pathsep.join([CHILD_PYTHONPATH, *map(str, more), *filter(None, [os.environ.get("PYTHONPATH")])])


def stop_process(proc: subprocess.Popen, grace_s: float = 10) -> None:
    """SIGTERM, then SIGKILL when the process is still running (busy, say, mid-embedding) after ``grace_s``."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=grace_s)
