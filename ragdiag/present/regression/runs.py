"""One configuration of one run, as the regression gate reads it: from an ``eval --out`` folder or an evaluation.

Both sources give the same :class:`GateRun`, whose per-query half is the
configuration's :class:`~ragdiag.analyses.gate_table.GateTable`: the folder's
``gate_inputs.csv`` is that table's :meth:`~ragdiag.analyses.gate_table.GateTable.rows`
(:func:`ragdiag.present.export.gate_input_rows`) and is read back with
:meth:`~ragdiag.analyses.gate_table.GateTable.from_rows`, so a folder compared
with the evaluation it was written from is unchanged, query for query.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...analyses.gate_table import LEGACY_COLUMNS, GateTable
from ...core.gate import MAX_CUT, MAX_K, Gate, GateError
from ...core.limits import ENV, LimitError, Limits, read_limited

__all__ = ["DestroyedRecord", "GateRun", "RunError", "load_run", "run_from_evaluation",
           "RUN_FILES"]

#: The files of an ``eval --out`` folder the gate reads (the parquet only when the CSV is absent; the native scores
#: only for a native cut).
RUN_FILES = ("summary.json", "per_query.csv", "per_query.parquet", "gate_inputs.csv", "native_scores.csv")
#: Columns the gate needs in ``per_query.csv`` (``needle_rank`` empty: the needle was not ranked).
PER_QUERY_COLUMNS = ("strategy", "retriever", "query_id", "needle_rank")
#: A cosine distance read back may sit this far outside [0, 2] (float rounding of 1 - cos).
_DISTANCE_SLACK = 1e-6


class RunError(ValueError):
    """A run that cannot be read or compared (the message says what is missing and how to make it)."""


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
    """What the gate compares for one configuration of one run (``gate``: the keep, cut and k it was stamped with).

    ``table``: the configuration's per-query gate table (closest, closest holder, needle rank, kind, text).
    """

    source: str
    config: str
    table: GateTable
    destroyed: tuple[DestroyedRecord, ...]
    truth_sha256: str
    truth_source: str
    questions: int
    model: dict = field(default_factory=dict)
    corpus: dict = field(default_factory=dict)
    pipeline_version: str = ""
    ragdiag_version: str = ""
    gate: Gate = field(default_factory=Gate)


# --- reading, every field checked ------------------------------------------------------------------------------
def _read(path: Path, what: str) -> bytes:
    """The bytes of one file of the folder: a regular file under the size limit, else :class:`RunError`."""
    try:
        limit = Limits.from_env().max_gate_bytes  # a malformed RAGDIAG_MAX_* is a LimitError too
        return read_limited(path, limit, what=what, env_var=ENV["max_gate_bytes"])
    except LimitError as exc:
        raise RunError(str(exc).replace(f"{what} {path.name!r}", str(path), 1)) from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise RunError(f"{path} cannot be read: {exc.strerror or exc}") from None


def _mapping(value: Any, where: str, name: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RunError(f"{where}: {name} must be a mapping, got {type(value).__name__}")
    return value


def _text(value: Any, where: str, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise RunError(f"{where}: {name} must be text, got {type(value).__name__}")
    return str(value)


def _whole(value: Any, where: str, name: str, *, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise RunError(f"{where}: {name} must be a whole number of at least {low}, got {_short(repr(value), 60)}")
    return value


def _summary(path: Path) -> dict:
    try:
        raw = _read(path, "summary.json")
    except FileNotFoundError:
        raise RunError(f"{path.parent} has no summary.json: is it an `eval --out` folder?") from None
    try:
        summary = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RunError(f"{path} is not JSON ({str(exc).splitlines()[0][:120]}): run `eval --out` again") from None
    except RecursionError:
        raise RunError(f"{path} is nested too deeply to be an `eval --out` summary") from None
    if not isinstance(summary, dict):
        raise RunError(f"{path}: the top level must be a JSON object, got {type(summary).__name__}: "
                       "is it an `eval --out` summary?")
    return summary


def _stamps(summary: dict, where: str) -> dict:
    truth = _mapping(summary.get("truth"), where, "truth")
    model = _mapping(summary.get("model"), where, "model")
    corpus = _mapping(summary.get("corpus"), where, "corpus")
    if "gate" not in summary:
        raise RunError(f"{where}: gate is missing (written by an older ragdiag): run `eval --out` again")
    try:
        gate = Gate.from_stamp(summary["gate"], where=where)
    except GateError as exc:
        raise RunError(_short(str(exc))) from None
    sha = _text(truth.get("sha256"), where, "truth.sha256")
    if not sha:
        raise RunError(f"{where} has no ground-truth hash (truth.sha256; written by an older ragdiag): "
                       "run `eval --out` on it again")
    return dict(truth_sha256=sha, truth_source=_text(truth.get("source"), where, "truth.source"),
                questions=_whole(truth.get("questions", 0), where, "truth.questions"),
                model={k: _text(model.get(k), where, f"model.{k}") for k in ("model", "weights_sha256", "dim",
                                                                             "precision") if k in model},
                corpus={k: _text(corpus.get(k), where, f"corpus.{k}") for k in ("root", "sha256", "documents",
                                                                                "characters") if k in corpus},
                pipeline_version=_text(summary.get("pipeline_version"), where, "pipeline_version"),
                ragdiag_version=_text(summary.get("ragdiag_version"), where, "ragdiag_version"),
                gate=gate)


def _short(text: str, limit: int = 300) -> str:
    """``text`` cut to ``limit`` characters (a stamp holding a huge value still makes a one-line message)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(text: str) -> str:
    r"""``text`` for a one-line message: control characters written as escapes (``\x00``), never sent to a terminal."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def _csv_rows(raw: bytes, where: str, columns, *, renamed: dict | None = None) -> list[dict]:
    """The rows of a CSV holding ``columns``; ``renamed``: old column names read as the new ones."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RunError(f"{where} is not UTF-8 text (byte {exc.start}): run `eval --out` again") from None
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        if renamed and not set(renamed.values()) & set(header):  # a folder written before the new names
            header = reader.fieldnames = [renamed.get(h, h) for h in header]
        missing = [c for c in columns if c not in header]
        if missing:
            have = _shown(", ".join(header))
            raise RunError(f"{where}: column {missing[0]} is missing (it has: {have[:200] or 'none'}); "
                           "run `eval --out` again")
        rows = []
        for n, row in enumerate(reader, start=2):
            if None in row or any(row.get(c) is None for c in columns):
                raise RunError(f"{where} line {n}: {len(header)} columns expected")
            rows.append(row)
        return rows
    except csv.Error as exc:
        raise RunError(f"{where} is not a readable CSV ({exc}): run `eval --out` again") from None


