"""Watch the cut in production, with no labels: live queries per period against the calibration.

A query log (JSON Lines or CSV: ``query``, ``time`` in ISO 8601, optionally
``tags``) is streamed line by line (:func:`read_log`), embedded in batches with
the configuration's encoder (through the store when one is given), and each
query's *closest-chunk distance* is the cosine distance of the dense model to
the nearest chunk of the configuration's strategy (the distance the gate reads,
:mod:`ragdiag.core.gate`). Per period (a day, or an ISO week):

* the share of queries the gate refuses at the cut (nothing under it), with its
  95% interval over queries (:func:`~ragdiag.analyses.compare.intervals.rate_interval`);
* the share the calibration expects: the same rule on the ground truth's
  queries (its answerable and out-of-domain mix, stated), with its interval;
* a two-sample Kolmogorov-Smirnov test of the period's distances against the
  calibration's (exact for small samples, asymptotic otherwise: scipy's
  ``ks_2samp(method="auto")``), its p adjusted by Holm over the periods shown.

A period is flagged when its refused interval and the calibration's do not
overlap (the refused share moved), or when the distribution test rejects at
:data:`ALPHA` after Holm *and* the KS distance is at least :data:`MIN_SHIFT`
(a shift too small to matter is not called a move, however many queries a
period holds).

Memory is bounded by the batch (:data:`BATCH` lines) plus four bytes per query
(the distances the test reads) and a few kept queries per period: a million
lines stream in well under 1 GB.

>>> p = period_key(_parse_time("2026-11-24T10:00:00Z"), "week"), period_key(_parse_time("2026-11-24"), "day")
>>> p
('2026-W48', '2026-11-24')
"""

from __future__ import annotations

import csv
import heapq
import io
import json
import os
from array import array
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..core.gate import Gate, cut_text
from ..core.stats import holm
from ..core.words import rate_text
from ..evaluation.rows import RateCell
from .compare.intervals import rate_interval

__all__ = ["MAX_LINE", "PERIODS", "BATCH", "ALPHA", "MIN_SHIFT", "SHOW_BAD", "KEEP_QUERIES", "TEST", "LogLine",
           "BadLine", "LogRead", "read_log", "period_key", "MonitorProgress", "closest_distances", "Calibration",
           "calibration", "gate_calibration", "distance_words", "PeriodRow", "Monitor", "monitor_log"]

#: The periods a log can be grouped by.
PERIODS = ("day", "week")
#: Lines embedded and searched at once (the memory a batch takes: BATCH x chunks float32 distances).
BATCH = 512
#: The level of the distribution test (after Holm over the periods shown).
ALPHA = 0.05
#: The smallest KS distance called a move (a share of queries: 10 points of the cumulative distribution).
MIN_SHIFT = 0.10
#: Bad lines listed by number (all are counted).
SHOW_BAD = 20
#: Per period, how many queries nearest to and farthest from the corpus are kept (for a person to read).
KEEP_QUERIES = 5
#: The distribution test, in words (every surface states it).
TEST = ("two-sample Kolmogorov-Smirnov test of the period's closest-chunk distances against the calibration "
        "queries' (exact for small samples, asymptotic otherwise), p adjusted by Holm over the periods shown")


@dataclass(frozen=True)
class LogLine:
    """One usable line of the log: its number (1-based), the query, the time (UTC), its tags, and the score the
    stack's ranking gave its best kept chunk when the log holds one (``score``; a native cut reads it)."""

    line: int
    query: str
    time: datetime
    tags: tuple[str, ...] = ()
    score: float | None = None


@dataclass(frozen=True)
class BadLine:
    """A line that could not be read as a query: its number and why."""

    line: int
    reason: str


#: Characters of one line of a JSON Lines log; a longer line is a bad line, read past and never held whole.
MAX_LINE = 65_536


