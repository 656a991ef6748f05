"""The dense variants by kind: precision, rescoring and index of each ``dense-*`` retriever name.

A :class:`Variant` is one point of model x precision x index (``dense-int8@use``);
:func:`build_variant` makes its retriever over a model's chunk vectors. The
registry (:mod:`ragdiag.retrieval.variant_specs`) and the variants table
(:mod:`ragdiag.analyses.variants`) both read them from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..index.models import model_label, split_model
from .ann import HNSWParams, HNSWRetriever
from .quantized import DEFAULT_RESCORE, BinaryRetriever, ExactRetriever, Int8Retriever

__all__ = ["VARIANT_KINDS", "Variant", "parse_variant", "build_variant"]

#: retriever base name -> (precision, rescore, index)
VARIANT_KINDS = {
    "dense": ("fp32", False, "exact"),
    "dense-int8": ("int8", False, "exact"),
    "dense-int8-rescore": ("int8", True, "exact"),
    "dense-binary": ("binary", False, "exact"),
    "dense-binary-rescore": ("binary", True, "exact"),
    "dense-hnsw": ("fp32", False, "hnsw"),
}


@dataclass(frozen=True)
class Variant:
    """One point of model x precision x index; ``name`` is its retriever name (``dense-int8@use``)."""

    base: str
    model: str | None = None  # None: the default model (MiniLM)

    def __post_init__(self):
        if self.base not in VARIANT_KINDS:
            raise ValueError(f"unknown dense variant {self.base!r}; choose from {', '.join(VARIANT_KINDS)}")

    @property
    def name(self) -> str:
        """The retriever name: the base, with ``@model`` unless the model is the default."""
        label = model_label(self.model)
        return self.base if label == "minilm" else f"{self.base}@{self.model}"

    @property
    def precision(self) -> str:
        """``fp32``, ``int8`` or ``binary``."""
        return VARIANT_KINDS[self.base][0]

    @property
    def rescore(self) -> bool:
        """Whether a shortlist is rescored with the float vectors."""
        return VARIANT_KINDS[self.base][1]

    @property
    def index(self) -> str:
        """``exact`` or ``hnsw``."""
        return VARIANT_KINDS[self.base][2]


def parse_variant(name: str) -> Variant:
    """``"dense-binary-rescore@use"`` -> ``Variant("dense-binary-rescore", "use")``."""
    base, param = split_model(name.strip())
    base = base.lower()
    return Variant(base, None if model_label(param) == "minilm" else param)


def build_variant(variant: Variant, vectors: np.ndarray, *, rescore: int = DEFAULT_RESCORE,
                  hnsw: HNSWParams = HNSWParams()):
    """The retriever of one variant over a model's chunk vectors (raises Unavailable without FAISS)."""
    if variant.index == "hnsw":
        return HNSWRetriever(vectors, hnsw)
    if variant.precision == "int8":
        return Int8Retriever(vectors, rescore=rescore if variant.rescore else None)
    if variant.precision == "binary":
        return BinaryRetriever(vectors, rescore=rescore if variant.rescore else None)
    return ExactRetriever(vectors)
