"""Where a run's time goes, file by file, and each failure the moment it happens (a pytest plugin).

With ``RAGDIAG_TEST_TIMES=PATH`` set, :func:`pytest_configure` (``tests/conftest.py`` takes it from here) registers
:class:`FileTimes` in every pytest process; those that run tests (each xdist worker, or pytest itself without
workers) append tab-separated lines to ``PATH``:

* ``file  <path>  <wall s>  <CPU s of the worker>  <CPU s of its ended child processes>  <tests>  <worker>``
  once a test file's last test is torn down (module fixtures included: a server, Chromium, a subprocess count
  once they have ended and been waited for);
* ``failed  <node id>  <phase>`` as soon as a test fails, so a run stopped before its summary still names it.

The children's share covers the processes a file starts and ends (its servers, Chromium, the CLI); a session
fixture's server is counted with the file that runs when the session ends. ``python scripts/suite_times.py PATH``
sums the lines. A line is one ``write`` to a file opened for appending, so the workers' lines do not interleave.
"""

from __future__ import annotations

import os
import resource
import time

import pytest

__all__ = ["FileTimes", "cpu_seconds", "pytest_configure"]


def cpu_seconds() -> tuple[float, float]:
    """(this process's CPU seconds, its waited-for children's), user and system together."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


class FileTimes:
    """Appends a line per test file and per failure to ``path`` (see the module's docstring)."""

    def __init__(self, path: str, worker: str):
        self.path, self.worker = path, worker
        self._file: str | None = None
        self._start = (0.0, 0.0, 0.0)
        self._tests = 0

    def _write(self, *fields) -> None:
        line = "\t".join(str(f) for f in fields) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        file = item.nodeid.split("::", 1)[0]
        if file != self._file:
            self._file, self._tests = file, 0
            self._start = (time.monotonic(), *cpu_seconds())
        yield
        self._tests += 1
        if nextitem is None or nextitem.nodeid.split("::", 1)[0] != file:
            wall0, me0, kids0 = self._start
            me, kids = cpu_seconds()
            self._write("file", file, f"{time.monotonic() - wall0:.1f}", f"{me - me0:.1f}", f"{kids - kids0:.1f}",
                        self._tests, self.worker)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed:
            self._write("failed", item.nodeid, report.when)


def pytest_configure(config):
    """Register :class:`FileTimes` when ``RAGDIAG_TEST_TIMES`` names a file (a path relative to where pytest runs)."""
    path = os.environ.get("RAGDIAG_TEST_TIMES")
    if path:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        config.pluginmanager.register(FileTimes(os.path.abspath(path), worker), "ragdiag-file-times")
