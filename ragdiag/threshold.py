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

from dataclasses import dataclass
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


def gate_inputs(result, query_ids: Sequence[str], in_domain: np.ndarray, *, keep: int = DEFAULT_KEEP) -> GateInputs:
    """Per query ``first`` and ``good`` for a :class:`~ragdiag.evaluate.ConfigResult`."""
    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep}")
    keep = min(keep, result.top_distance.shape[1])  # a corpus with fewer chunks than keep: keep them all
    d = result.top_distance[:, :keep]
    holds = result.top_holds[:, :keep]
    first = d.min(axis=1)
    good = np.where(holds, d, np.inf).min(axis=1)
    good[~np.asarray(in_domain)] = np.inf
    return GateInputs(tuple(query_ids), np.asarray(in_domain, dtype=bool), first, good, keep)


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
    return SweepTable(
        cuts=cuts,
        answered=answered,
        kept_wrong=kept_any - answered,
        refused=n_in - kept_any,
        bluffs=bluffs,
        ood_refused=n_ood - bluffs,
        n_in=n_in,
        n_ood=n_ood,
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


@dataclass(frozen=True)
class DistanceSamples:
    """The three distributions the threshold page overlays."""

    in_needle: np.ndarray  # in-domain: distance to the closest chunk holding the needle
    in_top1: np.ndarray  # in-domain: top-1 distance
    ood_top1: np.ndarray  # ood: top-1 distance


def distance_samples(result, in_domain: np.ndarray) -> DistanceSamples:
    ind = np.asarray(in_domain, dtype=bool)
    needle = result.needle_distance[ind]
    return DistanceSamples(needle[~np.isnan(needle)], result.top1_distance[ind], result.top1_distance[~ind])
