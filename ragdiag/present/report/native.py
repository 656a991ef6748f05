"""The report on the ranking's own score (``score="native"``): the cut, its words and the sections read at it.

The report's sections are computed by the distance gate's code (``sweep``, ``rate_rows``, the outcome ladder). On
a native score they read the adapted gate table of
:func:`ragdiag.analyses.threshold.native_current.as_gate_table`: the scores mapped by rank onto distances so that
``d < mapped cut`` holds exactly when ``score >= cut``. Every count of the report is therefore the count had by
cutting the raw scores by hand; only the words and the chart's axis are in the score's units, never the mapped
distances.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...analyses.gate_table import GateTable
from ...analyses.threshold.score import SCORE_SPACES, ScoreTable
from ...core.words import cut_as_given

__all__ = ["NativeCut", "native_cut", "native_table", "SCORES", "DENSE", "NATIVE"]

#: The scores a report can be read on: the dense model's cosine distance (default) or the ranking's own.
SCORES = SCORE_SPACES
DENSE, NATIVE = SCORE_SPACES


@dataclass(frozen=True)
class NativeCut:
    """The report's cut on the ranking's own score (a passage among the top ``keep`` is given when its score is at
    least ``cut``), with the proposed one for the goal and how it was had."""

    config: str
    score: str  # in words, e.g. "MaxSim score (the reranker's)"
    unit: str  # "score", "logit", "sigmoid"
    cut: float
    proposed: float | None  # the cut proposed for the bluff goal on this score (None: none can be)
    method: str  # "conformal", "in sample (optimistic)" or "named"
    guarantee: str
    filter: str  # how a team applies it: "filter the reranker's MaxSim score at 13.39, higher keeps"

    @property
    def short(self) -> str:
        """The score's name without its gloss ("MaxSim score")."""
        return self.score.split(" (")[0]

    @property
    def text(self) -> str:
        """The cut as the report writes it: ``"MaxSim score ≥ 13.39"``."""
        return f"{self.short} ≥ {cut_as_given(self.cut)}"

    def means(self) -> str:
        """What the cut reads, in one sentence (the appendix's note beside the trade-off table)."""
        return (f"the {self.score} ({self.unit}) of each of the top passages, as the ranking itself gives it; a "
                f"passage is given when its score is at least the cut (higher keeps), so a higher cut refuses more")


def native_cut(table: ScoreTable, max_bluff: float, cut: float | None = None) -> NativeCut:
    """The report's cut on ``table``'s score: ``cut`` when named (any finite number in the score's units), else the
    one proposed for at most ``max_bluff`` bluffs (:func:`~ragdiag.analyses.threshold.score.score_cut`).

    Raises ``ValueError`` for a cut that is not a finite number, or when no cut can be proposed on this score
    (the reason in words).
    """
    from ...analyses.threshold.native_cuts import filter_words
    from ...analyses.threshold.score import score_cut

    choice = score_cut(table, max_bluff)
    if cut is None:
        if choice.cut is None:
            raise ValueError(f"no cut on the {table.score} of {table.config}: {choice.guarantee}")
        value, method = choice.cut, choice.method
    else:
        value = float(cut)
        if not math.isfinite(value):
            raise ValueError(f"the cut on the native score must be a finite number, got {cut!r}")
        method = choice.method if choice.cut is not None and value == choice.cut else "named"
    return NativeCut(table.config, table.score, table.unit, value, choice.cut, method,
                     choice.guarantee if method == choice.method else "", filter_words(value, table))


def native_table(dense: GateTable, table: ScoreTable, cut: NativeCut, gate):
    """The report's gate table on the native score, its gate and the trade-off curve over the score's own stops.

    ``dense`` is the configuration's gate table at ``gate``'s keep (its ranks, destroyed and truncated needles:
    none depends on the cut); its distances are replaced by the rank distances of ``table``'s scores, one ladder
    with the report's cut and every stop of the curve, and its outcomes recomputed at the mapped cut. The
    curve's cuts are in the score's units; each of its counts is the count at ``score >= stop``.
    """
    from dataclasses import replace

    from ...analyses.gate_table import _codes
    from ...analyses.outcomes import OUTCOMES
    from ...analyses.threshold.gate import sweep
    from ...analyses.threshold.native_cuts import _candidates
    from ...analyses.threshold.native_current import rank_distances
    from .gate import Curve

    if tuple(dense.query_ids) != tuple(table.query_ids) or dense.window != table.window:
        raise ValueError(f"{table.config}: the native scores and the gate table do not cover the same queries")
    stops = sorted({float(c) for c in _candidates(table) if np.isfinite(c)}
                   | {cut.cut} | ({cut.proposed} if cut.proposed is not None else set()))
    (pair,), mapped = rank_distances([table], [cut.cut, *stops])
    at = gate.with_cut(mapped[0])
    g = replace(dense, closest=pair[0], closest_holder=pair[1], gate=at, top_distance=None, kept=None,
                needle_distance=None)
    g = replace(g, outcome=tuple(OUTCOMES[c] for c in _codes(g, at)) if dense.outcome else ())
    t = sweep(g, list(mapped[1:]))
    curve = Curve(tuple(stops), tuple(int(v) for v in t.answered), tuple(int(v) for v in t.wrong_sources),
                  tuple(int(v) for v in t.no_answer), tuple(int(v) for v in t.bluffs))
    return g, at, curve
