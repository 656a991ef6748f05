"""Progressive evaluation: one strategy at a time, what the user looks at first.

A :class:`Scheduler` runs ``work(name, report)`` for each strategy name, one
at a time, on one background thread, front of the queue first. Anyone may
move strategies to the front (:meth:`Scheduler.prioritize`) or wait for some
(:meth:`Scheduler.wait`); :meth:`Scheduler.state` is a frozen snapshot to
draw ("ready: E · computing C 340/918 · queued A, B"). A failing strategy is
recorded with its error and the others go on.

:func:`merge_evaluations` joins per-strategy evaluations into one
:class:`~ragdiag.evaluate.Evaluation`, so pages read a partial result exactly
as they read a full one. Nothing here imports streamlit: the dashboard holds
one scheduler per input set in ``st.cache_resource`` and only draws it.

>>> import time
>>> done = []
>>> s = Scheduler(["A", "B", "C"], lambda name, report: done.append(name) or name.lower(), start=False)
>>> s.prioritize("C")
>>> s.start(); s.wait(["A", "B", "C"], timeout=10)
True
>>> done, s.results()
(['C', 'A', 'B'], {'A': 'a', 'B': 'b', 'C': 'c'})
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["Scheduler", "SchedulerState", "merge_evaluations", "first_order"]

Report = Callable[[str, int, int], None]
Work = Callable[[str, Report], Any]


def first_order(names: Sequence[str], first: Sequence[str] = (), costs: Mapping[str, float] | None = None
                ) -> list[str]:
    """The order to compute ``names`` in: ``first`` (those present, in order), then the rest cheapest first.

    ``costs`` (e.g. characters to embed) breaks the rest's order; without it they keep their order.

    >>> first_order(["A", "B", "C", "E"], first=["E"], costs={"A": 3, "B": 1, "C": 2, "E": 9})
    ['E', 'B', 'C', 'A']
    """
    head = [n for n in dict.fromkeys(first) if n in names]
    rest = [n for n in names if n not in head]
    if costs:
        rest.sort(key=lambda n: (costs.get(n, float("inf")), names.index(n)))
    return head + rest


@dataclass(frozen=True)
class SchedulerState:
    """A snapshot of a scheduler: what is ready, running, queued and failed, and the running stage."""

    ready: tuple[str, ...]  # in the scheduler's name order
    running: str | None
    queued: tuple[str, ...]  # in the order they will run
    failed: Mapping[str, str] = field(default_factory=dict)
    stage: str = ""
    done: int = 0
    total: int = 0
    started: float = 0.0  # time.monotonic() of the start
    finished_at: float | None = None  # time.monotonic() when the queue emptied

    @property
    def finished(self) -> bool:
        """Nothing running and nothing queued."""
        return self.running is None and not self.queued

    def describe(self) -> str:
        """One line: ``ready E, C · computing A (embedding A 340/918) · queued B, D``."""
        parts = [f"ready {', '.join(self.ready)}" if self.ready else "nothing ready yet"]
        if self.running:
            stage = f" ({self.stage} {self.done}/{self.total})" if self.total else ""
            parts.append(f"computing {self.running}{stage}")
        if self.queued:
            parts.append(f"queued {', '.join(self.queued)}")
        for name, err in self.failed.items():
            parts.append(f"{name} failed: {err}")
        return " · ".join(parts)


class Scheduler:
    """Run ``work(name, report)`` for every name on one background thread, front of the queue first.

    Parameters
    ----------
    names : the strategies, in display order.
    work : computes one name; ``report(stage, done, total)`` feeds the progress shown.
    order : the initial queue order (default: ``names``).
    prepare : called once on the thread before the first name (e.g. seeding a store).
    start : start the thread now.
    """

    def __init__(self, names: Sequence[str], work: Work, *, order: Sequence[str] | None = None,
                 prepare: Callable[[Report], None] | None = None, start: bool = True):
        names = list(dict.fromkeys(names))
        order = list(dict.fromkeys(order)) if order is not None else list(names)
        if sorted(order) != sorted(names):
            raise ValueError(f"order {order} must list exactly the names {names}")
        self.names = tuple(names)
        self._work = work
        self._prepare = prepare
        self._queue = order
        self._results: dict[str, Any] = {}
        self._failed: dict[str, str] = {}
        self._running: str | None = None
        self._stage = ("", 0, 0)
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stop = False
        self._started = time.monotonic()
        self._finished_at: float | None = None
        if start:
            self.start()

    # ----- control ---------------------------------------------------------------
    def start(self) -> None:
        """Start the background thread (once)."""
        with self._cond:
            if self._thread is not None:
                return
            self._started = time.monotonic()
            self._thread = threading.Thread(target=self._loop, name="ragdiag-progressive", daemon=True)
            self._thread.start()

    def prioritize(self, *names: str) -> None:
        """Move ``names`` that are still queued to the front, in the given order (others are ignored)."""
        with self._cond:
            front = [n for n in dict.fromkeys(names) if n in self._queue]
            if front:
                self._queue = front + [n for n in self._queue if n not in front]

    def close(self) -> None:
        """Stop after the running name (queued ones are dropped)."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()

    # ----- reading -----------------------------------------------------------------
    def state(self) -> SchedulerState:
        with self._cond:
            return SchedulerState(
                ready=tuple(n for n in self.names if n in self._results),
                running=self._running,
                queued=tuple(self._queue),
                failed=dict(self._failed),
                stage=self._stage[0], done=self._stage[1], total=self._stage[2],
                started=self._started, finished_at=self._finished_at,
            )

    def results(self) -> dict[str, Any]:
        """The finished names' results, in name order."""
        with self._cond:
            return {n: self._results[n] for n in self.names if n in self._results}

    def wait(self, names: Iterable[str], timeout: float | None = None) -> bool:
        """Block until every name in ``names`` is ready or failed; False on timeout."""
        wanted = set(names)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not wanted <= (set(self._results) | set(self._failed)):
                if self._stop and self._running is None:
                    return False
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(0.5 if left is None else min(left, 0.5))
            return True

    # ----- the thread -----------------------------------------------------------------
    def _report(self, stage: str, done: int, total: int) -> None:
        with self._cond:
            self._stage = (stage, int(done), int(total))

    def _loop(self) -> None:
        if self._prepare is not None:
            try:
                self._prepare(self._report)
            except Exception:  # noqa: BLE001 - preparing is an optimisation (seeding); the work goes on
                pass
        while True:
            with self._cond:
                if self._stop or not self._queue:
                    self._running = None
                    self._finished_at = time.monotonic()
                    self._cond.notify_all()
                    return
                name = self._running = self._queue.pop(0)
                self._stage = ("", 0, 0)
            try:
                result = self._work(name, self._report)
            except Exception as exc:  # noqa: BLE001 - recorded and shown; the other names go on
                with self._cond:
                    self._failed[name] = f"{type(exc).__name__}: {exc}"
                    self._cond.notify_all()
            else:
                with self._cond:
                    self._results[name] = result
                    self._cond.notify_all()


