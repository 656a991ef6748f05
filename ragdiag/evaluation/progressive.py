"""Progressive evaluation: one strategy at a time, what the user looks at first.

A :class:`Scheduler` computes strategy names on one background thread, front
of the queue first, each result handed over as soon as it is ready. With
``run_pass`` (the dashboard's :func:`evaluation_pass`) the queue is computed
in one pass that does the run-level work once (query vectors, the
retrievers' shared models) instead of once per strategy; with ``work`` it is
``work(name, report)`` per name. Anyone may move strategies to the front
(:meth:`Scheduler.prioritize`: the pass stops after its running strategy and
a new one starts from the new front) or wait for some
(:meth:`Scheduler.wait`); :meth:`Scheduler.state` is a frozen snapshot to
draw ("ready: E · computing C 340/918 · queued A, B"). A failing strategy is
recorded with its error and the others go on.

:func:`merge_evaluations` joins per-strategy evaluations into one
:class:`~ragdiag.evaluation.evaluate.Evaluation`, so pages read a partial result exactly
as they read a full one. Nothing here imports streamlit: the dashboard holds
one scheduler per input set in ``st.cache_resource`` and only draws it.

>>> import time
>>> done = []
>>> def one_by_one(order, report, publish):
...     for name in order:
...         done.append(name)
...         if not publish(name, name.lower()):
...             return
>>> s = Scheduler(["A", "B", "C"], one_by_one, start=False)
>>> s.prioritize("C")
>>> s.start(); s.wait(["A", "B", "C"], timeout=10)
True
>>> done, s.results()
(['C', 'A', 'B'], {'A': 'a', 'B': 'b', 'C': 'c'})
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from .evaluate import evaluate
from .records import Evaluation

__all__ = ["Scheduler", "SchedulerState", "merge_evaluations", "first_order", "evaluation_pass", "strategy_part"]

Report = Callable[[str, int, int], None]
Publish = Callable[[str, Any], bool]
Pass = Callable[[Sequence[str], Report, Publish], None]


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
    ended: tuple[str, ...] = ()  # ready and failed names, in the order they ended
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
    """Compute every name on one background thread, front of the queue first, in passes.

    Parameters
    ----------
    names : the strategies, in display order.
    run_pass : ``run_pass(order, report, publish)`` computes the names of ``order`` one after the other
        in one pass that shares its run-level work (models, query vectors), feeds the progress shown
        with ``report(stage, done, total)`` and hands each result over as it is ready with
        ``publish(name, result)``; when that returns False (a name was moved to the front, or the
        scheduler closed) the pass stops and a new one starts from the queue. An exception ends the
        pass and is recorded as the running name's failure.
    order : the initial queue order (default: ``names``).
    prepare : called once on the thread before the first name (e.g. seeding a store).
    start : start the thread now.
    """

    def __init__(self, names: Sequence[str], run_pass: Pass, *, order: Sequence[str] | None = None,
                 prepare: Callable[[Report], None] | None = None, start: bool = True):
        names = list(dict.fromkeys(names))
        order = list(dict.fromkeys(order)) if order is not None else list(names)
        if sorted(order) != sorted(names):
            raise ValueError(f"order {order} must list exactly the names {names}")
        self.names = tuple(names)
        self._run_pass = run_pass
        self._prepare = prepare
        self._queue = order
        self._pass: list[str] = []  # the running pass's order
        self._passes = 0
        self._results: dict[str, Any] = {}
        self._failed: dict[str, str] = {}
        self._ended: list[str] = []
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
        """Move ``names`` that are still queued to the front, in the given order (others are ignored).

        A pass under way finishes its running name first, then a new pass starts from the new front.
        """
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
        """A frozen snapshot: ready, running (with its stage), queued and failed names."""
        with self._cond:
            return SchedulerState(
                ready=tuple(n for n in self.names if n in self._results),
                running=self._running,
                queued=tuple(self._queue),
                failed=dict(self._failed), ended=tuple(self._ended),
                stage=self._stage[0], done=self._stage[1], total=self._stage[2],
                started=self._started, finished_at=self._finished_at,
            )

    @property
    def passes(self) -> int:
        """How many passes have started (one, unless names were moved to the front or failed)."""
        with self._cond:
            return self._passes

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

    def _publish(self, name: str, result: Any) -> bool:
        """Record the running name's result; True when the pass should go on with its next name."""
        with self._cond:
            if name != self._running:
                raise ValueError(f"a pass published {name!r} while {self._running!r} was running: "
                                 "a pass must compute its names in the order it was given")
            self._results[name] = result
            self._ended.append(name)
            self._cond.notify_all()
            position = self._pass.index(name)
            following = self._pass[position + 1] if position + 1 < len(self._pass) else None
            if following is not None and not self._stop and self._queue and self._queue[0] == following:
                self._running = self._queue.pop(0)
                self._stage = ("", 0, 0)
                return True
            self._running = None  # the pass is over, or must stop: the loop starts the next from the queue
            return False

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
                self._pass = list(self._queue)
                self._running = self._queue.pop(0)
                self._stage = ("", 0, 0)
                self._passes += 1
            try:
                self._run_pass(tuple(self._pass), self._report, self._publish)
                error = "the pass ended without computing it"
            except Exception as exc:  # noqa: BLE001 - recorded and shown; the other names go on
                error = f"{type(exc).__name__}: {exc}"
            with self._cond:
                if self._running is not None:  # it failed (or the pass skipped it): the rest go on in a new pass
                    self._failed[self._running] = error
                    self._ended.append(self._running)
                    self._running = None
                    self._cond.notify_all()


