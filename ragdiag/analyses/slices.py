r"""Slices an aggregate cannot hide: the primary measure per slice, and each slice against the rest.

A slice is a set of queries sharing a label: a ``tag`` of the ground truth,
the ``doc`` holding the answer, the ``phrasing`` (``course``, ``ticket``...)
or the detected ``language`` (:func:`ragdiag.core.language.detect_language`).
For each slice:

- its rate with the interval every rate in ragdiag has (clustered Wilson over
  questions; for a mean such as nDCG, the cluster-robust t interval);
- its difference from the rest of the queries, with an interval *simultaneous
  over the slices*: questions are resampled with all their queries (cluster
  bootstrap, :data:`DRAWS` draws, fixed seed), each slice's difference is
  studentised by its bootstrap standard error, and the 95% quantile of the
  largest studentised deviation over the slices (max-T) sets every interval's
  half-width. All intervals hold together 95% of the time, so looking at every
  slice does not make a chance dip look like a collapse. A standard error is
  never taken below Agresti-Caffo's over questions (:func:`_se_floor`): a
  slice where everything fails has no bootstrap spread, yet is not certain;
  and the interval's standard error is the bootstrap's times
  :math:`\sqrt{G/(G-1)}` over the slice's G questions (the bootstrap's spread
  of a mean over few clusters is too small by that factor).

Coverage, checked by simulation (``tests/test_slices.py``, slow): with every
slice truly equal, the chance that any slice is called worse or better stays
near 5% (3% for six slices of 5 to 8 questions of two phrasings, 4.5% for
three slices of 10 to 12; 200 simulated runs each). Slices of 3 questions among many reach 10%, hence
:data:`MIN_QUESTIONS`.

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

__all__ = ["BY", "DRAWS", "MIN_QUESTIONS", "SliceRow", "SliceTable", "slice_table", "evaluation_slices",
           "slice_labels", "SIMULTANEOUS_WORDS"]

#: What slices can be cut by.
BY = ("tag", "doc", "language", "phrasing")
#: Bootstrap draws of the simultaneous intervals.
DRAWS = 4000
#: Fewest questions in a slice (and in its rest) for a verdict.
MIN_QUESTIONS = 5
SIMULTANEOUS_WORDS = ("each slice against the rest of the queries, 95% intervals simultaneous over the slices "
                      "(cluster bootstrap over questions, max-T)")
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
            return f"{100 * m.estimate:.0f}% ({100 * m.low:.0f}–{100 * m.high:.0f})"
        return f"{m.estimate:.2f} ({m.low:.2f}–{m.high:.2f})"

    def difference_words(self) -> str:
        """``34 points under the rest (−55 to −12)``; a mean: ``0.34 under the rest (−0.55 to −0.12)``."""
        if math.isnan(self.difference):
            return "no difference computed"
        side = "under" if self.difference < 0 else "over"

        def f(x):
            return f"{100 * x:+.0f}".replace("-", "−") if self.share else f"{x:+.2f}".replace("-", "−")

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


def _cluster_sums(values: np.ndarray, member: np.ndarray, cluster: np.ndarray, G: int):
    """Per slice and cluster: sums and counts in the slice and in the rest, each (slices x clusters)."""
    S = member.shape[0]
    a, n, b, m = (np.zeros((S, G)) for _ in range(4))
    for s in range(S):
        a[s] = np.bincount(cluster, weights=values * member[s], minlength=G)
        n[s] = np.bincount(cluster, weights=member[s].astype(float), minlength=G)
        b[s] = np.bincount(cluster, weights=values * ~member[s], minlength=G)
        m[s] = np.bincount(cluster, weights=(~member[s]).astype(float), minlength=G)
    return a, n, b, m


def _se_floor(a, n, b, m) -> np.ndarray:
    """The smallest standard error a slice's difference is given: Agresti-Caffo's over questions.

    Each question counts once (its queries' mean), one success and one failure
    are added to each side: a slice where every question fails against a rest
    where every one succeeds has a bootstrap spread of 0, yet 4 questions are
    not certainty.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        per_in = np.where(n > 0, a / n, 0.0)
        per_rest = np.where(m > 0, b / m, 0.0)
        q1, q2 = (n > 0).sum(1), (m > 0).sum(1)
        p1 = (per_in.sum(1) + 1) / (q1 + 2)
        p2 = (per_rest.sum(1) + 1) / (q2 + 2)
        return np.sqrt(p1 * (1 - p1) / (q1 + 2) + p2 * (1 - p2) / (q2 + 2))


def slice_table(values, groups, labels: Sequence[Sequence[str]], *, by: str, config: str = "", measure: str = "",
                share: bool = True, confidence: float = 0.95, draws: int = DRAWS, seed: int = SEED) -> SliceTable:
    """Slices of per-query ``values`` (hits, or values in [0, 1]) by ``labels`` (each query's slice labels).

    Parameters
    ----------
    values : array_like of float
        One per query, in [0, 1].
    groups : array_like
        Each query's question (the cluster resampled by the bootstrap).
    labels : sequence of sequence of str
        Each query's slices (a query may be in several, e.g. two tags, or in none).
    share : bool, keyword-only
        ``values`` are 0/1 hits (a rate, clustered Wilson interval) rather than a mean (cluster-robust t).

    Examples
    --------
    Twelve questions; the six tagged ``hard`` all miss, the others all hit:

    >>> t = slice_table([0] * 6 + [1] * 6, list("abcdefghijkl"), [["hard"]] * 6 + [["easy"]] * 6, by="tag")
    >>> [(r.label, r.verdict) for r in t.rows]
    [('hard', 'worse'), ('easy', 'better')]
    >>> t.rows[0].sentence()
    'questions tagged `hard`: 0% (0–46), 100 points under the rest (−100 to −64)'
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
    a, n, b, m = _cluster_sums(v, member, cluster, G)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = a.sum(1) / n.sum(1) - b.sum(1) / m.sum(1)
        rng = np.random.default_rng(seed)
        w = np.stack([np.bincount(row, minlength=G) for row in rng.integers(0, G, size=(draws, G))]).astype(float)
        boot = (w @ a.T) / (w @ n.T) - (w @ b.T) / (w @ m.T)  # draws x slices
        q_in, q_rest = (n > 0).sum(1), (m > 0).sum(1)
        # the bootstrap's spread of a mean over G clusters is (G-1)/G of the unbiased variance: put it back
        small = np.sqrt(np.maximum(q_in, 2) / (np.maximum(q_in, 2) - 1))
        with warnings.catch_warnings():  # a slice holding every query has no rest: no spread to measure
            warnings.simplefilter("ignore", RuntimeWarning)
            se = np.maximum(np.nanstd(boot, axis=0, ddof=1), _se_floor(a, n, b, m))
        dev = np.abs(boot - d) / se
        se = se * small  # the interval's standard error (the max-T quantile is read from the bootstrap's)
    judged = (q_in >= MIN_QUESTIONS) & (q_rest >= MIN_QUESTIONS) & (se > 0) & np.isfinite(se)
    crit = math.nan
    if judged.any():  # never below one slice's own two-sided quantile (a degenerate bootstrap gives 0)
        from statistics import NormalDist

        with warnings.catch_warnings():  # a draw without any judged slice is skipped
            warnings.simplefilter("ignore", RuntimeWarning)
            worst = np.nanmax(np.where(judged, dev, np.nan), axis=1)
        crit = max(float(np.nanquantile(worst, confidence)), NormalDist().inv_cdf(0.5 + confidence / 2))
    rows = []
    interval = (lambda x, gg: clustered_rate(x > 0.5, gg)) if share else clustered_mean
    for s, name in enumerate(names):
        sel = member[s]
        lo, hi = (d[s] - crit * se[s], d[s] + crit * se[s]) if judged[s] else (math.nan, math.nan)
        lo, hi = max(lo, -1.0), min(hi, 1.0)
        if q_in[s] < MIN_QUESTIONS:
            verdict = "too few questions"
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
