"""Comparisons of evaluated configurations: one pair, or a family with Holm's correction within it.

The CLI, the dashboard and the report all compare through here, so a verdict
has one rule and one set of words (:func:`ragdiag.compare.verdict`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..defaults import PRIMARY_K
from ..metrics import hits_at_k, reciprocal_rank
from ..rows import PairRow
from ..stats import holm
from .intervals import power_words
from .paired import QuestionTest, paired_test, question_differences, verdict

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation import Config, Evaluation

__all__ = [
    "Comparison",
    "compare",
    "check_phrasing",
    "family",
    "compare_in_family",
    "family_rows",
    "pairwise",
    "FAMILIES",
]


def check_phrasing(ev: Evaluation, phrasing: str) -> str:
    """``phrasing`` if it is ``all`` or a phrasing of the ground truth, else ``ValueError`` naming the choices."""
    known = ("all", *ev.truth.phrasings)
    if phrasing not in known:
        raise ValueError(f"unknown phrasing {phrasing!r}; choose one of: {', '.join(known)}")
    return phrasing


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of two configurations over the same questions (the unit of the test).

    ``test`` counts wins, losses and ties over *questions* (a question's
    difference is summed over its phrasings) and holds the exact sign-flip p and
    the question-bootstrap interval of the difference ``a - b``. ``wins`` and
    ``losses`` list the discordant *queries* (for inspection). ``p_holm`` is the
    Holm-adjusted p within ``family`` comparisons (``None`` when tested alone).
    """

    a: Config
    b: Config
    k: int | None  # None: MRR
    phrasing: str
    test: QuestionTest
    wins: tuple[str, ...]
    losses: tuple[str, ...]
    p_holm: float | None = None
    family: int = 1
    family_name: str = "this pair alone"
    primary_k: int = PRIMARY_K
    power: str = ""  # the sample size in words (ragdiag.compare.power_words)

    @property
    def metric(self) -> str:
        """``R@k``, or ``MRR`` when ``k`` is None."""
        return "MRR" if self.k is None else f"R@{self.k}"

    @property
    def primary(self) -> bool:
        """Only recall at the primary k carries a verdict; other k and MRR are descriptive."""
        return self.k == self.primary_k

    @property
    def p_shown(self) -> float:
        """The p on screen: Holm's within the family, else the raw p."""
        return self.test.p if self.p_holm is None else self.p_holm

    def _verdict(self) -> tuple[str, str]:
        return verdict(self.a.label, self.b.label, self.test, metric=self.metric, p_adjusted=self.p_holm,
                       family=self.family, primary=self.primary)

    @property
    def status(self) -> str:
        """``different``, ``not shown different`` or ``descriptive`` (see :func:`ragdiag.compare.verdict`)."""
        return self._verdict()[0]

    @property
    def verdict(self) -> str:
        """The verdict in one sentence (:func:`ragdiag.compare.verdict`)."""
        return self._verdict()[1]

    def summary(self, phrasing: str | None = None) -> str:
        """One line: the counts over questions, the exact sign-flip p and the difference."""
        t = self.test
        return (f"{self.a.label} vs {self.b.label} at {self.metric} ({phrasing or self.phrasing}), over "
                f"{t.n_questions} questions: wins {t.wins}, losses {t.losses}, ties {t.ties}; exact sign-flip "
                f"test p = {t.p:.4g}" + ("" if self.p_holm is None else f", Holm p = {self.p_holm:.4g} within "
                                          f"{self.family_name} ({self.family})")
                + f"; difference {t.difference} (95% question bootstrap)")

    def as_json(self) -> dict:
        """The comparison as a JSON document (``compare --json``)."""
        t = self.test
        return {
            "a": self.a.label, "b": self.b.label, "metric": self.metric, "k": self.k, "phrasing": self.phrasing,
            "unit": "question", "n_questions": t.n_questions, "phrasings_per_question": t.phrasings,
            "wins": t.wins, "losses": t.losses, "ties": t.ties, "p": t.p, "p_method": t.method,
            "p_holm": self.p_holm, "family": self.family_name, "family_size": self.family,
            "primary_k": self.primary_k, "status": self.status, "verdict": self.verdict,
            "difference": t.difference.as_dict(), "power": self.power,
            "discordant_queries": {"a_finds": list(self.wins), "b_finds": list(self.losses)},
        }


