"""Watch the cut in production, with no labels: live queries per period against the calibration.

A query log (JSON Lines or CSV: ``query``, ``time`` in ISO 8601, optionally
``tags``) is streamed line by line (:func:`read_log`), embedded in batches with
the configuration's encoder (through the store when one is given), and each
query's *closest-chunk distance* is the cosine distance of the dense model to
the nearest chunk of the configuration's strategy (the distance the gate reads,
:mod:`ragdiag.core.gate`). Reading and embedding happen once per log
(:func:`measure_log`: a :class:`MeasuredLog` of distances in time order); a
cut, a keep or a grouping is then applied to it in milliseconds
(:func:`judge_log`).

The share the gate refuses depends on the live traffic's mix, so it is judged
only under a stated premise, the live off-topic share (the rules of
:mod:`ragdiag.analyses.drift`); without one it is shown and not judged. Given
the premise:

* per period (a day, or an ISO week), a *prediction* band for the refused
  count of a period of that size, corrected over the periods shown
  (Bonferroni);
* over the whole log in time order, an anytime-valid sequential rule (Ville's
  inequality), so that reading the log every day does not raise false alarms.

With nothing moved and the premise true, a run raises any alarm with a chance
of at most 5% (:data:`ragdiag.analyses.drift.LEVELS`), whatever the number of
periods or of readings.

Memory is bounded by the batch (:data:`BATCH` lines) plus twelve bytes per
query (its distance and time) and a few kept queries per day: a million lines
stream in well under 1 GB.

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
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..core.gate import Gate, cut_text
from ..core.words import pct, pct_span, rate_text
from ..evaluation.rows import RateCell
from .compare.intervals import rate_interval
from .drift import LEVELS, Expected, expected_share, judge_periods, period_band, sequential_alarm

__all__ = ["MAX_LINE", "PERIODS", "BATCH", "SHOW_BAD", "KEEP_QUERIES", "TEST", "SEQUENTIAL", "NOT_JUDGED", "LogLine",
           "BadLine", "read_log", "period_key", "MonitorProgress", "closest_distances", "Calibration",
           "calibration", "gate_calibration", "distance_words", "MeasuredLog", "measure_log", "PeriodRow", "Alarm",
           "Monitor", "judge_log", "monitor_log"]

#: The periods a log can be grouped by.
PERIODS = ("day", "week")
#: Lines embedded and searched at once (the memory a batch takes: BATCH x chunks float32 distances).
BATCH = 512
#: Bad lines listed by number (all are counted).
SHOW_BAD = 20
#: Per period, how many queries nearest to and farthest from the corpus are kept (for a person to read).
KEEP_QUERIES = 5
#: The per-period rule, in words (every surface states it).
TEST = ("a period is flagged when its refused count falls outside the band a period of its size shows with nothing "
        "moved (binomial at the share the calibration expects under the stated off-topic share), each band at "
        f"{pct(LEVELS[1], 1)} split over the periods shown, so more periods do not mean more false alarms")
#: The sequential rule, in words.
SEQUENTIAL = ("reading the log every day does not raise false alarms: after every query, in time order, the running "
              "count of refused queries is weighed against the share the calibration expects, by a test that with "
              f"nothing moved ever alarms with a chance of at most {pct(LEVELS[2], 1)} however often it is read "
              "(Ville's inequality)")
#: Why the refused share is not judged without a premise (one sentence).
NOT_JUDGED = ("the refused share is not judged: it depends on how many live queries are off-topic, and no live "
              "off-topic share was stated")


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
    (the ground truth's own mix, as its author wrote it), ``refused_answerable``
    and ``refused_ood`` the same per kind. ``questions`` names each answerable
    query's question (its phrasings share an outcome, so the share a live mix
    expects counts each question once: :meth:`expected`).
    """

    distances: np.ndarray  # closest-chunk distance per calibration query
    in_domain: np.ndarray  # bool
    cut: float
    refused: RateCell
    refused_answerable: RateCell
    refused_ood: RateCell
    questions: tuple = ()  # per query: its question id (answerable) or None; () = each query its own question

    @property
    def mix(self) -> str:
        """The mix in words: ``"64 answerable and 30 off-topic queries of the ground truth (32% off-topic)"``."""
        n_in, n_ood = int(self.in_domain.sum()), int((~self.in_domain).sum())
        share = n_ood / max(n_in + n_ood, 1)
        return (f"{n_in} answerable and {n_ood} off-topic queries of the ground truth "
                f"({pct(share)} off-topic)")

    def answerable_counts(self) -> tuple[float, int]:
        """(refused, questions) of the answerable questions: a question counts once, refused by the share of its
        phrasings refused.

        >>> c = calibration([0.2, 0.7, 0.8, 0.9], [True, True, True, False], Gate(cut=0.5), questions=["a", "a", "b", None])
        >>> c.answerable_counts()
        (1.5, 2)
        """
        refused = ~Gate(cut=self.cut).under(self.distances)
        ids = list(self.questions) if self.questions else list(range(self.distances.size))
        per: dict = {}
        for q, ind, r in zip(ids, self.in_domain, refused):
            if ind:
                per.setdefault(q, []).append(bool(r))
        return float(sum(sum(v) / len(v) for v in per.values())), len(per)

    def expected(self, off_topic_share: float | None) -> Expected | None:
        """The refused share expected of live traffic with ``off_topic_share`` of its queries off-topic (a premise);
        ``None`` without one (:func:`ragdiag.analyses.drift.expected_share`)."""
        if off_topic_share is None:
            return None
        return expected_share(self.answerable_counts(), (self.refused_ood.count, int((~self.in_domain).sum())),
                              off_topic_share)

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


