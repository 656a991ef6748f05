"""One outcome per query: the ladder every surface reads (sweep, rates, funnel, Inspector, report, export).

A pipeline answers a query in two steps: the retriever ranks chunks and hands
its top ``k`` on; the gate keeps at most ``keep`` of those (its top
``Gate.window`` (the smaller of ``k`` and ``keep``)), only the chunks whose cosine distance is under the cut
(strictly under it). An answerable query gets the first rung of :data:`LADDER` that
applies:

1. ``destroyed``: no chunk holds the needle whole (the chunking cut it).
2. ``truncated``: no chunk holding the needle is in the top ``k``, and every
   one of them is cut by the encoder window before the needle ends.
3. ``not-in-pool``: no holder in the top ``k``, and the best holder is not
   among the ``pool`` candidates (:data:`ragdiag.core.defaults.RERANK_HEAD`) of the
   first-stage ranking (a reranker's input; the configuration's own ranking
   otherwise). A BM25 holder that shares no word with the query is not ranked.
4. ``ranked-low``: no holder in the top ``k`` (but in the pool).

   The needle is in the top ``k`` from here on; the gate decides:

5. ``refused``: the gate keeps nothing (every chunk of its top
   ``Gate.window`` (the smaller of ``k`` and ``keep``) is at or over the cut).
6. ``kept-but-wrong``: the gate keeps chunks, none holding the needle (the
   holder is at or over the cut, or ranked between ``keep`` and ``k``).
7. ``answered``: the gate keeps a chunk holding the needle.

An out-of-domain query is a ``bluff`` when the gate keeps anything, else
``abstained`` (:data:`OOD_OUTCOMES`).

``refused`` and ``kept-but-wrong`` are rungs: the needle reached the gate.
What the gate hands over, whatever the rung, is a separate count of the
threshold sweep: ``wrong_sources`` (an answerable query given sources, none
holding the answer: ``kept-but-wrong`` plus the queries lost before the gate
that still get sources) and ``no_answer`` (an answerable query given nothing:
``refused`` plus the queries lost before the gate that get nothing).
:attr:`QueryOutcome.kept` says which for one query.

The rule is written once, on arrays (:func:`ladder_codes`, :func:`gate_values`);
:func:`ragdiag.analyses.gate_table.gate_table` applies it to one configuration of an evaluation, and
the sweep of :mod:`ragdiag.analyses.threshold` counts it over every cut at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..core.gate import Gate, OnGate

__all__ = [
    "LADDER",
    "OOD_OUTCOMES",
    "OUTCOMES",
    "QueryOutcome",
    "gate_values",
    "ladder_codes",
    "outcome_counts",
]

#: The rungs of an answerable query, in pipeline order (a query gets the first that applies).
LADDER = ("destroyed", "truncated", "not-in-pool", "ranked-low", "refused", "kept-but-wrong", "answered")
#: The outcomes of an out-of-domain query: the gate keeps something (``bluff``) or nothing.
OOD_OUTCOMES = ("bluff", "abstained")
#: Every outcome the ladder produces (:data:`LADDER`, then :data:`OOD_OUTCOMES`).
OUTCOMES = LADDER + OOD_OUTCOMES

_CODE = {name: i for i, name in enumerate(OUTCOMES)}


def gate_values(top_distance: np.ndarray, top_holds: np.ndarray, *, gate: Gate) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the two distances the gate compares with the cut, over its window (:meth:`Gate.window`).

    ``closest``: the smallest distance there (the gate keeps something iff
    ``closest`` under the cut); ``closest_holder``: the smallest distance of a chunk
    holding the needle there (answered iff ``closest_holder`` under the cut; ``inf``
    when none does).

    >>> d = np.array([[0.3, 0.2, 0.1], [0.4, 0.5, 0.6]])
    >>> h = np.array([[False, True, True], [False, False, False]])
    >>> [v.tolist() for v in gate_values(d, h, gate=Gate(keep=2))]  # the 0.1 holder is third: not kept
    [[0.2, 0.4], [0.2, inf]]
    >>> [v.tolist() for v in gate_values(d, h, gate=Gate(keep=2, k=1))]  # handed only the top 1
    [[0.3, 0.4], [inf, inf]]
    """
    w = gate.window(top_distance.shape[1])
    d = top_distance[:, :w]
    closest = d.min(axis=1) if w else np.full(len(d), np.inf)
    holder = np.where(top_holds[:, :w], d, np.inf).min(axis=1) if w else np.full(len(d), np.inf)
    return closest, holder


