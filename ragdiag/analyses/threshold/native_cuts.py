"""The in-sample, cross-validated and cost cuts on a native score (``threshold --score native``).

The distance gate's cut chooser (:mod:`ragdiag.analyses.threshold.choice`,
:func:`ragdiag.analyses.threshold.proposal.cost_cut`) writes its cuts on a
grid of cosine distances; a native score has no such range. The rules are
redone here in the score's own units, kept when ``score >= cut``, every cut a
number of 4 significant digits (:func:`ragdiag.analyses.threshold.score.above`):

* **in sample**, for at most ``a`` bluffs: with the off-topic queries' best
  scores sorted from the top and ``m = floor(a n)``, the cut just above the
  ``(m + 1)``-th (so at most ``m`` are kept; all kept when ``m = n``);
* **cross-validated**: the question-grouped folds of the distance gate (the
  same assignment, :func:`ragdiag.analyses.threshold.choice._folds`), each
  fold's in-sample cut chosen on the other folds and applied to it, the
  held-out outcomes pooled (answered over questions with the clustered Wilson
  interval, bluffs over off-topic queries);
* **cost**, a bluff costing ``N`` lost answers: among the cuts just above each
  score (and the one just under the lowest, which keeps all), the one
  minimising ``N x bluffs + lost`` over the ground truth's queries, the highest
  on ties (the fewest bluffs among equals); its bluff bound is the DKW band of
  :func:`ragdiag.analyses.threshold.proposal.cost_bound` (the cut is chosen on
  these queries), and it is cross-validated over the same folds.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.goal import Goal, allowed
from ...evaluation.rows import RateCell
from .score import ScoreTable, above
from ...core.words import cut_as_given

__all__ = ["below", "sub_table", "filter_words", "SCORE_PHRASES", "in_sample_cut", "native_cross_validated", "native_cost_cut"]


def below(x: float) -> float:
    """The largest number with 4 significant digits strictly below ``x``.

    >>> below(13.58), below(0.0164)
    (13.57, 0.01639)
    """
    return -above(-x)


def sub_table(table: ScoreTable, member: np.ndarray) -> ScoreTable:
    """The rows of ``table`` where ``member`` holds."""
    from dataclasses import replace

    idx = np.flatnonzero(member)
    pick = lambda xs: tuple(xs[i] for i in idx) if xs else ()  # noqa: E731
    return replace(table, query_ids=pick(table.query_ids), in_domain=table.in_domain[idx], groups=pick(table.groups),
                   top=table.top[idx], holder=table.holder[idx], kinds=pick(table.kinds))


def _kept(scores: np.ndarray, cut: float) -> np.ndarray:
    """``score >= cut`` for a scored chunk (``-inf``, none, is never kept)."""
    return np.isfinite(scores) & (scores >= cut)


def in_sample_cut(table: ScoreTable, max_bluff: float) -> float:
    """The in-sample cut for at most ``max_bluff`` bluffs (the module's rule); ``ValueError`` without off-topic
    queries (a bluff rate cannot be measured).

    >>> t = ScoreTable("E/bm25", "BM25 score", "score", ("a", "o1", "o2"), np.array([True, False, False]),
    ...                ("a", "o1", "o2"), top=np.array([9.0, 7.5, 3.25]), holder=np.array([9.0, -np.inf, -np.inf]),
    ...                window=4)
    >>> in_sample_cut(t, 0.5), in_sample_cut(t, 0.1)  # one of two may bluff; none may
    (3.251, 7.501)
    """
    ood = np.sort(table.top[~table.in_domain])[::-1]
    if not ood.size:
        raise ValueError("no off-topic queries: a bluff rate cannot be measured")
    m = allowed(max_bluff, ood.size)
    finite = table.top[np.isfinite(table.top)]
    if m >= ood.size or not np.isfinite(ood[m]):  # every off-topic query may bluff: the cut keeps everything scored
        return below(float(finite.min())) if finite.size else -math.inf
    return above(float(ood[m]))


def _cells(table: ScoreTable, answered: np.ndarray, kept: np.ndarray) -> dict[str, RateCell]:
    from ..compare.intervals import rate_interval
    from .native_current import as_gate_table
    from .rates import _answerable_cells

    ind = table.in_domain
    cells = _answerable_cells(as_gate_table(table, [])[0], answered[ind][None, :], kept[ind][None, :])
    out = {k: RateCell.of(v[0]) for k, v in cells.items()}
    out["bluffs"] = RateCell.of(rate_interval(int(kept[~ind].sum()), int((~ind).sum())))
    return out


def _fold_of(table: ScoreTable, folds: int, seed: int) -> np.ndarray:
    from .choice import _folds
    from .native_current import as_gate_table

    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
    return _folds(as_gate_table(table, [])[0], folds, seed)


def native_cross_validated(table: ScoreTable, max_bluff: float, *, folds: int = 5,
                           seed: int | None = None) -> tuple[dict[str, RateCell], tuple]:
    """The in-sample rule held out over question-grouped folds: (``{outcome: RateCell}``, the fold cuts)."""
    from .choice import SEED

    seed = SEED if seed is None else seed
    n_q = len({g for g, i in zip(table.groups, table.in_domain) if i})
    if n_q < 2:
        raise ValueError(f"cross-validation needs at least 2 answerable questions; this set has {n_q}: there is no "
                         "held-out estimate")
    fold = _fold_of(table, folds, seed)
    answered = np.zeros(table.in_domain.size, dtype=bool)
    kept = np.zeros(table.in_domain.size, dtype=bool)
    cuts = []
    for f in range(folds):
        train, test = fold != f, fold == f
        try:
            cut = in_sample_cut(sub_table(table, train), max_bluff)
        except ValueError:  # no off-topic query to train on: the goal cannot be reached, the gate refuses all
            cuts.append(None)
            continue
        cuts.append(cut)
        answered[test] = _kept(table.holder, cut)[test]
        kept[test] = _kept(table.top, cut)[test]
    return _cells(table, answered, kept), tuple(cuts)


def _candidates(table: ScoreTable) -> np.ndarray:
    values = np.concatenate([table.top, table.holder])
    values = np.unique(values[np.isfinite(values)])
    if not values.size:
        return np.array([math.inf])
    return np.unique([below(float(values[0]))] + [above(float(v)) for v in values])


def _best_cost(table: ScoreTable, bluff_cost: float) -> tuple[float, float]:
    cuts = _candidates(table)
    ind = table.in_domain
    hold, top = table.holder[ind], table.top[~ind]
    answered = (np.isfinite(hold)[None, :] & (hold[None, :] >= cuts[:, None])).sum(axis=1)
    bluffs = (np.isfinite(top)[None, :] & (top[None, :] >= cuts[:, None])).sum(axis=1)
    cost = bluff_cost * bluffs + (ind.sum() - answered)
    i = int(np.flatnonzero(cost == cost.min())[-1])  # the highest such cut: the fewest bluffs among equals
    return float(cuts[i]), float(cost[i])


def native_cost_cut(table: ScoreTable, goal: Goal, *, folds: int = 5, seed: int | None = None):
    """The cost cut on the table's score (the module's rule) for the goal's cost goal, as a
    :class:`~ragdiag.analyses.threshold.proposal.CostChoice` whose ``cut`` is in the score's units.

    >>> t = ScoreTable("E/bm25", "BM25 score", "score", ("a", "b", "o1"), np.array([True, True, False]),
    ...                ("a", "b", "o1"), top=np.array([9.0, 5.0, 7.0]), holder=np.array([9.0, 5.0, -np.inf]),
    ...                window=4)
    >>> cost = lambda c: Goal(max_bluff=0.05, bluff_cost=c)
    >>> native_cost_cut(t, cost(3.0), folds=2).cut, native_cost_cut(t, cost(0.5), folds=2).cut  # one bluff, one answer
    (7.001, 4.999)
    """
    from .choice import SEED
    from .proposal import CostChoice, cost_bound, cost_goal_of, cross_validated, cv_cost
    from .score import rates

    bluff_cost = cost_goal_of(goal)
    seed = SEED if seed is None else seed
    cut, cost = _best_cost(table, bluff_cost)
    r = rates(table, cut)
    ind = table.in_domain
    g, words = cost_bound(int(_kept(table.top[~ind], cut).sum()), int((~ind).sum()))
    answered, kept = cross_validated(_fold_of(table, folds, seed), folds,
                                     lambda train: _best_cost(sub_table(table, train), bluff_cost)[0],
                                     lambda c: _kept(table.holder, c), lambda c: _kept(table.top, c))
    cv = _cells(table, answered, kept)
    return CostChoice(goal, cut, cost, r["answered"], r["bluffs"], r["lost"], g, words, cv,
                      cv_cost(bluff_cost, ind, answered, kept), folds, seed)


#: Each built-in retriever's own score, as a sentence names it ("filter the reranker's MaxSim score at ...").
SCORE_PHRASES = {"dense": "the dense model's cosine similarity", "bm25": "the BM25 score",
                 "hybrid": "the RRF fused score", "rerank-maxsim": "the reranker's MaxSim score",
                 "rerank-ce": "the cross-encoder's logit"}


def filter_words(cut: float, table: ScoreTable | None = None) -> str:
    """How a team applies the cut, in words: on the dense model's cosine distance (``table`` None), or on the
    ranking's own score.

    >>> filter_words(0.524)
    "filter the dense model's cosine distance at 0.524, lower keeps"
    >>> t = ScoreTable("F/rerank-maxsim", "MaxSim score (the reranker's)", "score", (), np.array([], bool), (),
    ...                np.array([]), np.array([]), 4)
    >>> filter_words(13.58, t)
    "filter the reranker's MaxSim score at 13.58, higher keeps"
    """
    from ...core.gate import cut_text

    if table is None:
        return f"filter the dense model's cosine distance at {cut_text(cut)}, lower keeps"
    base = table.config.partition("/")[2].partition("@")[0]
    words = ("the cross-encoder's probability (sigmoid of its logit)" if table.unit == "sigmoid"
             else SCORE_PHRASES.get(base, f"the {table.score}"))
    return f"filter {words} at {cut_as_given(cut)}, higher keeps"