def merge_evaluations(parts: Sequence[Any]):
    """One :class:`~ragdiag.evaluate.Evaluation` from per-strategy ones of the same corpus, truth and queries.

    Indexes and results keep the parts' order; unavailable retrievers,
    timings, retriever stamps and notes are joined; the device is the first part's that computed vectors.
    """
    from .evaluate import Evaluation

    if not parts:
        raise ValueError("merge_evaluations needs at least one evaluation")
    first = parts[0]
    for p in parts[1:]:
        if p.corpus.sha256 != first.corpus.sha256 or [q.id for q in p.queries] != [q.id for q in first.queries]:
            raise ValueError("cannot merge evaluations of different corpora or query sets")
    indexes, results, unavailable, timings, stamps, notes = {}, {}, {}, {}, {}, {}
    for p in parts:
        indexes.update(p.indexes)
        results.update(p.results)
        unavailable.update(p.unavailable)
        stamps.update(p.retriever_stamps)
        notes.update(p.notes)
        timings.update({k: v for k, v in p.timings.items() if k != "total"})
    stamp = dict(first.encoder_stamp)
    devices = [p.encoder_stamp.get("device") for p in parts if p.encoder_stamp.get("device")]
    if "device" in stamp or devices:
        stamp["device"] = devices[0] if devices else None
    timings["total"] = sum(p.timings.get("total", 0.0) for p in parts)
    return Evaluation(first.corpus, first.truth, first.queries, indexes, results, unavailable, stamp, timings,
                      first.diagnosis_k, retriever_stamps=stamps, notes=notes)