def calibration(distances: Sequence[float], in_domain: Sequence[bool], gate: Gate, *,
                questions: Sequence[str | None] | None = None) -> Calibration:
    """The calibration at ``gate``'s cut from the ground truth's closest distances (see :class:`Calibration`).

    ``questions``: each query's question id (None for off-topic ones); without it each query is its own question.

    >>> c = calibration([0.2, 0.3, 0.7, 0.8], [True, True, False, True], Gate(cut=0.5))
    >>> rate_text(c.refused), c.refused_ood.count, c.mix
    ('50% (7–93)', 1, '3 answerable and 1 off-topic queries of the ground truth (25% off-topic)')
    """
    d = np.asarray(distances, dtype=np.float64)
    ind = np.asarray(in_domain, dtype=bool)
    if d.shape != ind.shape or not d.size:
        raise ValueError("the calibration needs one distance and one in-domain flag per ground-truth query")
    qs = tuple(questions) if questions is not None else ()
    if qs and len(qs) != d.size:
        raise ValueError("the calibration needs one question id (or None) per ground-truth query")
    return Calibration(d, ind, gate.cut, _refused(d, gate), _refused(d[ind], gate), _refused(d[~ind], gate), qs)


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
    return (calibration(closest_distances(qv, vectors), ev.in_domain, gate,
                        questions=[q.question_id for q in ev.queries]), vectors, enc)


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
    """One period of the log: its queries, refused share, its prediction band (under the premise) and the verdict.

    ``band`` is the refused counts a period of ``queries`` shows with nothing moved (``None``: not judged, no
    premise); ``flagged`` is outside it; ``direction`` is ``"more"`` or ``"fewer"`` when flagged.
    """

    period: str
    queries: int
    refused: RateCell
    band: tuple[int, int] | None
    flagged: bool
    sentence: str
    direction: str = ""
    nearest: tuple[tuple[str, float], ...] = ()  # (query, distance), closest to the corpus first
    farthest: tuple[tuple[str, float], ...] = ()  # farthest first
    median: float = float("nan")

    def as_json(self) -> dict:
        band = None if self.band is None else {
            "low_count": self.band[0], "high_count": self.band[1],
            "low": self.band[0] / max(self.queries, 1), "high": self.band[1] / max(self.queries, 1)}
        return {"period": self.period, "queries": self.queries, "refused": _cell(self.refused), "predicted": band,
                "flagged": self.flagged, "direction": self.direction or None, "sentence": self.sentence,
                "nearest": [{"query": q, "distance": d} for q, d in self.nearest],
                "farthest": [{"query": q, "distance": d} for q, d in self.farthest]}


@dataclass(frozen=True)
class Alarm:
    """Where the sequential rule alarmed: after ``queries`` queries in time order, at ``time``, in ``period``."""

    queries: int
    time: datetime
    period: str

    def as_json(self) -> dict:
        return {"queries": self.queries, "time": self.time.isoformat().replace("+00:00", "Z"), "period": self.period}


