"""Simultaneous intervals that agree with their verdicts: one paired max-statistic permutation per family.

A family is a set of pairs of systems (configurations) compared on the same
questions. For a pair, ``S`` is the sum over questions of its per-question
differences (each summed over the question's phrasings). The systems are
shuffled within each question, inside blocks (default: one block of every
system in the family; the chunking contrasts shuffle the strategies of one
retriever), which is randomised Tukey HSD / max-T with questions as the unit.
A pair's statistic is ``|S| / w``, where ``w`` is the permutation standard
deviation of ``S`` in its block (:func:`block_scales`: the same for every pair
of a block and every arrangement, so within one block this is Tukey's
unstudentised range; a pair alone is its exact sign-flip test). From the null
distribution of the largest statistic come both

* the adjusted p of each pair, ``P(max* >= observed statistic)``, and
* the simultaneous interval ``S/n +/- c * w/n`` (``n`` queries), where ``c``
  is the largest value of the null's support whose tail probability is still
  at least ``alpha``.

(Dividing by each pair's own observed ``sqrt(sum d^2)`` instead would give
pairs with few discordant questions more power but intervals that fall short
of their coverage when systems are correlated; the block scale does not.)

So an interval excludes 0 exactly when the adjusted p is below ``alpha``: the
tail is a non-increasing step function, at least ``alpha`` up to ``c`` and below
it past ``c`` (and the half-width is nudged by at most one unit in the last
place where rounding of ``c * w`` would say otherwise). Outcomes are summed
in integer units (hits are integers; reciprocal ranks are counted in units of
1e-9).

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
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...core.defaults import ALPHA, SEED
from .paired import sign_sum_counts

__all__ = ["MaxT", "SimultaneousRow", "max_t", "MAX_T_DRAWS", "EXACT_LIMIT", "bh_qvalues", "integer_units", "block_scales"]

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


def _scaled(S: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``|S| / w`` elementwise, 0 where ``w`` is 0 (every system of the block alike on every question)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w > 0, np.abs(S) / np.where(w > 0, w, 1.0), 0.0)


def block_scales(Y: np.ndarray, blocks, pairs: np.ndarray) -> np.ndarray:
    """Per pair, the permutation standard deviation of its sum ``S``: ``sqrt(sum_g 2K/(K-1) var_g)`` of its block.

    Under the shuffle of the ``K`` systems of a block within question ``g``, a
    pair's difference has mean 0 and second moment ``2K/(K-1)`` times the
    population variance of the block's ``K`` values on ``g``, whatever the
    shuffle: the scale is the same for every pair of a block and for every
    arrangement, so dividing by it keeps the max-T exact. For one pair it is
    ``sqrt(sum d^2)``, the sign-flip test's own.

    >>> block_scales(np.array([[2, 1], [0, 1]]), [[0, 1]], np.array([[0, 1]])).tolist()  # d = (2, 0)
    [2.0]
    """
    out = np.zeros(pairs.shape[0])
    for b in blocks:
        sub = Y[list(b)].astype(np.float64)
        k = len(b)
        w = float(np.sqrt((2.0 * k / (k - 1) * sub.var(axis=0)).sum()))
        inside = np.isin(pairs[:, 0], b) & np.isin(pairs[:, 1], b)
        out[inside] = w
    return out


def _enumerate(Y: np.ndarray, blocks, pairs: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Every arrangement's max statistic (small nulls only)."""
    S = np.zeros((1, pairs.shape[0]), dtype=np.int64)
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
    return _scaled(S, w[None, :]).max(axis=1)


