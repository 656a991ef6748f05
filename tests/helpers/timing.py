"""Where a run's time goes, file by file, and each failure the moment it happens (a pytest plugin).

With ``RAGDIAG_TEST_TIMES=PATH`` set, :func:`pytest_configure` (``tests/conftest.py`` takes it from here) registers
:class:`FileTimes` in every pytest process; those that run tests (each xdist worker, or pytest itself without
workers) append tab-separated lines to ``PATH``:

* ``file  <path>  <wall s>  <CPU s of the worker>  <CPU s of its descendants>  <tests>  <worker>``
  once a test file's last test is torn down (its module fixtures included);
* ``processes  <path>  <name>=<CPU s> ...`` after it, the sampled descendants' CPU by command name (``chromium``,
  ``python``, ``node``: which of a file's processes cost the most), where any was seen;
* ``failed  <node id>  <phase>`` as soon as a test fails, so a run stopped before its summary still names it.

The descendants are the processes the worker starts: servers, Chromium, the CLI. The kernel's count of ended
children misses most of Chromium's CPU (its renderers are not waited for up the chain), so each descendant's own
CPU is sampled every :data:`PERIOD` seconds from ``/proc`` (the kernel's count only where there is no ``/proc``):
a lower bound, as the last fraction of a second of a process that ends between samples is not seen. A session
fixture's server counts towards the files that run while it works. ``python scripts/suite_times.py PATH`` sums the
lines. A line is one ``write`` to a file opened for appending, so the workers' lines do not interleave.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

__all__ = ["FileTimes", "Descendants", "cpu_seconds", "pytest_configure", "sample_now", "PERIOD"]

#: Seconds between two samples of the descendants' CPU.
PERIOD = 0.2
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds() -> tuple[float, float]:
    """(this process's CPU seconds, its waited-for children's), user and system together."""
    import resource  # POSIX only: imported when a run asks for its times

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _own_cpu(pid: int) -> tuple[int, str, float] | None:
    """(start time in ticks, command name, own user + system CPU seconds) of ``pid``, None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name, rest = stat[stat.index("(") + 1:].rsplit(")", 1)
    fields = rest.split()
    short = name.split(":")[0].split()[0] if name.split(":")[0].strip() else "?"  # "ray::IDLE" is "ray"
    return int(fields[19]), short, (int(fields[11]) + int(fields[12])) / _TICK


def _children(pid: int) -> list[int]:
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except OSError:
            pass
    return out


class Descendants:
    """This process's descendants' own CPU, sampled: each process (pid and start time) at the most seen, under the
    name it had when last seen (a process that execs keeps its CPU and takes its new name)."""

    def __init__(self, period: float = PERIOD):
        self.period = period
        self._seen: dict[tuple[int, int], tuple[str, float]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ragdiag-descendants", daemon=True)
        self.available = Path(f"/proc/{os.getpid()}/task").is_dir()

    def start(self) -> Descendants:
        if self.available:
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def sample(self) -> None:
        stack, seen = _children(os.getpid()), {}
        while stack:
            pid = stack.pop()
            own = _own_cpu(pid)
            if own is not None:
                seen[(pid, own[0])] = own[1:]
                stack += _children(pid)
        with self._lock:
            for key, (name, cpu) in seen.items():
                self._seen[key] = (name, max(cpu, self._seen.get(key, ("", 0.0))[1]))

    def total(self) -> dict[str, float]:
        """Every descendant seen so far at its most seen CPU, summed by command name (a fresh sample first)."""
        if self.available:
            self.sample()
        out: dict[str, float] = {}
        with self._lock:
            for name, cpu in self._seen.values():
                out[name] = out.get(name, 0.0) + cpu
        return out

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.sample()


class FileTimes:
    """Appends a line per test file and per failure to ``path`` (see the module's docstring)."""

    def __init__(self, path: str, worker: str):
        self.path, self.worker = path, worker
        self._file: str | None = None
        self._start = (0.0, 0.0, 0.0, 0.0)
        self._tests = 0
        self._descendants: Descendants | None = None

    def _write(self, *fields) -> None:
        line = "\t".join(str(f) for f in fields) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if self._descendants is None:  # in a process that runs tests only (not xdist's controller)
            self._descendants = Descendants().start()
        file = item.nodeid.split("::", 1)[0]
        if file != self._file:
            self._file, self._tests = file, 0
            self._start = (time.monotonic(), *cpu_seconds(), self._descendants.total())
        yield
        self._tests += 1
        if nextitem is None or nextitem.nodeid.split("::", 1)[0] != file:
            wall0, me0, waited0, sampled0 = self._start
            me, waited = cpu_seconds()
            sampled = self._descendants.total()
            by_name = {k: v - sampled0.get(k, 0.0) for k, v in sampled.items()}
            # the samples where /proc has them: the kernel's count adds a long-lived child (a session's server)
            # whole to the file that ends it, though the samples gave each file its share while it ran
            children = sum(by_name.values()) if self._descendants.available else waited - waited0
            self._write("file", file, f"{time.monotonic() - wall0:.1f}", f"{me - me0:.1f}", f"{children:.1f}",
                        self._tests, self.worker)
            named = sorted(((k, v) for k, v in by_name.items() if v >= 0.05), key=lambda kv: -kv[1])
            if named:
                self._write("processes", file, " ".join(f"{k}={v:.1f}" for k, v in named))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed:
            self._write("failed", item.nodeid, report.when)

    def pytest_unconfigure(self, config):
        if self._descendants is not None:
            self._descendants.stop()


def sample_now(config) -> None:
    """Take a sample of the descendants at once (a test of this plugin, before it ends the process it watches)."""
    plugin = config.pluginmanager.get_plugin("ragdiag-file-times")
    if plugin is not None and plugin._descendants is not None:
        plugin._descendants.sample()


def pytest_configure(config):
    """Register :class:`FileTimes` when ``RAGDIAG_TEST_TIMES`` names a file (a path relative to where pytest runs)."""
    path = os.environ.get("RAGDIAG_TEST_TIMES")
    if path:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        config.pluginmanager.register(FileTimes(os.path.abspath(path), worker), "ragdiag-file-times")
