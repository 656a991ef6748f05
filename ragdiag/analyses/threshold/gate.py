"""Abstention: a distance gate, and the sweep of its cut.

The retriever always returns something; the gate is the only part that can
say no. It keeps at most ``keep`` chunks of the ranked list (its top
``keep``), only those whose cosine distance is under the cut (strictly under it).

For each query two numbers of its gate table decide everything
(:class:`ragdiag.analyses.gate_table.GateTable`):

* ``closest`` - the smallest distance in the gate's window (anything kept iff ``closest`` under the cut);
* ``closest_holder`` - the smallest distance there of a chunk holding the
  needle (answered iff ``closest_holder`` under the cut; ``inf`` when none does, and for ood queries).

So the sweep sorts each once and counts with ``searchsorted``: O((n + m) log n)
for n queries and m cuts. Its counts are those of the outcome ladder of
:mod:`ragdiag.analyses.outcomes` (``answered``, ``bluff``, ``abstained``, and the
gate's rungs ``refused`` / ``kept-but-wrong`` in :attr:`SweepTable.gate_rungs`),
plus what the gate hands an answerable query whatever its rung:
``wrong_sources`` (sources, none holding the answer) and ``no_answer`` (nothing).

This module holds the gate and its sweep; :mod:`.rates` the rates with
intervals; :mod:`.choice` a cut chosen for a stated goal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ...core.gate import MAX_CUT, Gate, check_cut_array, count_under
from ..gate_table import GateTable, gate_table
from ...evaluation.rows import SweepRow

if TYPE_CHECKING:  # pragma: no cover
    from ...evaluation.records import Config, Evaluation

__all__ = [
    "SweepTable",
    "sweep",
    "sweep_table",
    "check_cuts",
    "sweep_cuts",
    "MAX_SWEEP_ROWS",
    "MAX_DISTANCE",
    "kept_chunks",
    "answer_tokens",
    "Bluff",
    "bluffs_at",
    "DistanceSamples",
    "distance_samples",
    "GATE_DISTANCE",
    "default_cuts",
]

#: Used for a cut that nothing can reach past: cosine distances of unit vectors lie in [0, 2].
MAX_DISTANCE = MAX_CUT


def default_cuts(step: float = 0.005) -> np.ndarray:
    """Cuts from 0 to 1 (cosine distances of unit vectors that matter lie in [0, 1])."""
    return np.round(np.arange(0.0, 1.0 + step / 2, step), 6)


@dataclass(frozen=True)
class SweepTable:
    """Counts per cut. Answerable: answered + wrong_sources + no_answer == n_in; ood: bluffs + abstained == n_ood.

    ``wrong_sources``: answerable queries the gate gives sources, none holding
    the answer; ``no_answer``: answerable queries it gives nothing (whatever
    their rung of :data:`ragdiag.analyses.outcomes.LADDER`). ``gate_rungs`` (when the
    inputs know ``k``): per cut the ladder's ``refused``, ``kept-but-wrong`` and
    ``answered`` counts among the ``n_reached`` answerable queries whose
    needle is in the top ``k``.
    """

    cuts: np.ndarray
    answered: np.ndarray
    wrong_sources: np.ndarray
    no_answer: np.ndarray
    bluffs: np.ndarray
    abstained: np.ndarray
    n_in: int
    n_ood: int
    bluffs_by_kind: dict = field(default_factory=dict)  # ood kind -> bluffs per cut
    n_by_kind: dict = field(default_factory=dict)  # ood kind -> queries
    gate_rungs: dict = field(default_factory=dict)  # "refused", "kept-but-wrong", "answered" -> count per cut
    n_reached: int | None = None

    def index(self, cut: float) -> int:
        """Position of ``cut`` in ``cuts`` (``ValueError`` when the sweep did not compute it)."""
        i = int(np.argmin(np.abs(self.cuts - cut)))
        if not np.isclose(self.cuts[i], cut):
            raise ValueError(f"cut {cut} is not in this sweep; use sweep(..., cuts=[{cut}])")
        return i

    def row(self, cut: float) -> SweepRow:
        """Counts at exactly ``cut`` (computed, not looked up); ``ValueError`` for a cut not in the sweep."""
        i = self.index(cut)
        return SweepRow(
            cut=float(self.cuts[i]),
            answered=int(self.answered[i]),
            wrong_sources=int(self.wrong_sources[i]),
            no_answer=int(self.no_answer[i]),
            lost=int(self.n_in - self.answered[i]),
            bluffs=int(self.bluffs[i]),
            abstained=int(self.abstained[i]),
            bluffs_by_kind={k: int(v[i]) for k, v in self.bluffs_by_kind.items()},
        )

    def rows(self) -> list[SweepRow]:
        """One :class:`~ragdiag.evaluation.rows.SweepRow` per cut, in order."""
        return [self.row(float(c)) for c in self.cuts]


def sweep(inputs: GateTable, cuts: Sequence[float] | np.ndarray | None = None) -> SweepTable:
    """Gate outcomes for every cut at once.

    >>> g = GateTable(("a", "b", "o"), np.array([True, True, False]),
    ...                closest=np.array([0.2, 0.3, 0.4]), closest_holder=np.array([0.2, np.inf, np.inf]), window=4)
    >>> t = sweep(g, [0.25, 0.5]); t.answered.tolist(), t.wrong_sources.tolist(), t.bluffs.tolist()
    ([1, 1], [0, 1], [0, 1])
    """
    from ...core.validate import require_type

    require_type(inputs, GateTable, "inputs", hint="make it with ragdiag.analyses.gate_table.gate_table")
    cuts = default_cuts() if cuts is None else check_cuts(cuts)
    ind = inputs.in_domain
    answered = count_under(np.sort(inputs.closest_holder[ind]), cuts)
    kept_any = count_under(np.sort(inputs.closest[ind]), cuts)
    bluffs = count_under(np.sort(inputs.closest[~ind]), cuts)
    n_in, n_ood = int(ind.sum()), int((~ind).sum())
    kinds = np.array([k or "ood" for k in inputs.kind_of()], dtype=object)
    by_kind, n_by_kind = {}, {}
    if inputs.kinds:
        for kind in ("near", "far", *sorted(set(kinds[~ind].tolist()) - {"near", "far"})):
            sel = ~ind & (kinds == kind)
            by_kind[kind] = count_under(np.sort(inputs.closest[sel]), cuts)
            n_by_kind[kind] = int(sel.sum())
    rungs, n_reached = {}, None
    if inputs.reached is not None:
        # The needle is in the top k: the ladder's gate rungs (answered needs a holder kept, so it is reached).
        reached = inputs.reached
        n_reached = int(reached.sum())
        kept_reached = count_under(np.sort(inputs.closest[reached]), cuts)
        rungs = {"refused": n_reached - kept_reached, "kept-but-wrong": kept_reached - answered, "answered": answered}
    return SweepTable(
        cuts=cuts,
        answered=answered,
        wrong_sources=kept_any - answered,
        no_answer=n_in - kept_any,
        bluffs=bluffs,
        abstained=n_ood - bluffs,
        n_in=n_in,
        n_ood=n_ood,
        bluffs_by_kind=by_kind,
        n_by_kind=n_by_kind,
        gate_rungs=rungs,
        n_reached=n_reached,
    )


def kept_chunks(result, query_index: int, gate: Gate) -> list[tuple[int, float]]:
    """The chunks ``gate`` keeps for one query: ``[(chunk position, distance)]``, ranked order (:meth:`Gate.kept`)."""
    kept = gate.kept(result.top_distance[query_index])[0]
    order = result.top_order[query_index]
    dist = result.top_distance[query_index]
    return [(int(order[j]), float(dist[j])) for j in np.flatnonzero(kept)]


def answer_tokens(encoder, answers: Sequence) -> np.ndarray:
    """Per query: wordpieces of the prompt the gate sends, counted by ``encoder`` in one call; 0 where ``answers``
    holds no :class:`~ragdiag.index.citations.Answer` (NO ANSWER, or ``None``: not cited)."""
    from ...index.citations import Answer

    where = [i for i, a in enumerate(answers) if isinstance(a, Answer)]
    out = np.zeros(len(answers), dtype=np.int64)
    if where:
        out[where] = np.asarray(encoder.count_tokens([answers[i].prompt for i in where]), dtype=np.int64)
    return out


@dataclass(frozen=True)
class Bluff:
    """An out-of-domain query the gate still gives sources at a cut: what it kept, closest first."""

    query_id: str
    kind: str | None
    kept: tuple[tuple[int, float], ...]  # (chunk position, distance), closest first


def bluffs_at(result, queries, gate: Gate) -> list[Bluff]:
    """Ood queries that still get sources at ``gate``, closest (most dangerous) first."""
    out = []
    for i, q in enumerate(queries):
        if q.in_domain:
            continue
        kept = kept_chunks(result, i, gate)
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
        """Counts strictly under ``cut`` per series (:func:`ragdiag.core.gate.count_under`): what the histograms label."""
        cuts = check_cut_array(cut)
        series = {"answer": self.answer, "kept": self.kept, **self.ood}
        return {k: int(count_under(np.sort(v), cuts)[0]) for k, v in series.items()}


def distance_samples(inputs: GateTable) -> DistanceSamples:
    """The values the gate compares with the cut, per population (see :class:`DistanceSamples`)."""
    ind = inputs.in_domain
    good = inputs.closest_holder[ind]
    kinds = np.array([k or "ood" for k in inputs.kind_of()], dtype=object)
    ood = {}
    for kind in dict.fromkeys(kinds[~ind].tolist()):
        ood[str(kind)] = inputs.closest[~ind & (kinds == kind)]
    return DistanceSamples(good[np.isfinite(good)], inputs.closest[ind], ood)


# ---------------------------------------------------------------------------
# the sweep of an evaluation's configuration
# ---------------------------------------------------------------------------


def sweep_table(ev: Evaluation, config: Config | str, gate: Gate | None = None, *, cuts=None) -> SweepTable:
    """The sweep of ``config``'s gate table over ``cuts`` (default :func:`default_cuts`)."""
    return sweep(gate_table(ev, config, gate), cuts)