@dataclass(frozen=True)
class Monitor:
    """The whole monitor: every period, the bad lines, the cut, the calibration, the premise and the rules in words.

    ``expected`` is ``None`` when no live off-topic share was stated: the refused share is then shown, never judged.
    """

    period: str
    cut: float
    periods: tuple[PeriodRow, ...]
    bad_count: int
    bad_lines: tuple[BadLine, ...]  # the first SHOW_BAD
    lines: int  # records read (good and bad)
    calibration: Calibration
    expected: Expected | None = None
    alarm: Alarm | None = None
    test: str = TEST
    sequential: str = SEQUENTIAL
    cut_said: str = ""  # the cut in words when it is not a cosine distance ("MaxSim score ... >= 13.58")

    @property
    def cut_words(self) -> str:
        """``"cut 0.524"``, or the native cut as said (``cut_said``)."""
        return self.cut_said or f"cut {cut_text(self.cut)}"

    @property
    def judged(self) -> bool:
        return self.expected is not None

    @property
    def flagged(self) -> tuple[PeriodRow, ...]:
        return tuple(p for p in self.periods if p.flagged)

    @property
    def queries(self) -> int:
        return sum(p.queries for p in self.periods)

    @property
    def headline(self) -> str:
        """The answer first, in one sentence."""
        if not self.periods:
            return (f"The log holds no usable query ({self.bad_count} bad lines of {self.lines})."
                    if self.lines else "The log is empty: no query to watch.")
        n = len(self.periods)
        if self.expected is None:
            return (f"{self.queries:,} queries over {n} {self.period}s at {self.cut_words}; "
                    f"{NOT_JUDGED}.")
        premise = f"with {self.expected.share_text} of live queries off-topic"
        moved = self.flagged
        alarm = (f"the running count alarmed after {self.alarm.queries:,} queries ({self.period} {self.alarm.period})"
                 if self.alarm is not None else "")
        if not moved and self.alarm is None:
            return (f"The calibration holds {premise}: none of the {n} {self.period}s refuses outside what a "
                    f"{self.period} of its size shows with nothing moved, and the running count never alarmed "
                    f"({self.cut_words}).")
        if not moved:
            return f"The refused share moved {premise} at {self.cut_words}: {alarm}."
        names = ", ".join(p.period for p in moved)
        more = sorted({p.direction for p in moved})
        how = f"refused {more[0]}" if len(more) == 1 else "refused more or fewer"
        return (f"{len(moved)} of {n} {self.period}s {how} than the calibration predicts {premise} at cut "
                f"{cut_text(self.cut)}: {names}" + (f"; {alarm}." if alarm else "."))

    @property
    def bad_words(self) -> str:
        """The bad lines in one sentence ("" when none)."""
        if not self.bad_count:
            return ""
        shown = ", ".join(f"{b.line} ({b.reason})" for b in self.bad_lines)
        more = f" (the first {len(self.bad_lines)} listed)" if self.bad_count > len(self.bad_lines) else ""
        return f"{self.bad_count} bad lines not counted{more}: {shown}"

    def as_json(self) -> dict:
        exp = None if self.expected is None else {"off_topic_share": self.expected.off_topic_share,
                                                  "low": self.expected.low, "high": self.expected.high,
                                                  "words": self.expected.words()}
        return {"period": self.period, "cut": self.cut, "judged": self.judged, "test": self.test,
                "sequential": self.sequential, "lines": self.lines, "headline": self.headline,
                "calibration": self.calibration.as_json(), "expected": exp,
                "alarm": None if self.alarm is None else self.alarm.as_json(),
                "periods": [p.as_json() for p in self.periods],
                "bad_lines": {"count": self.bad_count, "first": [{"line": b.line, "reason": b.reason}
                                                                 for b in self.bad_lines]}}


class _Keep:
    """The KEEP_QUERIES queries nearest to and farthest from the corpus of one day, kept while the log streams."""

    __slots__ = ("near", "far")

    def __init__(self):
        self.near: list = []  # min-heap of (-distance, -line, query): the KEEP_QUERIES smallest
        self.far: list = []  # min-heap of (distance, -line, query): the KEEP_QUERIES largest

    def add(self, query: str, d: float, line: int) -> None:
        for heap, key in ((self.near, -d), (self.far, d)):
            item = (key, -line, query)  # ties: the earlier line stays
            if len(heap) < KEEP_QUERIES:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)


