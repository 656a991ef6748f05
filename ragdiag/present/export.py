"""Files made from an :class:`~ragdiag.evaluation.evaluate.Evaluation`: ``summary.json``, per-query CSV/Parquet, TREC runs.

:func:`write_outputs` writes them all (``eval --out``); :func:`summary_document`
is what ``summary.json`` holds.

TREC run and qrels files:
With these, any TREC tool (``trec_eval``, pytrec_eval, ranx, ir_measures) can
recompute recall and MRR from ragdiag's rankings, so the numbers are not ours
alone. The tests use pytrec_eval as the oracle for :mod:`ragdiag.core.metrics`.

Relevance is chunk-level: a chunk is relevant to a query when it holds the
query's needle whole (the study's rule).

* A query whose needle was **destroyed** by the chunking has no relevant chunk.
  TREC tools evaluate only queries with judgements and would *skip* it, while
  ragdiag counts it as a miss (the user's question still went unanswered); the
  averages would then disagree, and in the direction that flatters a chunking
  that destroys needles. So such a query gets one qrels line for the
  placeholder document :data:`DESTROYED_DOCNO`, which no chunk id can equal
  (chunk ids are ``STRATEGY:doc:NNNN``) and so no run retrieves: the query is
  judged, has a relevant document, and scores 0. With it, the default means
  of ranx and pytrec_eval (``success@k``/``hit_rate@k`` and ``recip_rank``/
  ``mrr@20``) equal ragdiag's R@k and MRR for every configuration.
* A query the retriever returned **nothing** for (BM25 when the query shares
  no word with any chunk) gets one run line for the sentinel document
  :data:`NOTHING_DOCNO`, which is never relevant: TREC tools average only over
  the queries a run has lines for (ranx refuses a run that lacks a query of the
  qrels), so without it the means would leave those misses out.
* Out-of-domain queries have no needle and are not exported at all.

``write_trec`` also writes ``README.txt`` beside the files: ragdiag's R@k is
``success@k`` (pytrec_eval) / ``hit_rate@k`` (ranx), not TREC's ``recall@k``.

Identifiers are single whitespace-free fields in TREC files; a chunk or query
id holding whitespace (a document file name with a space) is percent-encoded,
``%`` included, so the mapping stays reversible with ``urllib.parse.unquote``.
"""

from __future__ import annotations

import json
import platform
import string
from pathlib import Path
from urllib.parse import quote

import numpy as np

from ..analyses.gate_table import ROW_COLUMNS

from .. import PIPELINE_VERSION, __version__
from ..core.defaults import TOP
from ..evaluation.records import Config, Evaluation
from .per_query import per_query_frame
from ..analyses.summary import chunking_rows, summary_rows

__all__ = [
    "trec_run", "trec_qrels", "write_trec", "trec_zip", "trec_id", "DESTROYED_DOCNO", "NOTHING_DOCNO", "TREC_README",
    "summary_document", "summary_json", "per_query_parquet", "write_outputs",
    "GATE_INPUTS_FILE", "GATE_INPUT_COLUMNS", "NATIVE_SCORES_FILE", "NATIVE_COLUMNS",
    "native_score_rows", "native_scores_csv", "gate_input_rows", "write_gate_inputs", "gate_inputs_csv", "trec_files",
]

#: The relevant "document" of a query whose needle no chunk holds whole: no chunk id has this form
#: (chunk ids are ``STRATEGY:doc:NNNN``), so no run retrieves it and the query counts as a miss.
DESTROYED_DOCNO = "ragdiag-no-chunk-holds-the-needle"

#: The one run line of a query the retriever returned nothing for: never relevant, so the query scores 0
#: in every TREC tool instead of being left out of its mean.
NOTHING_DOCNO = "ragdiag-nothing-retrieved"

