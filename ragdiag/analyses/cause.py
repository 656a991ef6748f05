"""Why a query failed, as the change that alone would fix it: the binding cause, not the first rung of the ladder.

The ladder (:mod:`ragdiag.analyses.outcomes`) names the *first* place a query's
answer went missing. That is not always what to fix: an answer ranked 7th whose
passage sits at distance 0.648 under a cut of 0.524 stays unanswered when ranked
first, because the cut refuses it anyway. :func:`causes` asks, for each failed
query of one configuration at one :class:`~ragdiag.core.gate.Gate`, which single
change answers it, and checks each by re-applying the gate's own rule
(:meth:`Gate.kept`) to the changed ranking:

* ``cut``: a less strict cut alone answers it (a passage holding the answer is in
  the window, over the cut); ``answer_cut`` is the smallest printed cut that does;
* ``ranking``: ranking the best passage holding the answer first alone answers it
  (its distance is under the cut);
* ``both``: neither alone does (the answer is ranked too low *and* too far): it
  needs a better ranking and a less strict cut;
* ``chunking``: no passage holds the answer whole (no ranking or cut can help).

A query whose passages are all cut by the model's length limit before the
answer (the ladder's ``truncated``) gets one of the first three: the limit
explains why it ranks low, the cause says what alone would answer it.

An off-topic query that still gets passages (a bluff) has cause ``cut``: the
largest printed cut that refuses it is ``answer_cut``. ``answered_by`` lists the
other configurations that answer the query (or refuse the off-topic one) at the
same gate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..core.gate import CUT_DECIMALS, MAX_CUT, Gate, cut_text
from .gate_table import GateTable, gate_table

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation.records import Evaluation

__all__ = ["Cause", "causes", "CAUSES", "lower_cut_to_refuse", "higher_cut_to_answer"]

#: Every binding cause, in the order a failures table groups them.
CAUSES = ("cut", "ranking", "both", "chunking")


@dataclass(frozen=True)
class Cause:
    """The binding cause of one query's failure under one configuration and gate (see the module notes)."""

    query_id: str
    outcome: str  # the ladder's rung (or bluff)
    cause: str  # one of CAUSES
    answer_cut: float | None  # cut: the printed cut that answers (or, for a bluff, refuses) it
    rank: int | None  # the best holder's rank (None: not ranked, off-topic)
    answer_distance: float | None  # the best holder's distance (None: no holder, off-topic)
    answered_by: tuple[str, ...] = ()  # other configurations that answer (refuse) it at the same gate


def higher_cut_to_answer(distance: float) -> float | None:
    """The smallest printed cut (3 decimals) strictly over ``distance``: the gate keeps a passage at ``distance``.

    >>> higher_cut_to_answer(0.6481), higher_cut_to_answer(0.648)
    (0.649, 0.649)
    """
    step = 10.0 ** -CUT_DECIMALS
    c = round(math.floor(distance / step + 1e-9) * step + step, CUT_DECIMALS)
    return c if c <= MAX_CUT else None


def lower_cut_to_refuse(distance: float) -> float:
    """The largest printed cut at or under ``distance``: the gate refuses a passage at ``distance``.

    >>> lower_cut_to_refuse(0.5249)
    0.524
    """
    return float(cut_text(distance))


def _ranked_first_answers(table: GateTable, i: int, gate: Gate) -> bool:
    """Whether moving the best passage holding the answer to rank 1 answers query ``i`` (the gate's own rule)."""
    nd = float(table.needle_distance[i])
    if not np.isfinite(nd):
        return False
    return bool(gate.kept(np.array([[nd]]))[0, 0])


def causes(ev: Evaluation, config: str, gate: Gate, *, others: Sequence[str] | None = None) -> tuple[Cause, ...]:
    """The binding cause of every failed query of ``config`` at ``gate`` (answerable not answered, and bluffs).

    ``others``: the configurations whose outcome is checked for ``answered_by``
    (default: every ragdiag configuration of ``ev`` but ``config``).
    """
    table = gate_table(ev, config, gate)
    if not table.outcome:
        raise ValueError(f"{config} has no ladder (an external run): its causes cannot be told")
    if others is None:
        others = [c.label for c in ev.results if not c.external and c.label != config]
    other_out = {o: gate_table(ev, o, gate).outcome for o in others}
    out = []
    for i, qid in enumerate(table.query_ids):
        rung = table.outcome[i]
        if rung in ("answered", "abstained"):
            continue
        rank = int(table.needle_rank[i]) or None
        nd = float(table.needle_distance[i])
        good = "answered" if table.in_domain[i] else "abstained"
        by = tuple(o for o, oc in other_out.items() if oc[i] == good)
        if rung == "bluff":
            out.append(Cause(qid, rung, "cut", lower_cut_to_refuse(float(table.closest[i])), None, None, by))
            continue
        holder = float(table.closest_holder[i])
        if rung == "destroyed":
            cause, answer_cut = "chunking", None
        elif np.isfinite(holder):  # a holder is in the window, over the cut: a less strict cut alone answers it
            cause, answer_cut = "cut", higher_cut_to_answer(holder)
        elif _ranked_first_answers(table, i, gate):
            cause, answer_cut = "ranking", None
        else:
            cause, answer_cut = "both", higher_cut_to_answer(nd) if np.isfinite(nd) else None
        out.append(Cause(qid, rung, cause, answer_cut, rank, nd if np.isfinite(nd) else None, by))
    return tuple(out)
