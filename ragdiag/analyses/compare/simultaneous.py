"""Simultaneous intervals that agree with their verdicts: one paired max-statistic permutation per family.

A family is a set of pairs of systems (configurations) compared on the same
questions. For a pair, ``S`` is the sum over questions of its per-question
differences ``d_g`` (each summed over the question's phrasings) and ``Q`` the
sum of their squares. The systems are shuffled within each question, inside
blocks (default: one block of every system in the family; the chunking
contrasts shuffle the strategies of one retriever), which is randomised max-T
with questions as the unit. A pair's statistic is *studentized*,
``T = |S| / sqrt(Q)``, with ``S`` and ``Q`` recomputed in every arrangement: a
pair of near-copies (an int8 or HNSW variant of its baseline, which disagree on
a question or two) is scaled by its own small spread, not by the spread of the
whole block, so neither it nor an independent pair dominates the maximum and
the family-wise error holds when systems differ in kind. A pair alone is its
exact sign-flip test (``Q`` is the same under every sign pattern). From the
null distribution of the largest ``T`` come both

* the adjusted p of each pair, ``P(max* >= observed T)``, and
* the simultaneous interval: ``S/n +/- c * sqrt(Q)/n`` (``n`` queries, ``c``
  the largest value of the null's support whose tail probability is still at
  least ``alpha``), widened where needed to hold the score interval at the same
  ``c`` (:func:`ragdiag.analyses.compare.score.score_hull`, hits only): with few
  discordant questions ``sqrt(Q)`` is small and ``+/- c sqrt(Q)`` would say a
  difference no larger than what was seen, while a difference that rarely
  shows is not ruled out by few questions (0 of 32 discordant: about +/-11
  points alone, not +0 to +0).

So an interval excludes 0 exactly when the adjusted p is below ``alpha``: the
tail is a non-increasing step function, at least ``alpha`` up to ``c`` and below
it past ``c``; the end nearer 0 is nudged by at most one unit in the last place
where rounding (or the score hull, with several phrasings) would say otherwise.
Outcomes are summed in integer units (hits are integers; reciprocal ranks are
counted in units of 1e-9).

The null is enumerated exactly when it is small (one pair of hits: the sign
flips, by integer convolution; otherwise when there are at most
:data:`EXACT_LIMIT` arrangements), else drawn by a seeded Monte Carlo of
:data:`MAX_T_DRAWS` shuffles (seed :data:`ragdiag.core.defaults.SEED`) with the
observed arrangement counted as one of them. :attr:`MaxT.method` says which.

References
----------
.. [1] T. Sakai, *Statistical Significance Testing for Information Retrieval:
   Theory and Practice* (tutorial, SIGIR 2017 / ECIR 2019): randomised Tukey HSD.
.. [2] P. H. Westfall, S. S. Young, *Resampling-Based Multiple Testing* (1993): single-step max-T.
.. [3] B. Carterette, "Multiple testing in statistical analysis of systems-based
   information retrieval experiments", ACM TOIS 30 (2012).
.. [4] J. P. Romano, M. Wolf, "Exact and approximate stepdown methods for multiple
   hypothesis testing", JASA 100 (2005): studentized max-T under permutation.
"""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...core.defaults import ALPHA, SEED
from .paired import sign_sum_counts
from .score import score_hull

__all__ = ["MaxT", "SimultaneousRow", "max_t", "MAX_T_DRAWS", "EXACT_LIMIT", "bh_qvalues", "integer_units", "pair_null", "studentized",
           "consistent", "WithBest", "with_best"]

#: Monte Carlo shuffles of a family whose null is too large to enumerate (seeded with :data:`ragdiag.core.defaults.SEED`).
MAX_T_DRAWS = 20_000
#: Largest number of arrangements enumerated exactly.
EXACT_LIMIT = 100_000
#: The unit reciprocal ranks (and any real outcome) are counted in.
REAL_UNIT = 1e-9
_CHUNK = 1000
_EXACT_SIGNS = 20  # one pair of real outcomes: every sign pattern up to this many non-zero questions


