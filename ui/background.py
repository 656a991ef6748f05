"""The shared background evaluation's record and how one is started (no caching here: :mod:`ui.cache` holds it).

A job seeds the store from the shipped index, then evaluates the configured
strategies in one pass (:func:`ragdiag.evaluation.progressive.evaluation_pass`): the first
configuration's strategy first, each strategy's tables shown as soon as it is
ranked, the run-level work (query vectors, shared models) done once.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field

from ragdiag.documents.corpus import Corpus
from ragdiag.evaluation.records import Evaluation
from ragdiag.documents.truth import GroundTruth

__all__ = ["Background", "start_background"]


@dataclass
class Background:
    """One input set's background job, shared by every browser session (held by :func:`ui.cache.background`).

    ``scheduler`` evaluates the strategies (:mod:`ragdiag.evaluation.progressive`);
    ``notes`` are its messages for the page (e.g. whether the shipped index was used).
    """

    scheduler: object
    notes: list = field(default_factory=list)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    _merged: tuple = field(default=((), None), repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def merged(self) -> tuple[Evaluation, tuple[str, ...]]:
        """The evaluation of the strategies ready now, merged once per ready set (every session reuses it)."""
        from ragdiag.evaluation.progressive import merge_evaluations

        parts = self.scheduler.results()
        ready = tuple(parts)
        with self._lock:
            if self._merged[0] != ready:
                self._merged = (ready, merge_evaluations(list(parts.values())))
            return self._merged[1], ready


def start_background(corpus: Corpus, truth: GroundTruth, *, strategies: tuple[str, ...],
                     retrievers: tuple[str, ...], first: str, encoder, open_store) -> Background:
    """A new :class:`Background` whose scheduler evaluates ``strategies`` (``first`` first) in a background thread.

    ``open_store`` returns the store (or raises when the cache folder cannot be
    used: then everything is computed and nothing is stored, and a note says so).
    """
    from ragdiag.evaluation.progressive import Scheduler, evaluation_pass, first_order
    from ragdiag.index.store.glue import record_evaluation

    notes: list[str] = []
    try:
        store = open_store()
    except Exception as exc:  # noqa: BLE001 - a cache folder that cannot be used: results anyway, stored nowhere
        notes.append(f"The cache folder cannot be used ({getattr(exc, 'strerror', None) or exc}); "
                     "everything is computed and nothing is stored.")
        store = None

    def prepare(report) -> None:
        from ragdiag.index.snapshot import seed_from_snapshot

        report("checking the shipped index", 0, 0)
        if store is not None:  # nothing to seed without a store
            seed_from_snapshot(store, corpus, truth, encoder, strategies=strategies, log=notes.append)

    def stamp(part: Evaluation) -> None:
        try:  # stamp the index in the store's catalogue, as the CLI does
            if store is not None:
                record_evaluation(store, part)
        except Exception as exc:  # noqa: BLE001 - the catalogue is bookkeeping; the results stand
            notes.append(f"Could not record the index stamps of {', '.join(part.indexes)} in the store: {exc}")

    run_pass = evaluation_pass(corpus, truth, encoder=encoder, retrievers=retrievers, store=store, on_part=stamp)
    return Background(Scheduler(strategies, run_pass=run_pass, order=first_order(strategies, first=[first]),
                                prepare=prepare), notes)