def _read_per_query(folder: Path) -> list[dict]:
    csv_path, parquet = folder / "per_query.csv", folder / "per_query.parquet"
    if csv_path.exists() or csv_path.is_symlink():
        return _csv_rows(_read(csv_path, "per_query.csv"), str(csv_path), PER_QUERY_COLUMNS)
    if parquet.exists() or parquet.is_symlink():
        import pandas as pd

        raw = _read(parquet, "per_query.parquet")
        try:
            frame = pd.read_parquet(io.BytesIO(raw))
        except Exception as exc:  # pyarrow raises its own error kinds for a damaged file
            raise RunError(f"{parquet} is not a readable Parquet file ({type(exc).__name__}): "
                           "run `eval --out` again") from None
        missing = [c for c in PER_QUERY_COLUMNS if c not in frame.columns]
        if missing:
            raise RunError(f"{parquet}: column {missing[0]} is missing; run `eval --out` again")
        missing_value = lambda v: v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))  # noqa: E731
        return [{k: ("" if missing_value(v) else str(v)) for k, v in r.items()} for r in frame.to_dict("records")]
    raise RunError(f"{folder} has no per_query.csv nor per_query.parquet: is it an `eval --out` folder?")


def _rank(value: Any, where: str) -> int:
    text = str(value).strip()
    if text == "":  # what eval writes for a needle not ranked (a Parquet null is read as "" too)
        return 0
    try:
        rank = float(text)
    except ValueError:
        raise RunError(f"{where}: needle_rank must be a whole number or empty, got {text[:40]!r}") from None
    if not math.isfinite(rank) or rank != int(rank) or rank < -1:
        raise RunError(f"{where}: needle_rank must be a whole number or empty, got {text[:40]!r}")
    return max(int(rank), 0)


