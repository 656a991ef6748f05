""""What should we ship?": comparison with the best (Hsu's MCB) over the configurations shown.

The best set is the configurations *not shown worse* than the best at the
primary k, simultaneously over every configuration shown: Hsu's one-sided
comparison with the best (:func:`ragdiag.analyses.compare.simultaneous.with_best`),
studentized as every family is (each pair scaled by its own spread,
recomputed in every arrangement of the permutation). Configuration ``i`` is
in the set unless some other configuration is above it by more than the
one-sided critical value, i.e. exactly when Hsu's upper bound of its
difference to the best of the others reaches 0. Each row's interval is that
difference: the upper end is Hsu's bound (each pair's term widened to its score
interval, as every pair interval is), the lower end the difference to the
best (the best's: to the runner-up) less the same critical value, widened to
the score interval when few questions differ. The guarantee is Hsu's: a
configuration that is truly the best stays in the set 95% of the time, whichever
it is; one out of the set is ruled out as the best (another is at least as
good), which is not a promise to keep every one of several exactly equal ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ...core.defaults import ALPHA, PRIMARY_K, SEED
from ...core.metrics import hits_at_k, reciprocal_rank
from .simultaneous import MAX_T_DRAWS, with_best

if TYPE_CHECKING:  # pragma: no cover
    from ...evaluation.records import Config, Evaluation

__all__ = ["BestRow", "BestResult", "best", "best_of", "outcome_matrix", "difference_dict"]


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
    p_adjusted: float | None  # that it is worse than the best of the others (the best: None)
    in_best_set: bool
    against: str = ""  # what the estimate is a difference to: the best (the best's row: the runner-up)

    @property
    def critical_difference(self) -> float:
        """How far the interval reaches above the estimate (``high - estimate``): the half-width that decides the set."""
        return float(self.high - self.estimate)

    def difference(self) -> dict:
        """``{"estimate", "low", "high", "kind": "simultaneous (Hsu's MCB)"}``."""
        return difference_dict(self.estimate, self.low, self.high, "simultaneous (Hsu's MCB)")

    def as_json(self) -> dict:
        """``{"config", "mean", "difference_to_best", "against", "critical_difference", "p_adjusted", "in_best_set"}``."""
        return {"config": self.config, "mean": self.mean, "difference_to_best": self.difference(),
                "against": self.against, "critical_difference": self.critical_difference,
                "p_adjusted": self.p_adjusted, "in_best_set": self.in_best_set}


@dataclass(frozen=True)
class BestResult:
    """Comparison with the best at ``k``: the best, the tied tier (best set) and every configuration's row."""

    best: str
    best_set: tuple[str, ...]
    rows: tuple[BestRow, ...]
    k: int
    n_questions: int
    critical: float  # c, Hsu's one-sided critical value on the studentized scale (|S| / sqrt(sum d^2))
    method: str
    alpha: float = ALPHA
    metric: str = ""  # what was compared, in words ("" = recall at k, "R@k")

    @property
    def family(self) -> str:
        """The family in words."""
        return f"comparison with the best over {len(self.rows)} configurations (simultaneous, Hsu's MCB)"

    def as_json(self) -> dict:
        """The ``best --json`` document."""
        return {"best": self.best, "best_set": list(self.best_set), "k": self.k,
                "metric": self.metric or f"R@{self.k}",
                "unit": "question", "n_questions": self.n_questions, "family": self.family,
                "correction": ("Hsu's comparison with the best: one-sided, studentized max-T over questions "
                               "(each pair scaled by its own spread, recomputed in every arrangement)"),
                "alpha": self.alpha, "critical_value": self.critical, "method": self.method,
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
    return best_of(values, groups, [c.label for c in configs], k=k, alpha=alpha)


def best_of(values, groups, labels: Sequence[str], *, k: int = PRIMARY_K, alpha: float = ALPHA,
            draws: int = MAX_T_DRAWS, seed: int = SEED) -> BestResult:
    """:func:`best` from an outcome matrix (``values`` (configs, queries), ``groups``, one label per config).

    >>> r = best_of([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 1]], list("abcdef"), ["x", "y", "z"])
    >>> r.best, r.best_set
    ('x', ('x', 'y'))
    """
    values = np.asarray(values, dtype=np.float64)
    labels = list(labels)
    if values.ndim != 2 or values.shape[0] != len(labels) or not labels:
        raise ValueError(f"values must be (configs, queries) with one label per config, got {values.shape} and "
                         f"{len(labels)} labels")
    means = values.mean(axis=1) if values.shape[1] else np.zeros(len(labels))
    top = int(np.argmax(means))
    n_q = len(set(str(g) for g in groups))
    if len(labels) == 1:
        row = BestRow(labels[0], float(means[0]), 0.0, 0.0, 0.0, None, True, "")
        return BestResult(labels[0], (labels[0],), (row,), k, n_q, 0.0, "one configuration", alpha)
    mcb = with_best(values, groups, alpha=alpha, draws=draws, seed=seed)
    rows = []
    for i, label in enumerate(labels):
        rows.append(BestRow(label, float(means[i]), float(mcb.estimate[i]), float(mcb.lower[i]),
                            float(mcb.upper[i]), None if i == top else float(mcb.p_adjusted[i]),
                            bool(mcb.in_best_set[i]), labels[int(mcb.reference[i])]))
    best_set = tuple(r.config for r in sorted(rows, key=lambda r: -r.mean) if r.in_best_set)
    return BestResult(labels[top], best_set, tuple(rows), k, n_q, mcb.critical, mcb.method, alpha)
