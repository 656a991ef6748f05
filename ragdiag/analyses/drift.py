r"""Rules for watching the refused share of live traffic that a change of mix cannot fool (what ``monitor`` and
the Monitor page judge with: :func:`ragdiag.analyses.monitor.judge_log`).

The share the gate refuses depends on the traffic's mix: live traffic with 10%
off-topic queries refuses less than a ground truth with 32%, with nothing
moved. So the share is judged only under a stated premise, the live off-topic
share :math:`\pi`; without it, it is not judged. Given :math:`\pi`, the
calibration's refused shares of answerable queries (:math:`r_A`) and of
off-topic ones (:math:`r_O`) give the expected share
:math:`p = (1 - \pi) r_A + \pi r_O`, known to lie in
:math:`[p_-, p_+]` from the two Clopper-Pearson intervals (each at
:math:`1 - \alpha_c / 2`). Then:

* **per period**, a *prediction* band for the refused count of a period of
  :math:`m` queries (binomial at :math:`p_-` and :math:`p_+`), not an interval
  for a mean: a period of 50 queries scatters far more than the calibration's
  mean does; each band at :math:`\alpha_p / P` over the :math:`P` periods
  judged (Bonferroni), so looking at 90 days does not raise 90 chances;
* **anytime**, a sequential rule over the queries in time order: for each
  :math:`p` in :math:`[p_-, p_+]` the ratio of a uniform mixture of Bernoulli
  likelihoods to the likelihood at :math:`p` is a nonnegative martingale when
  :math:`p` is true, so by Ville's inequality it ever reaches
  :math:`1 / \alpha_s` with probability at most :math:`\alpha_s`; the alarm is
  raised when it does for every :math:`p` of the interval. Reading the log
  every day, or after every query, does not inflate the false alarms.

The three levels add up (:data:`LEVELS`: 0.02 + 0.015 + 0.015): with no drift
and the premise true, the chance of any alarm in a run is at most 5%,
whatever the number of periods. Checked by simulation in
``tests/slow/test_drift.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from ..core.words import pct_span

__all__ = ["LEVELS", "Expected", "expected_share", "period_band", "judge_periods", "sequential_alarm"]

#: (calibration, periods, sequential): the error each part may spend; their sum bounds a run's false alarms.
LEVELS = (0.02, 0.015, 0.015)


@dataclass(frozen=True)
class Expected:
    """The refused share expected of live traffic under the premise ``off_topic_share``: ``low``-``high``."""

    off_topic_share: float
    low: float
    high: float

    @property
    def share_text(self) -> str:
        """The premise as a percentage, to a tenth where it has one: ``'10%'``, ``'12.5%'``.

        >>> Expected(0.125, 0.1, 0.2).share_text, Expected(0.1, 0.1, 0.2).share_text
        ('12.5%', '10%')
        """
        return f"{100 * self.off_topic_share:.1f}".removesuffix(".0") + "%"

    def words(self) -> str:
        """``'with 10% of live queries off-topic (a premise), the calibration expects 9–30% refused'``."""
        return (f"with {self.share_text} of live queries off-topic (a premise), the calibration expects "
                f"{pct_span(self.low, self.high)} refused")


def _cp(k: int, n: int, level: float) -> tuple[float, float]:
    from scipy.stats import beta

    tail = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(tail, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - tail, k + 1, n - k))
    return lo, hi


def expected_share(refused_answerable: tuple[int, int], refused_off_topic: tuple[int, int],
                   off_topic_share: float | None, *, alpha: float = LEVELS[0]) -> Expected | None:
    """The expected refused share under the premise; ``None`` without one (the share is then not judged).

    ``refused_answerable``: (refused, questions) of the calibration's answerable questions (a question's
    phrasings are one: count a question refused by its first phrasing, or pass question-level counts);
    ``refused_off_topic``: (refused, queries) of its off-topic queries.

    >>> e = expected_share((6, 64), (27, 30), 0.1)
    >>> round(e.low, 3), round(e.high, 3)
    (0.09, 0.303)
    >>> expected_share((6, 64), (27, 30), None) is None
    True
    """
    if off_topic_share is None:
        return None
    if not 0 <= off_topic_share <= 1:
        raise ValueError(f"the live off-topic share is a share in [0, 1], got {off_topic_share}")
    (ka, na), (ko, no) = refused_answerable, refused_off_topic
    if na < 1 or no < 1:
        raise ValueError("the calibration needs answerable and off-topic queries to expect a share of a mix")
    a, o = _cp(ka, na, 1 - alpha / 2), _cp(ko, no, 1 - alpha / 2)
    pi = float(off_topic_share)
    return Expected(pi, (1 - pi) * a[0] + pi * o[0], (1 - pi) * a[1] + pi * o[1])


def period_band(queries: int, expected: Expected, alpha: float) -> tuple[int, int]:
    """The refused counts a period of ``queries`` can show with nothing moved, at level ``alpha`` (two-sided).

    >>> period_band(100, Expected(0.1, 0.2, 0.3), 0.05)
    (12, 39)
    """
    from scipy.stats import binom

    lo = int(binom.ppf(alpha / 2, queries, expected.low))
    hi = int(binom.isf(alpha / 2, queries, expected.high))
    return lo, hi


def judge_periods(counts: Sequence[tuple[int, int]], expected: Expected, *, alpha: float = LEVELS[1]
                  ) -> list[bool]:
    """Per period (refused, queries): outside its band at ``alpha / P`` over the ``P`` periods (Bonferroni)."""
    P = max(1, len(counts))
    bands: dict[int, tuple[int, int]] = {}
    out = []
    for k, m in counts:
        if m not in bands:
            bands[m] = period_band(m, expected, alpha / P)
        lo, hi = bands[m]
        out.append(bool(k < lo or k > hi))
    return out


def sequential_alarm(refused: Sequence[bool], expected: Expected, *, alpha: float = LEVELS[2]) -> int | None:
    """The number of queries (in time order) after which the anytime-valid rule alarms; ``None``: never.

    With ``k`` refused of ``n``, the mixture ratio is :math:`B(k+1, n-k+1) /
    \\max_{p \\in [p_-, p_+]} p^k (1-p)^{n-k}` (the uniform mixture over the
    refused chance against the likeliest null value); the alarm is the first
    ``n`` where it reaches ``1 / alpha``.

    >>> sequential_alarm([True] * 40, Expected(0.1, 0.2, 0.3))
    5
    >>> sequential_alarm([True, False] * 200, Expected(0.5, 0.4, 0.6)) is None
    True
    """
    from scipy.special import betaln

    x = np.asarray(refused, dtype=bool)
    if not x.size:
        return None
    n = np.arange(1, x.size + 1, dtype=np.float64)
    k = np.cumsum(x).astype(np.float64)
    p = np.clip(k / n, max(expected.low, 1e-12), min(expected.high, 1 - 1e-12))
    with np.errstate(divide="ignore", invalid="ignore"):
        null = k * np.log(p) + (n - k) * np.log1p(-p)
    log_e = betaln(k + 1, n - k + 1) - null
    hit = np.flatnonzero(log_e >= math.log(1 / alpha))
    return int(hit[0]) + 1 if hit.size else None
