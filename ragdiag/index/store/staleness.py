"""Staleness: stored indexes judged against what is current now, and the status table.

An index is stale when its encoder, pipeline version, extractors, corpus or
chunk count differ from the current state; :class:`IndexStatus` says why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ... import PIPELINE_VERSION
from ..encoder.protocols import ENCODER_FIELDS
from ...core.tables import align
from .stamps import IndexStamp, _stamp_dict

__all__ = ["CurrentState", "IndexStatus", "format_status_table"]


@dataclass(frozen=True)
class CurrentState:
    """What is current now, to judge stored indexes against.

    ``encoders``: stamps (or dicts) of the encoders in use; an index made by
    none of them is stale. ``corpora``: corpus root -> corpus sha256.
    ``extractor_versions``: the extractors available now (None: not checked);
    an index is stale when an extractor it used now has another version.
    ``indexes``: stamps of the indexes the current run would build; a stored
    index with the same corpus and chunking must hold as many chunks.
    """

    encoders: tuple[Mapping[str, Any], ...]
    corpora: Mapping[str, str] = field(default_factory=dict)
    pipeline_version: str | None = PIPELINE_VERSION
    extractor_versions: tuple[str, ...] | None = None
    indexes: tuple[IndexStamp, ...] = ()

    def __post_init__(self) -> None:
        encoders = self.encoders
        if hasattr(encoders, "as_dict") or isinstance(encoders, Mapping):
            encoders = (encoders,)
        object.__setattr__(self, "encoders", tuple(_stamp_dict(e) for e in encoders))
        object.__setattr__(self, "corpora", {os.path.abspath(k): v for k, v in dict(self.corpora).items()})
        if self.extractor_versions is not None:
            object.__setattr__(self, "extractor_versions", tuple(sorted(set(self.extractor_versions))))
        object.__setattr__(self, "indexes", tuple(self.indexes))

    @classmethod
    def from_stamps(cls, stamps: Sequence[IndexStamp]) -> CurrentState:
        """The current state implied by the stamps of the indexes a run would build now."""
        stamps = tuple(stamps)
        encoders: list[dict] = []
        for s in stamps:
            if s.encoder.as_dict() not in encoders:
                encoders.append(s.encoder.as_dict())
        pipelines = {s.pipeline_version for s in stamps}
        if len(pipelines) > 1:
            raise ValueError(f"current stamps disagree on the pipeline version: {sorted(pipelines)}")
        corpora: dict[str, str] = {}
        for s in stamps:
            if corpora.setdefault(s.corpus_root, s.corpus_sha256) != s.corpus_sha256:
                raise ValueError(f"current stamps disagree on the corpus hash of {s.corpus_root}")
        extractors = sorted({v for s in stamps for v in s.extractor_versions})
        return cls(encoders=tuple(encoders), corpora=corpora,
                   pipeline_version=pipelines.pop() if pipelines else None,
                   extractor_versions=tuple(extractors) if stamps else None, indexes=stamps)


@dataclass(frozen=True)
class IndexStatus:
    """A stored index judged against the current state.

    ``reasons`` say why it is stale (empty when current); ``unchecked`` names
    what could not be compared (e.g. ``"corpus"`` for a corpus root the
    current state does not know).
    """

    stamp: IndexStamp
    stale: bool
    reasons: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()



def _encoder_diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    labels = {k: k.replace("max_seq_length", "max sequence length") for k in ENCODER_FIELDS
              if k not in ("model", "weights_sha256")}
    out = []
    if old["model"] != new["model"]:
        out.append(f"model {old['model']} -> {new['model']}")
    elif old["weights_sha256"] != new["weights_sha256"]:
        out.append("model weights changed")
    for k, label in labels.items():
        if old.get(k) != new.get(k):
            out.append(f"{label} {old.get(k)} -> {new.get(k)}")
    return out or ["encoder settings changed"]


def _split_extractor(v: str) -> tuple[str, str]:
    name, sep, version = v.partition("/")  # "pdf/1+pypdf-4.2" -> ("pdf", "1+pypdf-4.2")
    return (name, version) if sep else (v, "")


def _judge(stamp: IndexStamp, current: CurrentState) -> IndexStatus:
    reasons: list[str] = []
    unchecked: list[str] = []
    enc = stamp.encoder.as_dict()
    if not current.encoders:
        unchecked.append("model")
    elif enc not in current.encoders:
        ref = next((e for e in current.encoders if e["model"] == enc["model"]), current.encoders[0])
        reasons += _encoder_diff(enc, ref)
    if current.pipeline_version is None:
        unchecked.append("pipeline")
    elif stamp.pipeline_version != current.pipeline_version:
        reasons.append(f"pipeline version {stamp.pipeline_version} -> {current.pipeline_version}")
    if current.extractor_versions is None:
        unchecked.append("extractors")
    else:
        now = dict(_split_extractor(v) for v in current.extractor_versions)
        for name, version in map(_split_extractor, stamp.extractor_versions):
            if name not in now:
                reasons.append(f"extractor {name} no longer current")
            elif now[name] != version:
                reasons.append(f"extractor {name} {version} -> {now[name]}")
    corpus = current.corpora.get(stamp.corpus_root)
    if corpus is None:
        unchecked.append("corpus")
    elif corpus != stamp.corpus_sha256:
        reasons.append("corpus changed")
    else:
        expected = {s.n_chunks for s in current.indexes if s.slot == stamp.slot and s.corpus_sha256 == corpus}
        if expected and stamp.n_chunks not in expected:
            reasons.append(f"holds {stamp.n_chunks} chunks, the corpus now gives {max(expected)}")
    return IndexStatus(stamp, bool(reasons), tuple(reasons), tuple(unchecked))


def _as_state(current: CurrentState | Sequence[IndexStamp] | None) -> CurrentState:
    if current is None:  # nothing known but this code's pipeline version
        return CurrentState(encoders=())
    return current if isinstance(current, CurrentState) else CurrentState.from_stamps(current)


def _chunking_label(params: Mapping[str, Any]) -> str:
    """``{"name": "E", "boundaries": True, "header": False, "size": 512}`` -> ``"E boundaries size=512"``."""
    parts = [str(params["name"])] if "name" in params else []
    for k, v in sorted(params.items()):
        if k == "name" or v is False or v == 0:
            continue
        parts.append(k if v is True else f"{k}={v}")
    return " ".join(parts)


def format_status_table(statuses: Sequence[IndexStatus]) -> str:
    """A plain-text table of index statuses, one line per index (for ``ragdiag index status``)."""
    if not statuses:
        return "no indexes in the store"
    header = ("state", "model", "precision", "dim", "chunking", "corpus", "chunks", "created", "why")
    rows = [header]
    for st in statuses:
        s = st.stamp
        state = "STALE" if st.stale else ("current?" if st.unchecked else "current")
        why = "; ".join(st.reasons)
        if st.unchecked:
            why = "; ".join(filter(None, [why, "not checked: " + ", ".join(st.unchecked)]))
        chunking = _chunking_label(s.chunking)
        rows.append((state, Path(s.model).name or s.model, s.precision, str(s.dim), chunking, s.corpus_root,
                     str(s.n_chunks), s.created[:19].replace("T", " "), why))

    lines = align(rows, last_free=True)
    n_stale = sum(st.stale for st in statuses)
    lines.append(f"{len(statuses)} indexes, {n_stale} stale")
    return "\n".join(line.rstrip() for line in lines)

