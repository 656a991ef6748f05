"""Abstention: a distance gate, and the sweep of its cut.

The retriever always returns something; the gate is the only part that can
say no. It keeps at most ``keep`` chunks of the ranked list (its top
``keep``), only those whose cosine distance is under the cut (``d < cut``).

For each query two numbers decide everything (:func:`ragdiag.analyses.outcomes.gate_values`):

* ``first`` - the smallest distance among its top ``keep`` (anything kept iff ``cut > first``);
* ``good``  - the smallest distance among those of its top ``keep`` that hold the
  needle (answered iff ``cut > good``; ``inf`` when none does, and for ood queries).

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

from ...core.defaults import DEFAULT_KEEP
from ..outcomes import gate_values
from ...evaluation.rows import SweepRow

if TYPE_CHECKING:  # pragma: no cover
    from ...evaluation.records import Config, Evaluation

__all__ = [
    "GateInputs",
    "gate_inputs",
    "gate_inputs_for",
    "SweepTable",
    "sweep",
    "sweep_table",
    "check_cuts",
    "sweep_cuts",
    "MAX_SWEEP_ROWS",
    "MAX_DISTANCE",
    "gate",
    "Bluff",
    "bluffs_at",
    "DistanceSamples",
    "distance_samples",
    "GATE_DISTANCE",
    "default_cuts",
]

#: Used for a cut that nothing can reach past: cosine distances of unit vectors lie in [0, 2].
MAX_DISTANCE = 2.0


@dataclass(frozen=True)
class GateInputs:
    """What the gate compares with the cut, per query: ``first`` and ``good`` (see the module notes).

    ``first`` is the smallest distance among the top ``keep``; ``good`` the
    smallest among those of them holding the needle (``inf``: none, and for
    out-of-domain queries).
    """

    query_ids: tuple[str, ...]
    in_domain: np.ndarray  # bool
    first: np.ndarray  # min distance among top-keep
    good: np.ndarray  # min distance among top-keep holders (inf: none)
    keep: int
    groups: tuple[str, ...] = ()  # the question of each query (ood: the query itself); () = each query alone
    kinds: tuple = ()  # ood kind per query ("near", "far", ...; None in-domain); () = unknown
    # answerable queries whose needle is in the top k (the ladder's gate rungs); None = unknown
    reached: np.ndarray | None = None

    def group_ids(self) -> tuple[str, ...]:
        """The question of each query (each query its own when ``groups`` is empty)."""
        return self.groups or self.query_ids

    def kind_of(self) -> tuple:
        """The ood kind of each query (``None`` for all when ``kinds`` is empty)."""
        return self.kinds or (None,) * len(self.query_ids)


def gate_inputs(result, query_ids: Sequence[str], in_domain: np.ndarray, *, keep: int = DEFAULT_KEEP,
                groups: Sequence[str] | None = None, kinds: Sequence | None = None,
                k: int | None = None) -> GateInputs:
    """Per query ``first`` and ``good`` for a :class:`~ragdiag.evaluation.evaluate.ConfigResult`.

    ``groups`` names the question of each query (phrasings of one question are
    one unit for intervals and cross-validation); ``kinds`` the out-of-domain
    kind (near/far) of each query. ``k``: the retriever hands the gate its top
    ``k`` (the gate looks at its top ``min(k, keep)``; ``None``: the whole
    ranking, so its top ``keep``); with ``k`` the inputs also know which
    answerable queries have the needle in the top ``k`` (``reached``).

    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(top_distance=np.array([[0.3, 0.2, 0.1], [0.4, 0.5, 0.6]]),
    ...                     top_holds=np.array([[False, True, True], [False, False, False]]))
    >>> g = gate_inputs(r, ["a", "o"], np.array([True, False]), keep=2)  # a's 0.1 holder is third: not kept
    >>> g.first.tolist(), g.good.tolist()
    ([0.2, 0.4], [0.2, inf])
    """
    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep}")
    # a corpus with fewer chunks than keep: keep them all
    window = min(keep if k is None else k, keep, result.top_distance.shape[1])
    first, good = gate_values(result.top_distance, result.top_holds, k=k, keep=keep)
    good[~np.asarray(in_domain)] = np.inf
    reached = None
    if k is not None:
        rank = np.asarray(result.needle_rank)
        reached = np.asarray(in_domain, dtype=bool) & (rank >= 1) & (rank <= k)
    return GateInputs(tuple(query_ids), np.asarray(in_domain, dtype=bool), first, good, window,
                      tuple(groups) if groups is not None else (), tuple(kinds) if kinds is not None else (),
                      reached)


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


def _count_below(sorted_values: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    # values strictly under each cut
    return np.searchsorted(sorted_values, cuts, side="left")


def sweep(inputs: GateInputs, cuts: Sequence[float] | np.ndarray | None = None) -> SweepTable:
    """Gate outcomes for every cut at once.

    >>> g = GateInputs(("a", "b", "o"), np.array([True, True, False]),
    ...                first=np.array([0.2, 0.3, 0.4]), good=np.array([0.2, np.inf, np.inf]), keep=4)
    >>> t = sweep(g, [0.25, 0.5]); t.answered.tolist(), t.wrong_sources.tolist(), t.bluffs.tolist()
    ([1, 1], [0, 1], [0, 1])
    """
    from ...core.validate import require_type

    require_type(inputs, GateInputs, "inputs", hint="make them with ragdiag.analyses.threshold.gate_inputs_for")
    cuts = default_cuts() if cuts is None else check_cuts(cuts)
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
    rungs, n_reached = {}, None
    if inputs.reached is not None:
        # The needle is in the top k: the ladder's gate rungs (answered needs a holder kept, so it is reached).
        reached = inputs.reached
        n_reached = int(reached.sum())
        kept_reached = _count_below(np.sort(inputs.first[reached]), cuts)
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


def gate(result, query_index: int, *, cut: float, keep: int = DEFAULT_KEEP) -> list[tuple[int, float]]:
    """The chunks the gate keeps for one query: ``[(chunk position, distance)]``, ranked order."""
    order = result.top_order[query_index, :keep]
    dist = result.top_distance[query_index, :keep]
    return [(int(o), float(d)) for o, d in zip(order, dist) if d < cut]


@dataclass(frozen=True)
class Bluff:
    """An out-of-domain query the gate still gives sources at a cut: what it kept, closest first."""

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
# the sweep of an evaluation's configuration
# ---------------------------------------------------------------------------


def gate_inputs_for(ev: Evaluation, config: Config | str, *, keep: int = DEFAULT_KEEP,
                    k: int | None = None) -> GateInputs:
    """The gate's per-query values for ``config`` (with each query's question and ood kind; ``k``: see :func:`gate_inputs`)."""
    from ...evaluation.records import Evaluation as _Evaluation
    from ...core.validate import positive_int, require_type

    require_type(ev, _Evaluation, "ev", hint="the result of ragdiag.evaluation.evaluate.evaluate")
    positive_int(keep, "keep")
    res = ev.result(config)
    if res.config.external and not ev.external[res.config.retriever].distances:
        raise ValueError(f"{res.config.label} has no distances: the sweep needs hit scores that are cosine "
                         "distances (eval-run --distances)")
    return gate_inputs(res, [q.id for q in ev.queries], ev.in_domain, keep=keep,
                       groups=[q.question_id or q.id for q in ev.queries],
                       kinds=[None if q.in_domain else (q.kind or "ood") for q in ev.queries], k=k)


def sweep_table(ev: Evaluation, config: Config | str, *, keep: int = DEFAULT_KEEP, cuts=None,
                k: int | None = None) -> SweepTable:
    """The sweep of ``config`` over ``cuts`` (default :func:`default_cuts`; ``k``: see :func:`gate_inputs`)."""
    return sweep(gate_inputs_for(ev, config, keep=keep, k=k), cuts)


def check_cuts(cuts) -> np.ndarray:
    """Cuts as an array, each finite and a cosine distance in [0, 2], else ``ValueError``.

    >>> check_cuts(0.5).tolist()
    [0.5]
    """
    arr = np.atleast_1d(np.asarray(cuts, dtype=np.float64))
    bad = ~np.isfinite(arr) | (arr < 0) | (arr > MAX_DISTANCE)
    if bad.any():
        raise ValueError(f"a cut must be a finite cosine distance in [0, {MAX_DISTANCE:g}], got {float(arr[bad][0])}")
    return arr


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
