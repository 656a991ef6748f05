"""The score test of a paired difference over questions, and the interval it gives (Tango's, with clusters).

Per question ``q``: ``d_q``, the sum over its ``n_q`` phrasings of ``a - b``
(0/1 outcomes, so ``-n_q <= d_q <= n_q``). The per-question outcomes ``(d, n)``
are a multinomial over every possible ``(d, n)``; the test of
``H0: sum(d) / sum(n) = delta`` uses the restricted maximum-likelihood law under
``H0`` (found exactly, a one-dimensional dual), and
``z = sum_q (d_q - delta n_q) / sqrt(G * Var_H0)``. With one phrasing per
question it is Tango's score test for a difference of paired proportions [1]_.

Unlike the sign-flip test, it does not collapse when few questions differ: at 0
of 32 discordant questions the 95% interval is about +/-11 points, not +0 to +0
(the data cannot rule out a difference that rarely shows). The gate's
non-inferiority test (:mod:`ragdiag.present.regression.stats`) and every pair
interval of :mod:`.simultaneous` read it from here.

References
----------
.. [1] T. Tango, "Equivalence test and confidence interval for the difference in
   proportions for the paired-sample design", Statistics in Medicine 17 (1998) 891-908.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = ["score_test", "score_curve", "score_bounds", "score_hull"]

_EDGE = 1.0 - 1e-9


def _restricted_law(counts: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The multinomial law over categories (``counts`` observed, ``w`` each one's value) of largest likelihood with ``sum(pi * w) = 0``.

    Observed categories get ``pi_j = c_j / (G (1 + lam w_j))`` (empirical
    likelihood); when that has no solution or leaves an unobserved category
    with ``1 + lam w_j < 0`` (the Karush-Kuhn-Tucker condition), the most extreme
    unobserved category in the needed direction takes the missing mass and
    ``lam = -1 / w*``.
    """
    g = counts.sum()
    obs = counts > 0
    wo, co = w[obs], counts[obs]
    pi = np.zeros_like(w)
    if wo.min() < 0 < wo.max():
        lo_l, hi_l = -1.0 / wo.max(), -1.0 / wo.min()  # 1 + lam w > 0 for every observed w
        f = lambda lam: float((co * wo / (1 + lam * wo)).sum())  # noqa: E731 - decreasing in lam
        a, b = lo_l + 1e-15 * (hi_l - lo_l), hi_l - 1e-15 * (hi_l - lo_l)
        for _ in range(100):
            mid = (a + b) / 2
            if f(mid) > 0:
                a = mid
            else:
                b = mid
        lam = (a + b) / 2
        if np.all(1 + lam * w[~obs] >= 0):
            pi[obs] = co / (g * (1 + lam * wo))
            return pi / pi.sum()
    if float((co * wo).sum()) == 0.0 and wo.min() >= 0 and wo.max() <= 0:
        pi[obs] = co / g
        return pi
    unobs = np.flatnonzero(~obs)
    need_negative = float((co * wo).sum()) > 0
    cand = unobs[w[unobs] < 0] if need_negative else unobs[w[unobs] > 0]
    if cand.size == 0:
        raise ValueError("no law on these categories has mean 0")
    star = cand[np.argmin(w[cand])] if need_negative else cand[np.argmax(w[cand])]
    pi[obs] = co / (g * (1 - wo / w[star]))
    pi[star] = max(0.0, 1.0 - pi[obs].sum())
    return pi


def score_test(d, n, delta: float) -> float:
    """The score statistic ``z`` of ``H0: sum(d) / sum(n) = delta`` over per-question ``(d, n)``; large: above.

    Categories are every ``(d, n)`` with ``n`` an observed number of phrasings
    and ``-n <= d <= n``; ``z = sum_q (d_q - delta n_q) / sqrt(G sum_j pi_j w_j^2)``
    with ``w_j = d_j - delta n_j`` and ``pi`` the restricted law
    (:func:`_restricted_law`). One phrasing: Tango's statistic.

    Examples
    --------
    One improvement and 29 unchanged, tested against a 5-point loss: Tango's
    restricted law puts 6.6% on losses; ``z = 2.5 / sqrt(30 * 0.0792)``:

    >>> round(score_test([1] + [0] * 29, [1] * 30, -0.05), 3)
    1.622
    """
    d = np.asarray(d, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    cd, cn, counts = _categories(d, n)
    return float(_curve(np.array(cd), np.array(cn), np.array(counts, dtype=np.float64),
                        np.array([float(delta)]))[0])


def _categories(d: np.ndarray, n: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...], tuple[int, ...]]:
    """Every ``(d, n)`` category (``n`` an observed number of phrasings, ``-n <= d <= n``) and its count."""
    sizes = np.unique(n.astype(np.int64))
    width = 2 * sizes + 1
    offset = np.concatenate([[0], np.cumsum(width)[:-1]])
    cd = np.concatenate([np.arange(-s, s + 1) for s in sizes]) if sizes.size else np.zeros(0)
    cn = np.repeat(sizes, width)
    at = np.searchsorted(sizes, n.astype(np.int64))
    counts = np.bincount(offset[at] + d.astype(np.int64) + sizes[at], minlength=int(width.sum()))
    return (tuple(float(x) for x in cd), tuple(float(x) for x in cn), tuple(int(x) for x in counts))


