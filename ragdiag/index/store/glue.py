"""Where the store meets the rest of ragdiag: the stamps a run would build now, and recording a run's indexes."""

from __future__ import annotations

from typing import Any

from ..chunking import chunk_corpus, parse_strategies
from .stamps import IndexStamp, evaluation_stamps, index_stamp

__all__ = ["current_stamps", "record_evaluation"]


def current_stamps(corpus: Any, encoder: Any, strategies: Any = None) -> list[IndexStamp]:
    """The stamps the indexes of ``corpus`` would get now, one per strategy (default: all six).

    ``encoder`` is an :class:`~ragdiag.index.encoder.Encoder` (or anything with a
    ``stamp``); chunk counts come from chunking the corpus (pure and fast).
    Pass the result to :meth:`Store.status` or :meth:`Store.clear`.
    """
    stamp = encoder.stamp
    return [index_stamp(stamp, corpus, s.params(), len(chunk_corpus(corpus, s))) for s in parse_strategies(strategies)]


def record_evaluation(store: Any, evaluation: Any) -> list[IndexStamp]:
    """Record in ``store`` (a :class:`~ragdiag.index.store.Store`) one catalogue row per strategy index of an evaluation.

    Each row counts the chunks whose vectors the store actually holds. Returns
    the stamps as recorded; nothing when the encoder had no stamp.
    """
    stamps = evaluation_stamps(evaluation)
    return [store.record_index(stamps[name], texts=[c.embed_text for c in index.chunks])
            for name, index in evaluation.indexes.items() if name in stamps]
