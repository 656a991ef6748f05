"""The cut a team runs today on a native score (``threshold --score native --current``), read in that score's units.

The distance gate's rate code (:func:`ragdiag.analyses.threshold.rates.rate_rows`,
the slices of :mod:`ragdiag.analyses.slice_cuts`) is score-agnostic once the
rule is written one way. It keeps a chunk when its distance is strictly under
the cut (strictly under it, a cut in ``[0, 2]``); a native cut keeps a chunk when its
score is at least the cut (``s >= cut``). One adapter turns the second into the
first, exactly, whatever the score's range:

* the distinct scores of the table and the cuts to be read, sorted from the
  lowest, ``v_0 < ... < v_(N-1)``, map by rank: ``v_i`` becomes the distance
  ``(N - i) / (N + 1)`` in ``(0, 1)`` (a higher score, a smaller distance); a
  chunk with no score (``-inf``) becomes ``2``, the largest distance, which no
  cut keeps (strictly under it, a cut at most 2);
* the cut ``v_c`` becomes ``(N - c + 0.5) / (N + 1)``, half a step above its own
  distance, so a distance is under the cut exactly when ``i >= c``, that is ``s >= v_c``.

The mapping depends only on the order of the scores, so no rounding of the
score can move a query across the cut.

Everything reported here is read back in the native score's units; the
negated table never leaves this module.

A ragdiag export of a native cut (``--current-from``) is read only for the
score, unit, embedding model and reranker it is stamped with; another one is
refused in one line naming both (a reranker's cut on another reranker's scale
means nothing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from ...core.goal import within_at_most
from ...evaluation.rows import RateCell
from ..gate_table import GateTable
from .rates import rate_rows
from .score import ScoreTable
from .today import VersusProposed, moved_queries

__all__ = ["as_gate_table", "rank_distances", "NativeCurrent", "native_audit", "native_cut_from_file"]


def as_gate_table(table: ScoreTable, cuts) -> tuple[GateTable, tuple[float, ...]]:
    """The adapter: a native-score table as the distance gate's table, and ``cuts`` (native) as distance cuts;
    for score-agnostic code only (the distances are ranks, not a model's).

    >>> import numpy as np
    >>> t = ScoreTable("E/bm25", "BM25 score", "score", ("a", "b", "o"), np.array([True, True, False]), ("a", "b", "o"),
    ...                top=np.array([12.5, 3.0, -np.inf]), holder=np.array([12.5, -np.inf, -np.inf]), window=4)
    >>> from ragdiag.core.gate import under_each
    >>> g, (cut,) = as_gate_table(t, [3.0])
    >>> g.closest.tolist(), cut, under_each(g.closest, cut)[0].tolist()  # kept at >= 3.0: 12.5 and 3.0, no score never
    ([0.3333333333333333, 0.6666666666666666, 2.0], 0.8333333333333334, [True, True, False])
    """
    (pair,), mapped = rank_distances([table], cuts)
    g = GateTable(table.query_ids, table.in_domain, closest=pair[0], closest_holder=pair[1],
                  window=table.window, groups=table.groups, kinds=table.kinds, config=table.config)
    return g, mapped


def rank_distances(tables, cuts) -> tuple[list[tuple[np.ndarray, np.ndarray]], tuple[float, ...]]:
    """The adapter over several tables at once, on one ladder of their scores and ``cuts``: per table its
    (``top``, ``holder``) as rank distances, and the cuts mapped, so that one mapped cut reads every table exactly
    as the native cut does (a baseline and a candidate gated at one cut).

    >>> import numpy as np
    >>> from dataclasses import replace
    >>> a = ScoreTable("E/bm25", "BM25 score", "score", ("q",), np.array([True]), ("q",), top=np.array([9.0]),
    ...                holder=np.array([9.0]), window=4)
    >>> b = replace(a, top=np.array([2.0]), holder=np.array([-np.inf]))
    >>> [(t[0] < c).tolist() for t in rank_distances([a, b], [5.0])[0] for c in rank_distances([a, b], [5.0])[1]]
    [[True], [False]]
    """
    cuts = np.asarray(cuts, dtype=np.float64).ravel()
    if not np.isfinite(cuts).all():
        raise ValueError(f"a cut must be a finite number, got {cuts.tolist()}")
    values = np.concatenate([*(np.concatenate([t.top, t.holder]) for t in tables), cuts])
    ladder = np.unique(values[np.isfinite(values)])  # ascending, distinct
    n = ladder.size

    def dist(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        out = np.full(x.shape, 2.0)  # no score: the largest distance, kept at no cut
        ok = np.isfinite(x)
        out[ok] = (n - np.searchsorted(ladder, x[ok])) / (n + 1)
        return out

    mapped = tuple(float((n - np.searchsorted(ladder, c) + 0.5) / (n + 1)) for c in cuts)
    return [(dist(t.top), dist(t.holder)) for t in tables], mapped


@dataclass(frozen=True)
class NativeCurrent(VersusProposed):
    """The cut a team runs today on a native score, at ragdiag's window, against the proposed native cut."""

    value: float
    score: str
    unit: str
    where: str
    rates: Mapping[str, RateCell]  # answered, wrong_sources, no_answer, bluffs, bluffs_near, bluffs_far
    meets_goal: bool
    proposed: float | None
    gained: tuple[str, ...]
    lost: tuple[str, ...]
    bluffs_added: tuple[str, ...]
    bluffs_removed: tuple[str, ...]

    def cells(self) -> dict:
        return {"value": self.value, "score": self.score, "unit": self.unit, "kept_when": f"score >= {self.value}",
                "from": self.where, **{k: v.cells() for k, v in self.rates.items()}, "meets_goal": self.meets_goal,
                "versus_proposed": self.versus_cells()}

    def sentence(self) -> str:
        from ...core.words import rate_text

        r = self.rates
        head = (f"The cut you run today ({self.score} >= {self.value:g}, {self.unit}): answered "
                f"{rate_text(r['answered'])}, wrong sources {rate_text(r['wrong_sources'])}, no answer "
                f"{rate_text(r['no_answer'])}, bluffs {rate_text(r['bluffs'])}; it "
                f"{'meets' if self.meets_goal else 'misses'} the goal.")
        return self.versus_sentence(head, self.value, "" if self.proposed is None else f"{self.proposed:g}")


def native_audit(table: ScoreTable, value: float, max_bluff: float, proposed: float | None, *,
                 where: str = "--current") -> NativeCurrent:
    """The rates at ``value`` on the table's score (kept when ``score >= value``) and what ``proposed`` changes."""
    g, cuts = as_gate_table(table, [value])
    rates = rate_rows(g, cuts)[0].outcomes()
    meets = within_at_most(rates["bluffs"].rate, max_bluff)
    moved = moved_queries(table.query_ids, table.in_domain, value, proposed, table.answered, table.kept)
    return NativeCurrent(float(value), table.score, table.unit, where, rates, meets, proposed, *moved)


#: What a native cut's stamp must share with the configuration it is applied to, the reranker first.
_STAMP_KEYS = (("reranker", "reranker"), ("score", "score"), ("unit", "unit"), ("model", "embedding model"),
               ("weights_sha256", "model weights"))


def native_cut_from_file(path: str | Path, stamp: Mapping, flag: str = "--current-from") -> float:
    """The native cut a ragdiag export at ``path`` holds, when its stamp matches ``stamp`` (this configuration's:
    score, unit, reranker, embedding model); ``ValueError`` in one line naming both otherwise."""
    import yaml

    from .export import EXPORT_KEY

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{flag} {path}: not a file")
    if p.stat().st_size > 1_000_000:
        raise ValueError(f"{flag} {path}: over 1 MB, not a config file")
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8", errors="replace"))  # JSON is YAML
    except Exception as exc:  # noqa: BLE001 - any parse error is one line for the user
        raise ValueError(f"{flag} {path}: cannot be read ({type(exc).__name__})") from None
    if not (isinstance(doc, dict) and EXPORT_KEY in doc):
        raise ValueError(f"{flag} {path}: with --score native, give a ragdiag export of a native cut (it names the "
                         "score it cuts), or the value as --current VALUE")
    theirs = doc.get("stamp") if isinstance(doc.get("stamp"), Mapping) else {}
    if not theirs.get("score"):
        raise ValueError(f"{flag} {path}: a cut on the dense model's cosine distance, not on the {stamp.get('score')} "
                         "--score native reads: choose the cut with --score native")
    for key, words in _STAMP_KEYS:
        a, b = theirs.get(key), stamp.get(key)
        if (a or b) and str(a) != str(b) and not (key == "weights_sha256" and not (a and b)):
            raise ValueError(f"{flag} {path}: a cut for {words} {a or 'none'} (of "
                             f"{doc.get('config', 'another configuration')}), this configuration's is {b or 'none'}: "
                             "a cut on another scale; choose the cut again")
    cut = (doc.get("cut") or {}).get("value")
    if not isinstance(cut, (int, float)) or isinstance(cut, bool) or not math.isfinite(cut):
        raise ValueError(f"{flag} {path}: a ragdiag export without a numeric cut.value")
    return float(cut)
