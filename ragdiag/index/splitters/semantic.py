"""Strategy S: semantic chunking, a cut where consecutive sentences' embeddings diverge.

LangChain's ``SemanticChunker`` recipe with its defaults, on ragdiag's encoder:

1. the document's sentences (:func:`ragdiag.index.splitters._text.sentence_units`);
2. each sentence embedded together with one neighbour either side
   (``buffer_size=1``), with the run's encoder: the evaluation chunks under
   :func:`breakpoint_encoder` (``--model``), so the breakpoints come from the
   model the run embeds with; outside one, the default model (all-MiniLM-L6-v2,
   or the encoder ``RAGDIAG_ENCODER`` names);
3. the cosine distance between each sentence's vector and the next one's;
4. a breakpoint after every sentence whose distance is above the document's
   95th percentile of those distances (``breakpoint_threshold_type="percentile"``,
   :data:`PERCENTILE` = 95), and before every ``## `` section;
5. unlike LangChain, a group of sentences longer than the strategy's size is
   packed into chunks of at most that size at sentence ends (a sentence longer
   than the size cut at whitespace), so no chunk runs past the encoder window.

Breakpoints are computed once per document text and encoder (memoised).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import os
from typing import Any, Iterator

import numpy as np

from ...documents.corpus import Document
from ..models import ENCODER_ENV
from ._text import pack, sentence_units
from .sentences import fit

__all__ = ["PERCENTILE", "BUFFER", "breakpoints", "semantic_spans", "breakpoint_encoder"]

#: Breakpoints above this percentile of a document's consecutive-sentence distances (LangChain's default).
PERCENTILE = 95.0
#: Sentences either side embedded with each sentence (LangChain's ``buffer_size``).
BUFFER = 1


#: The encoder finding breakpoints now (set by :func:`breakpoint_encoder`); None: the default model.
_GIVEN: contextvars.ContextVar[Any] = contextvars.ContextVar("ragdiag_breakpoint_encoder", default=None)
#: Encoders given so far, by the identity the memo keys on (so the memo never serves one encoder's cuts for another's).
_BY_IDENTITY: dict[str, Any] = {}


@functools.lru_cache(maxsize=2)
def _encoder(seam: str):
    from ..models import load_encoder

    return load_encoder(None)


def _identity(encoder: Any) -> str:
    """What the breakpoints memo keys an encoder by: its stamp (the model, weights, precision), else the object."""
    stamp = getattr(encoder, "stamp", None)
    stamp = stamp.as_dict() if hasattr(stamp, "as_dict") else stamp
    try:
        return "stamp:" + json.dumps(stamp, sort_keys=True, default=str) if stamp is not None else f"id:{id(encoder)}"
    except TypeError:
        return f"id:{id(encoder)}"


@contextlib.contextmanager
def breakpoint_encoder(encoder: Any) -> Iterator[None]:
    """Within the block, strategy S finds its breakpoints with ``encoder`` (the run's ``--model``); None: the default.

    ``encoder`` needs only ``encode(texts) -> unit vectors``.
    """
    if encoder is not None and not callable(getattr(encoder, "encode", None)):
        raise TypeError(f"a breakpoint encoder needs encode(texts), got {type(encoder).__name__}")
    token = _GIVEN.set(encoder)
    try:
        yield
    finally:
        _GIVEN.reset(token)


def _current() -> tuple[str, Any]:
    """``(memo key, encoder)`` of the encoder finding breakpoints now."""
    given = _GIVEN.get()
    if given is None:
        return "default:" + os.environ.get(ENCODER_ENV, ""), None
    key = _identity(given)
    _BY_IDENTITY[key] = given
    return key, given


def breakpoints(vectors: np.ndarray, *, percentile: float = PERCENTILE) -> np.ndarray:
    """Indices ``i`` with a cut between sentence ``i`` and ``i + 1`` (unit vectors, one per sentence).

    >>> v = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> breakpoints(v, percentile=50).tolist()
    [1]
    """
    if len(vectors) < 2:
        return np.zeros(0, dtype=np.int64)
    distances = 1.0 - np.einsum("ij,ij->i", vectors[:-1], vectors[1:])
    return np.flatnonzero(distances > np.percentile(distances, percentile))


@functools.lru_cache(maxsize=4096)
def _groups(doc_id: str, sha: str, text: str, seam: str, units: tuple) -> tuple:
    flat = [u for sec in units for u in sec]
    combined = [text[flat[max(i - BUFFER, 0)][0]:flat[min(i + BUFFER, len(flat) - 1)][1]] for i in range(len(flat))]
    encoder = _BY_IDENTITY[seam] if seam in _BY_IDENTITY else _encoder(seam)
    vectors = np.asarray(encoder.encode(combined), dtype=np.float64) if flat else np.zeros((0, 1))
    cut_after = set(breakpoints(vectors).tolist())
    ends, n = set(), 0
    for sec in units:  # a section's last sentence always ends a group
        n += len(sec)
        ends.add(n - 1)
    groups, current = [], []
    for i, u in enumerate(flat):
        current.append(u)
        if i in cut_after or i in ends:
            groups.append(tuple(current))
            current = []
    return tuple(groups)


def semantic_spans(doc: Document, size: int) -> list[tuple[int, int]]:
    """Sentence groups between semantic breakpoints, each packed into spans of at most ``size`` characters."""
    units = tuple(tuple(sec) for sec in sentence_units(doc))
    out: list[tuple[int, int]] = []
    for group in _groups(doc.id, doc.sha256, doc.text, _current()[0], units):
        run: list[tuple[int, int]] = []  # the sentences since the last one over the size
        for s, e in group:
            if e - s > size:  # one sentence over the size: cut at whitespace, nothing packed onto it
                out.extend(pack(run, size))
                out.extend(fit(doc.text, s, e, size))
                run = []
            else:
                run.append((s, e))
        out.extend(pack(run, size))
    return out