#: ``trec/README.txt``: what the files are and which TREC measure equals which ragdiag number.
TREC_README = """TREC files written by ragdiag (eval --out)

<strategy>_<retriever>.run  one run per configuration: qid Q0 docno rank score run_name, top 20,
                            score = 1/rank (TREC tools re-sort by score)
<strategy>.qrels            chunk-level judgements: a chunk is relevant when it holds the needle whole

ragdiag's R@k is success@k, the share of queries with a relevant chunk in the top k (the hit rate):
  pytrec_eval: success_k        ranx: hit_rate@k
It is not TREC's recall@k (the share of relevant documents retrieved). MRR is recip_rank (pytrec_eval)
and mrr@20 (ranx). The default means of both tools equal ragdiag's numbers for every configuration:
- a query whose needle no chunk holds whole is judged with ragdiag-no-chunk-holds-the-needle, which no
  run retrieves (it counts as a miss, as in ragdiag);
- a query the retriever returned nothing for has one run line for ragdiag-nothing-retrieved, never
  relevant (so it counts as a miss instead of being left out of the mean).
Out-of-domain queries have no needle and are not in these files.
"""

# Every printable ASCII character except '%' stays as is; whitespace, '%' and non-ASCII are encoded.
_SAFE = "".join(c for c in string.punctuation if c != "%")


def trec_id(text: str) -> str:
    """A whitespace-free TREC field for an id (percent-encoding only when needed).

    >>> trec_id("C:svm:0003"), trec_id("C:my notes:0001")
    ('C:svm:0003', 'C:my%20notes:0001')
    """
    return quote(text, safe=_SAFE)


def trec_run(ev: Evaluation, config: Config | str, *, depth: int = 20, run_name: str | None = None) -> str:
    """TREC run lines ``qid Q0 docno rank score run_name`` for the in-domain queries of ``config``.

    ``docno`` is the chunk id, ``rank`` is 1-based, and the list is cut at
    ``depth`` (MRR@20 needs a run truncated at 20); an index of fewer chunks
    gives shorter lists.

    Notes
    -----
    The score written is ``1 / rank``, not the retriever's own score. TREC tools
    ignore the rank column and re-sort each query by score (ties broken by
    docno, in reverse lexical order), so the exported score must reproduce
    ragdiag's order exactly. The retriever's scores cannot promise that: RRF
    scores tie often (ragdiag breaks those ties by best single rank, then
    chunk position), dense scores can tie, and a reranker's tail scores are
    NaN. ``1 / rank`` is strictly decreasing in rank, positive, and exact in
    the ``%.12g`` form written here for any depth below 10^11.
    """
    res = ev.result(config)
    cfg = res.config
    if cfg.external:
        raise ValueError(f"{cfg.label} is an external run: its hits are not chunks of an index of ours; "
                         "export it from the system that produced it")
    width = res.top_order.shape[1]
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    if depth > width and width == TOP:
        raise ValueError(f"depth must be at most {TOP}: the evaluation keeps only each query's top {TOP}")
    name = trec_id(run_name or f"ragdiag-{cfg.strategy}-{cfg.retriever}")
    chunks = ev.indexes[cfg.strategy].chunks
    lines = []
    for i, q in enumerate(ev.queries):
        if not q.in_domain:
            continue
        qid = trec_id(q.id)
        shown = depth if res.retrieved is None else min(depth, int(res.retrieved[i]))
        for rank, pos in enumerate(res.top_order[i, :shown], 1):
            lines.append(f"{qid} Q0 {trec_id(chunks[int(pos)].id)} {rank} {1.0 / rank:.12g} {name}")
        if shown == 0:  # nothing retrieved: a sentinel line, so the query counts (as a miss) in every TREC mean
            lines.append(f"{qid} Q0 {NOTHING_DOCNO} 1 1 {name}")
    return "\n".join(lines) + ("\n" if lines else "")


