"""A cut chosen by a written rule: in sample, cross-validated over questions, and conformal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..compare.intervals import rate_interval
from ...core.defaults import SEED
from ...core.gate import CUT_DECIMALS, ceil_cut, floor_cut
from ...core.goal import Goal, allowed
from ...evaluation.rows import RateCell, RateRow
from ..gate_table import GateTable
from .gate import GATE_DISTANCE, MAX_DISTANCE
from .rates import _answerable_cells, rate_rows
from ...core.words import pct

__all__ = ["Goal", "CONFORMAL_PREMISE", "choose_cut", "conformal_cut", "conformal_guarantee", "exceed_chance", "cross_validate",
           "CutChoice", "cut_choice", "in_sample_words", "NO_OOD", "CUT_DECIMALS", "Proposal", "propose_cut",
           "PROPOSED", "IN_SAMPLE", "NO_OOD_METHOD"]

#: What every surface says when the ground truth has no out-of-domain query.
NO_OOD = "The ground truth has no out-of-domain queries, so bluffing cannot be measured: add some."


def choose_cut(inputs: GateTable, goal: Goal) -> float | None:
    """The cut :attr:`Goal.rule` gives on ``inputs`` (``None``: no cut reaches the goal).

    Exact, not on a grid: with ``m = floor(a * n_ood)`` bluffs allowed the cut is
    the ``(m+1)``-th smallest out-of-domain distance (the gate keeps a distance strictly under the cut,
    so that query and all above it are refused); for ``min_answered = b`` it is
    just above the ``ceil(b * n_in)``-th smallest answer distance.

    >>> g = GateTable(("a", "b", "o1", "o2"), np.array([True, True, False, False]),
    ...                closest=np.array([0.2, 0.3, 0.4, 0.5]), closest_holder=np.array([0.2, 0.35, np.inf, np.inf]), window=4)
    >>> choose_cut(g, Goal(max_bluff=0.5)), choose_cut(g, Goal(max_bluff=0.0))
    (0.5, 0.4)
    """
    ind = inputs.in_domain
    if goal.max_bluff is not None:
        ood = np.sort(inputs.closest[~ind])
        if not ood.size:  # no out-of-domain query: a bluff rate cannot be measured, so no cut reaches the goal
            return None
        m = goal.allowed_bluffs(ood.size)
        return float(ood[m]) if m < ood.size else MAX_DISTANCE
    good = np.sort(inputs.closest_holder[ind])
    r = goal.needed_answers(good.size)
    if r == 0:
        return 0.0
    if r > np.isfinite(good).sum():
        return None
    return float(np.nextafter(good[r - 1], np.inf))


def conformal_cut(inputs: GateTable, max_bluff: float) -> tuple[float | None, str]:
    """Split-conformal cut: a new out-of-domain query exchangeable with these bluffs with probability <= ``max_bluff``.

    With the ``n`` out-of-domain distances sorted, ``s_(1) <= ... <= s_(n)``, and
    ``j = floor(a (n + 1))``, the cut ``s_(j)`` keeps a new query (``d < s_(j)``)
    only when it ranks among the ``j`` smallest of the ``n + 1``, which has
    probability at most ``j / (n + 1) <= a`` (marginally over the set and the
    new query). When ``j = 0`` (fewer than ``1/a - 1`` out-of-domain queries) no
    cut above 0 can be certified. The cut is ``s_(j)`` rounded *down* to
    :data:`CUT_DECIMALS` decimals: any lower cut keeps the guarantee, and the
    value people read, type into a slider or a vector store is then the cut
    itself (``s_(j)`` printed rounded up would let the j-th query through).

    References
    ----------
    .. [1] V. Vovk, A. Gammerman, G. Shafer, *Algorithmic Learning in a Random World* (2005).
    .. [2] A. Angelopoulos, S. Bates, "A gentle introduction to conformal prediction", arXiv:2107.07511.

    >>> g = GateTable(tuple("abcdefghij"), np.zeros(10, bool), closest=np.arange(1, 11) / 10, closest_holder=np.full(10, np.inf), window=4)
    >>> conformal_cut(g, 0.1)[0]
    0.1
    >>> conformal_cut(g, 0.05)[0] is None
    True
    """
    ood = np.sort(inputs.closest[~inputs.in_domain])
    n = ood.size
    j = allowed(max_bluff, n + 1)
    if j == 0:
        need = int(np.ceil(1 / max_bluff - 1)) if max_bluff > 0 else None
        why = (f"cannot certify a bluff rate of {pct(max_bluff, 1)} with {n} out-of-domain queries: it takes at least "
               + (f"{need} (1/a - 1)" if need is not None else "infinitely many (a = 0)"))
        return None, why
    j = min(j, n)
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(j if j < 20 else j % 10, "th")
    cut = floor_cut(float(ood[j - 1]))
    return float(cut), (f"the {j}{suffix} smallest of {n} out-of-domain distances, rounded down: "
                               + conformal_guarantee(j, n, max_bluff))


#: How a proposal's cut was had (:attr:`Proposal.method`).
PROPOSED, IN_SAMPLE = "conformal", "in sample (optimistic)"
#: The method of a bluff-goal proposal when the ground truth has no off-topic query to choose a cut from.
NO_OOD_METHOD = "default (no off-topic queries to choose a cut from)"


@dataclass(frozen=True)
class Proposal:
    """The cut ragdiag proposes for a goal, how it was had, and what it guarantees (in words).

    The one decision every surface reads: ``threshold --json``'s ``proposed``,
    the thresholds export, the recommendation, the report and the dashboard.
    ``cut`` is ``None`` only when no cut reaches the goal (``reason`` says why).
    """

    cut: float | None
    method: str  # PROPOSED (conformal), IN_SAMPLE, NO_OOD_METHOD, or "in sample" for an answered goal
    guarantee: str  # the guarantee (conformal) or why the cut is optimistic, in words; "" when none applies
    goal: Goal

    @property
    def optimistic(self) -> bool:
        """Whether the cut was fitted to these very queries (its rates flatter it on new ones)."""
        return self.method == IN_SAMPLE


def propose_cut(inputs: GateTable, goal: Goal, *, default: float | None = None) -> Proposal:
    """The cut to propose for ``goal``: conformal for a bluff goal, else the rule's cut (see :class:`Proposal`).

    For ``max_bluff``: the conformal cut (:func:`conformal_cut`), which holds for
    new off-topic queries; when there are too few off-topic queries to certify
    it, the in-sample cut, labelled optimistic; with no off-topic query at all,
    ``default`` (``None``: no cut). For ``min_answered``: the rule's cut
    (:func:`choose_cut`), the fewest bluffs that reach the goal.

    >>> g = GateTable(tuple("abcdefghij"), np.zeros(10, bool), closest=np.arange(1, 11) / 10,
    ...               closest_holder=np.full(10, np.inf), window=4)
    >>> p = propose_cut(g, Goal(max_bluff=0.1)); p.cut, p.method
    (0.1, 'conformal')
    >>> p = propose_cut(g, Goal(max_bluff=0.05)); p.cut, p.method
    (0.1, 'in sample (optimistic)')
    """
    goal = goal.cut_goal  # the one goal a cut follows (the bluff goal when both are stated)
    if goal.max_bluff is None:
        cut = choose_cut(inputs, goal)  # rounded up: the printed cut keeps every answer the rule counted
        return Proposal(None if cut is None else ceil_cut(cut), "in sample",
                        "" if cut is not None else "no cut reaches this goal on this set", goal)
    n_ood = int((~inputs.in_domain).sum())
    if n_ood == 0:
        return Proposal(default, NO_OOD_METHOD, NO_OOD, goal)
    cut, words = conformal_cut(inputs, goal.max_bluff)
    if cut is not None:
        return Proposal(cut, PROPOSED, words.split(": ", 1)[1], goal)
    fitted = choose_cut(inputs, goal)  # rounded down: the printed cut lets no more off-topic queries through
    return Proposal(None if fitted is None else floor_cut(fitted), IN_SAMPLE,
                    f"{words}; {in_sample_words(n_ood, goal.max_bluff)}", goal)


def exceed_chance(j: int, n: int, goal: float) -> float:
    """Chance that the realised bluff rate of the ``j``-th smallest of ``n`` off-topic distances exceeds ``goal``.

    For continuous distances the probability that a new off-topic query falls
    below the ``j``-th order statistic of ``n`` is distributed Beta(j, n + 1 - j)
    over calibration sets, so this is ``1 - I_goal(j, n + 1 - j)`` (the
    regularised incomplete beta function).

    >>> round(exceed_chance(1, 30, 0.05), 4)  # 0.95 ** 30
    0.2146
    """
    if not 1 <= j <= n:
        raise ValueError(f"need 1 <= j <= n, got j={j}, n={n}")
    from scipy.special import betainc  # scipy.special only: no scipy.stats import on every run

    return float(1.0 - betainc(j, n + 1 - j, goal))


#: The premise of every conformal guarantee, said wherever one is printed: the bound is about queries drawn
#: like the ones in the set (exchangeable with them), not about any off-topic query users may send.
CONFORMAL_PREMISE = ("this holds if future off-topic queries resemble the ones written for this set (drawn the "
                     "same way); off-topic queries of a new kind can bluff more often")


def conformal_guarantee(j: int, n: int, goal: float) -> str:
    """The guarantee of the conformal cut (the ``j``-th smallest of ``n`` off-topic distances) in words, premise included.

    >>> conformal_guarantee(1, 30, 0.05)
    'on average over sets of off-topic queries, a new off-topic query bluffs with probability at most 1/31 = 3.2% \
(goal 5.0%); with these 30 off-topic queries, the chance that the realised rate exceeds 5.0% is 21%; this holds if \
future off-topic queries resemble the ones written for this set (drawn the same way); off-topic queries of a new \
kind can bluff more often'
    """
    return (f"on average over sets of off-topic queries, a new off-topic query bluffs with probability at most "
            f"{j}/{n + 1} = {pct(j / (n + 1), 1)} (goal {pct(goal, 1)}); with these {n} off-topic queries, "
            f"the chance that "
            f"the realised rate exceeds {pct(goal, 1)} is {pct(exceed_chance(j, n, goal))}; {CONFORMAL_PREMISE}")


def in_sample_words(n: int, goal: float) -> str:
    """What the in-sample cut for a bluff goal really gives (it is optimistic).

    >>> in_sample_words(30, 0.05)
    'in sample (optimistic): 1 of 30 off-topic queries bluff here, but a new one bluffs with probability 2/31 = 6.5% on average'
    """
    m = allowed(goal, n)
    if m >= n:
        return "in sample (optimistic): every off-topic query may bluff"
    return (f"in sample (optimistic): {m} of {n} off-topic queries bluff here, but a new one bluffs with "
            f"probability {m + 1}/{n + 1} = {pct((m + 1) / (n + 1), 1)} on average")


def _n_questions(inputs: GateTable) -> int:
    return len({g for g, i in zip(inputs.group_ids(), inputs.in_domain) if i})


def _folds(inputs: GateTable, n_folds: int, seed: int) -> np.ndarray:
    """Fold of each query: whole questions (all phrasings) per fold; answerable and ood stratified."""
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(inputs.query_ids), dtype=np.int64)
    groups = np.array(inputs.group_ids(), dtype=object)
    for part in (inputs.in_domain, ~inputs.in_domain):
        names = list(dict.fromkeys(groups[part].tolist()))
        order = rng.permutation(len(names))
        assign = {names[i]: r % n_folds for r, i in enumerate(order)}
        for i in np.flatnonzero(part):
            fold[i] = assign[groups[i]]
    return fold


def _subset(inputs: GateTable, sel: np.ndarray) -> GateTable:
    idx = np.flatnonzero(sel)
    pick = lambda t: tuple(t[i] for i in idx) if t else ()  # noqa: E731
    return GateTable(pick(inputs.query_ids), inputs.in_domain[sel], inputs.closest[sel], inputs.closest_holder[sel],
                      inputs.window, pick(inputs.groups), pick(inputs.kinds))


@dataclass(frozen=True)
class CutChoice:
    """A cut chosen by a written rule, with in-sample, cross-validated and conformal figures."""

    goal: Goal
    rule: str
    cut: float | None
    in_sample: RateRow | None  # rate_rows at the cut
    cross_validated: Mapping[str, RateCell]  # pooled held-out counts and rates over the folds, per outcome
    fold_cuts: tuple
    conformal_cut: float | None
    conformal: str
    n_in: int
    n_ood: int
    folds: int
    seed: int
    conformal_rates: RateRow | None = None  # rate_rows at the conformal cut
    notes: tuple[str, ...] = ()  # what could not be measured on this set, in words (no ood queries, too few questions)
    proposal: Proposal | None = None  # the cut proposed for the goal (propose_cut): what is exported and shown

    @property
    def proposed(self) -> dict | None:
        """The cut to use for a bluff goal: the conformal one, with its guarantee in words (``None``: no goal of bluffs)."""
        if self.goal.max_bluff is None:
            return None
        return {"cut": self.conformal_cut, "method": "conformal", "guarantee": self.conformal,
                "rates": None if self.conformal_rates is None else self.conformal_rates.cells(),
                "in_sample": in_sample_words(self.n_ood, self.goal.max_bluff) if self.n_ood else None}

    def proposed_rates(self) -> RateRow | None:
        """The rates at :attr:`proposal`'s cut (the conformal or the in-sample row it came from)."""
        p = self.proposal
        if p is None or p.cut is None:
            return None
        if p.method == PROPOSED:
            return self.conformal_rates
        return self.in_sample if self.cut is not None and p.cut == self.cut else None

    def as_json(self) -> dict:
        """The choice as a JSON document (``threshold --json``); rate cells as ``{count, rate, low, high}``."""
        p = self.proposal  # the decided cut first; the in-sample one is under in_sample (and in_sample_cut)
        return {"goal": {"max_bluff": self.goal.max_bluff, "min_answered": self.goal.min_answered},
                "cut": self.cut if p is None else p.cut, "cut_method": "in sample" if p is None else p.method,
                "rule": self.rule, "in_sample_cut": self.cut,
                "in_sample": None if self.in_sample is None else self.in_sample.cells(),
                "cross_validated": {k: v.cells() for k, v in self.cross_validated.items()},
                "cross_validation": {"folds": self.folds, "grouped_by": "question", "seed": self.seed,
                                     "fold_cuts": list(self.fold_cuts)},
                "conformal_cut": self.conformal_cut, "conformal": self.conformal, "proposed": self.proposed,
                "in_sample_label": "in sample (optimistic)",
                "distance": GATE_DISTANCE, "answerable": self.n_in, "out_of_domain": self.n_ood,
                "notes": list(self.notes)}


