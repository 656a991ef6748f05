"""The families of comparisons the simulations check (nine systems: 0 a baseline, 1..6 near-copies of it, 7 and 8
independent systems), and whether one data set's intervals cover the truth."""

from __future__ import annotations

import itertools

import numpy as np

from ragdiag.analyses.compare.simultaneous import max_t, with_best

FAMILIES = {
    "all pairs": (list(itertools.combinations(range(9), 2)), None),
    "planned": ([(0, j) for j in range(1, 9)], None),
    # the chunking contrasts' shape: pairs within two blocks, shuffled within each
    "blocked": ([(0, 1), (0, 2), (1, 2), (3, 4), (7, 8), (5, 6), (5, 7)], [[0, 1, 2, 3, 4], [5, 6, 7, 8]]),
}


def coverage(rng, draw, mu, n: int = 150) -> dict[str, float]:
    """Over ``n`` data sets ``v, groups = draw(rng)``: the share in which every interval of a family (1,000 seeded
    shuffles) holds the true difference ``mu[a] - mu[b]``, by family, and in which no statement of the comparison
    with the best (Hsu's, :func:`hsu_statements_wrong`) is false (``best (Hsu)``)."""
    held = dict.fromkeys([*FAMILIES, "best (Hsu)"], 0)
    for _ in range(n):
        v, g = draw(rng)
        seed = int(rng.integers(1 << 31))
        for name, (pairs, blocks) in FAMILIES.items():
            rows, _ = max_t(v, g, pairs, blocks=blocks, draws=1000, seed=seed)
            held[name] += all(r.low - 1e-12 <= mu[r.a] - mu[r.b] <= r.high + 1e-12 for r in rows)
        held["best (Hsu)"] += not hsu_statements_wrong(with_best(v, g, draws=1000, seed=seed), mu)
    return {k: v / n for k, v in held.items()}


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