def _curve(cd: np.ndarray, cn: np.ndarray, counts: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """:func:`score_test` at every ``deltas`` at once (the restricted law's dual solved for all of them together).

    Rows whose law sits on the boundary (an unobserved category takes mass) take the
    boundary solution of :func:`_restricted_law` in arrays too; only degenerate rows
    (every observed value 0) go through it one at a time.
    """
    g = counts.sum()
    w = cd[None, :] - deltas[:, None] * cn[None, :]  # (deltas, categories)
    obs = counts > 0
    wo, co = w[:, obs], counts[obs]
    u = (co[None, :] * wo).sum(axis=1)
    inner = (wo.min(axis=1) < 0) & (wo.max(axis=1) > 0)
    lam = np.zeros(deltas.size)
    if inner.any():
        lo_l = -1.0 / wo[inner].max(axis=1)
        hi_l = -1.0 / wo[inner].min(axis=1)
        a, b = lo_l + 1e-15 * (hi_l - lo_l), hi_l - 1e-15 * (hi_l - lo_l)
        wi = wo[inner]
        for _ in range(64):  # f(lam) = sum c w / (1 + lam w) falls with lam
            mid = (a + b) / 2
            up = (co[None, :] * wi / (1 + mid[:, None] * wi)).sum(axis=1) > 0
            a, b = np.where(up, mid, a), np.where(up, b, mid)
        lam[inner] = (a + b) / 2
    ok = inner & np.all(1 + lam[:, None] * w[:, ~obs] >= 0, axis=1)
    var = np.zeros(deltas.size)
    if ok.any():
        pi = np.zeros((int(ok.sum()), cd.size))
        pi[:, obs] = co[None, :] / (g * (1 + lam[ok, None] * wo[ok]))
        pi /= pi.sum(axis=1, keepdims=True)
        var[ok] = (pi * w[ok] ** 2).sum(axis=1) * g
    # the boundary (Karush-Kuhn-Tucker) case of _restricted_law, row by row in arrays: the most extreme
    # unobserved category in the needed direction takes the missing mass, lam = -1 / w*
    need_negative = u > 0
    unobs_w = w[:, ~obs]
    neg = np.where(unobs_w < 0, unobs_w, np.inf).min(axis=1) if unobs_w.size else np.full(deltas.size, np.inf)
    pos = np.where(unobs_w > 0, unobs_w, -np.inf).max(axis=1) if unobs_w.size else np.full(deltas.size, -np.inf)
    star = np.where(need_negative, neg, pos)
    edge = ~ok & np.isfinite(star) & (u != 0)
    if edge.any():
        po = co[None, :] / (g * (1 - wo[edge] / star[edge, None]))
        rest = np.maximum(0.0, 1.0 - po.sum(axis=1))
        var[edge] = ((po * wo[edge] ** 2).sum(axis=1) + rest * star[edge] ** 2) * g
    for r in np.flatnonzero(~ok & ~edge):  # what is left (every observed value 0, or no law): one at a time
        var[r] = float((_restricted_law(counts, w[r]) * w[r] ** 2).sum()) * g
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, u / np.sqrt(np.where(var > 0, var, 1.0)),
                     np.where(np.abs(u) < 1e-12, 0.0, np.copysign(np.inf, u)))
    return z


