"""Stamps: what determines a stored vector or index, built in one place.

An :class:`IndexStamp` holds the encoder's :class:`~ragdiag.index.encoder.EncoderStamp`
(by composition) plus the pipeline, extractors, corpus and chunking. Every
index stamp is made by :func:`index_stamp` (the catalogue rows a run records,
the stamps a run would build now, the dashboard's stamp table), and a run's
encoder stamp by :func:`run_stamp`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, fields
from typing import Any, Mapping, Sequence

import numpy as np

from ... import PIPELINE_VERSION
from ..encoder.protocols import ENCODER_FIELDS, EncoderStamp, ReportsDevice, TextEncoder, loaded_device
from .keys import _canonical, _now_iso, payload_space

__all__ = ["IndexStamp", "corpus_extractors", "encoder_space", "evaluation_stamps", "index_stamp", "run_stamp"]


def _stamp_dict(stamp: Any) -> dict:
    """An encoder stamp as a plain dict: an ``EncoderStamp`` or a mapping."""
    if hasattr(stamp, "as_dict"):
        stamp = stamp.as_dict()
    if not isinstance(stamp, Mapping):
        raise TypeError(f"an encoder stamp must be an EncoderStamp or a mapping, got {type(stamp).__name__}")
    missing = [k for k in ENCODER_FIELDS if k not in stamp]
    if missing:
        raise ValueError(f"encoder stamp lacks {', '.join(missing)}: got keys {sorted(stamp)}")
    return dict(stamp)


def encoder_space(stamp: Any) -> str:
    """The embedding space of an encoder stamp: sha256 of its canonical JSON.

    Two stamps that differ in anything (weights, precision, window...) give
    two spaces, so their vectors can never be served for each other.
    """
    return payload_space("embedding", _canonical(_stamp_dict(stamp)))


def _count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"IndexStamp.{name} must be a non-negative integer, got {value!r}")
    return int(value)


@dataclass(frozen=True, init=False)
class IndexStamp:
    """Everything that determines what an index holds, written beside it.

    ``encoder`` is the encoder's stamp; its fields also read as attributes
    (``stamp.model``, ``stamp.dim``...) and may be given one by one, flat, as
    the catalogue stores them (``IndexStamp(model=..., dim=..., ...)``, or
    ``dataclasses.replace(stamp, precision="bf16")``).
    ``key`` identifies the index: a hash of every field except ``created``
    and ``n_chunks`` (so rebuilding the same index replaces its row).
    ``n_chunks`` is the number of chunks the store actually holds vectors
    for when recorded with ``texts`` (see :meth:`Store.record_index`).
    ``extractor_versions`` are strings such as ``"markdown/1"`` (name/version).
    ``chunking`` is a JSON-able dict of the strategy's parameters.

    >>> from dataclasses import replace
    >>> enc = EncoderStamp("m", "w" * 64, 384, 256, "mean", True, "fp32")
    >>> s = IndexStamp(enc, pipeline_version="1", extractor_versions=("markdown/1",), corpus_sha256="c" * 64,
    ...                corpus_root="/docs", chunking={"strategy": "E", "size": 512}, n_chunks=940,
    ...                created="2026-01-01T00:00:00+00:00")
    >>> s.key == replace(s, n_chunks=10, created="2027-01-01T00:00:00+00:00").key
    True
    >>> s.key == replace(s, precision="bf16").key, replace(s, precision="bf16").encoder.precision
    (False, 'bf16')
    """

    encoder: EncoderStamp
    pipeline_version: str
    extractor_versions: tuple[str, ...]
    corpus_sha256: str
    corpus_root: str
    chunking: Mapping[str, Any]
    n_chunks: int
    created: str

    def __init__(self, encoder: EncoderStamp | Mapping[str, Any] | None = None, *, pipeline_version: str,
                 extractor_versions: Sequence[str], corpus_sha256: str, corpus_root: str,
                 chunking: Mapping[str, Any], n_chunks: int, created: str | None = None, **encoder_fields: Any):
        unknown = sorted(set(encoder_fields) - set(ENCODER_FIELDS))
        if unknown:
            raise TypeError(f"IndexStamp() got unexpected fields {unknown}")
        enc = _stamp_dict(encoder_fields) if encoder is None else {**_stamp_dict(encoder), **encoder_fields}
        enc = {k: enc[k] for k in ENCODER_FIELDS}
        for name in ("dim", "max_seq_length"):
            enc[name] = _count(name, enc[name])
        enc["normalize"] = bool(enc["normalize"])
        object.__setattr__(self, "encoder", EncoderStamp(**enc))
        object.__setattr__(self, "n_chunks", _count("n_chunks", n_chunks))
        if isinstance(extractor_versions, str):
            raise ValueError("extractor_versions must be a sequence of strings such as ('markdown/1',), not one string")
        object.__setattr__(self, "extractor_versions", tuple(sorted({str(v) for v in extractor_versions})))
        try:
            chunking = json.loads(_canonical(dict(chunking)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"IndexStamp.chunking must be a JSON-able dict of parameters: {exc}") from None
        object.__setattr__(self, "chunking", chunking)
        object.__setattr__(self, "pipeline_version", str(pipeline_version))
        object.__setattr__(self, "corpus_sha256", corpus_sha256)
        object.__setattr__(self, "corpus_root", corpus_root)
        object.__setattr__(self, "created", created or _now_iso())

    def __hash__(self) -> int:
        return hash((self.key, self.n_chunks, self.created))

    @classmethod
    def build(cls, encoder_stamp: Any, *, corpus_sha256: str, corpus_root: str | os.PathLike,
              chunking: Mapping[str, Any], n_chunks: int, extractor_versions: Sequence[str] = (),
              pipeline_version: str = PIPELINE_VERSION, created: str | None = None) -> IndexStamp:
        """The stamp of an index built now: encoder stamp (or its dict) plus corpus and chunking.

        ``corpus_root`` is made absolute, so the same folder matches from any working directory.
        """
        return cls(encoder_stamp, pipeline_version=pipeline_version, extractor_versions=tuple(extractor_versions),
                   corpus_sha256=corpus_sha256, corpus_root=os.path.abspath(os.fspath(corpus_root)),
                   chunking=chunking, n_chunks=n_chunks, created=created)

    @property
    def space(self) -> str:
        """The embedding space its vectors live in (see :func:`encoder_space`)."""
        return encoder_space(self.encoder)

    @property
    def slot(self) -> tuple[str, str]:
        """(corpus root, chunking parameters): what a current stamp is compared against."""
        return self.corpus_root, _canonical(self.chunking)

    @property
    def key(self) -> str:
        """sha256 of every field but ``created`` and ``n_chunks``: the index's identity in the catalogue."""
        d = self.as_dict()
        del d["created"], d["n_chunks"]
        return hashlib.sha256(_canonical(d).encode()).hexdigest()

    def as_dict(self) -> dict:
        """The stamp as one flat JSON-able dict (the encoder's fields beside the others), as stored."""
        return {**self.encoder.as_dict(), "pipeline_version": self.pipeline_version,
                "extractor_versions": list(self.extractor_versions), "corpus_sha256": self.corpus_sha256,
                "corpus_root": self.corpus_root, "chunking": dict(self.chunking), "n_chunks": self.n_chunks,
                "created": self.created}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> IndexStamp:
        """The stamp of a flat dict (see :meth:`as_dict`); unknown keys are ignored."""
        names = {f.name for f in fields(cls)} | set(ENCODER_FIELDS)
        return cls(**{k: v for k, v in d.items() if k in names})


