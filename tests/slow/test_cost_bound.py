"""The cost cut's bluff bound holds after the cut was chosen: a simulation through ``cost_cut``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta

from ragdiag.analyses.gate_table import GateTable
from ragdiag.analyses.threshold.proposal import cost_bound, cost_cut
from ragdiag.core.goal import Goal


def _table(rng, questions=32, ood=30):
    # answerable distances Beta(2, 4) (two phrasings per question), off-topic Beta(4, 3): they overlap, so the
    # cheapest cut lets some off-topic queries through
    ans = rng.beta(2, 4, size=2 * questions)
    off = rng.beta(4, 3, size=ood)
    ids = tuple(f"q{i // 2}:{i % 2}" for i in range(2 * questions)) + tuple(f"o{i}" for i in range(ood))
    closest = np.r_[ans, off]
    return GateTable(ids, np.r_[np.ones(2 * questions, bool), np.zeros(ood, bool)], closest=closest,
                     closest_holder=np.r_[ans, np.full(ood, np.inf)], window=4,
                     groups=tuple(f"q{i // 2}" for i in range(2 * questions)) + ids[2 * questions:])


@pytest.mark.slow  # 2 x 400 seeded data sets through cost_cut: ~20 s
@pytest.mark.parametrize("bluff_cost", [3.0, 10.0])
def test_the_true_bluff_rate_of_the_cost_cut_stays_under_its_stated_bound(bluff_cost):
    rng = np.random.default_rng(46)
    runs, over, over_fixed = 400, 0, 0
    for _ in range(runs):
        t = _table(rng)
        cc = cost_cut(t, Goal(max_bluff=0.05, bluff_cost=bluff_cost), folds=2)
        true = float(beta.cdf(cc.cut, 4, 3))  # the chance a new off-topic query falls under the cut
        over += true > cc.guarantee
        j, n = cc.bluffs.count, 30
        over_fixed += true > (j + 1) / (n + 1)  # the bound of a cut fixed in advance, wrongly applied
    # at most 5% of sets (95% confidence), within Monte Carlo error (two standard errors over 400 runs: 2.2 points)
    assert over / runs <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / runs)
    assert over_fixed / runs > 0.3  # the simulation can see the failure the old bound had


def test_the_bound_is_the_share_under_the_cut_plus_the_dkw_margin():
    g, words = cost_bound(0, 20)
    assert g == pytest.approx(np.sqrt(np.log(20) / 40)) and "no conformal guarantee" in words
    assert cost_bound(20, 20)[0] == 1.0 and cost_bound(3, 0)[0] is None