def check_cuts(cuts) -> np.ndarray:
    """Cuts as an array, each a finite cosine distance in [0, 2] (:func:`ragdiag.core.gate.check_cut_array`).

    >>> check_cuts(0.5).tolist()
    [0.5]
    """
    return check_cut_array(cuts)


#: The most rows a sweep from the command line may have.
MAX_SWEEP_ROWS = 2001


def sweep_cuts(start: float, stop: float, step: float) -> np.ndarray:
    """The cuts ``start, start + step, ..., stop`` (validated: finite, in range, at most 2001 rows).

    >>> sweep_cuts(0.3, 0.5, 0.1).tolist()
    [0.3, 0.4, 0.5]
    """
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if not np.isfinite(v):
            raise ValueError(f"--{name} must be a finite number, got {v}")
    if not step > 0:
        raise ValueError(f"--step must be positive, got {step}")
    check_cuts([start, stop])
    if stop < start:
        raise ValueError(f"--stop ({stop}) must not be below --start ({start})")
    n = int(np.floor((stop - start) / step + 1e-9)) + 1
    if n > MAX_SWEEP_ROWS:
        raise ValueError(f"--step {step} gives {n} rows from {start} to {stop}; at most {MAX_SWEEP_ROWS}: "
                         f"use a step of at least {(stop - start) / (MAX_SWEEP_ROWS - 1):.2g}")
    return np.round(start + step * np.arange(n), 6)