def ladder_codes(*, in_domain: np.ndarray, destroyed: np.ndarray, truncated: np.ndarray,
                 final_rank: np.ndarray, pool_rank: np.ndarray, closest: np.ndarray, closest_holder: np.ndarray,
                 k: int, pool: int, gate: Gate) -> np.ndarray:
    """The outcome of every query as an index into :data:`OUTCOMES` (the rule of the module notes, on arrays).

    ``final_rank`` and ``pool_rank``: 1-based rank of the best chunk holding the
    needle in the final ranking and in the ranking the pool is cut from (0: not
    ranked). ``closest`` and ``closest_holder``: :func:`gate_values` at the same ``gate``.

    >>> codes = ladder_codes(in_domain=np.array([True, True, True, False]),
    ...     destroyed=np.array([False, False, False, False]), truncated=np.array([False, False, False, False]),
    ...     final_rank=np.array([1, 9, 2, 0]), pool_rank=np.array([1, 9, 2, 0]),
    ...     closest=np.array([0.2, 0.3, 0.3, 0.5]), closest_holder=np.array([0.2, np.inf, np.inf, np.inf]),
    ...     k=4, pool=25, gate=Gate(keep=4, cut=0.4))
    >>> [OUTCOMES[c] for c in codes]
    ['answered', 'ranked-low', 'kept-but-wrong', 'abstained']
    """
    in_domain = np.asarray(in_domain, dtype=bool)
    final_rank, pool_rank = np.asarray(final_rank), np.asarray(pool_rank)
    in_top = (final_rank >= 1) & (final_rank <= k)
    in_pool = (pool_rank >= 1) & (pool_rank <= pool)
    kept, answered = gate.under(closest), gate.under(closest_holder)
    conditions = [
        ~in_domain & kept,
        ~in_domain,
        np.asarray(destroyed, dtype=bool),
        ~in_top & np.asarray(truncated, dtype=bool),
        ~in_top & ~in_pool,
        ~in_top,
        answered,
        kept,
    ]
    choices = [_CODE[n] for n in ("bluff", "abstained", "destroyed", "truncated", "not-in-pool", "ranked-low",
                                  "answered", "kept-but-wrong")]
    return np.select(conditions, choices, default=_CODE["refused"])


@dataclass(frozen=True)
class QueryOutcome(OnGate):
    """One query under one configuration at ``gate`` (k, keep, cut): its rung of :data:`LADDER` (or ood outcome).

    ``needle_rank``: of the best chunk holding the needle (None: none ranked;
    ood). ``closest``: the smallest distance in the gate's top ``Gate.window`` (the smaller of ``k`` and ``keep``)
    (something kept iff under ``cut``). ``needle_distance``: the closest
    holder's distance anywhere (None: destroyed, ood). ``kept``: how many
    chunks the gate keeps.
    """

    query_id: str
    question_id: str
    outcome: str
    needle_rank: int | None
    closest: float | None
    needle_distance: float | None
    gate: Gate
    kept: int = 0
    in_domain: bool = True


def outcome_counts(outcomes: Iterable[QueryOutcome | str]) -> dict[str, int]:
    """Queries per outcome, every name of :data:`LADDER` and :data:`OOD_OUTCOMES` present (0 when none).

    >>> outcome_counts(["answered", "bluff", "answered"])["answered"]
    2
    """
    out = dict.fromkeys(OUTCOMES, 0)
    for o in outcomes:
        name = o if isinstance(o, str) else o.outcome
        if name not in out:
            raise ValueError(f"unknown outcome {name!r}; choose from {', '.join(OUTCOMES)}")
        out[name] += 1
    return out