def _parse_time(text: Any) -> datetime:
    """An ISO 8601 time as an aware UTC datetime (a time without an offset is read as UTC)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("no time")
    t = datetime.fromisoformat(text.strip())
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)


def period_key(t: datetime, period: str) -> str:
    """The period a time falls in: ``YYYY-MM-DD`` for a day, the ISO week ``YYYY-Www`` for a week."""
    if period == "day":
        return t.date().isoformat()
    if period == "week":
        y, w, _ = t.isocalendar()
        return f"{y}-W{w:02d}"
    raise ValueError(f"period must be one of {', '.join(PERIODS)}, got {period!r}")


def _tags(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):  # CSV: tags separated by ';' (or a JSON list)
        if value.startswith("["):
            try:
                value = json.loads(value)
            except ValueError:
                return tuple(t.strip() for t in value.split(";") if t.strip())
        else:
            return tuple(t.strip() for t in value.split(";") if t.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(t) for t in value)
    return (str(value),)


def _record(number: int, rec: Any) -> LogLine | BadLine:
    if not isinstance(rec, dict):
        return BadLine(number, "not an object with query and time")
    q = rec.get("query")
    if not isinstance(q, str) or not q.strip():
        return BadLine(number, "no query")
    try:
        t = _parse_time(rec.get("time"))
    except (ValueError, TypeError):
        return BadLine(number, f"time {repr(rec.get('time'))[:60]} is not ISO 8601" if rec.get("time") else "no time")
    except OverflowError:  # 9999-12-31T23:59:59-01:00 is past the last UTC time there is
        return BadLine(number, f"time {repr(rec.get('time'))[:60]} is outside years 1-9999 in UTC")
    return LogLine(number, q, t, _tags(rec.get("tags")), _score(rec.get("score")))


def _score(value: Any) -> float | None:
    """A line's ``score`` as a finite number, else None (a native monitor counts such a line as bad)."""
    try:
        x = float(value) if value not in (None, "") and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None
    return x if x is not None and np.isfinite(x) else None


def _is_csv(path: Path) -> bool:
    return path.suffix.lower() in (".csv", ".tsv")


