"""The families of comparisons the simulations check (nine systems: 0 a baseline, 1..6 near-copies of it, 7 and 8
independent systems), and whether one data set's intervals cover the truth."""

from __future__ import annotations

import itertools

import numpy as np

from ragdiag.analyses.compare.simultaneous import max_t

FAMILIES = {
    "all pairs": (list(itertools.combinations(range(9), 2)), None),
    "planned": ([(0, j) for j in range(1, 9)], None),
    # the chunking contrasts' shape: pairs within two blocks, shuffled within each
    "blocked": ([(0, 1), (0, 2), (1, 2), (3, 4), (7, 8), (5, 6), (5, 7)], [[0, 1, 2, 3, 4], [5, 6, 7, 8]]),
}


def families_cover(v, groups, mu, seed: int) -> dict[str, bool]:
    """For each family: do all its intervals (1,000 seeded shuffles) hold the true difference ``mu[a] - mu[b]``?"""
    held = {}
    for name, (pairs, blocks) in FAMILIES.items():
        rows, _ = max_t(v, groups, pairs, blocks=blocks, draws=1000, seed=seed)
        held[name] = all(r.low - 1e-12 <= mu[r.a] - mu[r.b] <= r.high + 1e-12 for r in rows)
    return held


def hsu_statements_wrong(wb, mu) -> bool:
    """Is any statement of the comparison with the best false, as Hsu defines them (``mu``: the true recalls)?

    Hsu's constrained MCB states, for each configuration ``i``, an interval of
    ``mu_i - max_{j != i} mu_j``: an upper end ``max(0, upper_i)`` (out of the set:
    "``i`` is not the best", at most as good as the best of the others) and a
    lower end; the product prints the lower end as the difference to the
    observed best (the best's: to the runner-up), ``lower_i`` against
    ``mu_i - mu_reference``, which is at least as strict.
    """
    k = mu.size
    rest = np.array([np.max(np.delete(mu, i)) for i in range(k)])
    upper_wrong = np.maximum(wb.upper, 0.0) < mu - rest - 1e-12
    lower_wrong = wb.lower > mu - mu[wb.reference] + 1e-12
    return bool(upper_wrong.any() or lower_wrong.any())