def _distance(value: str, where: str, name: str) -> float:
    try:
        d = float(value)
    except (TypeError, ValueError):
        raise RunError(f"{where}: {name} must be a cosine distance or inf, got {str(value)[:40]!r}") from None
    if d == math.inf or (math.isfinite(d) and -_DISTANCE_SLACK <= d <= MAX_CUT + _DISTANCE_SLACK):
        return d
    raise RunError(f"{where}: {name} must be a cosine distance in [0, 2] or inf, got {str(value)[:40]!r}")


def _destroyed(summary: dict, strategy: str, where: str) -> tuple[DestroyedRecord, ...]:
    table = _mapping(summary.get("destroyed"), where, "destroyed").get(strategy) or []
    if not isinstance(table, list):
        raise RunError(f"{where}: destroyed.{strategy} must be a list, got {type(table).__name__}")
    out = []
    for i, d in enumerate(table):
        at = f"destroyed.{strategy}[{i}]"
        if not isinstance(d, dict):
            raise RunError(f"{where}: {at} must be a mapping, got {type(d).__name__}")
        cuts = d.get("cuts", ())
        if not isinstance(cuts, list | tuple):
            raise RunError(f"{where}: {at}.cuts must be a list, got {type(cuts).__name__}")
        out.append(DestroyedRecord(_text(d.get("question_id"), where, f"{at}.question_id"),
                                   _text(d.get("doc_id"), where, f"{at}.doc_id"),
                                   _whole(d.get("start"), where, f"{at}.start"),
                                   _whole(d.get("end"), where, f"{at}.end"),
                                   tuple(_whole(c, where, f"{at}.cuts") for c in cuts)))
    return tuple(out)


def load_run(folder: str | Path, config: str) -> GateRun:
    """The configuration ``config`` (``E/hybrid``) of the ``eval --out`` folder ``folder``.

    Every file is read as a regular file under a size limit (``RAGDIAG_MAX_GATE_BYTES``)
    and every field it uses is checked: :class:`RunError` names the file and
    the field (a missing column, a gate stamp out of range, a distance that is
    not one), or says which stamps an older ragdiag did not write (run
    ``eval --out`` again). Nothing is defaulted: a gate must not pass because
    of its input.
    """
    from ..export import GATE_INPUT_COLUMNS, GATE_INPUTS_FILE

    if not isinstance(config, str):
        raise RunError(f"config must be text like 'E/hybrid', got {type(config).__name__}")
    path = Path(folder)
    if not path.is_dir():
        raise RunError(f"{folder} is not a folder: pass an `eval --out` folder")
    where = str(path / "summary.json")
    summary = _summary(path / "summary.json")
    stamps = _stamps(summary, where)
    strategy, _, retriever = config.partition("/")
    per_query = _read_per_query(path)
    ranks = {}
    for r in per_query:
        if r["strategy"] == strategy and r["retriever"] == retriever:
            if r["query_id"] in ranks:
                raise RunError(f"{path}: query {r['query_id'][:60]!r} is listed twice for {config} in per_query")
            ranks[r["query_id"]] = r
    if not ranks:
        have = sorted({f"{r['strategy']}/{r['retriever']}" for r in per_query})
        raise RunError(f"{folder} has no results for {config}; it has: {_shown(', '.join(have))[:300] or 'none'}")
    gate_path = path / GATE_INPUTS_FILE
    if not (gate_path.exists() or gate_path.is_symlink()):
        raise RunError(f"{folder} has no {GATE_INPUTS_FILE} (written by an older ragdiag): run `eval --out` again")
    gwhere = str(gate_path)
    gate_rows = [r for r in _csv_rows(_read(gate_path, GATE_INPUTS_FILE), gwhere, GATE_INPUT_COLUMNS,
                                      renamed=LEGACY_COLUMNS)
                 if r["strategy"] == strategy and r["retriever"] == retriever]
    if len(gate_rows) != len(ranks):
        raise RunError(f"{folder}: {GATE_INPUTS_FILE} and per_query disagree on the queries of {config} "
                       f"({len(gate_rows)} and {len(ranks)})")
    rows, ranks_in_order, seen, keeps = [], [], set(), set()
    for g in gate_rows:
        qid = g["query_id"]
        at = f"{gwhere}, query {qid[:60]!r}"
        r = ranks.get(qid)
        if r is None or qid in seen:
            raise RunError(f"{at}: not once in per_query for {config}; run `eval --out` again")
        seen.add(qid)
        if not g["kind"]:
            raise RunError(f"{at}: kind is empty (answerable, or the out-of-domain kind)")
        if g["kind"] == "answerable" and not g["question_id"]:
            raise RunError(f"{at}: an answerable query needs its question_id")
        try:
            keeps.add(int(g["keep"]))
        except ValueError:
            raise RunError(f"{at}: keep must be a whole number from 1 to {MAX_K}, got {g['keep'][:40]!r}") from None
        pq = f"{path / 'per_query.csv'}, query {qid[:60]!r}"
        ranks_in_order.append(_rank(r["needle_rank"], pq))
        rows.append({"query_id": qid, "question_id": g["question_id"] if g["kind"] == "answerable" else "",
                     "kind": g["kind"], "keep": int(g["keep"]),
                     "closest": _distance(g["closest"], at, "closest"),
                     "closest_holder": _distance(g["closest_holder"], at, "closest_holder"), "text": g["text"]})
    if not all(1 <= k <= MAX_K for k in keeps):
        raise RunError(f"{gwhere}: keep must be a whole number from 1 to {MAX_K}, got {sorted(keeps)}")
    gate = stamps["gate"]
    if keeps and keeps != {gate.keep}:
        if max(keeps) > gate.keep or len(keeps) > 1:
            raise RunError(f"{gwhere}: keep {sorted(keeps)} does not match the stamped gate.keep {gate.keep} "
                           f"of {where}; run `eval --out` again")
        stamps["gate"] = replace(gate, keep=min(keeps))  # fewer chunks than the keep: the gate kept them all
    table = GateTable.from_rows(rows, gate=stamps["gate"], config=config, needle_rank=ranks_in_order)
    return GateRun(source=str(folder), config=config, table=table,
                   destroyed=_destroyed(summary, strategy, where), **stamps)


