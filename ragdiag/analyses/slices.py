r"""Slices an aggregate cannot hide: the primary measure per slice, and each slice against the rest.

A slice is a set of queries sharing a label: a ``tag`` of the ground truth,
the ``doc`` holding the answer, the ``phrasing`` (``course``, ``ticket``...)
or the detected ``language`` (:func:`ragdiag.core.language.detect_language`).
For each slice:

- its rate with the interval every rate in ragdiag has (clustered Wilson over
  questions; for a mean such as nDCG, the cluster-robust t interval);
- its difference from the rest of the queries, with an interval *simultaneous
  over the slices*, from a permutation test: when the labels carry no
  information, moving them changes nothing, so the labels are moved at random
  (:data:`DRAWS` draws, fixed seed) as the design allows: a question's label
  (its tag, its document) moves to another question with all its phrasings,
  a label that differs among one question's queries (its phrasing, its
  language) swaps among that question's queries. Each slice's difference is
  divided by its spread over the draws, and the 95% quantile of the largest
  such ratio over the slices (max-T) sets every interval's half-width: the
  interval is the difference plus or minus that many of the slice's
  permutation standard errors. An interval excludes 0 exactly when the
  permutation max-T test calls the slice different, and the test's false-call
  rate holds at any slice size: the permutation distribution is exact, so a
  5-question slice that answers all or none is judged by how often 5
  questions drawn at random do so, not by a spread it does not have.

Checked by simulation (``tests/slow/test_slices.py``, slow): with every slice truly
alike, ten slices of 5, of 6, of 8 or of 5 to 8 questions, two phrasings
sharing each question's outcome, some slice is called worse or better in
4.0%, 4.7%, 4.5% and 3.6% of runs (1,000 runs each at 4,000 draws; the
test holds each under 6% on 500 seeded runs). Before, a bootstrap max-T with
a floored standard error called one in 10-31% of such runs.

A slice is *shown worse* when its whole simultaneous interval is below 0, and
the sentence says so with the interval it was decided with. Slices with fewer
than :data:`MIN_QUESTIONS` questions (or a rest that small) get no verdict.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core.defaults import SEED
from ..core.stats import Interval
from ..core.words import diff_points, interval

__all__ = ["BY", "DRAWS", "MIN_QUESTIONS", "SliceRow", "SliceTable", "slice_table", "evaluation_slices",
           "slice_labels", "SIMULTANEOUS_WORDS"]

#: What slices can be cut by.
BY = ("tag", "doc", "language", "phrasing")
#: Permutation draws of the simultaneous intervals.
DRAWS = 4000
#: Fewest questions in a slice (and in its rest) for a verdict.
MIN_QUESTIONS = 5
SIMULTANEOUS_WORDS = ("each slice against the rest of the queries, 95% intervals simultaneous over the slices "
                      "(permutation max-T: labels moved with whole questions)")
_UNIT = {"tag": "questions tagged", "doc": "questions on", "language": "queries in", "phrasing": "queries phrased"}


@dataclass(frozen=True)
class SliceRow:
    """One slice: its measure with its interval, and its difference from the rest (simultaneous interval)."""

    by: str
    label: str
    questions: int
    queries: int
    measure: Interval
    difference: float
    low: float
    high: float
    verdict: str  # worse | better | no detectable difference | too few questions | too few in the rest
    share: bool = True  # a share of queries (shown as %), else a mean (nDCG)

    def rate_words(self) -> str:
        """``31% (18–47)``, or ``0.31 (0.18–0.47)`` for a mean."""
        m = self.measure
        if self.share:
            return interval(m.estimate, m.low, m.high)
        return f"{m.estimate:.2f} ({m.low:.2f}–{m.high:.2f})"

    def difference_words(self) -> str:
        """``34 points under the rest (−55 to −12)``; a mean: ``0.34 under the rest (−0.55 to −0.12)``."""
        if math.isnan(self.difference):
            return "no difference computed"
        side = "under" if self.difference < 0 else "over"

        def f(x):
            return diff_points(x).replace("-", "−") if self.share else f"{x:+.2f}".replace("-", "−")

        size = f"{abs(100 * self.difference):.0f} points" if self.share else f"{abs(self.difference):.2f}"
        return f"{size} {side} the rest ({f(self.low)} to {f(self.high)})"

    def sentence(self) -> str:
        """``questions tagged `multi-hop`: 31% (18–47), 34 points under the rest (−55 to −12)``."""
        return f"{_UNIT[self.by]} `{self.label}`: {self.rate_words()}, {self.difference_words()}"


@dataclass(frozen=True)
class SliceTable:
    """Every slice of one configuration by one key, the measure named, the worse slices said in a sentence."""

    config: str
    by: str
    measure: str
    rows: tuple[SliceRow, ...]
    overall: Interval

    @property
    def worse(self) -> tuple[SliceRow, ...]:
        """The slices shown worse than the rest (their simultaneous interval below 0)."""
        return tuple(r for r in self.rows if r.verdict == "worse")

    def headline(self) -> str:
        """One sentence naming every slice shown worse, or saying none is."""
        if self.worse:
            return "Shown worse than the rest: " + "; ".join(r.sentence() for r in self.worse) + "."
        if all(r.verdict.startswith("too few") for r in self.rows):
            return (f"None of the {len(self.rows)} slices by {self.by} has the {MIN_QUESTIONS} questions (and a rest "
                    "as large) a verdict needs: their rates are shown, no slice is judged against the rest.")
        return (f"No slice by {self.by} is shown worse than the rest ({len(self.rows)} slices, "
                "simultaneous intervals).")

    def as_json(self) -> dict:
        """The table as plain JSON."""
        return {"config": self.config, "by": self.by, "measure": self.measure, "headline": self.headline(),
                "method": SIMULTANEOUS_WORDS,
                "overall": {"estimate": self.overall.estimate, "low": self.overall.low, "high": self.overall.high},
                "slices": [{"label": r.label, "questions": r.questions, "queries": r.queries,
                            "estimate": r.measure.estimate, "low": r.measure.low, "high": r.measure.high,
                            "difference": r.difference, "difference_low": r.low, "difference_high": r.high,
                            "verdict": r.verdict, "sentence": r.sentence()} for r in self.rows]}


def _blocks(cluster: np.ndarray, G: int) -> list[np.ndarray]:
    """Each question's query indices, in order."""
    order = np.argsort(cluster, kind="stable")
    return np.split(order, np.cumsum(np.bincount(cluster, minlength=G))[:-1])


