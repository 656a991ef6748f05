"""Abstention: a distance gate, the sweep of its cut, its rates with intervals, and a cut chosen for a goal.

- :mod:`.gate` -- :func:`sweep` (:class:`SweepTable`) of a :class:`~ragdiag.analyses.gate_table.GateTable`,
  :func:`bluffs_at`, :func:`kept_chunks`, and the sweep of an evaluation's configuration (:func:`sweep_table`,
  :func:`check_cuts`, :func:`sweep_cuts`).
- :mod:`.rates` -- :func:`rate_rows`: every outcome's rate with its 95% interval at each cut.
- :mod:`.choice` -- :func:`cut_choice`: the cut a :class:`Goal` gives, in sample, cross-validated and conformal.
- :mod:`.score` -- a cut in the ranking's own score (BM25, RRF fused, MaxSim, cross-encoder), higher keeps, and
  its export with the score's stamp (``threshold --score native``).
- :mod:`.separation` -- the AUROC of the gate's score against off-topic queries (near, far) with its interval
  over questions, and whether a bluff goal and an answered goal can be met together.
- :mod:`.native_current` -- the cut a team runs today on a native score (``--score native --current`` /
  ``--current-from``, refused when stamped for another reranker, score or model), and the adapter that reads a
  native score through the distance gate's score-agnostic rate code.

The slices of a cut (each slice's own cut, one verdict for all) are :mod:`ragdiag.analyses.slice_cuts`; on a
native score, :mod:`ragdiag.analyses.native_slice_cuts`.
"""

from __future__ import annotations

from . import gate as _gate, rates as _rates, choice as _choice
from .gate import (
    GATE_DISTANCE,
    MAX_DISTANCE,
    MAX_SWEEP_ROWS,
    Bluff,
    DistanceSamples,
    SweepTable,
    bluffs_at,
    check_cuts,
    default_cuts,
    distance_samples,
    kept_chunks,
    sweep,
    sweep_cuts,
    sweep_table,
)
from .rates import OUTCOME_KEYS, rate_rows, rates_at
from .choice import (IN_SAMPLE, NO_OOD, NO_OOD_METHOD, PROPOSED, CutChoice, Goal, Proposal, choose_cut, conformal_cut,
                     conformal_guarantee, cross_validate, propose_cut,
                     cut_choice, exceed_chance, in_sample_words)

__all__ = [*_gate.__all__, *_rates.__all__, *_choice.__all__]
