"""The adapter protocol, and a store's answers turned into an external run of the evaluation.

To evaluate another vector database, write one class::

    class MyStore:
        name = "mystore"
        distances = True  # hit scores are cosine distances (lower = closer); False: no usable distance

        def search(self, vectors, k):
            # vectors: (queries x dim) float32 unit vectors; one list of ExternalHit per query, best first
            return [[ExternalHit(text=..., doc=..., start=..., end=..., score=...) for ... in ...] for v in vectors]

and call :func:`evaluate_store`. ``doc``/``start``/``end`` are the chunk's
document id and character offsets in ragdiag's canonical text when the store
kept them; without them a hit is matched by whitespace-normalised text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, Sequence, runtime_checkable

import numpy as np

from ..core.defaults import TOP
from ..evaluation.external import ExternalHit, ExternalRun, attach_run

__all__ = ["VectorStoreAdapter", "HitMapping", "StoreEvaluation", "map_hits", "store_run", "evaluate_store",
           "query_vectors"]

_WS = re.compile(r"\s+")


@runtime_checkable
class VectorStoreAdapter(Protocol):
    """What a vector database needs to be evaluated: a ``name``, whether scores are ``distances``, ``search``."""

    name: str
    distances: bool

    def search(self, vectors: np.ndarray, k: int) -> list[list[ExternalHit]]:
        """The top ``k`` hits for each row of ``vectors`` (unit float32), best first, one list per query."""
        ...


@dataclass(frozen=True)
class HitMapping:
    """How a store's hits were found in the corpus."""

    by_offsets: int  # stored document id and offsets, whose text is the hit's text
    by_text: int  # the hit's text found in a document (whitespace-normalised)
    unmapped: tuple[tuple[str, int, str], ...]  # (query id, 1-based rank, why) of hits found nowhere

    @property
    def total(self) -> int:
        """Every hit the store returned, mapped or not."""
        return self.by_offsets + self.by_text + len(self.unmapped)

    def summary(self) -> str:
        """One line for the user: how many hits were mapped by offsets, by text, and which were not."""
        text = f"{self.total} hits: {self.by_offsets} mapped by offsets, {self.by_text} by text"
        if self.unmapped:
            shown = ", ".join(f"{q} #{r}" for q, r, _ in self.unmapped[:5])
            text += f"; {len(self.unmapped)} UNMAPPED (not in this corpus: {shown}{', ...' if len(self.unmapped) > 5 else ''})"
        return text


@dataclass(frozen=True)
class StoreEvaluation:
    """What :func:`evaluate_store` returns: the store's key, the hit mapping, the run, the evaluation with it."""

    config: object  # the ExternalKey (ext/NAME) the store's results were attached under
    mapping: HitMapping
    run: ExternalRun
    evaluation: object = None  # the evaluation with the store's run attached (the one given is left unchanged)


def _norm(text: str) -> str:
    return _WS.sub(" ", text).strip()


class _Locator:
    """Finds hit texts in the corpus (normalised containment), each distinct text once."""

    def __init__(self, corpus):
        self.docs = {d.id: d for d in corpus.documents}
        self._norm = None
        self._seen: dict[str, bool] = {}

    def offsets_match(self, hit: ExternalHit) -> bool:
        doc = self.docs.get(hit.doc) if hit.doc is not None else None
        if doc is None or hit.start is None or hit.end is None or hit.end > len(doc.text):
            return False
        return _norm(doc.text[hit.start : hit.end]) == _norm(hit.text)

    def contains(self, text: str) -> bool:
        if text not in self._seen:
            if self._norm is None:
                self._norm = [_norm(d.text) for d in self.docs.values()]
            t = _norm(text)
            self._seen[text] = bool(t) and any(t in d for d in self._norm)
        return self._seen[text]


def map_hits(corpus, hits: dict[str, Sequence[ExternalHit]]) -> tuple[dict[str, tuple[ExternalHit, ...]], HitMapping]:
    """Keep offsets that point at the hit's text; drop offsets that do not (the text decides); report the rest."""
    loc = _Locator(corpus)
    out: dict[str, tuple[ExternalHit, ...]] = {}
    by_offsets = by_text = 0
    unmapped = []
    for qid, hs in hits.items():
        mapped = []
        for rank, h in enumerate(hs, 1):
            if h.doc is not None and h.start is not None and loc.offsets_match(h):
                by_offsets += 1
                mapped.append(h)
                continue
            text_only = ExternalHit(h.text, None, None, None, h.score)
            if loc.contains(h.text):
                by_text += 1
            else:
                why = "offsets point elsewhere and " if h.start is not None else ""
                unmapped.append((qid, rank, why + "its text is in no document"))
            mapped.append(text_only)
        out[qid] = tuple(mapped)
    return out, HitMapping(by_offsets, by_text, tuple(unmapped))


def query_vectors(queries, encoder, store=None) -> np.ndarray:
    """The queries' unit vectors with ragdiag's encoder (through the store when given, as ``evaluate`` does)."""
    texts = [q.text for q in queries]
    return store.embed(encoder, texts).vectors if store is not None else encoder.encode(texts)


def store_run(ev, adapter: VectorStoreAdapter, vectors: np.ndarray, *, k: int = TOP,
              name: str | None = None, batch: int = 64) -> tuple[ExternalRun, HitMapping]:
    """Ask ``adapter`` for every query of ``ev`` (vectors in ``ev.queries`` order) and map the hits back."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if len(vectors) != len(ev.queries):
        raise ValueError(f"one query vector per query of the evaluation: {len(ev.queries)} queries, {len(vectors)} vectors")
    raw: dict[str, list[ExternalHit]] = {}
    for a in range(0, len(vectors), batch):
        answers = adapter.search(vectors[a : a + batch], k)
        if len(answers) != len(vectors[a : a + batch]):
            raise ValueError(f"{adapter.name}: search returned {len(answers)} answers for {len(vectors[a:a + batch])} queries")
        for q, hs in zip(ev.queries[a : a + batch], answers):
            raw[q.id] = list(hs)[:k]
    hits, mapping = map_hits(ev.corpus, raw)
    run = ExternalRun(name or adapter.name, hits, (), adapter.name, bool(adapter.distances))
    return run, mapping


def evaluate_store(ev, adapter: VectorStoreAdapter, vectors: np.ndarray, *, k: int = TOP,
                   name: str | None = None) -> StoreEvaluation:
    """Evaluate the store beside ragdiag's configurations (``ext/NAME``): tables, paired tests, gate.

    The returned ``evaluation`` is ``ev`` with the store's run attached; ``ev`` is left unchanged.
    """
    run, mapping = store_run(ev, adapter, vectors, k=k, name=name)
    return StoreEvaluation(run.key, mapping, run, attach_run(ev, run))