def cross_validate(inputs: GateTable, goal: Goal, *, folds: int = 5,
                   seed: int | None = None) -> tuple[dict[str, RateCell], tuple]:
    """Question-grouped ``folds``-fold estimate of what the rule's cut does to queries it was not chosen on.

    Each fold's cut is chosen by :func:`choose_cut` on the other folds and
    applied to the fold; the held-out outcomes are pooled over the folds.
    Returns (``{outcome: RateCell}`` for answered, wrong_sources, no_answer and bluffs; the fold cuts).
    """
    seed = SEED if seed is None else seed
    n_q = _n_questions(inputs)
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
    if n_q < 2:  # a cut chosen on no question cannot be held out on one
        raise ValueError(f"cross-validation needs at least 2 answerable questions; this set has {n_q}: there is no "
                         "held-out estimate")
    fold = _folds(inputs, folds, seed)
    ind = inputs.in_domain
    answered = np.zeros(ind.size, dtype=bool)  # per query, under the cut chosen without its fold
    kept = np.zeros(ind.size, dtype=bool)
    cuts = []
    for f in range(folds):
        train, test = fold != f, fold == f
        cut = choose_cut(_subset(inputs, train), goal)
        cuts.append(cut)
        if cut is None:  # the goal is unreachable on the training folds: the gate refuses everything
            continue
        answered[test] = inputs.answered(cut)[test]
        kept[test] = inputs.given_sources(cut)[test]
    cells = _answerable_cells(inputs, answered[ind][None, :], kept[ind][None, :])
    out = {k: RateCell.of(v[0]) for k, v in cells.items()}
    out["bluffs"] = RateCell.of(rate_interval(int(kept[~ind].sum()), int((~ind).sum())))
    return out, tuple(cuts)


