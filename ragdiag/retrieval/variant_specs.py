"""Dense variants in the retriever registry: precision, index and model, by name.

``dense-int8``, ``dense-int8-rescore``, ``dense-binary``, ``dense-binary-rescore``
and ``dense-hnsw`` are specified here (:func:`variant_specs`; :mod:`.builtin`
registers them; not part of the default set: name them, e.g.
``--retrievers dense,dense-int8``); ``dense`` itself takes a model after
``@`` (``dense@use``, ``dense@/path/to/model``), and so does every variant
(``dense-binary-rescore@use``). A model other than the run's encoder embeds the
chunks and the queries itself (through the store, under its own stamp), and its
configurations carry its own cosine distances for the distance gate.
"""

from __future__ import annotations

import numpy as np

from ..index.encoder.resolve import DEFAULT_MODEL, ModelUnavailable
from ..index.models import load_encoder, model_label
from .ann import HNSWParams
from .base import QueryBatch, Ranking, Unavailable
from .quantized import DEFAULT_RESCORE
from .registry import BuildContext, RetrieverSpec
from .variant_kinds import Variant, build_variant

__all__ = ["build_dense_variant", "ModelRetriever", "variant_specs"]

_DESCRIPTIONS = {
    "dense-int8": "8-bit scalar codes calibrated on the corpus (1 byte per dimension); @MODEL for another model",
    "dense-int8-rescore": "8-bit codes, the top 50 rescored by the float vectors; @MODEL for another model",
    "dense-binary": "sign bits, Hamming ranking (1 bit per dimension); @MODEL for another model",
    "dense-binary-rescore": "sign bits, the top 50 rescored by the float vectors; @MODEL for another model",
    "dense-hnsw": "approximate search, HNSW graph (FAISS; M 16, ef 200/64); @MODEL for another model",
}


class ModelRetriever:
    """A dense variant whose model is not the run's encoder: embeds the queries itself, keeps its distances."""

    def __init__(self, name: str, inner, encoder, chunk_vectors: np.ndarray, store=None):
        self.name = name
        self.inner = inner
        self.encoder = encoder
        self.vectors = np.asarray(chunk_vectors, dtype=np.float32)
        self.store = store
        self._queries: dict[tuple[str, ...], np.ndarray] = {}

    def query_vectors(self, texts: tuple[str, ...]) -> np.ndarray:
        """The queries embedded with this variant's own model (through the store when given; once per batch)."""
        if texts not in self._queries:
            enc, store = self.encoder, self.store
            self._queries[texts] = store.embed(enc, list(texts)).vectors if store is not None else enc.encode(list(texts))
        return self._queries[texts]

    def cosine_distances(self, batch: QueryBatch) -> np.ndarray:
        """1 - q.c with this model's query and chunk vectors (the gate's distances for this configuration)."""
        q = self.query_vectors(batch.texts)
        return 1.0 - np.asarray(q, dtype=np.float64) @ self.vectors.astype(np.float64).T

    def stamp(self) -> dict:
        """The inner retriever's stamp with this variant's model added."""
        inner = self.inner.stamp() if hasattr(self.inner, "stamp") else {}
        return {**inner, "model": self.encoder.stamp.as_dict()}

    def rank(self, batch: QueryBatch, *, depth: int | None = None) -> list[Ranking]:
        """The inner retriever's ranking of the batch, with query vectors from this variant's model."""
        return self.inner.rank(QueryBatch(batch.texts, self.query_vectors(batch.texts)), depth=depth)


def build_dense_variant(ctx: BuildContext):
    """Build ``ctx.name`` (``BASE[@MODEL]``) for one strategy; Unavailable when the model or library is missing."""
    base = ctx.name.partition("@")[0]
    variant = Variant(base, ctx.param)
    rescore = int(ctx.options.get("rescore", DEFAULT_RESCORE))
    hnsw = ctx.options.get("hnsw") or HNSWParams()
    if ctx.param is None or (model_label(ctx.param) == "minilm" and _is_default(ctx)):
        retriever = build_variant(variant, ctx.vectors, rescore=rescore, hnsw=hnsw)
        retriever.name = ctx.name
        return retriever

    def load():
        try:
            return load_encoder(ctx.param)
        except (ModelUnavailable, ValueError, OSError) as exc:
            raise Unavailable(ctx.name, str(exc)) from None

    try:
        encoder = ctx.shared(f"encoder@{ctx.param}", load)
    except Unavailable as exc:
        raise Unavailable(ctx.name, exc.reason) from None
    texts = list(ctx.texts)
    vectors = ctx.store.embed(encoder, texts).vectors if ctx.store is not None else encoder.encode(texts)
    inner = build_variant(variant, vectors, rescore=rescore, hnsw=hnsw)
    return ModelRetriever(ctx.name, inner, encoder, vectors, ctx.store)


def _is_default(ctx: BuildContext) -> bool:
    """Is the run's encoder the bundled MiniLM (so ``@minilm`` can reuse the run's vectors)?"""
    stamp = getattr(ctx.encoder, "stamp", None)
    return stamp is None or getattr(stamp, "model", DEFAULT_MODEL) in (DEFAULT_MODEL, "all-MiniLM-L6-v2")


def variant_specs() -> list[RetrieverSpec]:
    """The specs of the dense variants (not default: named to be run), each a version of ``dense``."""
    return [RetrieverSpec(name, build=build_dense_variant, description=description, default=False,
                          parametric=True, variant_of="dense")
            for name, description in _DESCRIPTIONS.items()]