def run_from_evaluation(ev, config: str, *, gate: Gate | None = None, source: str = "this evaluation") -> GateRun:
    """The configuration ``config`` of an :class:`~ragdiag.evaluation.evaluate.Evaluation` (nothing written or read).

    ``gate``: the keep and cut to stamp (default :class:`~ragdiag.core.gate.Gate`'s), usually the baseline's.
    """
    from ... import PIPELINE_VERSION, __version__
    from ...analyses.gate_table import gate_table
    from ...evaluation.records import parse_key
    from ...documents.truth import truth_sha256

    cfg = parse_key(config)
    gate = Gate() if gate is None else gate
    try:
        full = gate_table(ev, cfg, Gate(gate.keep))
    except ValueError as exc:  # an external run without distances
        raise RunError(str(exc)) from None
    # as a folder holds it: the window as the stamped keep, a missing rank as 0 (what the reader's _rank gives)
    # (the ladder's columns were computed at another cut: dropped, as a folder has none)
    table = replace(full, gate=replace(gate, keep=full.window), needle_rank=np.maximum(full.needle_rank, 0),
                    outcome=(), kept=None)
    index = ev.indexes.get(cfg.strategy)
    destroyed = () if index is None else tuple(
        DestroyedRecord(d.question_id, d.doc_id, d.start, d.end, tuple(d.cuts)) for d in index.report.destroyed)
    stamp = dict(ev.encoder_stamp)
    return GateRun(
        source=source, config=cfg.label, table=table, destroyed=destroyed,
        truth_sha256=truth_sha256(ev.truth), truth_source=ev.truth.source, questions=len(ev.truth.questions),
        model={k: stamp.get(k) for k in ("model", "weights_sha256", "dim", "precision") if k in stamp},
        corpus={"root": ev.corpus.name or ev.corpus.root, "sha256": ev.corpus.sha256,
                "documents": len(ev.corpus.documents), "characters": ev.corpus.n_chars},
        pipeline_version=PIPELINE_VERSION, ragdiag_version=__version__,
        gate=table.gate)
