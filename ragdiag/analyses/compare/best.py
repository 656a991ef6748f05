""""What should we ship?": comparison with the best (Hsu's MCB) over the configurations shown.

The best set is the configurations *not shown worse* than the best at the
primary k, simultaneously over every configuration shown: configuration ``i``
is in it when its difference to the best, ``T_i - T_best``, is within the
critical value ``c`` of the family's max-statistic permutation (randomised
Tukey HSD over all pairs, :func:`ragdiag.analyses.compare.simultaneous.max_t`), i.e. when
its simultaneous interval reaches 0. That is the all-pairs null's range, so the
set is conservative (never too small) against Hsu's one-sided constant.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ...core.defaults import ALPHA, PRIMARY_K
from ...core.metrics import hits_at_k, reciprocal_rank
from .simultaneous import max_t

if TYPE_CHECKING:  # pragma: no cover
    from ...evaluation.records import Config, Evaluation

__all__ = ["BestRow", "BestResult", "best", "outcome_matrix", "difference_dict"]


def difference_dict(estimate: float, low: float, high: float, kind: str = "simultaneous") -> dict:
    """``{"estimate", "low", "high", "kind"}``: the JSON form of every difference with its interval."""
    return {"estimate": float(estimate), "low": float(low), "high": float(high), "kind": kind}


def outcome_matrix(ev: Evaluation, configs: Sequence[Config], *, k: int | None = PRIMARY_K,
                   phrasing: str = "all") -> tuple[np.ndarray, list[str]]:
    """Per configuration and answerable query (of ``phrasing``): hit at ``k`` (``k=None``: reciprocal rank).

    Returns ``(values (configs, queries), question of each query)``.
    """
    mask = ev.mask(phrasing) & ev.in_domain
    rows = []
    for c in configs:
        ranks = ev.result(c).needle_rank[mask]
        rows.append(reciprocal_rank(ranks) if k is None else hits_at_k(ranks, k).astype(np.float64))
    return np.array(rows, dtype=np.float64).reshape(len(configs), int(mask.sum())), ev.groups(mask)


@dataclass(frozen=True)
class BestRow:
    """One configuration against the best: its mean, the difference with its simultaneous interval, in the set?"""

    config: str
    mean: float
    estimate: float  # mean - best's mean (the best: its mean - the runner-up's)
    low: float
    high: float
    p_adjusted: float | None  # that it is worse than the best (the best: None)
    in_best_set: bool

    def difference(self) -> dict:
        """``{"estimate", "low", "high", "kind": "simultaneous"}``."""
        return difference_dict(self.estimate, self.low, self.high)

    def as_json(self) -> dict:
        """``{"config", "mean", "difference_to_best", "p_adjusted", "in_best_set"}``."""
        return {"config": self.config, "mean": self.mean, "difference_to_best": self.difference(),
                "p_adjusted": self.p_adjusted, "in_best_set": self.in_best_set}


@dataclass(frozen=True)
class BestResult:
    """Comparison with the best at ``k``: the best, the tied tier (best set) and every configuration's row."""

    best: str
    best_set: tuple[str, ...]
    rows: tuple[BestRow, ...]
    k: int
    n_questions: int
    critical: float  # c, as a difference of recall
    method: str
    alpha: float = ALPHA

    @property
    def family(self) -> str:
        """The family in words."""
        return f"comparison with the best over {len(self.rows)} configurations (simultaneous)"

    def as_json(self) -> dict:
        """The ``best --json`` document."""
        return {"best": self.best, "best_set": list(self.best_set), "k": self.k, "metric": f"R@{self.k}",
                "unit": "question", "n_questions": self.n_questions, "family": self.family,
                "correction": "max-T (randomised Tukey HSD over questions), simultaneous", "alpha": self.alpha,
                "critical_difference": self.critical, "method": self.method,
                "rows": [r.as_json() for r in self.rows]}


def best(ev: Evaluation, *, k: int = PRIMARY_K, phrasing: str = "all", configs: Sequence[Config] | None = None,
         alpha: float = ALPHA) -> BestResult:
    """The best configuration at R@k and the set not shown worse than it, simultaneous over ``configs``.

    Ties in the mean go to the earlier configuration of ``configs`` (default: the evaluation's order).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    configs = [ev.result(c).config for c in (configs or ev.results)]
    if not configs:
        raise ValueError("no configurations to compare")
    values, groups = outcome_matrix(ev, configs, k=k, phrasing=phrasing)
    means = values.mean(axis=1) if values.shape[1] else np.zeros(len(configs))
    top = int(np.argmax(means))
    n_q = len(set(groups))
    if len(configs) == 1:
        row = BestRow(configs[0].label, float(means[0]), 0.0, 0.0, 0.0, None, True)
        return BestResult(configs[0].label, (configs[0].label,), (row,), k, n_q, 0.0, "one configuration", alpha)
    pairs = list(itertools.combinations(range(len(configs)), 2))
    sim, null = max_t(values, groups, pairs, alpha=alpha)
    by_pair = {(r.a, r.b): r for r in sim}
    runner = max((i for i in range(len(configs)) if i != top), key=lambda i: (means[i], -i))
    rows = []
    for i, cfg in enumerate(configs):
        other = runner if i == top else top
        r = by_pair.get((i, other)) or by_pair[(other, i)]
        sign = 1.0 if (r.a, r.b) == (i, other) else -1.0
        est, low, high = sign * r.estimate, *sorted((sign * r.low, sign * r.high))
        in_set = i == top or high >= 0  # not shown worse: the interval reaches 0 (p_adjusted >= alpha)
        rows.append(BestRow(cfg.label, float(means[i]), float(est), float(low), float(high),
                            None if i == top else r.p_adjusted, bool(in_set)))
    crit = null.critical * (1.0 / values.shape[1]) if values.shape[1] else 0.0
    best_set = tuple(r.config for r in sorted(rows, key=lambda r: -r.mean) if r.in_best_set)
    return BestResult(configs[top].label, best_set, tuple(rows), k, n_q, crit, null.method, alpha)
