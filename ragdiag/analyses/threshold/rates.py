"""Gate rates with 95% intervals at each cut (answerable rates over questions, ood rates Wilson)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..compare.intervals import clustered_wilson, rate_interval
from ..compare.paired import question_groups
from ...evaluation.rows import OUTCOME_KEYS, RateCell, RateRow
from ...core.gate import under_each
from ...core.stats import Interval
from ..gate_table import GateTable

__all__ = ["OUTCOME_KEYS", "rate_rows", "rates_at"]


def _answerable_cells(inputs: GateTable, answered: np.ndarray, kept: np.ndarray) -> dict[str, list]:
    """Answered / wrong_sources / no_answer intervals over questions, from per-(row, answerable query) masks."""
    ind = inputs.in_domain
    groups = question_groups([g for g, i in zip(inputs.group_ids(), ind) if i])
    n_g = int(groups.max()) + 1 if groups.size else 0
    sizes = np.bincount(groups, minlength=n_g) if n_g else np.zeros(0)
    onehot = (groups[:, None] == np.arange(n_g)[None, :]).astype(np.float64)  # (queries, questions)
    cells: dict[str, list] = {}
    for name, mask in (("answered", answered), ("wrong_sources", kept & ~answered), ("no_answer", ~kept)):
        counts = mask.sum(axis=1)
        if n_g:
            est, low, high = clustered_wilson(mask.astype(np.float64) @ onehot, sizes)
            cells[name] = [Interval(float(e), float(lo), float(hi), int(c), int(ind.sum()))
                           for e, lo, hi, c in zip(est, low, high, counts)]
        else:
            cells[name] = [Interval(float("nan"), 0.0, 1.0, 0, 0) for _ in counts]
    return cells


def rate_rows(inputs: GateTable, cuts: Sequence[float] | np.ndarray) -> list[RateRow]:
    """Per cut, a :class:`~ragdiag.evaluation.rows.RateRow`: count, rate and 95% interval of every outcome.

    Answerable rates are over answerable queries with the clustered Wilson
    interval (a question's phrasings are one unit: :func:`ragdiag.analyses.compare.clustered_wilson`);
    out-of-domain rates are over out-of-domain queries (each its own unit) with
    Wilson's interval and the exact bound at 0 events (:func:`ragdiag.analyses.compare.rate_interval`).

    Examples
    --------
    >>> g = GateTable(("a", "b", "o"), np.array([True, True, False]),
    ...                closest=np.array([0.2, 0.3, 0.4]), closest_holder=np.array([0.2, np.inf, np.inf]), window=4)
    >>> r = rate_rows(g, [0.5])[0]
    >>> r.answered.count, r.answered.rate, r.wrong_sources.count, r.bluffs.count, r.bluffs.rate
    (1, 0.5, 1, 1, 1.0)
    >>> round(r.bluffs.low, 3)  # 1 of 1: the exact lower bound 0.025 ** (1 / 1)
    0.025
    """
    cuts = np.asarray(cuts, dtype=np.float64)
    ind = inputs.in_domain
    answered = under_each(inputs.closest_holder[ind], cuts)  # (cuts, answerable queries)
    kept = under_each(inputs.closest[ind], cuts)
    cells = _answerable_cells(inputs, answered, kept)
    kinds = np.array([k or "ood" for k in inputs.kind_of()], dtype=object)
    for name, sel in (("bluffs", ~ind), ("bluffs_near", ~ind & (kinds == "near")), ("bluffs_far", ~ind & (kinds == "far"))):
        vals = inputs.closest[sel]
        n = int(sel.sum())
        cells[name] = [rate_interval(int(c), n) for c in under_each(vals, cuts).sum(axis=1)]
    return [RateRow(float(c), **{k: RateCell.of(cells[k][i]) for k in OUTCOME_KEYS}) for i, c in enumerate(cuts)]


def rates_at(table: GateTable, cut: float | None = None) -> dict[str, RateCell]:
    """Answered, bluffs and lost at one cut (default the table's gate's), each with its interval: the three
    cards every surface shows, the history's measures and the decided pipeline's rates (one function).

    ``lost`` is every answerable query not answered (``1 - answered``, over
    questions with the clustered interval), whatever its rung.

    >>> g = GateTable(("a", "b", "o"), np.array([True, True, False]),
    ...               closest=np.array([0.2, 0.3, 0.4]), closest_holder=np.array([0.2, np.inf, np.inf]), window=4)
    >>> r = rates_at(g, 0.5)
    >>> r["answered"].count, r["lost"].count, r["bluffs"].count
    (1, 1, 1)
    """
    from ..compare.intervals import clustered_rate

    cut = table._gate(cut).cut
    row = rate_rows(table, [cut])[0]
    ind = table.in_domain
    groups = [g for g, i in zip(table.group_ids(), ind) if i]
    lost = ~table.answered(cut)[ind]
    return {"answered": row.answered, "bluffs": row.bluffs, "lost": RateCell.of(clustered_rate(lost, groups))}