def read_log(path: str | os.PathLike, *, on_bytes: Callable[[int], None] | None = None
             ) -> Iterator[LogLine | BadLine]:
    """Each line of a query log, in order, as a :class:`LogLine` or a :class:`BadLine` (never dropped).

    JSON Lines (one object a line) unless the file ends in ``.csv``; blank
    lines are not records and are skipped. ``on_bytes(n)`` is told how many
    bytes have been read so far (a progress bar over the file's size). The
    file is read as a stream: nothing but the current line is held.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write('{"query": "how do I scale", "time": "2026-11-24T10:00:00Z"}\\n{"time": "x"}\\n')
    >>> [type(r).__name__ for r in read_log(f.name)]
    ['LogLine', 'BadLine']
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"the log {str(path)!r} is not a file: pass a JSON Lines or CSV file of query and time")
    with open(path, "rb") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
        if _is_csv(path):
            reader = csv.DictReader(text)
            if reader.fieldnames is None:
                return
            if "query" not in reader.fieldnames or "time" not in reader.fieldnames:
                raise ValueError(f"the CSV log needs the columns query and time, found {', '.join(reader.fieldnames)}")
            while True:
                try:
                    rec = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:  # a malformed row (an unclosed quote, an oversized field) is a bad line
                    yield BadLine(reader.line_num, f"not CSV ({exc})")
                    continue
                if on_bytes is not None:
                    on_bytes(raw.tell())
                yield _record(reader.line_num, rec)
        number = 0
        while True:
            line = text.readline(MAX_LINE + 1)  # never more than one line's limit held
            if not line:
                break
            number += 1
            if on_bytes is not None and number % 1024 == 0:
                on_bytes(raw.tell())
            if len(line) > MAX_LINE and not line.endswith(("\n", "\r")):
                while (rest := text.readline(MAX_LINE + 1)) and not rest.endswith(("\n", "\r")):
                    pass  # the rest of an over-long line, read and dropped
                yield BadLine(number, f"over {MAX_LINE:,} characters")
                continue
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, or nested thousands deep
                yield BadLine(number, "not JSON")
                continue
            yield _record(number, rec)
        if on_bytes is not None:
            on_bytes(raw.tell())


@dataclass(frozen=True)
class MonitorProgress:
    """Progress of :func:`monitor_log`: lines read, queries embedded, and bytes of the log read of its size."""

    lines: int
    queries: int
    bytes_read: int
    bytes_total: int


def closest_distances(query_vectors: np.ndarray, chunk_vectors: np.ndarray, *, block: int = BATCH) -> np.ndarray:
    """Per query, the cosine distance to its closest chunk (unit vectors: ``1 - max dot``), in blocks of rows.

    >>> closest_distances(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.6, 0.8]])).round(3).tolist()
    [0.0, 0.2]
    """
    from ..retrieval.dense import cosine_distances

    q = np.asarray(query_vectors, dtype=np.float32)
    c = np.asarray(chunk_vectors, dtype=np.float32)
    if c.ndim != 2 or not c.shape[0]:
        raise ValueError("the strategy has no chunk vectors: nothing to measure a distance to")
    out = np.empty(q.shape[0], dtype=np.float64)
    for s in range(0, q.shape[0], block):
        out[s:s + block] = cosine_distances(q[s:s + block], c).min(axis=1)
    return out


def _embed(texts: list[str], encoder: Any, store: Any) -> np.ndarray:
    if store is not None:
        return store.embed(encoder, texts).vectors
    unique = list(dict.fromkeys(texts))  # a log repeats queries: embed each once per batch
    vecs = np.asarray(encoder.encode(unique), dtype=np.float32)
    pos = {t: i for i, t in enumerate(unique)}
    return vecs[[pos[t] for t in texts]]


@dataclass(frozen=True)
class Calibration:
    """The ground truth's queries seen as the gate sees live ones: closest distances and the mix.

    ``refused`` is the share the gate refuses at ``cut`` over the whole mix
    (the expectation for a live period whose questions are like the ground
    truth's), ``refused_answerable`` and ``refused_ood`` the same per kind.
    """

    distances: np.ndarray  # closest-chunk distance per calibration query
    in_domain: np.ndarray  # bool
    cut: float
    refused: RateCell
    refused_answerable: RateCell
    refused_ood: RateCell

    @property
    def mix(self) -> str:
        """The mix in words: ``"64 answerable and 30 off-topic queries of the ground truth (32% off-topic)"``."""
        n_in, n_ood = int(self.in_domain.sum()), int((~self.in_domain).sum())
        share = n_ood / max(n_in + n_ood, 1)
        return (f"{n_in} answerable and {n_ood} off-topic queries of the ground truth "
                f"({100 * share:.0f}% off-topic)")

    def as_json(self) -> dict:
        return {"answerable": int(self.in_domain.sum()), "off_topic": int((~self.in_domain).sum()),
                "mix": self.mix, "refused": _cell(self.refused), "refused_answerable": _cell(self.refused_answerable),
                "refused_off_topic": _cell(self.refused_ood)}


def _cell(c: RateCell) -> dict:
    return {"count": c.count, "rate": c.rate, "low": c.low, "high": c.high}


def _refused(distances: np.ndarray, gate: Gate) -> RateCell:
    d = np.asarray(distances, dtype=np.float64)
    n_ref = int((~gate.under(d)).sum())  # refused: the closest chunk is not under the cut, so nothing is kept
    return RateCell.of(rate_interval(n_ref, int(d.size)))


def calibration(distances: Sequence[float], in_domain: Sequence[bool], gate: Gate) -> Calibration:
    """The calibration at ``gate``'s cut from the ground truth's closest distances (see :class:`Calibration`).

    >>> c = calibration([0.2, 0.3, 0.7, 0.8], [True, True, False, True], Gate(cut=0.5))
    >>> rate_text(c.refused), c.refused_ood.count, c.mix
    ('50% (7–93)', 1, '3 answerable and 1 off-topic queries of the ground truth (25% off-topic)')
    """
    d = np.asarray(distances, dtype=np.float64)
    ind = np.asarray(in_domain, dtype=bool)
    if d.shape != ind.shape or not d.size:
        raise ValueError("the calibration needs one distance and one in-domain flag per ground-truth query")
    return Calibration(d, ind, gate.cut, _refused(d, gate), _refused(d[ind], gate), _refused(d[~ind], gate))


def gate_calibration(ev: Any, config: Any, gate: Gate, encoder: Any, *, store: Any = None
                     ) -> tuple[Calibration, np.ndarray, Any]:
    """The calibration of ``config`` from an evaluation: (calibration, chunk vectors, the encoder of the gate's model).

    The ground truth's queries are embedded and searched exactly as live ones
    are (:func:`closest_distances` over the strategy's dense vectors), so a
    period and the calibration are measured alike. ``encoder`` is the run's;
    a ``dense@MODEL`` configuration's gate reads its own model, which is
    loaded here (:func:`ragdiag.analyses.model_cut.gate_chunk_vectors`).
    """
    from ..evaluation.records import Config
    from ..index.models import load_encoder, split_model
    from .model_cut import gate_chunk_vectors

    cfg = Config.parse(config) if isinstance(config, str) else config
    _, param = split_model(cfg.retriever)
    enc = encoder if param is None else load_encoder(param)
    vectors = gate_chunk_vectors(ev, cfg, store=store)
    texts = [q.text for q in ev.queries]
    qv = store.embed(enc, texts).vectors if store is not None else np.asarray(enc.encode(texts), dtype=np.float32)
    return calibration(closest_distances(qv, vectors), ev.in_domain, gate), vectors, enc


def distance_words(config: Any, keep: int) -> str:
    """What the monitor's distance is for ``config``, in words (a fused or reranked gate refuses at least as often).

    >>> distance_words("E/dense", 4)[:60]
    "each query's closest chunk of strategy E by the dense model "
    """
    from ..evaluation.records import Config
    from ..index.models import split_model
    from ..retrieval.registry import retriever_spec

    cfg = Config.parse(config) if isinstance(config, str) else config
    spec = retriever_spec(split_model(cfg.retriever)[0])
    words = (f"each query's closest chunk of strategy {cfg.strategy} by the dense model (cosine distance), "
             "measured alike on the log and on the calibration")
    if spec.fuses or spec.pool or not spec.embeds or spec.variant_of:
        words += (f"; {cfg.label}'s gate looks only at its own top {keep}, which may miss that chunk, so it "
                  "refuses at least these shares")
    return words


@dataclass(frozen=True)
class PeriodRow:
    """One period of the log: its queries, refused share, the test against the calibration, and the verdict."""

    period: str
    queries: int
    refused: RateCell
    expected: RateCell
    ks: float  # the KS distance (largest gap between the two cumulative distributions)
    p: float  # raw p of the KS test
    drift_p: float  # Holm-adjusted over the periods shown
    flagged: bool
    sentence: str
    nearest: tuple[tuple[str, float], ...] = ()  # (query, distance), closest to the corpus first
    farthest: tuple[tuple[str, float], ...] = ()  # farthest first
    median: float = float("nan")

    def as_json(self) -> dict:
        return {"period": self.period, "queries": self.queries, "refused": _cell(self.refused),
                "expected": {"low": self.expected.low, "high": self.expected.high}, "ks": self.ks, "p": self.p,
                "drift_p": self.drift_p, "flagged": self.flagged, "sentence": self.sentence,
                "nearest": [{"query": q, "distance": d} for q, d in self.nearest],
                "farthest": [{"query": q, "distance": d} for q, d in self.farthest]}


@dataclass(frozen=True)
class Monitor:
    """The whole monitor: every period, the bad lines, the cut, the calibration and the test in words."""

    period: str
    cut: float
    periods: tuple[PeriodRow, ...]
    bad_count: int
    bad_lines: tuple[BadLine, ...]  # the first SHOW_BAD
    lines: int  # records read (good and bad)
    calibration: Calibration
    test: str = TEST
    cut_said: str = ""  # the cut in words when it is not a cosine distance ("MaxSim score ... >= 13.58")

    @property
    def flagged(self) -> tuple[PeriodRow, ...]:
        return tuple(p for p in self.periods if p.flagged)

    @property
    def headline(self) -> str:
        """The answer first, in one sentence."""
        if not self.periods:
            return (f"The log holds no usable query ({self.bad_count} bad lines of {self.lines})."
                    if self.lines else "The log is empty: no query to watch.")
        moved = self.flagged
        n = len(self.periods)
        if not moved:
            return (f"The calibration holds: none of the {n} {self.period}s departs from it "
                    f"({self.cut_said or f'cut {cut_text(self.cut)}'}).")
        names = ", ".join(p.period for p in moved)
        return (f"{len(moved)} of {n} {self.period}s departed from the calibration at "
                f"{self.cut_said or f'cut {cut_text(self.cut)}'}: {names}.")

    @property
    def bad_words(self) -> str:
        """The bad lines in one sentence ("" when none)."""
        if not self.bad_count:
            return ""
        shown = ", ".join(f"{b.line} ({b.reason})" for b in self.bad_lines)
        more = f" (the first {len(self.bad_lines)} listed)" if self.bad_count > len(self.bad_lines) else ""
        return f"{self.bad_count} bad lines not counted{more}: {shown}"

    def as_json(self) -> dict:
        return {"period": self.period, "cut": self.cut, "test": self.test, "lines": self.lines,
                "headline": self.headline, "calibration": self.calibration.as_json(),
                "periods": [p.as_json() for p in self.periods],
                "bad_lines": {"count": self.bad_count, "first": [{"line": b.line, "reason": b.reason}
                                                                 for b in self.bad_lines]}}


class _Period:
    """What one period keeps while the log streams: float32 distances and the extreme queries."""

    __slots__ = ("distances", "near", "far", "seq")

    def __init__(self):
        self.distances = array("f")
        self.near: list = []  # max-heap by -distance: the KEEP_QUERIES smallest
        self.far: list = []  # min-heap: the KEEP_QUERIES largest
        self.seq = 0

    def add(self, query: str, d: float) -> None:
        self.distances.append(d)
        self.seq += 1
        for heap, key in ((self.near, -d), (self.far, d)):
            item = (key, -self.seq, query)  # ties: the earlier query stays
            if len(heap) < KEEP_QUERIES:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)


def _sentence(name: str, refused: RateCell, expected: RateCell, ks: float, drift_p: float, n_periods: int,
              moved_share: bool, moved_dist: bool) -> str:
    exp = f"calibration expects {100 * expected.low:.0f}–{100 * expected.high:.0f}%"
    r = rate_text(refused).split(" ", 1)
    head = f"{name}: {r[0]} refused {r[1]}, {exp}"
    test = f"KS distance {ks:.2f}, p = {drift_p:.2g} Holm over {n_periods}"
    if moved_share:
        more = "more" if refused.low > expected.high else "fewer"
        return f"{head}: the questions moved ({more} refused than calibrated; {test})"
    if moved_dist:
        return f"{head}, but the distances moved ({test}): the questions moved"
    return f"{head}: as calibrated ({test})"


def monitor_log(path: str | os.PathLike, *, encoder: Any, chunk_vectors: np.ndarray, calibration: Calibration,
                gate: Gate, period: str = "week", store: Any = None,
                progress: Callable[[MonitorProgress], None] | None = None, batch: int = BATCH,
                measure: Callable[[list[LogLine]], np.ndarray] | None = None) -> Monitor:
    """Stream the log at ``path``, measure each query's closest-chunk distance and judge every period.

    ``encoder`` embeds the queries (the model the chunk vectors were made
    with), in batches of ``batch`` lines, through ``store`` when given (its
    vectors are stamped by the encoder). ``calibration`` holds the ground
    truth's distances measured the same way (:func:`calibration`); ``gate``'s
    cut decides "refused". Bad lines are counted, the first
    :data:`SHOW_BAD` kept by number. ``measure``: each line's number read another way than its closest-chunk
    distance (a native cut: the negated score the log holds, so that a smaller number is still nearer and
    ``gate.under`` says kept); nothing is embedded then.
    """
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    from scipy.stats import ks_2samp

    total = Path(path).stat().st_size if Path(path).is_file() else 0
    seen = {"bytes": 0}
    periods: dict[str, _Period] = {}
    bad: list[BadLine] = []
    counts = {"bad": 0, "lines": 0, "queries": 0}
    pending: list[LogLine] = []

    def flush() -> None:
        if not pending:
            return
        if measure is not None:
            dist = measure(pending)
        else:
            vecs = _embed([ln.query for ln in pending], encoder, store)
            dist = closest_distances(vecs, chunk_vectors)
        for ln, d in zip(pending, dist):
            periods.setdefault(period_key(ln.time, period), _Period()).add(ln.query, float(d))
        counts["queries"] += len(pending)
        pending.clear()
        if progress is not None:
            progress(MonitorProgress(counts["lines"], counts["queries"], seen["bytes"], total))

    def on_bytes(n: int) -> None:
        seen["bytes"] = n

    for rec in read_log(path, on_bytes=on_bytes):
        counts["lines"] += 1
        if isinstance(rec, BadLine):
            counts["bad"] += 1
            if len(bad) < SHOW_BAD:
                bad.append(rec)
            continue
        pending.append(rec)
        if len(pending) >= batch:
            flush()
    flush()

    names = sorted(periods)
    cal = calibration.distances
    raw = []
    for name in names:
        d = np.frombuffer(periods[name].distances, dtype=np.float32).astype(np.float64)
        r = ks_2samp(d, cal, method="auto")
        raw.append((float(r.statistic), float(r.pvalue)))
    adjusted = holm([p for _, p in raw]) if raw else np.array([])
    rows = []
    exp = calibration.refused
    for name, (ks, p), p_adj in zip(names, raw, adjusted):
        per = periods[name]
        d = np.frombuffer(per.distances, dtype=np.float32).astype(np.float64)
        ref = _refused(d, gate)
        moved_share = ref.low > exp.high or ref.high < exp.low  # the two 95% intervals do not overlap
        moved_dist = bool(p_adj < ALPHA and ks >= MIN_SHIFT)
        label = f"{period} {name}"
        rows.append(PeriodRow(
            period=name, queries=int(d.size), refused=ref, expected=exp, ks=ks, p=p, drift_p=float(p_adj),
            flagged=bool(moved_share or moved_dist),
            sentence=_sentence(label, ref, exp, ks, float(p_adj), len(names), moved_share, moved_dist),
            nearest=tuple((q, -k) for k, _, q in sorted(per.near, reverse=True)),
            farthest=tuple((q, k) for k, _, q in sorted(per.far, reverse=True)),
            median=float(np.median(d))))
    return Monitor(period, gate.cut, tuple(rows), counts["bad"], tuple(bad), counts["lines"], calibration)
