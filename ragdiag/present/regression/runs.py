"""One configuration of one run, as the regression gate reads it: from an ``eval --out`` folder or an evaluation.

Both sources give the same :class:`GateRun` (the folder's files are written
from the same functions, :func:`ragdiag.present.export.gate_input_rows` and
:func:`ragdiag.present.export.summary_document`), so a folder compared with the
evaluation it was written from is unchanged, query for query.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ...core.defaults import DEFAULT_CUT, DEFAULT_KEEP, PRIMARY_K

__all__ = ["QueryRecord", "DestroyedRecord", "GateRun", "RunError", "load_run", "run_from_evaluation"]


class RunError(ValueError):
    """A run that cannot be read or compared (the message says what is missing and how to make it)."""


@dataclass(frozen=True)
class QueryRecord:
    """One query of a run: its question (``""`` out of domain), kind, text, needle rank (0: absent), gate inputs."""

    query_id: str
    question_id: str
    kind: str  # "answerable", or the out-of-domain kind (near, far, ood)
    text: str
    needle_rank: int
    first: float
    good: float

    @property
    def answerable(self) -> bool:
        """Whether the query has an answer in the corpus."""
        return self.kind == "answerable"

    @property
    def unit(self) -> str:
        """The unit of every test: the question (an out-of-domain query is its own)."""
        return self.question_id or self.query_id


@dataclass(frozen=True)
class DestroyedRecord:
    """A needle no chunk holds whole: its document, offsets and the chunk boundaries inside it."""

    question_id: str
    doc_id: str
    start: int
    end: int
    cuts: tuple[int, ...]


@dataclass(frozen=True)
class GateRun:
    """What the gate compares for one configuration of one run."""

    source: str
    config: str
    queries: tuple[QueryRecord, ...]
    destroyed: tuple[DestroyedRecord, ...]
    truth_sha256: str
    truth_source: str
    questions: int
    model: dict = field(default_factory=dict)
    corpus: dict = field(default_factory=dict)
    pipeline_version: str = ""
    ragdiag_version: str = ""
    cut: float = DEFAULT_CUT
    keep: int = DEFAULT_KEEP
    primary_k: int = PRIMARY_K


def _stamps(summary: dict) -> dict:
    gate = summary.get("gate") or {}
    corpus = summary.get("corpus") or {}
    truth = summary.get("truth") or {}
    model = summary.get("model") or {}
    return dict(truth_sha256=truth.get("sha256") or "", truth_source=str(truth.get("source") or ""),
                questions=int(truth.get("questions") or 0),
                model={k: model.get(k) for k in ("model", "weights_sha256", "dim", "precision") if k in model},
                corpus={k: corpus.get(k) for k in ("root", "sha256", "documents", "characters") if k in corpus},
                pipeline_version=str(summary.get("pipeline_version") or ""),
                ragdiag_version=str(summary.get("ragdiag_version") or ""),
                cut=float(gate.get("cut", DEFAULT_CUT)), keep=int(gate.get("keep", DEFAULT_KEEP)),
                primary_k=int(gate.get("primary_k", PRIMARY_K)))


def _read_per_query(folder: Path) -> list[dict]:
    csv_path, parquet = folder / "per_query.csv", folder / "per_query.parquet"
    if csv_path.is_file():
        with csv_path.open(encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))
    if parquet.is_file():
        import pandas as pd

        frame = pd.read_parquet(parquet)
        return [{k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v) for k, v in r.items()}
                for r in frame.to_dict("records")]
    raise RunError(f"{folder} has no per_query.csv nor per_query.parquet: is it an `eval --out` folder?")


def load_run(folder: str | Path, config: str) -> GateRun:
    """The configuration ``config`` (``E/hybrid``) of the ``eval --out`` folder ``folder``.

    Raises :class:`RunError` naming what is missing: the folder, its
    ``summary.json``, the configuration, or the stamps and gate inputs an
    older ragdiag did not write (run ``eval --out`` again).
    """
    from ..export import GATE_INPUTS_FILE

    path = Path(folder)
    if not path.is_dir():
        raise RunError(f"{folder} is not a folder: pass an `eval --out` folder")
    try:
        summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"{folder} has no summary.json: is it an `eval --out` folder?") from None
    except (OSError, ValueError) as exc:
        raise RunError(f"{folder}/summary.json cannot be read: {exc}") from None
    stamps = _stamps(summary)
    if not stamps["truth_sha256"]:
        raise RunError(f"{folder}/summary.json has no ground-truth hash (written by an older ragdiag): "
                       "run `eval --out` on it again")
    strategy, _, retriever = config.partition("/")
    ranks = {r["query_id"]: r for r in _read_per_query(path)
             if r.get("strategy") == strategy and r.get("retriever") == retriever}
    if not ranks:
        have = sorted({f"{r['strategy']}/{r['retriever']}" for r in _read_per_query(path)})
        raise RunError(f"{folder} has no results for {config}; it has: {', '.join(have) or 'none'}")
    gate_path = path / GATE_INPUTS_FILE
    if not gate_path.is_file():
        raise RunError(f"{folder} has no {GATE_INPUTS_FILE} (written by an older ragdiag): run `eval --out` again")
    with gate_path.open(encoding="utf-8", newline="") as fh:
        gate_rows = [r for r in csv.DictReader(fh) if r["strategy"] == strategy and r["retriever"] == retriever]
    if len(gate_rows) != len(ranks):
        raise RunError(f"{folder}: {GATE_INPUTS_FILE} and per_query.csv disagree on the queries of {config}")
    queries = []
    for g in gate_rows:
        r = ranks.get(g["query_id"])
        if r is None:
            raise RunError(f"{folder}: query {g['query_id']} is in {GATE_INPUTS_FILE} but not in per_query.csv")
        rank = r.get("needle_rank")
        queries.append(QueryRecord(g["query_id"], g["question_id"], g["kind"], g["text"],
                                   int(float(rank)) if rank not in ("", None) else 0,
                                   float(g["first"]), float(g["good"])))
    keep = {int(g["keep"]) for g in gate_rows}
    if keep and keep != {stamps["keep"]}:
        stamps["keep"] = min(keep)  # a corpus with fewer chunks than the keep: the gate kept them all
    destroyed = tuple(DestroyedRecord(d["question_id"], d["doc_id"], int(d["start"]), int(d["end"]),
                                      tuple(int(c) for c in d.get("cuts", ())))
                      for d in (summary.get("destroyed") or {}).get(strategy, ()))
    return GateRun(source=str(folder), config=config, queries=tuple(queries), destroyed=destroyed, **stamps)


def run_from_evaluation(ev, config: str, *, keep: int = DEFAULT_KEEP, cut: float = DEFAULT_CUT,
                        source: str = "this evaluation") -> GateRun:
    """The configuration ``config`` of an :class:`~ragdiag.evaluation.evaluate.Evaluation` (nothing written or read)."""
    from ... import PIPELINE_VERSION, __version__
    from ...evaluation.records import parse_key
    from ..export import gate_input_rows
    from ...documents.truth import truth_sha256

    cfg = parse_key(config)
    res = ev.result(cfg)
    rows = [r for r in gate_input_rows(ev, keep=keep)
            if r["strategy"] == cfg.strategy and r["retriever"] == cfg.retriever]
    queries = tuple(QueryRecord(r["query_id"], r["question_id"], r["kind"], r["text"],
                                max(int(res.needle_rank[i]), 0), float(r["first"]), float(r["good"]))
                    for i, r in enumerate(rows))
    index = ev.indexes.get(cfg.strategy)
    destroyed = () if index is None else tuple(
        DestroyedRecord(d.question_id, d.doc_id, d.start, d.end, tuple(d.cuts)) for d in index.report.destroyed)
    stamp = dict(ev.encoder_stamp)
    return GateRun(
        source=source, config=cfg.label, queries=queries, destroyed=destroyed,
        truth_sha256=truth_sha256(ev.truth), truth_source=ev.truth.source, questions=len(ev.truth.questions),
        model={k: stamp.get(k) for k in ("model", "weights_sha256", "dim", "precision") if k in stamp},
        corpus={"root": ev.corpus.name or ev.corpus.root, "sha256": ev.corpus.sha256,
                "documents": len(ev.corpus.documents), "characters": ev.corpus.n_chars},
        pipeline_version=PIPELINE_VERSION, ragdiag_version=__version__, cut=cut,
        keep=rows[0]["keep"] if rows else keep, primary_k=PRIMARY_K)