def _encoder_field(name: str) -> property:
    return property(lambda self: getattr(self.encoder, name), doc=f"The encoder stamp's ``{name}``.")


for _name in ENCODER_FIELDS:  # stamp.model, stamp.dim...: read through to the encoder stamp
    setattr(IndexStamp, _name, _encoder_field(_name))


def corpus_extractors(corpus: Any) -> tuple[str, ...]:
    """The extractor versions a corpus was loaded with (``Document.extractor``), sorted."""
    return tuple(sorted({d.extractor for d in corpus.documents}))


def index_stamp(encoder_stamp: Any, corpus: Any, chunking: Mapping[str, Any], n_chunks: int, *,
                pipeline_version: str = PIPELINE_VERSION) -> IndexStamp:
    """The stamp of one index of ``corpus``: the one builder every index stamp comes from.

    ``encoder_stamp`` is an :class:`~ragdiag.index.encoder.EncoderStamp` or its dict;
    the corpus gives its hash, root and extractor versions.
    """
    return IndexStamp.build(encoder_stamp, corpus_sha256=corpus.sha256, corpus_root=corpus.root, chunking=chunking,
                            n_chunks=n_chunks, extractor_versions=corpus_extractors(corpus),
                            pipeline_version=pipeline_version)


def evaluation_stamps(evaluation: Any) -> dict[str, IndexStamp]:
    """Strategy name -> the stamp of an :class:`~ragdiag.evaluation.evaluate.Evaluation`'s index, as built.

    ``n_chunks`` is the index's chunk count. Empty when the run's encoder
    stamp is incomplete (an encoder without a stamp).
    """
    enc = dict(evaluation.encoder_stamp or {})
    if any(k not in enc for k in ENCODER_FIELDS):
        return {}
    pipeline = str(enc.get("pipeline_version", PIPELINE_VERSION))
    return {name: index_stamp(enc, evaluation.corpus, index.strategy.params(), len(index.chunks),
                              pipeline_version=pipeline)
            for name, index in evaluation.indexes.items()}


def run_stamp(encoder: TextEncoder) -> dict:
    """A run's encoder stamp: the encoder's stamp, the pipeline version and the device that computed the vectors.

    ``device`` is None when the model never loaded (every vector came from
    the store); it is absent for an encoder that does not report one
    (:class:`~ragdiag.index.encoder.ReportsDevice`). ``device_layout`` says how the
    model ran there when the encoder tells (``"cpu: 2 passes x 1 thread"``).
    """
    stamp = encoder.stamp.as_dict()
    stamp["pipeline_version"] = PIPELINE_VERSION
    if isinstance(encoder, ReportsDevice):
        stamp["device"] = loaded_device(encoder)
        layout = getattr(encoder, "layout", None) if stamp["device"] else None
        if isinstance(layout, str):
            stamp["device_layout"] = layout
    return stamp