def integer_units(values) -> tuple[np.ndarray, float]:
    """Per-query outcomes as integers and their unit: hits as they are, real values in units of 1e-9.

    >>> integer_units([1, 0, 1])[0].tolist(), integer_units([1, 0, 1])[1]
    ([1, 0, 1], 1.0)
    >>> integer_units([0.5, 1.0])[0].tolist()
    [500000000, 1000000000]
    """
    x = np.asarray(values, dtype=np.float64)
    if np.isnan(x).any():
        raise ValueError("outcomes must not contain NaN")
    if np.all(x == np.round(x)):
        return np.round(x).astype(np.int64), 1.0
    return np.round(x / REAL_UNIT).astype(np.int64), REAL_UNIT


@dataclass(frozen=True)
class MaxT:
    """The null distribution of a family's max statistic (support ``values``, weights ``weights``), in units."""

    values: np.ndarray  # sorted distinct values of the max statistic (integer units)
    weights: np.ndarray  # arrangements (or draws) at each value
    method: str
    alpha: float

    @property
    def total(self) -> float:
        """Arrangements (or draws, the observed one included) in the null."""
        return float(self.weights.sum())

    def tail(self, t: float) -> float:
        """``P(max* >= t)``: the adjusted p of an observed absolute difference ``t`` (units)."""
        i = int(np.searchsorted(self.values, t, side="left"))
        return float(self.weights[i:].sum() / self.total)

    @property
    def critical(self) -> float:
        """``c``: the largest support value whose tail is at least ``alpha`` (``t > c`` iff tail(t) < alpha)."""
        tails = np.cumsum(self.weights[::-1])[::-1] / self.total
        ok = np.flatnonzero(tails >= self.alpha)
        return float(self.values[ok[-1]]) if ok.size else 0.0


@dataclass(frozen=True)
class SimultaneousRow:
    """One pair of a family: the difference of means ``a - b`` with its simultaneous interval and adjusted p."""

    a: int
    b: int
    estimate: float
    low: float
    high: float
    p_adjusted: float

    @property
    def excludes_zero(self) -> bool:
        """Does the simultaneous interval exclude 0 (iff ``p_adjusted < alpha``)?"""
        return self.low > 0 or self.high < 0


def _per_question(raw: np.ndarray, groups: Sequence) -> tuple[np.ndarray, int, np.ndarray, float]:
    """``(systems, queries)`` values summed per question in integer units: ``(Y, n, sizes, unit)``, with each
    question's number of queries (``sizes``); ``groups`` names one question per query."""
    g = np.asarray([str(x) for x in groups], dtype=object)
    if g.size != raw.shape[1]:
        raise ValueError(f"groups must give one question per query ({raw.shape[1]}), got {g.size}")
    x, unit = integer_units(raw.ravel())
    x = x.reshape(raw.shape)
    Y, n = _question_sums(x, g)
    sizes = _question_sums(np.ones((1, x.shape[1]), dtype=np.int64), g)[0][0]
    return Y, n, sizes, unit


def _question_sums(x: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, int]:
    """(systems, questions) integer sums of per-query outcomes, and the number of queries."""
    _, inv = np.unique(groups, return_inverse=True)
    out = np.zeros((x.shape[0], int(inv.max()) + 1 if inv.size else 0), dtype=np.int64)
    for s in range(x.shape[0]):
        np.add.at(out[s], inv, x[s])
    return out, int(x.shape[1])


def _from_samples(samples: np.ndarray, method: str, alpha: float) -> MaxT:
    values, counts = np.unique(samples, return_counts=True)
    return MaxT(values.astype(np.float64), counts.astype(np.float64), method, alpha)