def trec_qrels(ev: Evaluation, strategy: str) -> str:
    """TREC qrels ``qid 0 docno 1``: every chunk of ``strategy`` holding the needle of each in-domain query.

    A query whose needle is destroyed (no chunk holds it whole) gets one line for
    :data:`DESTROYED_DOCNO`, a document no run retrieves, so TREC tools count it
    as a miss, as ragdiag does (see the module notes).
    """
    key = strategy.upper()
    if key not in ev.indexes:
        raise ValueError(f"strategy {strategy!r} was not evaluated; evaluated: {', '.join(ev.indexes)}")
    index = ev.indexes[key]
    lines = []
    for q in ev.queries:
        if not q.in_domain:
            continue
        qid = trec_id(q.id)
        holders = index.holders[q.question_id]
        for pos in holders:
            lines.append(f"{qid} 0 {trec_id(index.chunks[int(pos)].id)} 1")
        if len(holders) == 0:
            lines.append(f"{qid} 0 {DESTROYED_DOCNO} 1")
    return "\n".join(lines) + ("\n" if lines else "")


def trec_files(ev: Evaluation, *, depth: int = 20) -> dict[str, str]:
    """The TREC files of ``ev`` by name: ``<strategy>_<retriever>.run`` per configuration, ``<strategy>.qrels`` per
    strategy, then ``README.txt`` (none when there is nothing to write). External runs (``ext/NAME``) are skipped:
    their hits are not our chunks."""
    files = {}
    for cfg in ev.results:
        if not cfg.external:
            files[f"{cfg.strategy}_{cfg.retriever}.run"] = trec_run(ev, cfg, depth=depth)
    for name in ev.indexes:
        files[f"{name}.qrels"] = trec_qrels(ev, name)
    if files:
        files["README.txt"] = TREC_README
    return files


def write_trec(ev: Evaluation, out_dir: str | Path, *, depth: int = 20) -> list[str]:
    """Write ``<strategy>_<retriever>.run`` per configuration and ``<strategy>.qrels`` per strategy.

    Returns the paths written (runs first, in evaluation order, then qrels, then ``README.txt``), all
    written or none (:func:`ragdiag.core.files.write_all`).
    """
    from ..core.files import write_all

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write_all({out / name: text for name, text in trec_files(ev, depth=depth).items()})


def trec_zip(ev: Evaluation, *, depth: int = 20) -> bytes:
    """All runs and qrels of ``ev`` in one zip (for a download button)."""
    import io
    import tempfile
    import zipfile

    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in write_trec(ev, tmp, depth=depth):
            zf.write(path, arcname=Path(path).name)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# summary.json and per-query files
# ---------------------------------------------------------------------------


def summary_document(ev: Evaluation) -> dict:
    """What ``summary.json`` holds: the tables plus provenance stamps."""
    from importlib.metadata import PackageNotFoundError, version

    from ..core.defaults import DEFAULT_CUT, DEFAULT_KEEP, PRIMARY_K
    from ..analyses.threshold.gate import GATE_DISTANCE
    from ..documents.truth import truth_sha256

    def v(dist: str) -> str | None:
        try:
            return version(dist)
        except PackageNotFoundError:
            return None

    tables = {p: [r.cells() for r in summary_rows(ev, phrasing=p)] for p in ("all", *ev.truth.phrasings)}
    return {
        "ragdiag_version": __version__,
        "pipeline_version": PIPELINE_VERSION,
        "model": ev.encoder_stamp,
        "versions": {
            "python": platform.python_version(),
            "torch": v("torch"),
            "transformers": v("transformers"),
            "sentence_transformers": v("sentence-transformers"),
            "numpy": np.__version__,
        },
        "corpus": {
            "root": ev.corpus.name or ev.corpus.root,
            "sha256": ev.corpus.sha256,
            "documents": len(ev.corpus.documents),
            "characters": ev.corpus.n_chars,
            "sections": ev.corpus.n_sections,
            "failures": [{"path": f.path, "reason": f.reason} for f in ev.corpus.failures],
        },
        "truth": {
            "source": ev.truth.source,
            "questions": len(ev.truth.questions),
            "in_domain_queries": int(ev.in_domain.sum()),
            "ood_queries": int((~ev.in_domain).sum()),
            "sha256": truth_sha256(ev.truth),
        },
        # What the regression gate (``gate``) compares: recall at this k, the gate at this cut and keep.
        "gate": {"cut": DEFAULT_CUT, "keep": DEFAULT_KEEP, "primary_k": PRIMARY_K, "distance": GATE_DISTANCE,
                 "inputs": GATE_INPUTS_FILE},
        "summary": tables["all"],
        "by_phrasing": {p: t for p, t in tables.items() if p != "all"},
        "chunking": [r.cells() for r in chunking_rows(ev)],
        "destroyed": {
            name: [{"question_id": d.question_id, "doc_id": d.doc_id, "start": d.start, "end": d.end,
                    "cuts": list(d.cuts)} for d in idx.report.destroyed]
            for name, idx in ev.indexes.items()
        },
        "normalisation_error": {name: idx.normalisation_error for name, idx in ev.indexes.items()},
        "unavailable": ev.unavailable,
        "retriever_stamps": ev.retriever_stamps,
        "timings_s": {k: round(v, 3) for k, v in ev.timings.items()},
    }