def _per_query(res, k: int | None) -> np.ndarray:
    return reciprocal_rank(res.needle_rank) if k is None else hits_at_k(res.needle_rank, k).astype(np.float64)


def compare(ev: Evaluation, a: Config | str, b: Config | str, *, k: int | None = PRIMARY_K,
            phrasing: str = "all") -> Comparison:
    """``a`` against ``b`` at R@k (``k=None``: MRR), paired over questions (exact sign-flip test).

    Raises ``ValueError`` for an unknown phrasing (it would otherwise test 0 queries).
    """
    check_phrasing(ev, phrasing)
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    ra, rb = ev.result(a), ev.result(b)
    mask = ev.mask(phrasing) & ev.in_domain
    xa, xb = _per_query(ra, k), _per_query(rb, k)
    groups = [q.question_id for q, m in zip(ev.queries, mask) if m]
    test = paired_test(xa[mask], xb[mask], groups)
    ids = [q.id for q in ev.queries]
    wins = tuple(ids[i] for i in np.flatnonzero(mask & (xa > xb)))
    losses = tuple(ids[i] for i in np.flatnonzero(mask & (xa < xb)))
    d = question_differences(xa[mask], xb[mask], groups)
    return Comparison(ra.config, rb.config, k, phrasing, test, wins, losses,
                      power=power_words(d, max(test.phrasings, 1)))


#: The families a comparison can be corrected within.
FAMILIES = ("all pairs", "planned")


def family(ev: Evaluation, *, k: int | None = PRIMARY_K, phrasing: str = "all", baseline: Config | str | None = None,
           configs: Sequence[Config] | None = None) -> list[Comparison]:
    """The comparisons of one family, each with its Holm-adjusted p within that family.

    ``baseline=None``: every pair of ``configs`` (all evaluated configurations
    by default). With a ``baseline``: the planned family, the baseline against
    each other configuration (``m = len(configs) - 1``).
    """
    configs = list(configs or ev.results)
    if baseline is None:
        pairs = list(itertools.combinations(configs, 2))
        name = f"all {len(pairs)} pairs"
    else:
        base = ev.result(baseline).config
        pairs = [(base, c) for c in configs if c != base]
        name = f"{base.label} against each other configuration"
    comps = [compare(ev, a, b, k=k, phrasing=phrasing) for a, b in pairs]
    adjusted = holm([c.test.p for c in comps]) if comps else []
    return [replace(c, p_holm=float(p), family=len(comps), family_name=name) for c, p in zip(comps, adjusted)]


def compare_in_family(ev: Evaluation, a: Config | str, b: Config | str, *, k: int | None = PRIMARY_K,
                      phrasing: str = "all", planned: bool = False, comparisons: Sequence[Comparison] | None = None
                      ) -> Comparison:
    """``a`` vs ``b`` with its Holm p within the family on screen: all pairs, or (``planned``) ``a`` vs each other.

    ``comparisons``: that family, already computed by :func:`family` (else it is computed here).
    """
    ca, cb = ev.result(a).config, ev.result(b).config
    fam = comparisons if comparisons is not None else family(ev, k=k, phrasing=phrasing,
                                                             baseline=ca if planned else None)
    for c in fam:
        if {c.a, c.b} == {ca, cb}:
            if c.a == ca:
                return c
            return replace(compare(ev, ca, cb, k=c.k, phrasing=c.phrasing), p_holm=c.p_holm, family=c.family,
                           family_name=c.family_name)
    raise ValueError(f"{ca.label} vs {cb.label} is not in the family")


def family_rows(comparisons: Sequence[Comparison]) -> list[PairRow]:
    """The family as table rows (wins, losses and ties count questions)."""
    return [
        PairRow(c.a.label, c.b.label, c.test.wins, c.test.losses, c.test.ties, c.test.p, c.p_holm,
                c.test.difference.estimate, c.test.difference.low, c.test.difference.high, c.status,
                c.test.n_questions)
        for c in comparisons
    ]


def pairwise(ev: Evaluation, *, k: int | None = PRIMARY_K, phrasing: str = "all",
             configs: Sequence[Config] | None = None, baseline: Config | str | None = None) -> list[PairRow]:
    """Every comparison of the family (all pairs, or a planned ``baseline`` family), Holm within it.

    Wins, losses and ties count questions; ``p`` is the exact sign-flip p over questions.
    """
    return family_rows(family(ev, k=k, phrasing=phrasing, configs=configs, baseline=baseline))