def _sign_flip_null(d: np.ndarray, alpha: float) -> MaxT:
    """Exact null of ``|sum s_g d_g|`` for integer ``d`` by convolution (one pair: the sign-flip test)."""
    mags = np.abs(d[d != 0]).astype(np.int64)
    total = int(mags.sum())
    counts = sign_sum_counts(mags)
    sums = np.abs(np.arange(-total, total + 1))
    values = np.arange(total + 1)
    weights = np.array([sum(counts[sums == v].tolist()) for v in values], dtype=object)
    keep = weights > 0
    w = np.array([float(x) for x in weights[keep]])
    return MaxT(values[keep].astype(np.float64), w, f"exact ({2 ** mags.size:,} sign patterns)", alpha)


def _arrangements(blocks: Sequence[Sequence[int]], n_q: int) -> int:
    return math.prod(math.factorial(len(b)) ** n_q for b in blocks)


def studentized(S: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``S / sqrt(Q)`` elementwise (signed), 0 where ``Q`` is 0 (the pair alike on every question).

    >>> studentized(np.array([3, -2, 0]), np.array([9, 4, 0])).tolist()
    [1.0, -1.0, 0.0]
    """
    S = np.asarray(S, dtype=np.float64)
    Q = np.asarray(Q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(Q > 0, S / np.sqrt(np.where(Q > 0, Q, 1.0)), 0.0)


def _enumerate(Y: np.ndarray, blocks, pairs: np.ndarray) -> np.ndarray:
    """Every arrangement's signed studentized statistic per pair (small nulls only): (arrangements, pairs)."""
    S = np.zeros((1, pairs.shape[0]), dtype=np.int64)
    Q = np.zeros((1, pairs.shape[0]), dtype=np.int64)
    for g in range(Y.shape[1]):
        options = []
        for perm in itertools.product(*(itertools.permutations(b) for b in blocks)):
            col = Y[:, g].copy()
            for b, p in zip(blocks, perm):
                col[list(b)] = Y[list(p), g]
            options.append(col)
        opts = np.array(options)
        d = opts[:, pairs[:, 0]] - opts[:, pairs[:, 1]]  # (options, pairs)
        S = (S[:, None, :] + d[None, :, :]).reshape(-1, pairs.shape[0])  # all combinations, question by question
        Q = (Q[:, None, :] + (d * d)[None, :, :]).reshape(-1, pairs.shape[0])
    return studentized(S, Q)


def _monte_carlo(Y: np.ndarray, blocks, pairs: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """Seeded shuffles' signed studentized statistics per pair: (draws, pairs).

    Per draw, the shuffled outcomes ``Y*`` give every system's sum and, through
    the Gram matrix ``Y* Y*^T``, every pair's sum of squared differences.
    """
    rng = np.random.default_rng(seed)
    G = Y.shape[1]
    a, b_ = pairs[:, 0], pairs[:, 1]
    Yf = Y.astype(np.float64)
    out = []
    for start in range(0, draws, _CHUNK):
        m = min(_CHUNK, draws - start)
        shuffled = np.broadcast_to(Yf, (m, *Y.shape)).copy()  # (m, systems, questions)
        for b in blocks:
            b = np.asarray(b)
            order = np.argsort(rng.random((m, G, b.size)), axis=-1)
            block = np.take_along_axis(np.broadcast_to(Yf[b].T, (m, G, b.size)), order, axis=-1)
            shuffled[:, b, :] = block.transpose(0, 2, 1)
        sums = shuffled.sum(axis=2)
        gram = np.einsum("msg,mtg->mst", shuffled, shuffled)
        S = sums[:, a] - sums[:, b_]
        Q = gram[:, a, a] + gram[:, b_, b_] - 2.0 * gram[:, a, b_]
        out.append(studentized(S, np.round(Q)))
    return np.concatenate(out)


def pair_null(Y: np.ndarray, blocks, pairs: np.ndarray, *, draws: int = MAX_T_DRAWS,
              seed: int = SEED) -> tuple[np.ndarray, str]:
    """The null of every pair's signed studentized statistic, jointly: one row per arrangement (or draw).

    Parameters
    ----------
    Y : array (systems, questions) of int
        Per-question sums of each system's outcomes (integer units).
    blocks : list of lists of int
        Systems shuffled among themselves within each question.
    pairs : array (pairs, 2)
        Rows ``(i, j)``: the statistic is that of ``i - j``.

    Returns
    -------
    (null, method)
        ``null[r, p]``: pair ``p``'s ``S / sqrt(Q)`` in arrangement ``r``. Every
        arrangement when there are at most :data:`EXACT_LIMIT` of them (each
        equally likely); else the observed arrangement and ``draws`` seeded
        shuffles. ``method`` says which.
    """
    n_arr = _arrangements(blocks, Y.shape[1])
    if n_arr <= EXACT_LIMIT:
        return _enumerate(Y, blocks, pairs), f"exact ({n_arr:,} arrangements)"
    D = Y[pairs[:, 0]] - Y[pairs[:, 1]]
    observed = studentized(D.sum(axis=1), (D * D).sum(axis=1))
    return (np.vstack([observed[None, :], _monte_carlo(Y, blocks, pairs, draws, seed)]),
            f"monte carlo ({draws:,} seeded shuffles and the observed one)")


def consistent(est: float, low: float, high: float, different: bool) -> tuple[float, float]:
    """The interval nudged (at most to 0, or one unit in the last place past it) to say what the verdict says.

    >>> consistent(0.2, 0.0, 0.4, True)[0] > 0, consistent(0.2, 0.01, 0.4, False)
    (True, (0.0, 0.4))
    """
    if different and low <= 0 <= high:  # rounding (or the hull) reached 0: the near end moves just past it
        if est > 0:
            low = float(np.nextafter(0.0, 1.0))
        else:
            high = float(np.nextafter(0.0, -1.0))
    elif not different and (low > 0 or high < 0):
        low, high = min(low, 0.0), max(high, 0.0)
    return low, high


def _alone_null(D0: np.ndarray, unit: float, alpha: float, draws: int, seed: int) -> MaxT:
    """The exact sign-flip null of one pair's ``|S|`` in units (Monte Carlo past 20 real-valued differences)."""
    if unit == 1.0:
        return _sign_flip_null(D0, alpha)
    if np.count_nonzero(D0) <= _EXACT_SIGNS:
        sums = np.zeros(1, dtype=np.int64)
        for v in D0[D0 != 0].tolist():  # every sign pattern, by doubling
            sums = np.concatenate([sums + v, sums - v])
        return _from_samples(np.abs(sums), f"exact ({sums.size:,} sign patterns)", alpha)
    rng = np.random.default_rng(seed)
    flips = np.abs((rng.integers(0, 2, size=(draws, D0.size)) * 2 - 1) @ D0)
    return _from_samples(np.concatenate([[abs(int(D0.sum()))], flips]),
                         f"monte carlo ({draws:,} seeded sign flips and the observed one)", alpha)


def max_t(values, groups, pairs: Sequence[tuple[int, int]], *, blocks: Sequence[Sequence[int]] | None = None,
          alpha: float = ALPHA, draws: int = MAX_T_DRAWS, seed: int = SEED) -> tuple[list[SimultaneousRow], MaxT]:
    """Simultaneous intervals and adjusted p of ``pairs`` of systems from one studentized max-T permutation.

    Parameters
    ----------
    values : array (systems, queries)
        Per-query outcomes of each system (hits, or reciprocal ranks) on the same queries.
    groups : sequence
        The question of each query: a question's phrasings move together.
    pairs : sequence of (i, j)
        The family: rows ``i`` and ``j`` of ``values`` compared, difference ``i - j``.
    blocks : sequence of sequences of int, optional
        Systems shuffled among themselves (default: every system in a pair, one block). A family
        that only compares within blocks (e.g. chunkings of one retriever) shuffles within them.
    alpha : float
        The level the intervals and verdicts use (``1 - alpha`` simultaneous coverage).

    Returns
    -------
    (rows, null)
        One :class:`SimultaneousRow` per pair, and the :class:`MaxT` null they were read from
        (of ``|S|`` in units for a pair alone, of the studentized ``|S| / sqrt(Q)`` otherwise).

    Notes
    -----
    The verdict is the permutation test's: "different" exactly when the
    adjusted p is below ``alpha``. For hits the interval is the hull of
    ``S/n +/- c sqrt(Q)/n`` (alone: ``(S +/- c)/n``, the exact test's) and the
    score interval at the same critical value (the family's ``c``; alone, the
    normal quantile), which keeps its coverage when few questions differ. The
    hull never crosses 0 against the verdict: with several phrasings the score
    test at 0 can be more cautious than the permutation test, and the
    permutation test is the one whose level is exact; its near end then stops
    one unit in the last place short of 0.

    Examples
    --------
    Two systems, four questions of one phrasing; the first wins three, ties one
    (differences 1, 1, 1, 0): the sign flips give |sum| = 3 with probability 2/8,
    so the adjusted p is 0.25 and ``c = 3``; the score interval (Tango's) reaches
    further down than ``(3 - 3) / 4`` (and the upper end stops at a difference of 1):

    >>> rows, null = max_t([[1, 1, 1, 0], [0, 0, 0, 0]], ["a", "b", "c", "d"], [(0, 1)])
    >>> rows[0].estimate, round(rows[0].low, 3), rows[0].high, rows[0].p_adjusted, null.method
    (0.75, -0.107, 1.0, 0.25, 'exact (8 sign patterns)')
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if draws < 1:
        raise ValueError(f"draws must be at least 1, got {draws}")
    raw = np.asarray(values, dtype=np.float64)
    if raw.ndim != 2:
        raise ValueError(f"values must be (systems, queries), got shape {raw.shape}")
    if not pairs:
        raise ValueError("a family needs at least one pair")
    p = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if p.min() < 0 or p.max() >= raw.shape[0] or (p[:, 0] == p[:, 1]).any():
        raise ValueError("each pair must name two different systems (rows of values)")
    Y, n, sizes, unit = _per_question(raw, groups)
    if blocks is None:
        blocks = [sorted(set(p.ravel().tolist()))]
    blocks = [list(b) for b in blocks if len(b) > 1]
    D = Y[p[:, 0]] - Y[p[:, 1]]  # (pairs, questions)
    S = D.sum(axis=1)
    Q = (D.astype(np.float64) ** 2).sum(axis=1)
    alone = p.shape[0] == 1 and len(blocks) == 1 and len(blocks[0]) == 2
    if alone:  # one pair: the sign flips of its differences, in units (Q is the same in every pattern)
        null = _alone_null(D[0], unit, alpha, draws, seed)
        observed = np.abs(S).astype(np.float64)
        half_units = np.full(1, null.critical)
        z_score = NormalDist().inv_cdf(1 - alpha / 2)
    else:
        stats, method = pair_null(Y, blocks, p, draws=draws, seed=seed)
        null = _from_samples(np.abs(stats).max(axis=1), method, alpha)
        observed = np.abs(studentized(S, Q))
        half_units = null.critical * np.sqrt(Q)
        z_score = null.critical
    f = unit / n if n else math.nan
    rows = []
    for k, ((i, j), s_units, t) in enumerate(zip(p.tolist(), S.tolist(), observed.tolist())):
        p_adj = null.tail(t)
        est = s_units * f
        low, high = (s_units - half_units[k]) * f, (s_units + half_units[k]) * f
        if unit == 1.0 and n:  # hits: widened to hold the score interval at the same critical value
            low, high = score_hull(D[k], sizes, z_score, low, high)
        low, high = consistent(est, max(low, -1.0), min(high, 1.0), p_adj < alpha)  # a difference of rates: [-1, 1]
        rows.append(SimultaneousRow(i, j, est, low, high, p_adj))
    return rows, null


def bh_qvalues(pvalues) -> np.ndarray:
    """Benjamini-Hochberg q-values (step-up, monotone, capped at 1), for an exploratory family.

    >>> bh_qvalues([0.01, 0.04, 0.03, 0.5]).round(3).tolist()
    [0.04, 0.053, 0.053, 0.5]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1 or np.isnan(p).any():
        raise ValueError("pvalues must be a 1-D sequence of numbers")
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


@dataclass(frozen=True)
class WithBest:
    """Hsu's comparison with the best, studentized and by permutation (see :func:`with_best`), in units of a mean.

    ``worst[i]``: the largest ``(S_j - S_i) / sqrt(Q_ij)`` over the others ``j``
    (how far the strongest rival is above ``i``); ``upper[i]``: Hsu's upper
    bound of ``mu_i - max_{j != i} mu_j``; ``lower[i]``: the lower end of the
    difference to ``reference[i]`` (the best; for the best, the runner-up).
    """

    critical: float  # c: the largest of the one-sided critical values, one per possible best
    worst: np.ndarray
    p_adjusted: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    reference: np.ndarray
    method: str
    alpha: float

    @property
    def in_best_set(self) -> np.ndarray:
        """Not shown worse than any other: ``worst <= c`` (iff ``p_adjusted >= alpha`` iff ``upper >= 0``)."""
        return self.p_adjusted >= self.alpha


def with_best(values, groups, *, alpha: float = ALPHA, draws: int = MAX_T_DRAWS, seed: int = SEED) -> WithBest:
    """Hsu's multiple comparison with the best (MCB), studentized, with the critical value from the permutation.

    Parameters
    ----------
    values : array (systems, queries)
        Per-query outcomes (hits, or reciprocal ranks) of each system on the same queries.
    groups : sequence
        The question of each query.

    Returns
    -------
    WithBest

    Notes
    -----
    For every pair the studentized ``T_ij = (S_i - S_j) / sqrt(Q_ij)`` is
    recomputed in every arrangement of the systems within each question (the
    null of :func:`max_t`). Whichever system ``b`` is truly best, it is dropped
    only if some ``T_jb`` passes the one-sided critical value ``c_b`` of
    ``max_{j != b} T*_jb``. The systems are exchangeable within a question
    under the null, so every ``c_b`` is the quantile of one distribution: ``c``
    is read from the ``k`` of them pooled (exact when every arrangement is
    enumerated; with Monte Carlo draws, the largest of ``k`` noisy quantiles of
    one distribution would be biased up). It serves every ``b`` at once (Hsu's
    constant is one-sided and compares with one best, not every pair both
    ways, so it is smaller than the all-pairs ``c`` of :func:`max_t`). Then [1]_

    * ``i`` is in the best set iff ``max_{j != i} T_ji <= c``;
    * the upper bound of ``mu_i - max_{j != i} mu_j`` is
      ``min_{j != i} (S_i - S_j + c sqrt(Q_ij)) / n``, which is at least 0
      exactly for the members of the set; for hits each pair's term is widened
      to the score interval at ``c`` (a pair that differs on no question says
      nothing about a difference that rarely shows), and the end stops just
      short of 0 for a configuration out of the set (the verdict is the
      statistic's; Hsu's constrained bound for it is 0);
    * the lower end printed is the difference to the best (the best's: to the
      runner-up) less ``c sqrt(Q)/n``, widened (hits) to the score interval at ``c``
      (and so is the best's upper end: its lead over the runner-up).

    ``p_adjusted[i]`` is ``P(max_{j != b} T*_jb >= worst_i)`` in the pooled null, below ``alpha``
    exactly when ``i`` is out of the set.

    References
    ----------
    .. [1] J. C. Hsu, *Multiple Comparisons: Theory and Methods* (1996), chapter 4
       (constrained MCB: ``D_i^+ = (min_{j != i} (m_i - m_j + d s_ij))^+``).

    Examples
    --------
    Three systems on six questions: the first finds every needle, the second
    misses one, the third misses all but one; only the third is shown worse:

    >>> v = [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 1]]
    >>> r = with_best(v, list("abcdef"))
    >>> r.in_best_set.tolist(), r.method
    ([True, True, False], 'exact (46,656 arrangements)')
    """
    raw = np.asarray(values, dtype=np.float64)
    if raw.ndim != 2 or raw.shape[0] < 2:
        raise ValueError(f"values must be (systems, queries) with at least two systems, got shape {raw.shape}")
    Y, n, sizes, unit = _per_question(raw, groups)
    k = Y.shape[0]
    pairs = np.array(list(itertools.combinations(range(k), 2)), dtype=np.int64)
    stats, method = pair_null(Y, [list(range(k))], pairs, draws=draws, seed=seed)
    # per possible best b: the largest one-sided statistic of a rival above it, in each arrangement
    rival = np.full((stats.shape[0], k), -np.inf)
    for p, (i, j) in enumerate(pairs.tolist()):
        rival[:, j] = np.maximum(rival[:, j], stats[:, p])  # i above j
        rival[:, i] = np.maximum(rival[:, i], -stats[:, p])  # j above i
    # every system is exchangeable with every other under the null, so the k distributions of rival[:, b] are one:
    # pooled, its quantile is c (the largest of k Monte Carlo quantiles of one distribution is biased up)
    pooled = _from_samples(rival.ravel(), method, alpha)
    c = pooled.critical
    D = Y[:, None, :] - Y[None, :, :]  # (i, j, questions): i - j per question
    S = D.sum(axis=2).astype(np.float64)
    Q = (D.astype(np.float64) ** 2).sum(axis=2)
    T = studentized(S, Q)  # T[i, j] = (S_i - S_j) / sqrt(Q_ij)
    off = ~np.eye(k, dtype=bool)
    worst = np.where(off, T.T, -np.inf).max(axis=1)  # max_j T[j, i]
    p_adj = np.array([pooled.tail(t) for t in worst])
    f = unit / n if n else math.nan
    bound = np.where(off, S + c * np.sqrt(Q), np.inf) * f  # bound[i, j]: of mu_i - mu_j, Hsu's
    upper = bound.min(axis=1)
    if unit == 1.0 and n:  # hits: each pair's bound widened to its score interval at c, as every pair interval is
        for i in range(k):  # the smallest widened bound: widening only raises a bound, so stop once none can be lower
            best_so_far = np.inf
            for j in np.argsort(bound[i], kind="stable"):
                if j == i or bound[i, j] >= best_so_far:
                    break
                best_so_far = min(best_so_far, score_hull(D[i, j], sizes, c, -1.0, bound[i, j])[1])
            upper[i] = best_so_far
    means = Y.sum(axis=1) * f
    order = sorted(range(k), key=lambda i: (-means[i], i))
    top, runner = order[0], order[1]
    reference = np.array([runner if i == top else top for i in range(k)])
    estimate = np.array([means[i] - means[reference[i]] for i in range(k)])
    lower = np.empty(k)
    for i in range(k):
        r = reference[i]
        lo = (S[i, r] - c * math.sqrt(Q[i, r])) * f
        if unit == 1.0 and n:
            lo = score_hull(D[i, r], sizes, c, lo, estimate[i])[0]
        lower[i] = max(-1.0, min(lo, estimate[i]))
        inside = p_adj[i] >= alpha
        if inside and upper[i] < 0:  # rounding of c * sqrt(Q): the verdict is the statistic's
            upper[i] = 0.0
        elif not inside and upper[i] >= 0:
            upper[i] = float(np.nextafter(0.0, -1.0))
    if unit == 1.0 and n:  # the best's lead: widened to the score interval at c too (it is in the set whatever)
        upper[top] = max(upper[top], score_hull(D[top, runner], sizes, c, lower[top], upper[top])[1])
    return WithBest(float(c), worst, p_adj, np.minimum(upper, 1.0), lower, estimate, reference, method, alpha)