def summary_json(ev: Evaluation) -> str:
    """``summary.json`` as text (:func:`summary_document`, indented, numpy numbers as plain ones)."""
    return json.dumps(summary_document(ev), indent=2, default=_json_default) + "\n"


def per_query_parquet(ev: Evaluation, frame=None) -> bytes:
    """``per_query`` as Parquet bytes (typed columns: ranks stay integers with nulls).

    ``frame``: :func:`~ragdiag.present.per_query.per_query_frame` of ``ev`` when the caller already has it.
    """
    import io


    buf = io.BytesIO()
    (per_query_frame(ev) if frame is None else frame).to_parquet(buf, index=False)
    return buf.getvalue()


def write_outputs(ev: Evaluation, out_dir, *, trec: bool = True) -> list[str]:
    """Write ``summary.json``, ``per_query.csv``, ``per_query.parquet``, the gate's inputs (``gate_inputs.csv``, and
    ``native_scores.csv`` when a configuration ranks on a score of its own) and (``trec``) TREC runs/qrels.

    TREC files go to ``out_dir/trec/``: ``<strategy>_<retriever>.run`` and
    ``<strategy>.qrels``, loadable by ranx and pytrec_eval. Every file is made
    in memory first and written all or none (:func:`ragdiag.core.files.write_all`):
    a full disk leaves the previous files as they were.
    """
    import contextlib

    from ..core.files import OutputError, write_all

    out = Path(out_dir)
    frame = per_query_frame(ev)  # once: it runs the funnel of every configuration
    files: dict[Path, str | bytes] = {
        out / "summary.json": summary_json(ev),
        out / "per_query.csv": frame.to_csv(index=False),
        out / "per_query.parquet": per_query_parquet(ev, frame),
        out / GATE_INPUTS_FILE: gate_inputs_csv(ev),
    }
    native = native_scores_csv(ev)
    if native.count("\n") > 1:  # a configuration ranks on a score of its own (gate --cut-from a native cut)
        files[out / NATIVE_SCORES_FILE] = native
    if trec and ev.indexes:
        files.update({out / "trec" / name: text for name, text in trec_files(ev).items()})
    folders = [out, *([out / "trec"] if trec and ev.indexes else [])]
    created = [f for f in (*reversed(out.parents), *folders) if not f.exists()]  # outermost first
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    try:
        return write_all(files)
    except OutputError:
        for folder in reversed(created):  # nothing partial: not even an empty folder (innermost first)
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


#: The per-query gate inputs ``eval --out`` writes beside ``per_query.csv`` (read by ``gate``).
GATE_INPUTS_FILE = "gate_inputs.csv"
#: Its columns: the configuration, then the gate table's own (:meth:`GateTable.rows
#: <ragdiag.analyses.gate_table.GateTable.rows>`): ``closest`` and ``closest_holder`` are the gate's two numbers at
#: the stamped keep. Folders written before this name used ``first`` and ``good`` for them; they still read.
GATE_INPUT_COLUMNS = ("strategy", "retriever", *ROW_COLUMNS)


