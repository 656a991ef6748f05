"""The history of gated runs: one SQLite file that keeps every run's summary, per-query outcomes and stamps.

A run enters with ``ragdiag history add OUT`` (an ``eval --out`` folder) or
``ragdiag gate --history`` (the candidate, with the gate's verdict). Each
configuration of the run keeps the gate's per-query inputs (needle rank, the
closest and the closest-right chunk's distance), so the measures the gate
reads are recomputed for any run, any time, at the cut and keep stamped in it:

* R@k at the primary k over answerable queries,
* answered (the right chunk kept under the cut) over answerable queries,
* bluffs (any chunk kept under the cut) over out-of-domain queries,
* destroyed needles (no chunk holds the answer whole), a count.

Rates carry the interval every recall in ragdiag carries
(:func:`ragdiag.analyses.compare.intervals.clustered_rate`: the phrasings of a
question count together).

Writers. The file is in WAL mode and every run is written in one
``BEGIN IMMEDIATE`` transaction, so two CI jobs adding runs at once
serialise (the second waits, up to :data:`BUSY_TIMEOUT_S`) and a reader
never sees half a run.

Ground truths. A run stamped with another ground-truth hash than the run
before it is kept and marked (:attr:`RunEntry.truth_changed`); trends are cut
there (:attr:`TrendPoint.segment`) and questions are compared only within the
same ground truth.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..analyses.gate_table import GateTable
from ..core.gate import Gate, OnGate
from ..core.stats import Interval
from ..core.wal import switch_to_wal
from .regression.runs import GateRun, RunError, load_run

__all__ = ["HISTORY_FILE", "BUSY_TIMEOUT_S", "HistoryError", "read_summary", "RunEntry", "Measures", "TrendPoint",
           "Change", "History", "open_history", "default_history_path", "measures_of", "export_mlflow"]

#: The file's name when none is given: beside the baseline folder.
HISTORY_FILE = "ragdiag-history.sqlite"
#: How long a writer waits for another one's transaction to end.
BUSY_TIMEOUT_S = 120.0
#: Version 2 names the outcome columns as the gate table does (``closest``, ``closest_holder``); version 1
#: called them ``first`` and ``good``, and a version-1 file is migrated when opened.
_SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    commit_sha TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    truth_sha256 TEXT NOT NULL,
    truth_source TEXT NOT NULL DEFAULT '',
    questions INTEGER NOT NULL,
    verdict TEXT,
    gate_json TEXT,
    stamps_json TEXT NOT NULL,
    summary_json TEXT
);
CREATE TABLE IF NOT EXISTS configs (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    config TEXT NOT NULL,
    cut REAL NOT NULL,
    keep INTEGER NOT NULL,
    primary_k INTEGER NOT NULL,
    destroyed_json TEXT NOT NULL,
    PRIMARY KEY (run_id, config)
);
CREATE TABLE IF NOT EXISTS outcomes (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    config TEXT NOT NULL,
    position INTEGER NOT NULL,
    query_id TEXT NOT NULL,
    question_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    needle_rank INTEGER NOT NULL,
    closest REAL NOT NULL,
    closest_holder REAL NOT NULL,
    PRIMARY KEY (run_id, config, position)
);
"""


class HistoryError(ValueError):
    """A history file or a run in it that cannot be used (the message says what to do)."""