class _StopPass(Exception):
    """Raised from a pass's per-strategy callback to end the evaluation early (it is caught)."""


def strategy_part(partial, before=None, *, seconds: float | None = None):
    """The part of ``partial`` (an evaluation after some strategies) that ``before`` (after fewer) lacks.

    Indexes, results, retriever stamps, notes and timings keep only the new
    keys (``seconds``, when given, is the part's ``timings["total"]``);
    unavailable retrievers are kept whole. :func:`merge_evaluations` of the
    parts gives back the whole.
    """
    def new(now: Mapping, old: Mapping | None) -> dict:
        return {k: v for k, v in now.items() if old is None or k not in old}

    return replace(partial, indexes=new(partial.indexes, before and before.indexes),
                   results=new(partial.results, before and before.results),
                   retriever_stamps=new(partial.retriever_stamps, before and before.retriever_stamps),
                   notes=new(partial.notes, before and before.notes),
                   timings={**new(partial.timings, before and before.timings),
                            **({"total": seconds} if seconds is not None else {})},
                   unavailable=dict(partial.unavailable))


def evaluation_pass(corpus, truth, *, encoder, retrievers=None, store=None,
                    on_part: Callable[[Any], None] | None = None, **options) -> Pass:
    """A ``run_pass`` for :class:`Scheduler`: one :func:`~ragdiag.evaluation.evaluate.evaluate` over the pass's strategies.

    The run-level work (query vectors, the retrievers' shared models, the
    wordpiece-vector sinks) is done once per pass, not once per strategy.
    Each strategy's own evaluation (:func:`strategy_part`) is published as
    soon as it is ranked, after ``on_part(part)`` (e.g. stamping the store's
    catalogue); ``options`` go to ``evaluate`` (``cross_encoder``,
    ``rerank_head``).
    """
    def run(order: Sequence[str], report: Report, publish: Publish) -> None:
        last: list = [None, time.perf_counter()]

        def done(partial) -> None:
            name = list(partial.indexes)[-1]
            now = time.perf_counter()
            part = strategy_part(partial, last[0], seconds=now - last[1])
            last[:] = [partial, now]
            go_on = publish(name, part)  # shown first; stamping the catalogue may take a while
            if on_part is not None:
                on_part(part)
            if not go_on:
                raise _StopPass

        try:
            evaluate(corpus, truth, encoder=encoder, strategies=list(order), retrievers=retrievers, store=store,
                     progress=lambda event: report(event.label, event.done, event.total), on_strategy=done,
                     **options)
        except _StopPass:
            pass

    return run


def merge_evaluations(parts: Sequence[Any]):
    """One :class:`~ragdiag.evaluation.evaluate.Evaluation` from per-strategy ones of the same corpus, truth and queries.

    Indexes and results keep the parts' order; unavailable retrievers,
    timings, retriever stamps and notes are joined; the device is the first part's that computed vectors.
    """
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
    computed = next((p.encoder_stamp for p in parts if p.encoder_stamp.get("device")), None)
    if "device" in stamp or computed:  # the device, and how the model ran there, of the first part that computed
        stamp.pop("device_layout", None)
        stamp["device"] = computed["device"] if computed else None
        if computed and "device_layout" in computed:
            stamp["device_layout"] = computed["device_layout"]
    timings["total"] = sum(p.timings.get("total", 0.0) for p in parts)
    return Evaluation(first.corpus, first.truth, first.queries, indexes, results, unavailable, stamp, timings,
                      retriever_stamps=stamps, notes=notes)