def _relabellings(blocks: list[np.ndarray], n: int, draws: int, rng) -> np.ndarray:
    """``draws`` x ``n`` query indices: query i takes the slice labels of query ``out[b, i]`` in draw b.

    The labels move as the design allows when they carry no information: whole
    questions' labels among questions with as many queries (a tag or a
    document moves with all its question's phrasings), and, inside a question,
    among its own queries (a phrasing or a language swaps with another of the same question).
    """
    out = np.empty((draws, n), dtype=np.int64)
    by_size: dict[int, list[np.ndarray]] = {}
    for blk in blocks:
        if blk.size:
            by_size.setdefault(int(blk.size), []).append(blk)
    for k, members in by_size.items():
        Q = np.stack(members)  # questions x k
        sigma = rng.permuted(np.tile(np.arange(len(Q)), (draws, 1)), axis=1)
        tau = np.argsort(rng.random((draws, len(Q), k)), axis=2) if k > 1 else np.zeros((draws, len(Q), 1), int)
        out[:, Q.ravel()] = Q[sigma[:, :, None], tau].reshape(draws, -1)
    return out


def _differences(values: np.ndarray, member: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """Each slice's mean over queries minus its rest's; ``values`` (units, or draws x units), ``member`` slices x
    units; draws x slices (or slices); nan where a side is empty.

    A unit is a query, or a question whose queries share their labels (``values``
    its queries' sum, ``counts`` how many they are).
    """
    counts = np.ones_like(values) if counts is None else counts
    m = member.astype(np.float64).T
    a, inside = values @ m, counts @ m
    total, count = values.sum(-1, keepdims=values.ndim > 1), counts.sum(-1, keepdims=counts.ndim > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return a / inside - (total - a) / (count - inside)


def _permuted(values: np.ndarray, member: np.ndarray, perm: np.ndarray, counts: np.ndarray | None = None):
    """draws x slices: each slice's difference from the rest when the units' values are moved by ``perm``
    (the same as moving the labels the other way)."""
    counts = np.ones_like(values) if counts is None else counts
    out = np.empty((perm.shape[0], member.shape[0]))
    for start in range(0, perm.shape[0], 1000):
        p = perm[start:start + 1000]
        out[start:start + 1000] = _differences(values[p], member, counts[p])
    return out


def slice_table(values, groups, labels: Sequence[Sequence[str]], *, by: str, config: str = "", measure: str = "",
                share: bool = True, confidence: float = 0.95, draws: int = DRAWS, seed: int = SEED) -> SliceTable:
    """Slices of per-query ``values`` (hits, or values in [0, 1]) by ``labels`` (each query's slice labels).

    Parameters
    ----------
    values : array_like of float
        One per query, in [0, 1].
    groups : array_like
        Each query's question (labels move with all of a question's queries).
    labels : sequence of sequence of str
        Each query's slices (a query may be in several, e.g. two tags, or in none).
    share : bool, keyword-only
        ``values`` are 0/1 hits (a rate, clustered Wilson interval) rather than a mean (cluster-robust t).

    Examples
    --------
    Twelve questions; the six tagged ``hard`` all miss, the others all hit (six questions drawn at random
    are the six misses in 2 of the 924 ways to draw them):

    >>> t = slice_table([0] * 6 + [1] * 6, list("abcdefghijkl"), [["hard"]] * 6 + [["easy"]] * 6, by="tag")
    >>> [(r.label, r.verdict) for r in t.rows]
    [('hard', 'worse'), ('easy', 'better')]
    >>> t.rows[0].sentence()
    'questions tagged `hard`: 0% (0–46), 100 points under the rest (−100 to −33)'
    """
    from .compare.intervals import clustered_mean, clustered_rate

    if by not in BY:
        raise ValueError(f"by must be one of {', '.join(BY)}, got {by!r}")
    v = np.asarray(values, dtype=np.float64)
    g = np.asarray(groups, dtype=object)
    if not (v.ndim == 1 and len(v) == len(g) == len(labels)):
        raise ValueError("values, groups and labels must have one entry per query")
    names = sorted({lab for labs in labels for lab in labs})
    if not names:
        raise ValueError(f"no query has a {by}: nothing to slice")
    _, cluster = np.unique(g.astype(str), return_inverse=True)
    G = int(cluster.max()) + 1 if cluster.size else 0
    member = np.array([[name in labs for labs in labels] for name in names], dtype=bool)
    q_in = np.array([np.unique(cluster[row]).size for row in member])
    q_rest = np.array([np.unique(cluster[~row]).size for row in member])
    d = _differences(v, member)
    rng = np.random.default_rng(seed)
    first = np.full(G, -1)
    first[cluster[::-1]] = np.arange(len(v))[::-1]  # each question's first query
    if (member == member[:, first][:, cluster]).all():  # labels per question: move questions (faster, the same test)
        y, k = np.bincount(cluster, weights=v, minlength=G), np.bincount(cluster, minlength=G).astype(float)
        perm = rng.permuted(np.tile(np.arange(G), (draws, 1)), axis=1)
        null = _permuted(y, member[:, first], perm, k)
    else:
        null = _permuted(v, member, _relabellings(_blocks(cluster, G), len(v), draws, rng))
    # null: draws x slices, each slice's difference from the rest when its labels carry no information
    with warnings.catch_warnings():  # a slice whose labels cannot move (or with no rest) has no spread
        warnings.simplefilter("ignore", RuntimeWarning)
        se = np.nanstd(null, axis=0, ddof=1)
    enough = (q_in >= MIN_QUESTIONS) & (q_rest >= MIN_QUESTIONS)
    constant = enough & (np.nan_to_num(se, nan=0.0) == 0)  # every query alike: the difference is 0 and certain
    judged = enough & ~constant
    crit = math.nan
    if judged.any():
        with warnings.catch_warnings():  # a draw that empties a judged slice's rest is skipped
            warnings.simplefilter("ignore", RuntimeWarning)
            worst = np.nanmax(np.abs(null[:, judged]) / se[judged], axis=1)
        crit = float(np.nanquantile(worst, confidence, method="higher"))
    rows = []
    interval = (lambda x, gg: clustered_rate(x > 0.5, gg)) if share else clustered_mean
    for s, name in enumerate(names):
        sel = member[s]
        lo, hi = (d[s] - crit * se[s], d[s] + crit * se[s]) if judged[s] else (math.nan, math.nan)
        lo, hi = max(lo, -1.0), min(hi, 1.0)
        if q_in[s] < MIN_QUESTIONS:
            verdict = "too few questions"
        elif constant[s]:
            lo = hi = float(d[s])
            verdict = "no detectable difference"
        elif not judged[s]:
            verdict = "too few in the rest"
        elif hi < 0:
            verdict = "worse"
        elif lo > 0:
            verdict = "better"
        else:
            verdict = "no detectable difference"
        rows.append(SliceRow(by, name, int(q_in[s]), int(sel.sum()), interval(v[sel], g[sel]), float(d[s]),
                             float(lo), float(hi), verdict, share))
    rows.sort(key=lambda r: (r.measure.estimate, r.label))
    overall = clustered_rate(v > 0.5, g) if share else clustered_mean(v, g)
    return SliceTable(config, by, measure, tuple(rows), overall)


def slice_labels(queries, by: str, corpus=None, truth=None) -> list[tuple[str, ...]]:
    """Each in-domain query's slice labels by ``by`` (``doc`` needs ``truth``)."""
    from ..core.language import detect_language

    if by == "tag":
        return [tuple(q.tags) for q in queries]
    if by == "phrasing":
        return [(q.phrasing,) for q in queries]
    if by == "language":
        return [(detect_language(q.text),) for q in queries]
    if by == "doc":
        if truth is None:
            raise ValueError("slices by doc need the ground truth's needles (span gold)")
        return [(truth.question(q.question_id).doc_id,) for q in queries]
    raise ValueError(f"by must be one of {', '.join(BY)}, got {by!r}")


def evaluation_slices(ev, config, *, by: str, k: int, draws: int = DRAWS, seed: int = SEED) -> SliceTable:
    """Slices of one configuration of an :class:`~ragdiag.evaluation.records.Evaluation`: found in the top ``k``."""
    from ..core.metrics import hits_at_k

    res = ev.result(config)
    mask = ev.in_domain
    queries = [q for q, m in zip(ev.queries, mask) if m]
    labels = slice_labels(queries, by, ev.corpus, ev.truth)
    if by == "tag" and not any(labels):
        raise ValueError("the ground truth has no tags: add \"tags\": [\"...\"] to its questions to slice by tag")
    hits = hits_at_k(res.needle_rank[mask], k)
    return slice_table(hits, ev.groups(mask), labels, by=by, config=res.config.label, measure=f"R@{k}",
                       draws=draws, seed=seed)
