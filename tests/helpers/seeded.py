"""The bundled corpus evaluated on a store seeded from its shipped snapshot (the real encoder's vectors, no
embedding): the model tests' quick way to a real evaluation."""

from __future__ import annotations


def seeded_evaluation(corpus, truth, encoder, folder, *, strategies: str, retrievers: str):
    """``evaluate`` on a fresh store in ``folder``, seeded from the snapshot first."""
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.snapshot import seed_from_snapshot
    from ragdiag.index.store import Store

    store = Store(folder)
    seed_from_snapshot(store, corpus, truth, encoder)
    return evaluate(corpus, truth, encoder=encoder, store=store, strategies=strategies, retrievers=retrievers)