def read_summary(folder: str | Path) -> dict:
    """The ``summary.json`` of an ``eval --out`` folder: a regular file under the gate's size limit holding a JSON
    object, else :class:`HistoryError` in one line (a pipe or ``/dev/zero`` in its place is refused, not read)."""
    from ..core.limits import ENV, LimitError, Limits, read_limited

    file = Path(folder) / "summary.json"
    try:
        raw = read_limited(file, Limits.from_env().max_gate_bytes, what="summary.json", env_var=ENV["max_gate_bytes"])
        summary = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise HistoryError(f"{folder} has no summary.json: is it an `eval --out` folder?") from None
    except LimitError as exc:
        raise HistoryError(f"{file}: {exc}") from None
    except OSError as exc:
        raise HistoryError(f"{file} cannot be read: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deep
        raise HistoryError(f"{file} is not JSON ({type(exc).__name__}): run `eval --out` again") from None
    if not isinstance(summary, dict):
        raise HistoryError(f"{file} holds {type(summary).__name__}, not an object: run `eval --out` again")
    return summary


@dataclass(frozen=True)
class RunEntry:
    """One run of the history: who, when, on which ground truth, with which gate verdict (None: not gated)."""

    id: int
    time: str
    label: str
    commit: str
    truth_sha256: str
    verdict: str | None
    configs: tuple[str, ...]
    source: str = ""
    truth_changed: bool = False  # another ground truth than the run before it

    @property
    def accepted(self) -> bool:
        """Part of the trend: added directly, or gated and passed (a failed candidate keeps only its marker)."""
        return self.verdict in (None, "pass")

    def as_json(self) -> dict:
        """``{id, time, label, commit, truth_sha256, verdict, configs, source, truth_changed, accepted}``."""
        return {"id": self.id, "time": self.time, "label": self.label, "commit": self.commit,
                "truth_sha256": self.truth_sha256, "verdict": self.verdict, "configs": list(self.configs),
                "source": self.source, "truth_changed": self.truth_changed, "accepted": self.accepted}


@dataclass(frozen=True)
class Measures(OnGate):
    """What the gate reads of one configuration of one run, at the run's stamped gate (cut, keep, k)."""

    config: str
    gate: Gate
    recall: Interval
    answered: Interval
    bluffs: Interval
    destroyed: int

    def as_json(self) -> dict:
        def iv(i: Interval) -> dict:
            return {"rate": i.estimate, "low": i.low, "high": i.high, "count": i.successes, "of": i.trials}

        return {"config": self.config, "cut": self.cut, "keep": self.keep, "k": self.k,
                "recall": iv(self.recall), "answered": iv(self.answered), "bluffs": iv(self.bluffs),
                "destroyed": self.destroyed}


@dataclass(frozen=True)
class TrendPoint:
    """One run's measures in a trend; ``segment`` counts the ground-truth changes before it (0, 1, ...)."""

    run: RunEntry
    measures: Measures
    segment: int


@dataclass(frozen=True)
class Change:
    """A query whose outcome differs from the previous accepted run on the same ground truth."""

    query_id: str
    question_id: str
    text: str
    measure: str  # "found in top k", "answered", "bluff"
    before: bool
    after: bool

    @property
    def better(self) -> bool:
        """Found or answered now, or no longer bluffing."""
        return self.after != (self.measure == "bluff") and self.before != self.after


def default_history_path(baseline: str | Path) -> Path:
    """:data:`HISTORY_FILE` beside the baseline folder ``baseline`` (relative when ``baseline`` is).

    >>> str(default_history_path("ragdiag-baseline/"))
    'ragdiag-history.sqlite'
    """
    return Path(baseline).parent / HISTORY_FILE


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def measures_of(config: str, table: GateTable, gate: Gate, *, destroyed: int) -> Measures:
    """The gate's measures of one configuration from its gate table, at ``gate`` (the gate's own definitions).

    Recall is :meth:`GateTable.found <ragdiag.analyses.gate_table.GateTable.found>` at the gate's k; answered and
    bluffs are :func:`~ragdiag.analyses.threshold.rates.rates_at`'s, with the intervals every surface prints.

    >>> rows = [{"query_id": i, "question_id": i if kind == "answerable" else "", "kind": kind, "keep": 4,
    ...          "closest": c, "closest_holder": h, "text": ""}
    ...         for i, kind, c, h in (("a", "answerable", .3, .3), ("b", "answerable", .4, .7), ("o", "far", .5, np.inf))]
    >>> gate = Gate(keep=4, cut=0.6)
    >>> m = measures_of("E/dense", GateTable.from_rows(rows, gate=gate, needle_rank=[1, 6, 0]), gate, destroyed=0)
    >>> (m.recall.successes, m.recall.trials), (m.answered.successes, m.answered.trials), m.bluffs.successes
    ((1, 2), (1, 2), 1)
    """
    from ..analyses.compare.intervals import clustered_rate
    from ..analyses.threshold.rates import rates_at

    ind = table.in_domain
    recall = clustered_rate(table.found(gate.k)[ind], [g for g, i in zip(table.group_ids(), ind) if i])
    rates = rates_at(table, gate.cut)

    def interval(cell, trials: int) -> Interval:
        return Interval(float("nan") if cell.rate is None else cell.rate, cell.low, cell.high, cell.count, trials)

    return Measures(config, gate, recall, interval(rates["answered"], table.n_answerable),
                    interval(rates["bluffs"], table.n_ood), destroyed)


def _flags(table: GateTable, gate: Gate) -> list[dict[str, bool]]:
    """Per query, what the gate reads of it: found and answered (answerable), or a bluff (off-topic)."""
    found, answered, given = table.found(gate.k), table.answered(gate.cut), table.given_sources(gate.cut)
    return [{f"found in top {gate.k}": bool(found[i]), "answered": bool(answered[i])} if table.in_domain[i]
            else {"bluff": bool(given[i])} for i in range(len(table.query_ids))]


class History:
    """An open history file (:func:`open_history`); every method is one transaction."""

    def __init__(self, path: Path, con: sqlite3.Connection, *, version: int = _SCHEMA_VERSION):
        self.path = path
        self._con = con
        self._version = version  # 1: a file opened to read, not migrated (its outcome columns have the old names)

    def close(self) -> None:
        """Close the file."""
        self._con.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- writing
    def add(self, runs: list[GateRun], *, label: str = "", commit: str = "", source: str = "",
            verdict: str | None = None, gate: dict | None = None, summary: dict | None = None) -> int:
        """Add one run (its configurations ``runs``, all of one evaluation); return its id.

        ``verdict`` and ``gate``: the gate's verdict and JSON report when the run
        was gated. ``summary``: the folder's ``summary.json``, kept whole.
        """
        if not runs:
            raise HistoryError("nothing to add: the run has no configuration")
        if len({r.truth_sha256 for r in runs}) != 1:
            raise HistoryError("the configurations of one run must share the ground truth")
        if verdict not in (None, "pass", "fail", "inconclusive"):
            raise HistoryError(f"verdict must be pass, fail or inconclusive, got {verdict!r}")
        if self._version != _SCHEMA_VERSION:
            raise HistoryError(f"{self.path} was opened to read (schema {self._version}): open it to write "
                               "(open_history(path)) to add a run")
        first = runs[0]
        stamps = {"model": first.model, "corpus": first.corpus, "pipeline_version": first.pipeline_version,
                  "ragdiag_version": first.ragdiag_version}
        con = self._con
        con.execute("BEGIN IMMEDIATE")
        try:
            cur = con.execute(
                "INSERT INTO runs (created, label, commit_sha, source, truth_sha256, truth_source, questions, "
                "verdict, gate_json, stamps_json, summary_json) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (_now(), label, commit, source or first.source, first.truth_sha256, first.truth_source,
                 first.questions, verdict, None if gate is None else json.dumps(gate), json.dumps(stamps),
                 None if summary is None else json.dumps(summary)))
            run_id = int(cur.lastrowid)
            for r in runs:
                con.execute("INSERT INTO configs VALUES (?,?,?,?,?,?)",
                            (run_id, r.config, r.gate.cut, r.gate.keep, r.gate.k,
                             json.dumps([d.question_id for d in r.destroyed])))
                ranks = np.zeros(len(r.table.query_ids), dtype=np.int64) if r.table.needle_rank is None \
                    else np.maximum(r.table.needle_rank, 0)
                con.executemany("INSERT INTO outcomes VALUES (?,?,?,?,?,?,?,?,?,?)",
                                [(run_id, r.config, i, q["query_id"], q["question_id"], q["kind"], q["text"],
                                  int(ranks[i]), q["closest"], q["closest_holder"])
                                 for i, q in enumerate(r.table.rows())])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return run_id

    def add_folder(self, folder: str | Path, *, configs: list[str] | None = None, label: str = "",
                   commit: str = "") -> int:
        """Add the ``eval --out`` folder ``folder`` (every configuration in it, or ``configs``); return its id."""
        path = Path(folder)
        summary = read_summary(path)
        names = configs or _configs_in(path)
        try:
            runs = [load_run(path, c) for c in names]
        except RunError as exc:
            raise HistoryError(str(exc)) from None
        return self.add(runs, label=label, commit=commit, source=str(folder), summary=summary)

    # ----- reading
    def runs(self) -> tuple[RunEntry, ...]:
        """Every run, oldest first, with ``truth_changed`` against the run before it."""
        rows = self._con.execute(
            "SELECT r.id, r.created, r.label, r.commit_sha, r.truth_sha256, r.verdict, r.source, "
            "group_concat(c.config, ',') FROM runs r LEFT JOIN configs c ON c.run_id = r.id "
            "GROUP BY r.id ORDER BY r.id").fetchall()
        out, before = [], None
        for rid, created, label, commit, sha, verdict, source, configs in rows:
            out.append(RunEntry(rid, created, label, commit, sha, verdict,
                                tuple(sorted((configs or "").split(","))) if configs else (), source,
                                before is not None and sha != before))
            before = sha
        return tuple(out)

    def run(self, run_id: int) -> RunEntry:
        """The run ``run_id`` (:class:`HistoryError` when there is none)."""
        for r in self.runs():
            if r.id == run_id:
                return r
        raise HistoryError(f"no run {run_id} in {self.path}: `ragdiag history list` shows the ids")

    def details(self, run_id: int) -> dict:
        """The run's stored stamps, gate report and summary (``None`` where absent)."""
        row = self._con.execute("SELECT truth_source, questions, stamps_json, gate_json, summary_json FROM runs "
                                "WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise HistoryError(f"no run {run_id} in {self.path}: `ragdiag history list` shows the ids")
        truth_source, questions, stamps, gate, summary = row
        return {"truth_source": truth_source, "questions": questions, "stamps": json.loads(stamps),
                "gate": json.loads(gate) if gate else None, "summary": json.loads(summary) if summary else None}

    def table(self, run_id: int, config: str) -> GateTable:
        """The gate table of one configuration of one run, in the run's order, at its stamped gate."""
        distances = "first, good" if self._version == 1 else "closest, closest_holder"
        rows = self._con.execute(
            f"SELECT query_id, question_id, kind, text, needle_rank, {distances} FROM outcomes "
            "WHERE run_id = ? AND config = ? ORDER BY position", (run_id, config)).fetchall()
        gate = self.gate(run_id, config)
        return GateTable.from_rows(
            [{"query_id": q, "question_id": qid, "kind": kind, "keep": gate.keep, "closest": c, "closest_holder": h,
              "text": text} for q, qid, kind, text, _, c, h in rows],
            gate=gate, config=config, needle_rank=[r[4] for r in rows])

    def gate(self, run_id: int, config: str) -> Gate:
        """The gate ``config`` was stamped with in run ``run_id``."""
        row = self._con.execute("SELECT cut, keep, primary_k FROM configs WHERE run_id = ? AND config = ?",
                                (run_id, config)).fetchone()
        if row is None:
            raise HistoryError(f"run {run_id} has no configuration {config}")
        cut, keep, k = row
        return Gate(keep=keep, cut=cut, k=k)

    def measures(self, run_id: int, config: str) -> Measures:
        """The gate's measures of ``config`` in run ``run_id``, at its stamped gate."""
        gate = self.gate(run_id, config)
        destroyed, = self._con.execute("SELECT destroyed_json FROM configs WHERE run_id = ? AND config = ?",
                                       (run_id, config)).fetchone()
        return measures_of(config, self.table(run_id, config), gate, destroyed=len(json.loads(destroyed)))

    def trend(self, config: str) -> tuple[TrendPoint, ...]:
        """Every run holding ``config``, oldest first, with its measures and its ground-truth segment."""
        points, segment, before = [], 0, None
        for r in self.runs():
            if config not in r.configs:
                continue
            if before is not None and r.truth_sha256 != before:
                segment += 1
            before = r.truth_sha256
            points.append(TrendPoint(r, self.measures(r.id, config), segment))
        return tuple(points)

    def previous(self, run_id: int, config: str) -> RunEntry | None:
        """The accepted run before ``run_id`` holding ``config`` on the same ground truth (None: the first)."""
        this = self.run(run_id)
        earlier = [r for r in self.runs() if r.id < run_id and r.accepted and config in r.configs
                   and r.truth_sha256 == this.truth_sha256]
        return earlier[-1] if earlier else None

    def changes(self, run_id: int, config: str) -> tuple[RunEntry | None, tuple[Change, ...]]:
        """The previous accepted run (same ground truth) and each query whose outcome differs from it."""
        prev = self.previous(run_id, config)
        if prev is None:
            return None, ()
        now, then = self.table(run_id, config), self.table(prev.id, config)
        before = {q: i for i, q in enumerate(then.query_ids)}
        fa_all, fb_all = _flags(now, now.gate), _flags(then, then.gate)
        out = []
        for i, q in enumerate(now.query_ids):
            j = before.get(q)
            if j is None:
                continue
            fb, fa = fb_all[j], fa_all[i]
            out += [Change(q, now.question_id(i), now.texts[i], m, fb[m], fa[m]) for m in fa if fb.get(m) != fa[m]]
        return prev, tuple(out)

    def configs(self) -> tuple[str, ...]:
        """Every configuration any run holds, the most frequent first (ties by name)."""
        rows = self._con.execute("SELECT config, count(*) FROM configs GROUP BY config").fetchall()
        return tuple(c for c, _ in sorted(rows, key=lambda r: (-r[1], r[0])))


def _configs_in(folder: Path) -> list[str]:
    import csv

    path = folder / "per_query.csv"
    if not path.is_file():
        raise HistoryError(f"{folder} has no per_query.csv: is it an `eval --out` folder?")
    with path.open(encoding="utf-8", newline="") as fh:
        seen = dict.fromkeys(f"{r['strategy']}/{r['retriever']}" for r in csv.DictReader(fh))
    if not seen:
        raise HistoryError(f"{folder}/per_query.csv lists no configuration")
    return list(seen)


def open_history(path: str | Path, *, create: bool = True) -> History:
    """Open (and, with ``create``, make) the history file ``path`` in WAL mode.

    :class:`HistoryError` when ``path`` is not a ragdiag history (or, without
    ``create``, does not exist).
    """
    p = Path(path)
    if not create and not p.is_file():
        raise HistoryError(f"{path} does not exist: add a run first (ragdiag history add OUT)")
    if p.is_dir():
        raise HistoryError(f"{path} is a folder: give the history file's path (e.g. {p / HISTORY_FILE})")
    try:
        con = sqlite3.connect(p, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        switch_to_wal(con, BUSY_TIMEOUT_S)
        con.execute("PRAGMA synchronous = NORMAL")
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version == 1 and create:  # a writer migrates; a reader reads version 1 as it is (it never writes)
            _migrate_1_to_2(con)
            version = _SCHEMA_VERSION
        if version not in (0, 1, _SCHEMA_VERSION):
            raise HistoryError(f"{path} was written by a newer ragdiag (schema {version}): upgrade ragdiag")
        if version == 0:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables - {"sqlite_sequence"} and "runs" not in tables:
                raise HistoryError(f"{path} is an SQLite file but not a ragdiag history: choose another path")
            con.execute("BEGIN IMMEDIATE")  # two writers creating the file at once: the second waits, then finds it
            for statement in filter(str.strip, _SCHEMA.split(";")):
                con.execute(statement)
            con.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            con.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise HistoryError(f"{path} cannot be opened as a history file: {exc}") from None
    return History(p, con, version=version or _SCHEMA_VERSION)


def _migrate_1_to_2(con: sqlite3.Connection) -> None:
    """Version 1 to 2: the outcome columns take the gate table's names (``first`` -> ``closest``, ``good`` ->
    ``closest_holder``), in one transaction (a second process opening the file at once waits, then finds 2)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        if con.execute("PRAGMA user_version").fetchone()[0] == 1:
            con.execute("ALTER TABLE outcomes RENAME COLUMN first TO closest")
            con.execute("ALTER TABLE outcomes RENAME COLUMN good TO closest_holder")
            con.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def export_mlflow(hist: History, run_id: int, tracking_uri: str, *, experiment: str = "ragdiag") -> str:
    """Copy run ``run_id`` to MLflow; return the MLflow run's id (needs ``pip install mlflow``).

    Per configuration, the metrics ``<config>/recall_at_<k>``, ``answered``,
    ``bluffs`` (each with ``_low`` and ``_high``, the 95% interval) and
    ``destroyed``; the stamps as tags; the run's summary (and the gate's
    report, when gated) as JSON artifacts; the per-query outcomes as a table
    (``per_query.json``).
    """
    import mlflow
    import pandas as pd

    run = hist.run(run_id)
    details = hist.details(run_id)
    client = mlflow.MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment)
    exp_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    tags = {"ragdiag.run": str(run.id), "ragdiag.label": run.label, "ragdiag.commit": run.commit,
            "ragdiag.truth_sha256": run.truth_sha256, "ragdiag.verdict": run.verdict or "not gated",
            "ragdiag.version": str(details["stamps"].get("ragdiag_version", "")),
            "ragdiag.model": str((details["stamps"].get("model") or {}).get("model", ""))}
    made = client.create_run(exp_id, run_name=f"ragdiag run {run.id}" + (f" ({run.label})" if run.label else ""),
                             tags=tags)
    rid = made.info.run_id
    rows = []
    for config in run.configs:
        m = hist.measures(run_id, config)
        safe = config.replace("@", "_at_")
        for name, iv in ((f"recall_at_{m.k}", m.recall), ("answered", m.answered), ("bluffs", m.bluffs)):
            if iv.trials:
                client.log_metric(rid, f"{safe}/{name}", iv.estimate)
                client.log_metric(rid, f"{safe}/{name}_low", iv.low)
                client.log_metric(rid, f"{safe}/{name}_high", iv.high)
        client.log_metric(rid, f"{safe}/destroyed", m.destroyed)
        client.log_param(rid, f"{safe}/cut", m.cut)
        client.log_param(rid, f"{safe}/keep", m.keep)
        table = hist.table(run_id, config)
        for q, rank, flags in zip(table.rows(), table.needle_rank, _flags(table, m.gate)):
            rows.append({"config": config, "query_id": q["query_id"], "question_id": q["question_id"],
                         "kind": q["kind"], "needle_rank": int(rank), "closest": q["closest"],
                         "closest_holder": q["closest_holder"], **{k.replace(" ", "_"): v for k, v in flags.items()}})
    if details["summary"] is not None:
        client.log_dict(rid, details["summary"], "summary.json")
    if details["gate"] is not None:
        client.log_dict(rid, details["gate"], "gate.json")
    client.log_table(rid, data=pd.DataFrame(rows), artifact_file="per_query.json")
    client.set_terminated(rid)
    return rid
