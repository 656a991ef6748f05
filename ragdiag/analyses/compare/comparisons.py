"""Comparisons of evaluated configurations: one pair, or a family with simultaneous intervals within it.

The CLI, the dashboard and the report all compare through here, so a verdict
has one rule and one set of words (:func:`ragdiag.analyses.compare.verdict`).
"""

from __future__ import annotations

import itertools
from statistics import NormalDist
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ...core.defaults import ALPHA, PRIMARY_K
from ...core.metrics import hits_at_k, reciprocal_rank
from ...core.words import difference_of
from ...evaluation.rows import PairRow
from .best import difference_dict
from .intervals import power_words
from .paired import Difference, QuestionTest, paired_test, question_differences, verdict, verdict_status
from .simultaneous import bh_qvalues, max_t

if TYPE_CHECKING:  # pragma: no cover
    from ...evaluation.records import Config, Evaluation

__all__ = [
    "Comparison",
    "compare",
    "check_phrasing",
    "family",
    "planned_family",
    "compare_in_family",
    "family_rows",
    "pairwise",
    "pair_json",
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
    difference is summed over its phrasings) and holds the exact sign-flip p of
    the pair alone and the question-bootstrap interval of ``a - b`` (unadjusted).
    ``interval`` is the simultaneous interval of the family (max-T permutation
    over questions, :func:`ragdiag.analyses.compare.max_t`) and ``p_adjusted`` the
    adjusted p read from the same null: ``status`` is ``"different"`` exactly
    when ``interval`` excludes 0. Tested alone, the family is this one pair and
    the interval is the inversion of its exact sign-flip test. ``wins`` and
    ``losses`` list the discordant *queries* (for inspection). ``q_value`` is the
    Benjamini-Hochberg q of the raw p within the family (exploratory; never a verdict).
    """

    a: Config
    b: Config
    k: int | None  # None: MRR
    phrasing: str
    test: QuestionTest
    wins: tuple[str, ...]
    losses: tuple[str, ...]
    p_adjusted: float | None = None
    family: int = 1
    family_name: str = "this pair alone"
    primary_k: int = PRIMARY_K
    power: str = ""  # the sample size in words (ragdiag.analyses.compare.power_words), alone and within the family
    interval: Difference | None = None  # simultaneous within the family (None: not computed)
    method: str = ""  # how the family's null was computed (exact or seeded Monte Carlo)
    q_value: float | None = None
    alpha: float = ALPHA

    @property
    def metric(self) -> str:
        """``R@k``, or ``MRR`` when ``k`` is None."""
        return "MRR" if self.k is None else f"R@{self.k}"

    @property
    def primary(self) -> bool:
        """Only recall at the primary k carries a verdict; other k and MRR are descriptive."""
        return self.k == self.primary_k

    @property
    def p_holm(self) -> float | None:
        """The family-adjusted p (max-T over questions; the name older callers read)."""
        return self.p_adjusted

    @property
    def p_shown(self) -> float:
        """The p on screen: the family-adjusted p, else the raw p."""
        return self.test.p if self.p_adjusted is None else self.p_adjusted

    @property
    def correction(self) -> str:
        """The correction in words."""
        if self.family <= 1:
            return "this pair alone (exact sign-flip test)"
        return f"simultaneous over {self.family} comparisons (studentized max-T over questions)"

    def difference(self) -> dict:
        """``{"estimate", "low", "high", "kind"}``: the interval that goes with ``status``."""
        iv = self.interval if self.interval is not None else self.test.difference
        kind = "simultaneous" if self.interval is not None else "unadjusted"
        return difference_dict(iv.estimate, iv.low, iv.high, kind)

    def difference_words(self) -> str:
        """The interval that goes with ``status`` as said everywhere (points at ``R@k``, a difference of MRR)."""
        return difference_of(self.metric, self.interval if self.interval is not None else self.test.difference)

    @property
    def status(self) -> str:
        """``different`` when the simultaneous interval excludes 0 (iff adjusted p < alpha), else ``not shown different``."""
        return verdict_status(self.interval if self.interval is not None else self.test.difference)

    @property
    def verdict(self) -> str:
        """The verdict in one sentence (:func:`ragdiag.analyses.compare.verdict`)."""
        iv = self.interval if self.interval is not None else self.test.difference
        return verdict(self.a.label, self.b.label, self.test, iv, metric=self.metric, p_adjusted=self.p_shown,
                       family=self.family, primary=self.primary, primary_k=self.primary_k)

    def summary(self, phrasing: str | None = None) -> str:
        """One line: the counts over questions, the exact sign-flip p, the adjusted p and both intervals."""
        t = self.test
        return (f"{self.a.label} vs {self.b.label} at {self.metric} ({phrasing or self.phrasing}), over "
                f"{t.n_questions} questions: wins {t.wins}, losses {t.losses}, ties {t.ties}; exact sign-flip "
                f"test p = {t.p:.4g}" + ("" if self.p_adjusted is None or self.family <= 1 else
                                         f", adjusted p = {self.p_adjusted:.4g} within {self.family_name} "
                                         f"({self.family}, max-T)")
                + f"; difference {self.difference_words()} ({self.difference()['kind']}"
                + (f", {self.method}" if self.method else "")
                + f"); {difference_of(self.metric, t.difference)} (unadjusted question bootstrap)")

    def as_json(self) -> dict:
        """The comparison as a JSON document (``compare --json``)."""
        t = self.test
        return {
            "a": self.a.label, "b": self.b.label, "metric": self.metric, "k": self.k, "phrasing": self.phrasing,
            "unit": "question", "n_questions": t.n_questions, "phrasings_per_question": t.phrasings,
            "wins": t.wins, "losses": t.losses, "ties": t.ties, "p": t.p, "p_method": t.method,
            "p_adjusted": self.p_adjusted, "q_value": self.q_value, "correction": self.correction,
            "null": self.method, "family": self.family_name, "family_size": self.family,
            "primary_k": self.primary_k, "primary": self.primary, "status": self.status, "verdict": self.verdict,
            "difference": self.difference(),
            "difference_unadjusted": difference_dict(t.difference.estimate, t.difference.low, t.difference.high,
                                                     "unadjusted (95% question bootstrap of this pair alone)"),
            "power": self.power,
            "discordant_queries": {"a_finds": list(self.wins), "b_finds": list(self.losses)},
        }


def _per_query(res, k: int | None) -> np.ndarray:
    return reciprocal_rank(res.needle_rank) if k is None else hits_at_k(res.needle_rank, k).astype(np.float64)


def _pair(ev: Evaluation, a, b, k: int | None, phrasing: str, outcome=None) -> Comparison:
    """The pair's own test (sign flip, unadjusted bootstrap) and discordant queries, no family yet.

    ``outcome(config)``: the per-query values to compare instead of hits at ``k`` (see :func:`planned_family`).
    """
    check_phrasing(ev, phrasing)
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    ra, rb = ev.result(a), ev.result(b)
    mask = ev.mask(phrasing) & ev.in_domain
    xa, xb = ((_per_query(ra, k), _per_query(rb, k)) if outcome is None else
              (np.asarray(outcome(ra.config), dtype=np.float64), np.asarray(outcome(rb.config), dtype=np.float64)))
    groups = [q.question_id for q, m in zip(ev.queries, mask) if m]
    test = paired_test(xa[mask], xb[mask], groups)
    ids = [q.id for q in ev.queries]
    wins = tuple(ids[i] for i in np.flatnonzero(mask & (xa > xb)))
    losses = tuple(ids[i] for i in np.flatnonzero(mask & (xa < xb)))
    return Comparison(ra.config, rb.config, k, phrasing, test, wins, losses)


def _with_family(ev: Evaluation, comps: list[Comparison], name: str, *, alpha: float = ALPHA,
                 blocks_by: str | None = None, outcome=None) -> list[Comparison]:
    """Each comparison with its simultaneous interval, adjusted p, BH q-value and power within the family."""
    if not comps:
        return []
    configs = list(dict.fromkeys(c for comp in comps for c in (comp.a, comp.b)))
    index = {c: i for i, c in enumerate(configs)}
    pairs = []
    for c in comps:  # a configuration against itself: its copy is a system of its own (the differences are all 0)
        if c.a == c.b:
            configs.append(c.b)
        pairs.append((index[c.a], len(configs) - 1 if c.a == c.b else index[c.b]))
    k, phrasing = comps[0].k, comps[0].phrasing
    mask = ev.mask(phrasing) & ev.in_domain
    per_query = (lambda c: _per_query(ev.result(c), k)) if outcome is None else (
        lambda c: np.asarray(outcome(c), dtype=np.float64))
    values = np.array([per_query(c)[mask] for c in configs]).reshape(len(configs), int(mask.sum()))
    groups = [q.question_id for q, m in zip(ev.queries, mask) if m]
    blocks = None
    if blocks_by == "retriever":
        by: dict[str, list[int]] = {}
        for i, c in enumerate(configs):
            by.setdefault(c.retriever, []).append(i)
        blocks = list(by.values())
    fam_rows, null = max_t(values, groups, pairs, blocks=blocks, alpha=alpha)
    rows = fam_rows
    if len(comps) > 1 and np.all(values == np.round(values)):
        rows = [_no_looser_than_alone(r, values, groups, alpha) for r in rows]
    q = bh_qvalues([c.test.p for c in comps])
    out = []
    for comp, r, fr, qv in zip(comps, rows, fam_rows, q):
        d = question_differences(values[index[comp.a]], values[index[comp.b]], groups)
        sd = float(np.sqrt((d**2).sum()))
        # the family rejects this pair when |sum d| exceeds the interval's half-width (in sums over queries):
        # that is the test's critical value on the standardised sum, for the power sentence
        half = max(r.high - r.low, fr.high - fr.low) / 2 * values.shape[1]
        z_family = max(half / sd, NormalDist().inv_cdf(1 - alpha / 2)) if len(comps) > 1 and sd > 0 else None
        power = power_words(d, max(comp.test.phrasings, 1), family_size=len(comps), z_family=z_family,
                            alpha=alpha, reached=r.excludes_zero)
        out.append(replace(comp, p_adjusted=r.p_adjusted, family=len(comps), family_name=name, power=power,
                           interval=Difference(r.estimate, r.low, r.high), method=null.method, q_value=float(qv),
                           alpha=alpha))
    return out


def _no_looser_than_alone(r, values: np.ndarray, groups, alpha: float):
    """The family's row, never looser than the pair's own exact sign-flip test (hits only: its null is exact).

    Shuffling every system of a family can make a pair's adjusted p smaller than
    its own p; the verdict then needs both: the adjusted p is the larger of the
    two, and the interval the one that says so (the wider when both exclude 0,
    else one that reaches 0), so "different" still means exactly "excludes 0".
    """
    (alone,), _ = max_t(values[[r.a, r.b]], groups, [(0, 1)], alpha=alpha)
    both = r.excludes_zero and alone.excludes_zero
    if both:
        pick = alone if (alone.high - alone.low) > (r.high - r.low) else r
    else:
        pick = r if not r.excludes_zero else alone
    return replace(pick, a=r.a, b=r.b, p_adjusted=max(r.p_adjusted, alone.p_adjusted))


def compare(ev: Evaluation, a: Config | str, b: Config | str, *, k: int | None = PRIMARY_K,
            phrasing: str = "all") -> Comparison:
    """``a`` against ``b`` alone at R@k (``k=None``: MRR), paired over questions (exact sign-flip test).

    The interval that goes with the status is the family of this one pair's
    (the inversion of its sign-flip test). Raises ``ValueError`` for an unknown
    phrasing (it would otherwise test 0 queries).
    """
    return _with_family(ev, [_pair(ev, a, b, k, phrasing)], "this pair alone")[0]


#: The families a comparison can be corrected within.


def planned_family(ev: Evaluation, baseline: Config | str, configs: Sequence[Config | str], outcome, *,
                   k: int | None = PRIMARY_K, name: str = "") -> list[Comparison]:
    """The planned family of each of ``configs`` against ``baseline`` on a per-query 0/1 ``outcome``.

    ``outcome(config)`` gives one value per query of ``ev.queries`` (e.g. answered
    at the gate, for the chunking ledger); the test, the simultaneous interval and
    the adjusted p are those of :func:`family` with that outcome in place of hits
    at ``k`` (``k`` is only recorded). Each comparison reads ``config - baseline``:
    ``wins`` are the queries the configuration gets and the baseline does not.
    """
    base = ev.result(baseline).config
    others = list(dict.fromkeys(ev.result(c).config for c in configs if ev.result(c).config != base))
    name = name or f"{base.label} against each other configuration"
    # computed as family() does (the baseline first, so a Monte Carlo null draws the same), then read the other way
    fam = _with_family(ev, [_pair(ev, base, c, k, "all", outcome) for c in others], name, outcome=outcome)
    return [replace(c, a=c.b, b=c.a, test=_pair(ev, c.b, c.a, k, "all", outcome).test, wins=c.losses, losses=c.wins,
                    interval=None if c.interval is None else Difference(0.0 - c.interval.estimate,
                                                                        0.0 - c.interval.high, 0.0 - c.interval.low))
            for c in fam]


def family(ev: Evaluation, *, k: int | None = PRIMARY_K, phrasing: str = "all", baseline: Config | str | None = None,
           configs: Sequence[Config] | None = None) -> list[Comparison]:
    """The comparisons of one family, each with its simultaneous interval and adjusted p within that family.

    ``baseline=None``: every pair of ``configs`` (all evaluated configurations
    by default; exploratory, with Benjamini-Hochberg q-values beside). With a
    ``baseline`` (declared by the operator before looking): the planned family,
    the baseline against each other configuration (``m = len(configs) - 1``).
    """
    configs = list(configs or ev.results)
    if baseline is None:
        pairs = list(itertools.combinations(configs, 2))
        name = f"all {len(pairs)} pairs"
    else:
        base = ev.result(baseline).config
        pairs = [(base, c) for c in configs if c != base]
        name = f"{base.label} against each other configuration"
    return _with_family(ev, [_pair(ev, a, b, k, phrasing) for a, b in pairs], name)


def compare_in_family(ev: Evaluation, a: Config | str, b: Config | str, *, k: int | None = PRIMARY_K,
                      phrasing: str = "all", baseline: Config | str | None = None,
                      comparisons: Sequence[Comparison] | None = None) -> Comparison:
    """``a`` vs ``b`` within the family on screen: all pairs, or the planned family of a declared ``baseline``.

    ``comparisons``: that family, already computed by :func:`family` (else it is computed here).
    """
    ca, cb = ev.result(a).config, ev.result(b).config
    fam = comparisons if comparisons is not None else family(ev, k=k, phrasing=phrasing, baseline=baseline)
    for c in fam:
        if {c.a, c.b} == {ca, cb}:
            if c.a == ca:
                return c
            iv = c.interval
            return replace(c, a=c.b, b=c.a, test=_pair(ev, ca, cb, c.k, c.phrasing).test, wins=c.losses,
                           losses=c.wins, interval=None if iv is None else Difference(0.0 - iv.estimate, 0.0 - iv.high,
                                                                            0.0 - iv.low))
    raise ValueError(f"{ca.label} vs {cb.label} is not in the family")


def family_rows(comparisons: Sequence[Comparison]) -> list[PairRow]:
    """The family as table rows (wins, losses and ties count questions; the interval is the simultaneous one)."""
    rows = []
    for c in comparisons:
        d = c.difference()
        rows.append(PairRow(c.a.label, c.b.label, c.test.wins, c.test.losses, c.test.ties, c.test.p, c.p_adjusted,
                            d["estimate"], d["low"], d["high"], c.status, c.test.n_questions, d["kind"], c.q_value,
                            c.test.difference.low, c.test.difference.high))
    return rows


def pair_json(c: Comparison) -> dict:
    """One row of ``pairs --json``: counts over questions, p, adjusted p, q-value, status and the difference dict."""
    return {"a": c.a.label, "b": c.b.label, "wins": c.test.wins, "losses": c.test.losses, "ties": c.test.ties,
            "n_questions": c.test.n_questions, "p": c.test.p, "p_adjusted": c.p_adjusted, "q_value": c.q_value,
            "status": c.status, "difference": c.difference(),
            "difference_unadjusted": difference_dict(c.test.difference.estimate, c.test.difference.low,
                                                     c.test.difference.high, "unadjusted")}


def pairwise(ev: Evaluation, *, k: int | None = PRIMARY_K, phrasing: str = "all",
             configs: Sequence[Config] | None = None, baseline: Config | str | None = None) -> list[PairRow]:
    """Every comparison of the family (all pairs, or a planned ``baseline`` family), simultaneous within it.

    Wins, losses and ties count questions; ``p`` is the exact sign-flip p over questions.
    """
    return family_rows(family(ev, k=k, phrasing=phrasing, configs=configs, baseline=baseline))