def score_curve(d, n, deltas) -> np.ndarray:
    """:func:`score_test` of ``(d, n)`` at each of ``deltas`` (vectorised; the same values).

    >>> score_curve([1] + [0] * 29, [1] * 30, [-0.05, 0.0]).round(3).tolist()
    [1.622, 1.0]
    """
    d = np.asarray(d, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    cd, cn, counts = _categories(d, n)
    return _curve(np.array(cd), np.array(cn), np.array(counts, dtype=np.float64),
                  np.atleast_1d(np.asarray(deltas, dtype=np.float64)))


_GRID = 129  # points of each pass of the grid search for a bound (two passes, then linear interpolation)


@lru_cache(maxsize=4096)
def _bounds(cd: tuple, cn: tuple, counts: tuple, z: float) -> tuple[float, float]:
    cdv, cnv, cv = np.array(cd), np.array(cn), np.array(counts, dtype=np.float64)
    curve = lambda xs: _curve(cdv, cnv, cv, xs)  # noqa: E731 - non-increasing in delta
    xs = np.linspace(-_EDGE, _EDGE, _GRID)
    zs = curve(xs)

    def cell(level: float) -> float | int:
        # the end itself when the test never rejects on that side (-1, 1) or the curve starts past the level;
        # else the first grid point at or below the level (an int: the low end for +z, the high end for -z)
        below = zs <= level
        if level > 0 and below[0]:
            return -1.0  # the test never rejects below: the interval runs to -1
        if level < 0 and not below[-1] and zs[-1] >= level:
            return 1.0
        i = int(np.argmax(below))
        return float(xs[0]) if i == 0 else i

    def within(level: float, fine: np.ndarray, zf: np.ndarray) -> float:
        j = max(1, int(np.argmax(zf <= level)))
        a, b, za, zb = fine[j - 1], fine[j], zf[j - 1], zf[j]
        if not (np.isfinite(za) and np.isfinite(zb)) or za == zb:
            return float((a + b) / 2)
        return float(a + (za - level) * (b - a) / (za - zb))  # linear within a cell of 2/128**2

    levels = (z, -z)
    cells = [cell(level) for level in levels]
    # the second pass of both ends in one evaluation of the statistic (each delta's value is its own row)
    fines = {k: np.linspace(xs[c - 1], xs[c], _GRID) for k, c in enumerate(cells) if isinstance(c, int)}
    zfs = dict(zip(fines, np.split(curve(np.concatenate(list(fines.values()))), len(fines)))) if fines else {}
    low, high = (within(levels[k], fines[k], zfs[k]) if k in fines else c for k, c in enumerate(cells))
    return low, high


def score_bounds(d, n, z: float) -> tuple[float, float]:
    """The score interval ``{delta : |score_test(d, n, delta)| <= z}`` of the difference ``sum(d) / sum(n)``.

    ``z`` is the critical value: 1.96 for a 95% interval of the pair alone, a
    family's max-T critical value for a simultaneous one. The statistic falls
    as ``delta`` grows; each end is found by two passes of a grid search
    and linear interpolation within a cell of about 1e-4, and a range that the test never rejects runs to -1 or 1.

    Examples
    --------
    Nothing differs on 32 questions: the difference can still be about 11 points either way
    (the closed form at 0 discordant questions is ``z**2 / (n + z**2)``):

    >>> low, high = score_bounds([0] * 32, [1] * 32, 1.959964)
    >>> round(low, 4), round(high, 4), round(1.959964 ** 2 / (32 + 1.959964 ** 2), 4)
    (-0.1072, 0.1072, 0.1072)
    """
    d = np.asarray(d, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if d.size == 0:
        return -1.0, 1.0
    return _bounds(*_categories(d, n), float(z))


def score_hull(d, n, z: float, low: float, high: float) -> tuple[float, float]:
    """``(min(low, score low), max(high, score high))``: an interval widened to hold the score interval at ``z``.

    The score bounds are searched only when the test does not already reject
    at the given ends (one evaluation of the statistic at both ends otherwise).

    >>> score_hull([0] * 32, [1] * 32, 1.959964, 0.0, 0.0)[1] > 0.1
    True
    >>> score_hull([1] * 30 + [0] * 2, [1] * 32, 1.959964, 0.5, 1.0)  # both ends already outside
    (0.5, 1.0)
    """
    d = np.asarray(d, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if d.size == 0:
        return min(low, -1.0), max(high, 1.0)
    cats = _categories(d, n)
    ends = np.clip(np.array([low, high], dtype=np.float64), -_EDGE, _EDGE)
    z_low, z_high = _curve(np.array(cats[0]), np.array(cats[1]), np.array(cats[2], dtype=np.float64), ends)
    if (low <= -1.0 or z_low > z) and (high >= 1.0 or z_high < -z):
        return float(low), float(high)
    s_low, s_high = _bounds(*cats, float(z))
    return float(min(low, s_low)), float(max(high, s_high))
