"""Abstention: a distance gate, and the sweep of its cut.

The retriever always returns something; the gate is the only part that can
say no. It keeps at most ``keep`` chunks of the ranked list (its top
``keep``), only those whose cosine distance is under the cut (``d < cut``).

For each query two numbers decide everything:

* ``first`` - the smallest distance among its top ``keep`` (anything kept iff ``cut > first``);
* ``good``  - the smallest distance among those of its top ``keep`` that hold the
  needle (answered iff ``cut > good``; ``inf`` when none does, and for ood queries).

So the sweep sorts each once and counts with ``searchsorted``: O((n + m) log n)
for n queries and m cuts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = [
    "DEFAULT_CUT",
    "DEFAULT_KEEP",
    "GateInputs",
    "gate_inputs",
    "SweepTable",
    "sweep",
    "gate",
    "Bluff",
    "bluffs_at",
    "DistanceSamples",
    "distance_samples",
    "GATE_DISTANCE",
    "OUTCOME_KEYS",
    "rate_rows",
    "Goal",
    "choose_cut",
    "conformal_cut",
    "cross_validate",
    "CutChoice",
    "cut_choice",
    "default_cuts",
]

from .defaults import DEFAULT_CUT, DEFAULT_KEEP


@dataclass(frozen=True)
class GateInputs:
    query_ids: tuple[str, ...]
    in_domain: np.ndarray  # bool
    first: np.ndarray  # min distance among top-keep
    good: np.ndarray  # min distance among top-keep holders (inf: none)
    keep: int
    groups: tuple[str, ...] = ()  # the question of each query (ood: the query itself); () = each query alone
    kinds: tuple = ()  # ood kind per query ("near", "far", ...; None in-domain); () = unknown

    def group_ids(self) -> tuple[str, ...]:
        return self.groups or self.query_ids

    def kind_of(self) -> tuple:
        return self.kinds or (None,) * len(self.query_ids)


def gate_inputs(result, query_ids: Sequence[str], in_domain: np.ndarray, *, keep: int = DEFAULT_KEEP,
                groups: Sequence[str] | None = None, kinds: Sequence | None = None) -> GateInputs:
    """Per query ``first`` and ``good`` for a :class:`~ragdiag.evaluate.ConfigResult`.

    ``groups`` names the question of each query (phrasings of one question are
    one unit for intervals and cross-validation); ``kinds`` the out-of-domain
    kind (near/far) of each query.
    """
    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep}")
    keep = min(keep, result.top_distance.shape[1])  # a corpus with fewer chunks than keep: keep them all
    d = result.top_distance[:, :keep]
    holds = result.top_holds[:, :keep]
    first = d.min(axis=1)
    good = np.where(holds, d, np.inf).min(axis=1)
    good[~np.asarray(in_domain)] = np.inf
    return GateInputs(tuple(query_ids), np.asarray(in_domain, dtype=bool), first, good, keep,
                      tuple(groups) if groups is not None else (), tuple(kinds) if kinds is not None else ())


def default_cuts(step: float = 0.005) -> np.ndarray:
    """Cuts from 0 to 1 (cosine distances of unit vectors that matter lie in [0, 1])."""
    return np.round(np.arange(0.0, 1.0 + step / 2, step), 6)


@dataclass(frozen=True)
class SweepTable:
    """Counts per cut. In-domain: answered + kept_wrong + refused == n_in; ood: bluffs + ood_refused == n_ood."""

    cuts: np.ndarray
    answered: np.ndarray
    kept_wrong: np.ndarray
    refused: np.ndarray
    bluffs: np.ndarray
    ood_refused: np.ndarray
    n_in: int
    n_ood: int
    bluffs_by_kind: dict = field(default_factory=dict)  # ood kind -> bluffs per cut
    n_by_kind: dict = field(default_factory=dict)  # ood kind -> queries

    def index(self, cut: float) -> int:
        i = int(np.argmin(np.abs(self.cuts - cut)))
        if not np.isclose(self.cuts[i], cut):
            raise ValueError(f"cut {cut} is not in this sweep; use sweep(..., cuts=[{cut}])")
        return i

    def row(self, cut: float) -> dict:
        """Counts at exactly ``cut`` (computed, not looked up)."""
        i = int(np.argmin(np.abs(self.cuts - cut)))
        if not np.isclose(self.cuts[i], cut):
            raise ValueError(f"cut {cut} is not in this sweep; use sweep(..., cuts=[{cut}])")
        return {
            "cut": float(self.cuts[i]),
            "answered": int(self.answered[i]),
            "kept_wrong": int(self.kept_wrong[i]),
            "refused": int(self.refused[i]),
            "lost": int(self.n_in - self.answered[i]),
            "bluffs": int(self.bluffs[i]),
            "ood_refused": int(self.ood_refused[i]),
            **{f"bluffs_{k}": int(v[i]) for k, v in self.bluffs_by_kind.items()},
        }

    def rows(self) -> list[dict]:
        return [self.row(float(c)) for c in self.cuts]


def _count_below(sorted_values: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    # values strictly under each cut
    return np.searchsorted(sorted_values, cuts, side="left")


def sweep(inputs: GateInputs, cuts: Sequence[float] | np.ndarray | None = None) -> SweepTable:
    """Gate outcomes for every cut at once.

    >>> g = GateInputs(("a", "b", "o"), np.array([True, True, False]),
    ...                first=np.array([0.2, 0.3, 0.4]), good=np.array([0.2, np.inf, np.inf]), keep=4)
    >>> t = sweep(g, [0.25, 0.5]); t.answered.tolist(), t.kept_wrong.tolist(), t.bluffs.tolist()
    ([1, 1], [0, 1], [0, 1])
    """
    cuts = default_cuts() if cuts is None else np.asarray(cuts, dtype=np.float64)
    ind = inputs.in_domain
    answered = _count_below(np.sort(inputs.good[ind]), cuts)
    kept_any = _count_below(np.sort(inputs.first[ind]), cuts)
    bluffs = _count_below(np.sort(inputs.first[~ind]), cuts)
    n_in, n_ood = int(ind.sum()), int((~ind).sum())
    kinds = np.array([k or "ood" for k in inputs.kind_of()], dtype=object)
    by_kind, n_by_kind = {}, {}
    if inputs.kinds:
        for kind in ("near", "far", *sorted(set(kinds[~ind].tolist()) - {"near", "far"})):
            sel = ~ind & (kinds == kind)
            by_kind[kind] = _count_below(np.sort(inputs.first[sel]), cuts)
            n_by_kind[kind] = int(sel.sum())
    return SweepTable(
        cuts=cuts,
        answered=answered,
        kept_wrong=kept_any - answered,
        refused=n_in - kept_any,
        bluffs=bluffs,
        ood_refused=n_ood - bluffs,
        n_in=n_in,
        n_ood=n_ood,
        bluffs_by_kind=by_kind,
        n_by_kind=n_by_kind,
    )


def gate(result, query_index: int, *, cut: float, keep: int = DEFAULT_KEEP) -> list[tuple[int, float]]:
    """The chunks the gate keeps for one query: ``[(chunk position, distance)]``, ranked order."""
    order = result.top_order[query_index, :keep]
    dist = result.top_distance[query_index, :keep]
    return [(int(o), float(d)) for o, d in zip(order, dist) if d < cut]


@dataclass(frozen=True)
class Bluff:
    query_id: str
    kind: str | None
    kept: tuple[tuple[int, float], ...]  # (chunk position, distance), closest first


def bluffs_at(result, queries, *, cut: float, keep: int = DEFAULT_KEEP) -> list[Bluff]:
    """Ood queries that still get sources at ``cut``, closest (most dangerous) first."""
    out = []
    for i, q in enumerate(queries):
        if q.in_domain:
            continue
        kept = gate(result, i, cut=cut, keep=keep)
        if kept:
            out.append(Bluff(q.id, q.kind, tuple(sorted(kept, key=lambda x: x[1]))))
    return sorted(out, key=lambda b: b.kept[0][1])


#: The distance the gate uses, named wherever a cut is shown (every retriever: bm25, hybrid and rerank too).
GATE_DISTANCE = ("cosine distance of the dense model's embeddings (1 - cosine similarity), whatever the "
                 "retriever: bm25, hybrid and rerank rankings are gated on the dense model's distance of "
                 "the chunks they rank")


@dataclass(frozen=True)
class DistanceSamples:
    """The gate's own per-query values, the ones the histograms plot (so chart and table agree).

    ``answer``: answerable queries with a chunk holding the answer among the top
    ``keep``, the closest such chunk (under the cut: answered). ``kept``: every
    answerable query, its closest chunk among the top ``keep`` (under the cut:
    something kept). ``ood``: per out-of-domain kind, the closest of the top
    ``keep`` (under the cut: a bluff).
    """

    answer: np.ndarray
    kept: np.ndarray
    ood: dict  # kind -> distances

    def under(self, cut: float) -> dict:
        """Counts strictly under ``cut`` per series (the gate keeps ``d < cut``)."""
        out = {"answer": int((self.answer < cut).sum()), "kept": int((self.kept < cut).sum())}
        out.update({k: int((v < cut).sum()) for k, v in self.ood.items()})
        return out


def distance_samples(inputs: GateInputs) -> DistanceSamples:
    """The values the gate compares with the cut, per population (see :class:`DistanceSamples`)."""
    ind = inputs.in_domain
    good = inputs.good[ind]
    kinds = np.array([k or "ood" for k in inputs.kind_of()], dtype=object)
    ood = {}
    for kind in dict.fromkeys(kinds[~ind].tolist()):
        ood[str(kind)] = inputs.first[~ind & (kinds == kind)]
    return DistanceSamples(good[np.isfinite(good)], inputs.first[ind], ood)


# ---------------------------------------------------------------------------
# rates with intervals, and a cut chosen by a written rule
# ---------------------------------------------------------------------------

OUTCOME_KEYS = ("answered", "kept_wrong", "refused", "bluffs", "bluffs_near", "bluffs_far")


def _rate_cell(iv) -> dict:
    return {"count": int(iv.successes), "rate": None if iv.trials == 0 else float(iv.estimate),
            "low": float(iv.low), "high": float(iv.high)}


def _answerable_cells(inputs: GateInputs, answered: np.ndarray, kept: np.ndarray) -> dict[str, list]:
    """Answered / kept_wrong / refused intervals over questions, from per-(row, answerable query) masks."""
    from .compare import clustered_wilson, question_groups
    from .stats import Interval

    ind = inputs.in_domain
    groups = question_groups([g for g, i in zip(inputs.group_ids(), ind) if i])
    n_g = int(groups.max()) + 1 if groups.size else 0
    sizes = np.bincount(groups, minlength=n_g) if n_g else np.zeros(0)
    onehot = (groups[:, None] == np.arange(n_g)[None, :]).astype(np.float64)  # (queries, questions)
    cells: dict[str, list] = {}
    for name, mask in (("answered", answered), ("kept_wrong", kept & ~answered), ("refused", ~kept)):
        counts = mask.sum(axis=1)
        if n_g:
            est, low, high = clustered_wilson(mask.astype(np.float64) @ onehot, sizes)
            cells[name] = [Interval(float(e), float(lo), float(hi), int(c), int(ind.sum()))
                           for e, lo, hi, c in zip(est, low, high, counts)]
        else:
            cells[name] = [Interval(float("nan"), 0.0, 1.0, 0, 0) for _ in counts]
    return cells


def rate_rows(inputs: GateInputs, cuts: Sequence[float] | np.ndarray) -> list[dict]:
    """Per cut: ``{count, rate, low, high}`` for answered, kept_wrong, refused, bluffs, bluffs_near, bluffs_far.

    Answerable rates are over answerable queries with the clustered Wilson
    interval (a question's phrasings are one unit: :func:`ragdiag.compare.clustered_wilson`);
    out-of-domain rates are over out-of-domain queries (each its own unit) with
    Wilson's interval and the exact bound at 0 events (:func:`ragdiag.compare.rate_interval`).
    """
    from .compare import rate_interval

    cuts = np.asarray(cuts, dtype=np.float64)
    ind = inputs.in_domain
    first_in, good_in = inputs.first[ind], inputs.good[ind]
    answered = good_in[None, :] < cuts[:, None]  # (cuts, answerable queries)
    kept = first_in[None, :] < cuts[:, None]
    cells = _answerable_cells(inputs, answered, kept)
    kinds = np.array([k or "ood" for k in inputs.kind_of()], dtype=object)
    for name, sel in (("bluffs", ~ind), ("bluffs_near", ~ind & (kinds == "near")), ("bluffs_far", ~ind & (kinds == "far"))):
        vals = inputs.first[sel]
        n = int(sel.sum())
        cells[name] = [rate_interval(int((vals < c).sum()), n) for c in cuts]
    return [{"cut": float(c), **{k: _rate_cell(cells[k][i]) for k in OUTCOME_KEYS}} for i, c in enumerate(cuts)]


@dataclass(frozen=True)
class Goal:
    """What the cut must achieve: a bluff rate of at most ``max_bluff``, or answered at least ``min_answered``."""

    max_bluff: float | None = None
    min_answered: float | None = None

    def __post_init__(self):
        if (self.max_bluff is None) == (self.min_answered is None):
            raise ValueError("state exactly one goal: max_bluff (e.g. 0.05) or min_answered (e.g. 0.5)")
        for name in ("max_bluff", "min_answered"):
            v = getattr(self, name)
            if v is not None and not (np.isfinite(v) and 0 <= v <= 1):
                raise ValueError(f"{name} must be a rate in [0, 1], got {v}")

    @property
    def rule(self) -> str:
        if self.max_bluff is not None:
            return (f"the largest cut at which at most {self.max_bluff:.1%} of the out-of-domain queries bluff "
                    "(in this set): the most answers the bluff budget allows")
        return (f"the smallest cut at which at least {self.min_answered:.1%} of the answerable queries are "
                "answered (in this set): the fewest bluffs that reach the goal")


#: Used for a cut that nothing can reach past: cosine distances of unit vectors lie in [0, 2].
MAX_DISTANCE = 2.0


def choose_cut(inputs: GateInputs, goal: Goal) -> float | None:
    """The cut :attr:`Goal.rule` gives on ``inputs`` (``None``: no cut reaches the goal).

    Exact, not on a grid: with ``m = floor(a * n_ood)`` bluffs allowed the cut is
    the ``(m+1)``-th smallest out-of-domain distance (the gate keeps ``d < cut``,
    so that query and all above it are refused); for ``min_answered = b`` it is
    just above the ``ceil(b * n_in)``-th smallest answer distance.

    >>> g = GateInputs(("a", "b", "o1", "o2"), np.array([True, True, False, False]),
    ...                first=np.array([0.2, 0.3, 0.4, 0.5]), good=np.array([0.2, 0.35, np.inf, np.inf]), keep=4)
    >>> choose_cut(g, Goal(max_bluff=0.5)), choose_cut(g, Goal(max_bluff=0.0))
    (0.5, 0.4)
    """
    ind = inputs.in_domain
    if goal.max_bluff is not None:
        ood = np.sort(inputs.first[~ind])
        m = int(np.floor(goal.max_bluff * ood.size + 1e-12))
        return float(ood[m]) if m < ood.size else MAX_DISTANCE
    good = np.sort(inputs.good[ind])
    r = int(np.ceil(goal.min_answered * good.size - 1e-12))
    if r == 0:
        return 0.0
    if r > np.isfinite(good).sum():
        return None
    return float(np.nextafter(good[r - 1], np.inf))


def conformal_cut(inputs: GateInputs, max_bluff: float) -> tuple[float | None, str]:
    """Split-conformal cut: a new out-of-domain query exchangeable with these bluffs with probability <= ``max_bluff``.

    With the ``n`` out-of-domain distances sorted, ``s_(1) <= ... <= s_(n)``, and
    ``j = floor(a (n + 1))``, the cut ``s_(j)`` keeps a new query (``d < s_(j)``)
    only when it ranks among the ``j`` smallest of the ``n + 1``, which has
    probability at most ``j / (n + 1) <= a`` (marginally over the set and the
    new query). When ``j = 0`` (fewer than ``1/a - 1`` out-of-domain queries) no
    cut above 0 can be certified.

    References
    ----------
    .. [1] V. Vovk, A. Gammerman, G. Shafer, *Algorithmic Learning in a Random World* (2005).
    .. [2] A. Angelopoulos, S. Bates, "A gentle introduction to conformal prediction", arXiv:2107.07511.

    >>> g = GateInputs(tuple("abcdefghij"), np.zeros(10, bool), first=np.arange(1, 11) / 10, good=np.full(10, np.inf), keep=4)
    >>> conformal_cut(g, 0.1)
    (0.1, 'the 1st smallest of 10 out-of-domain distances: P(a new one bluffs) <= 1/11 <= 10.0%')
    >>> conformal_cut(g, 0.05)[0] is None
    True
    """
    ood = np.sort(inputs.first[~inputs.in_domain])
    n = ood.size
    j = int(np.floor(max_bluff * (n + 1) + 1e-12))
    if j == 0:
        need = int(np.ceil(1 / max_bluff - 1)) if max_bluff > 0 else None
        why = (f"cannot certify a bluff rate of {max_bluff:.1%} with {n} out-of-domain queries: it takes at least "
               + (f"{need} (1/a - 1)" if need is not None else "infinitely many (a = 0)"))
        return None, why
    j = min(j, n)
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(j if j < 20 else j % 10, "th")
    return float(ood[j - 1]), (f"the {j}{suffix} smallest of {n} out-of-domain distances: P(a new one bluffs) "
                               f"<= {j}/{n + 1} <= {max_bluff:.1%}")


def _folds(inputs: GateInputs, n_folds: int, seed: int) -> np.ndarray:
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


def _subset(inputs: GateInputs, sel: np.ndarray) -> GateInputs:
    idx = np.flatnonzero(sel)
    pick = lambda t: tuple(t[i] for i in idx) if t else ()  # noqa: E731
    return GateInputs(pick(inputs.query_ids), inputs.in_domain[sel], inputs.first[sel], inputs.good[sel],
                      inputs.keep, pick(inputs.groups), pick(inputs.kinds))


@dataclass(frozen=True)
class CutChoice:
    """A cut chosen by a written rule, with in-sample, cross-validated and conformal figures."""

    goal: Goal
    rule: str
    cut: float | None
    in_sample: dict | None  # rate_rows cell at the cut
    cross_validated: dict  # pooled held-out counts and rates over the folds
    fold_cuts: tuple
    conformal_cut: float | None
    conformal: str
    n_in: int
    n_ood: int
    folds: int
    seed: int

    def as_json(self) -> dict:
        return {"goal": {"max_bluff": self.goal.max_bluff, "min_answered": self.goal.min_answered},
                "rule": self.rule, "cut": self.cut, "in_sample": self.in_sample,
                "cross_validated": self.cross_validated,
                "cross_validation": {"folds": self.folds, "grouped_by": "question", "seed": self.seed,
                                     "fold_cuts": list(self.fold_cuts)},
                "conformal_cut": self.conformal_cut, "conformal": self.conformal,
                "distance": GATE_DISTANCE, "answerable": self.n_in, "out_of_domain": self.n_ood}


def cross_validate(inputs: GateInputs, goal: Goal, *, folds: int = 5, seed: int | None = None) -> tuple[dict, tuple]:
    """Question-grouped ``folds``-fold estimate of what the rule's cut does to queries it was not chosen on.

    Each fold's cut is chosen by :func:`choose_cut` on the other folds and
    applied to the fold; the held-out outcomes are pooled over the folds.
    Returns (``{outcome: {count, rate, low, high}}``, the fold cuts).
    """
    from .compare import rate_interval
    from .defaults import SEED

    seed = SEED if seed is None else seed
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
        answered[test] = inputs.good[test] < cut
        kept[test] = inputs.first[test] < cut
    cells = _answerable_cells(inputs, answered[ind][None, :], kept[ind][None, :])
    out = {k: _rate_cell(v[0]) for k, v in cells.items()}
    out["bluffs"] = _rate_cell(rate_interval(int(kept[~ind].sum()), int((~ind).sum())))
    return out, tuple(cuts)


def cut_choice(inputs: GateInputs, goal: Goal, *, folds: int = 5, seed: int | None = None) -> CutChoice:
    """Choose a cut for ``goal`` and report it in sample, cross-validated and (bluff goals) conformal."""
    from .defaults import SEED

    seed = SEED if seed is None else seed
    cut = choose_cut(inputs, goal)
    in_sample = None if cut is None else rate_rows(inputs, [cut])[0]
    cv, fold_cuts = cross_validate(inputs, goal, folds=folds, seed=seed)
    if goal.max_bluff is not None:
        c_cut, c_text = conformal_cut(inputs, goal.max_bluff)
    else:
        c_cut, c_text = None, "a conformal cut certifies a bluff rate: state the goal as --max-bluff"
    return CutChoice(goal, goal.rule, cut, in_sample, cv, fold_cuts, c_cut, c_text,
                     int(inputs.in_domain.sum()), int((~inputs.in_domain).sum()), folds, seed)