def cut_choice(inputs: GateTable, goal: Goal, *, folds: int = 5, seed: int | None = None) -> CutChoice:
    """Choose a cut for ``goal`` and report it in sample, cross-validated and (bluff goals) conformal."""
    from ...core.validate import require_type

    require_type(inputs, GateTable, "inputs", hint="make them with ragdiag.analyses.threshold.gate_table")
    require_type(goal, Goal, "goal", hint="e.g. Goal(max_bluff=0.05)")
    goal = goal.cut_goal  # the one goal a cut follows (the bluff goal when both are stated)
    seed = SEED if seed is None else seed
    cut = choose_cut(inputs, goal)
    in_sample = None if cut is None else rate_rows(inputs, [cut])[0]
    notes = [NO_OOD] if not (~inputs.in_domain).any() else []
    try:
        cv, fold_cuts = cross_validate(inputs, goal, folds=folds, seed=seed)
    except ValueError as exc:
        if _n_questions(inputs) >= 2:
            raise
        cv, fold_cuts = {}, ()
        notes.append(f"{str(exc)[0].upper()}{str(exc)[1:]}.")
    n_q = _n_questions(inputs)
    if 2 <= n_q < folds:
        notes.append(f"{folds}-fold cross-validation over {n_q} questions: {folds - n_q} fold(s) hold no answerable "
                     f"question (in effect leave-one-question-out)")
    if goal.max_bluff is not None:
        c_cut, c_text = conformal_cut(inputs, goal.max_bluff)
    else:
        c_cut, c_text = None, "a conformal cut certifies a bluff rate: state the goal as --max-bluff"
    return CutChoice(goal, goal.rule, cut, in_sample, cv, fold_cuts, c_cut, c_text,
                     int(inputs.in_domain.sum()), int((~inputs.in_domain).sum()), folds, seed,
                     None if c_cut is None else rate_rows(inputs, [c_cut])[0], tuple(notes),
                     propose_cut(inputs, goal))