def _monte_carlo(Y: np.ndarray, blocks, pairs: np.ndarray, w: np.ndarray, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    G = Y.shape[1]
    out = []
    for start in range(0, draws, _CHUNK):
        m = min(_CHUNK, draws - start)
        sums = np.zeros((m, Y.shape[0]), dtype=np.int64)
        for b in blocks:
            b = np.asarray(b)
            order = np.argsort(rng.random((m, G, b.size)), axis=-1)
            shuffled = np.take_along_axis(np.broadcast_to(Y[b].T, (m, G, b.size)), order, axis=-1)
            sums[:, b] = shuffled.sum(axis=1)
        out.append(_scaled(sums[:, pairs[:, 0]] - sums[:, pairs[:, 1]], w[None, :]).max(axis=1))
    return np.concatenate(out)


def max_t(values, groups, pairs: Sequence[tuple[int, int]], *, blocks: Sequence[Sequence[int]] | None = None,
          alpha: float = ALPHA, draws: int = MAX_T_DRAWS, seed: int = SEED) -> tuple[list[SimultaneousRow], MaxT]:
    """Simultaneous intervals and adjusted p of ``pairs`` of systems from one max-statistic permutation.

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
        One :class:`SimultaneousRow` per pair, and the :class:`MaxT` null they were read from.

    Examples
    --------
    Two systems, four questions of one phrasing; the first wins three, ties one
    (differences 1, 1, 1, 0): the sign flips give |sum| = 3 with probability 2/8,
    so the adjusted p is 0.25 and ``c = 3``: the interval (3 +/- 3) / 4 touches 0.

    >>> rows, null = max_t([[1, 1, 1, 0], [0, 0, 0, 0]], ["a", "b", "c", "d"], [(0, 1)])
    >>> rows[0].estimate, rows[0].low, rows[0].high, rows[0].p_adjusted, null.method
    (0.75, 0.0, 1.5, 0.25, 'exact (8 sign patterns)')
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
    g = np.asarray([str(x) for x in groups], dtype=object)
    if g.size != raw.shape[1]:
        raise ValueError(f"groups must give one question per query ({raw.shape[1]}), got {g.size}")
    x, unit = integer_units(raw.ravel())
    x = x.reshape(raw.shape)
    Y, n = _question_sums(x, g)
    if blocks is None:
        blocks = [sorted(set(p.ravel().tolist()))]
    blocks = [list(b) for b in blocks if len(b) > 1]
    D = Y[p[:, 0]] - Y[p[:, 1]]  # (pairs, questions)
    S = D.sum(axis=1)
    alone = p.shape[0] == 1 and len(blocks) == 1 and len(blocks[0]) == 2
    if alone:  # one pair: the sign flips of its differences, in units (the scale is the same in every pattern)
        scale = np.ones(1)
        observed = np.abs(S).astype(np.float64)
        if unit == 1.0:
            null = _sign_flip_null(D[0], alpha)
        elif np.count_nonzero(D[0]) <= _EXACT_SIGNS:
            sums = np.zeros(1, dtype=np.int64)
            for v in D[0][D[0] != 0].tolist():  # every sign pattern, by doubling
                sums = np.concatenate([sums + v, sums - v])
            null = _from_samples(np.abs(sums), f"exact ({sums.size:,} sign patterns)", alpha)
        else:
            flips = _monte_carlo(Y[p[0]], [[0, 1]], np.array([[0, 1]]), np.ones(1), draws, seed)
            null = _from_samples(np.concatenate([observed, flips]),
                                 f"monte carlo ({draws:,} seeded sign flips and the observed one)", alpha)
    else:
        scale = block_scales(Y, blocks, p)
        observed = _scaled(S, scale)
        if _arrangements(blocks, Y.shape[1]) <= EXACT_LIMIT:
            n_arr = _arrangements(blocks, Y.shape[1])
            null = _from_samples(_enumerate(Y, blocks, p, scale), f"exact ({n_arr:,} arrangements)", alpha)
        else:
            samples = np.concatenate([[observed.max()], _monte_carlo(Y, blocks, p, scale, draws, seed)])
            null = _from_samples(samples, f"monte carlo ({draws:,} seeded shuffles and the observed one)", alpha)
    c = null.critical
    rows = []
    for (i, j), s_units, t, w in zip(p.tolist(), S.tolist(), observed.tolist(), scale.tolist()):
        p_adj = null.tail(t)
        half = c * w
        # the interval excludes 0 exactly when t > c (iff p_adj < alpha); rounding of c * w may not undo that
        if t > c and not abs(s_units) > half:
            half = float(np.nextafter(abs(s_units), 0.0))
        elif t <= c and abs(s_units) > half:
            half = float(abs(s_units))
        f = unit / n if n else math.nan
        rows.append(SimultaneousRow(i, j, s_units * f, (s_units - half) * f, (s_units + half) * f, p_adj))
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