def gate_input_rows(ev: Evaluation, *, keep: int | None = None) -> list[dict]:
    """Per configuration and query: the gate table's rows at ``keep`` (:meth:`GateTable.rows
    <ragdiag.analyses.gate_table.GateTable.rows>`), with the configuration's strategy and retriever.

    ``closest`` is the smallest cosine distance among the top ``keep`` (something is
    kept iff ``cut > closest``), ``closest_holder`` the smallest among those holding the
    needle (answered iff ``cut > closest_holder``; ``inf`` when none, and for
    out-of-domain queries), so the gate can be recomputed at any cut. ``kind``
    is ``answerable`` or the out-of-domain kind (``near``, ``far``). External
    runs without distances are left out.
    """
    from ..core.defaults import DEFAULT_KEEP
    from ..analyses.gate_table import gate_table
    from ..core.gate import Gate

    keep = DEFAULT_KEEP if keep is None else keep
    rows = []
    for cfg in ev.results:
        try:
            table = gate_table(ev, cfg, Gate(keep))
        except ValueError:  # an external run without distances: nothing to gate
            continue
        rows += [{"strategy": cfg.strategy, "retriever": cfg.retriever, **r} for r in table.rows()]
    return rows


def gate_inputs_csv(ev: Evaluation, *, keep: int | None = None) -> str:
    """:data:`GATE_INPUTS_FILE`'s text (:func:`gate_input_rows` as CSV)."""
    import csv
    import io

    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=GATE_INPUT_COLUMNS)
    writer.writeheader()
    writer.writerows(gate_input_rows(ev, keep=keep))
    return buf.getvalue()


def write_gate_inputs(ev: Evaluation, out_dir, *, keep: int | None = None) -> str:
    """Write :data:`GATE_INPUTS_FILE` (:func:`gate_input_rows`) into ``out_dir`` atomically; return its path."""
    from ..core.files import atomic_write

    return atomic_write(Path(out_dir) / GATE_INPUTS_FILE, gate_inputs_csv(ev, keep=keep))


def _json_default(o):
    """``json.dumps`` ``default=`` for numpy integers, floats and arrays."""
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


#: The per-query native scores ``eval --out`` writes beside ``gate_inputs.csv`` (read by ``gate`` on a native cut).
NATIVE_SCORES_FILE = "native_scores.csv"
NATIVE_COLUMNS = ("strategy", "retriever", "query_id", "score", "unit", "reranker", "keep", "top", "holder")


def native_score_rows(ev, *, keep: int | None = None) -> list[dict]:
    """Per configuration with a native score and per query: its best score and best holder's score at ``keep``."""
    from ..analyses.threshold.score import score_stamp, score_table
    from ..core.defaults import DEFAULT_KEEP
    from ..core.gate import Gate

    gate = Gate(DEFAULT_KEEP if keep is None else keep)
    rows = []
    for cfg in ev.results:
        try:
            table = score_table(ev, cfg.label, gate)
        except ValueError:  # no native score known for this retriever (dense variants, external runs)
            continue
        stamp = score_stamp(ev, table)
        rows += [{"strategy": cfg.strategy, "retriever": cfg.retriever, "query_id": q, "score": table.score,
                  "unit": table.unit, "reranker": stamp["reranker"] or "", "keep": table.window,
                  "top": repr(float(t)), "holder": repr(float(h))}
                 for q, t, h in zip(table.query_ids, table.top, table.holder)]
    return rows


def native_scores_csv(ev, *, keep: int | None = None) -> str:
    """:data:`NATIVE_SCORES_FILE`'s text (:func:`native_score_rows` as CSV)."""
    import csv
    import io

    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=NATIVE_COLUMNS)
    writer.writeheader()
    writer.writerows(native_score_rows(ev, keep=keep))
    return buf.getvalue()