@dataclass(frozen=True)
class MeasuredLog:
    """A query log read and embedded once: what every cut, keep and grouping is judged from.

    ``distances`` (float32) and ``times`` (int64 microseconds since 1970 UTC) per usable query, in time order
    (ties in log order); ``keep`` per UTC day (``YYYY-MM-DD``): its :data:`KEEP_QUERIES` nearest and farthest
    queries as ``(nearest, farthest)`` lists of ``(query, distance, line)``. About 12 bytes a query.
    """

    distances: np.ndarray
    times: np.ndarray
    keep: dict
    bad_count: int
    bad_lines: tuple[BadLine, ...]
    lines: int

    @property
    def nbytes(self) -> int:
        return int(self.distances.nbytes + self.times.nbytes)

    def period_keys(self, period: str) -> np.ndarray:
        """Per query (time order), the index of its period in :meth:`period_names`."""
        return self._periods(period)[1]

    def period_names(self, period: str) -> list[str]:
        return self._periods(period)[0]

    def _periods(self, period: str) -> tuple[list[str], np.ndarray]:
        if period not in PERIODS:
            raise ValueError(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
        days = np.floor_divide(self.times, _DAY_US)
        uniq, inverse = np.unique(days, return_inverse=True)
        names = [period_key(_EPOCH + timedelta(days=int(d)), period) for d in uniq]
        order = sorted(set(names))
        index = {n: i for i, n in enumerate(order)}
        return order, np.array([index[n] for n in names], dtype=np.int64)[inverse] if uniq.size else np.zeros(0, int)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_DAY_US = 86_400 * 1_000_000


def _micros(t: datetime) -> int:
    return (t - _EPOCH) // timedelta(microseconds=1)


def measure_log(path: str | os.PathLike, *, encoder: Any, chunk_vectors: np.ndarray, store: Any = None,
                progress: Callable[[MonitorProgress], None] | None = None, batch: int = BATCH,
                measure: Callable[[list[LogLine]], np.ndarray] | None = None) -> MeasuredLog:
    """Stream the log at ``path`` once and measure each query's closest-chunk distance (a :class:`MeasuredLog`).

    ``encoder`` embeds the queries (the model the chunk vectors were made
    with), in batches of ``batch`` lines, through ``store`` when given (its
    vectors are stamped by the encoder). Bad lines are counted, the first
    :data:`SHOW_BAD` kept by number. Nothing here depends on the cut, the
    keep or the grouping: :func:`judge_log` applies them. ``measure``: each line's number read another way than
    its closest-chunk distance (a native cut: the negated score the log holds, so that a smaller number is still
    nearer and ``gate.under`` says kept); nothing is embedded then.
    """
    if batch < 1:
        raise ValueError(f"batch must be at least 1, got {batch}")
    total = Path(path).stat().st_size if Path(path).is_file() else 0
    seen = {"bytes": 0}
    distances = array("f")
    times = array("q")
    keep: dict[str, _Keep] = {}
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
            distances.append(float(d))
            times.append(_micros(ln.time))
            keep.setdefault(period_key(ln.time, "day"), _Keep()).add(ln.query, float(d), ln.line)
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
    t = np.frombuffer(times, dtype=np.int64) if times else np.zeros(0, np.int64)
    d = np.frombuffer(distances, dtype=np.float32) if distances else np.zeros(0, np.float32)
    if t.size > 1 and not bool(np.all(t[1:] >= t[:-1])):  # a log out of time order: sorted (ties in log order)
        order = np.argsort(t, kind="stable")
        t, d = t[order], d[order]
    kept = {day: ([(q, -k, -ln) for k, ln, q in sorted(h.near, reverse=True)],
                  [(q, k, -ln) for k, ln, q in sorted(h.far, reverse=True)]) for day, h in keep.items()}
    return MeasuredLog(d, t, kept, counts["bad"], tuple(bad), counts["lines"])


def _sentence(name: str, refused: RateCell, queries: int, band: tuple[int, int] | None, expected: Expected | None,
              direction: str) -> str:
    share = rate_text(refused).split(" ", 1)
    head = f"{name}: {refused.count:,} of {queries:,} refused ({share[0]}, {share[1][1:-1]})"
    if band is None or expected is None:
        return head  # not judged: the headline says why, once
    lo, hi = band
    pred = (f"predicted {lo:,}–{hi:,} ({pct_span(lo, hi, of=max(queries, 1))}) "
            f"for {queries:,} queries with {expected.share_text} off-topic")
    if direction:
        return f"{head}, {pred}: {direction} refused than predicted, the questions moved"
    return f"{head}, {pred}: as predicted"


def _merge(items: list, n: int, *, far: bool) -> tuple[tuple[str, float], ...]:
    # (query, distance, line): the n extreme, ties to the earlier line
    key = (lambda x: (-x[1], x[2])) if far else (lambda x: (x[1], x[2]))
    return tuple((q, d) for q, d, _ in sorted(items, key=key)[:n])


def judge_log(measured: MeasuredLog, calibration: Calibration, gate: Gate, *, period: str = "week",
              off_topic_share: float | None = None) -> Monitor:
    """Judge a measured log at ``gate``'s cut, grouped by ``period``, under the premise ``off_topic_share``.

    Without a premise (``None``) every period's refused share is shown and none is judged; with one, each
    period against its prediction band (:func:`ragdiag.analyses.drift.judge_periods`) and the whole log, in time
    order, by the sequential rule (:func:`ragdiag.analyses.drift.sequential_alarm`). ``calibration`` must be at
    ``gate``'s cut.
    """
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    if calibration.cut != gate.cut:
        raise ValueError(f"the calibration is at cut {calibration.cut}, the gate at {gate.cut}: measure both alike")
    expected = calibration.expected(off_topic_share)
    names, key = measured.period_names(period), measured.period_keys(period)
    refused = ~gate.under(measured.distances.astype(np.float64))
    sizes = np.bincount(key, minlength=len(names)).astype(int)
    counts = np.bincount(key, weights=refused, minlength=len(names)).round().astype(int)
    flags = judge_periods(list(zip(counts.tolist(), sizes.tolist())), expected) if expected is not None \
        else [False] * len(names)
    level = LEVELS[1] / max(1, len(names))
    by_period: dict[str, list[str]] = {}
    for day in measured.keep:
        by_period.setdefault(period_key(datetime.fromisoformat(day).replace(tzinfo=timezone.utc), period),
                             []).append(day)
    rows = []
    for i, name in enumerate(names):
        m, k = int(sizes[i]), int(counts[i])
        band = period_band(m, expected, level) if expected is not None else None
        direction = ("more" if k > band[1] else "fewer") if flags[i] else ""
        ref = RateCell.of(rate_interval(k, m))
        near = [x for day in by_period.get(name, ()) for x in measured.keep[day][0]]
        far = [x for day in by_period.get(name, ()) for x in measured.keep[day][1]]
        d = measured.distances[key == i]
        rows.append(PeriodRow(period=name, queries=m, refused=ref, band=band, flagged=bool(flags[i]),
                              sentence=_sentence(f"{period} {name}", ref, m, band, expected, direction),
                              direction=direction, nearest=_merge(near, KEEP_QUERIES, far=False),
                              farthest=_merge(far, KEEP_QUERIES, far=True),
                              median=float(np.median(d)) if d.size else float("nan")))
    alarm = None
    if expected is not None:
        at = sequential_alarm(refused, expected)
        if at is not None:
            t = _EPOCH + timedelta(microseconds=int(measured.times[at - 1]))
            alarm = Alarm(at, t, names[int(key[at - 1])])
    return Monitor(period, gate.cut, tuple(rows), measured.bad_count, measured.bad_lines, measured.lines,
                   calibration, expected, alarm)


def monitor_log(path: str | os.PathLike, *, encoder: Any, chunk_vectors: np.ndarray, calibration: Calibration,
                gate: Gate, period: str = "week", off_topic_share: float | None = None, store: Any = None,
                progress: Callable[[MonitorProgress], None] | None = None, batch: int = BATCH,
                measure: Callable[[list[LogLine]], np.ndarray] | None = None) -> Monitor:
    """:func:`measure_log` then :func:`judge_log`: the log at ``path`` judged in one call (the command's path)."""
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    measured = measure_log(path, encoder=encoder, chunk_vectors=chunk_vectors, store=store, progress=progress,
                           batch=batch, measure=measure)
    return judge_log(measured, calibration, gate, period=period, off_topic_share=off_topic_share)
