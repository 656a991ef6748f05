"""The cut read under the gate's own model: which model, its chunk vectors, and the cut's percentile.

A distance cut means something only for the model that produced the distances.
:func:`gate_model` names the model a configuration's gate reads,
:func:`gate_chunk_vectors` gives its chunk vectors, and
:func:`cut_percentile` of :func:`nearest_chunk_distances` reads a cut without
any model: the share of chunks whose nearest other chunk lies within it.
"""

from __future__ import annotations

import numpy as np

from ..core.gate import under_each

from ..evaluation.records import Config, Evaluation
from ..index.models import load_encoder, model_label, split_model

__all__ = ["nearest_chunk_distances", "cut_percentile", "gate_model", "gate_chunk_vectors"]


def nearest_chunk_distances(vectors: np.ndarray, *, block: int = 512, sample: int | None = None,
                            seed: int = 0) -> np.ndarray:
    """Per chunk, the cosine distance to its nearest other chunk (unit vectors).

    ``sample``: when there are more chunks than this, only a seeded random ``sample`` of them (each still
    against every chunk): every chunk against every other is quadratic (100,000 chunks: 7.7 TFLOP), a
    sample's percentiles are within a point or two of the whole's.

    >>> nearest_chunk_distances(np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])).round(2).tolist()
    [0.4, 0.2, 0.2]
    >>> nearest_chunk_distances(np.eye(5), sample=2).tolist()
    [1.0, 1.0]
    """
    v = np.asarray(vectors, dtype=np.float64)
    n = len(v)
    if n < 2:
        raise ValueError("nearest-chunk distances need at least two chunks")
    if sample is not None and sample < 1:
        raise ValueError(f"sample must be at least 1, got {sample}")
    rows = (np.sort(np.random.default_rng(seed).choice(n, size=sample, replace=False))
            if sample is not None and n > sample else np.arange(n))
    out = np.empty(len(rows))
    for s in range(0, len(rows), block):
        part = rows[s : s + block]
        sims = v[part] @ v.T
        sims[np.arange(len(part)), part] = -np.inf
        out[s : s + block] = 1.0 - sims.max(axis=1)
    return out


def cut_percentile(cut: float, nearest: np.ndarray) -> float:
    """Percent of chunks whose nearest other chunk is closer than ``cut``: the cut's model-free reading.

    >>> cut_percentile(0.3, np.array([0.1, 0.2, 0.4, 0.5]))
    50.0
    """
    nearest = np.asarray(nearest, dtype=np.float64)
    if nearest.size == 0:
        raise ValueError("no nearest-chunk distances")
    return float(100.0 * np.mean(under_each(nearest, cut)[0]))


def gate_model(ev: Evaluation, config) -> str:
    """The model whose cosine distances a configuration's gate reads: ``minilm``, ``use``, a folder...

    Retrievers named ``...@MODEL`` carry their model's distances; every other
    configuration (bm25, hybrid, rerankers too) reads the run encoder's.
    """
    cfg = Config.parse(config) if isinstance(config, str) else config
    _, param = split_model(cfg.retriever)
    if param is not None:
        return model_label(param)
    return model_label(ev.encoder_stamp.get("model"))


def gate_chunk_vectors(ev: Evaluation, config, *, store=None) -> np.ndarray:
    """The chunk vectors behind a configuration's distances (another model's come from the store or are embedded)."""
    cfg = Config.parse(config) if isinstance(config, str) else config
    index = ev.indexes[cfg.strategy]
    _, param = split_model(cfg.retriever)
    if param is None:
        return index.vectors
    encoder = load_encoder(param)
    texts = [c.embed_text for c in index.chunks]
    return store.embed(encoder, texts).vectors if store is not None else encoder.encode(texts)
