"""One per-query gate table: what every query of one configuration gets at one :class:`~ragdiag.core.gate.Gate`.

Computed once per (evaluation, configuration, gate) by :func:`gate_table`,
read by every surface: the sweep and the rates (``closest``,
``closest_holder``, groups and kinds), the cut chooser and its
cross-validation, the funnel and the Inspector (``outcome``, ranks),
``per_query.csv``, the report, the recommendation and the export.

Per query:

* ``closest``: the smallest distance in the gate's window (the top
  ``Gate.window`` (the smaller of ``k`` and ``keep``)); the gate keeps something iff ``closest`` under the cut;
* ``closest_holder``: the smallest distance of a chunk holding the needle in
  the window (``inf``: none there, and for out-of-domain queries); answered iff
  ``closest_holder`` under the cut;
* ``needle_rank`` / ``pool_rank``: 1-based rank of the best holder in the final
  ranking and in the ranking a reranker's pool is cut from (0: not ranked);
* ``needle_distance``: the best holder's distance anywhere (``nan``: none);
* ``kept``: how many chunks the gate keeps at the table's cut;
* ``outcome``: the rung of the ladder (:data:`ragdiag.analyses.outcomes.LADDER`)
  or the out-of-domain outcome, at the table's gate.

:meth:`GateTable.at` gives the same table at another cut without recomputing
ranks; the sweep counts every cut at once from the two distance columns.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..core.defaults import RERANK_HEAD, TOP
from ..core.gate import Gate
from .outcomes import OUTCOMES, QueryOutcome, gate_values, ladder_codes

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation.records import Config, Evaluation

__all__ = ["GateTable", "gate_table", "table_from", "query_outcomes", "ROW_COLUMNS", "LEGACY_COLUMNS"]

#: The per-query columns :meth:`GateTable.rows` writes (``gate_inputs.csv`` adds ``strategy`` and ``retriever``
#: in front): the table's own names, so a run folder reads back into the same table.
ROW_COLUMNS = ("query_id", "question_id", "kind", "keep", "closest", "closest_holder", "text")
#: The names ``gate_inputs.csv`` used before the table's own (still read): ``first`` is ``closest``,
#: ``good`` is ``closest_holder``.
LEGACY_COLUMNS = {"first": "closest", "good": "closest_holder"}


@dataclass(frozen=True, eq=False)
class GateTable:
    """The gate's per-query table for one configuration (see the module notes).

    Only ``query_ids``, ``in_domain``, ``closest``, ``closest_holder`` and
    ``window`` are needed to sweep cuts (a hand-made table in a test gives just
    those); :func:`gate_table` fills every column from an evaluation.
    """

    query_ids: tuple[str, ...]
    in_domain: np.ndarray  # bool
    closest: np.ndarray  # min distance in the window (inf: none)
    closest_holder: np.ndarray  # min distance of a needle holder in the window (inf: none, ood)
    window: int  # the smallest of k, keep and the ranks: how many ranks the gate looks at
    groups: tuple[str, ...] = ()  # the question of each query (ood: the query itself); () = each query alone
    kinds: tuple = ()  # ood kind per query ("near", "far", ...; None in-domain); () = unknown
    # answerable queries whose needle is in the top k (the ladder's gate rungs); None = unknown
    reached: np.ndarray | None = None
    gate: Gate | None = None  # None: a hand-made table (no cut, no ladder)
    config: str = ""
    needle_rank: np.ndarray | None = None  # 0: not ranked
    pool_rank: np.ndarray | None = None
    needle_distance: np.ndarray | None = None  # nan: no holder
    kept: np.ndarray | None = None  # chunks kept at gate.cut
    outcome: tuple[str, ...] = ()  # ladder rung or ood outcome at the gate; () = unknown (external run)
    # what the ladder needs besides the distances, kept so that at() can recompute it
    destroyed: np.ndarray | None = None
    truncated: np.ndarray | None = None
    top_distance: np.ndarray | None = None
    pool: int = RERANK_HEAD
    texts: tuple[str, ...] = ()  # each query's text; () = unknown

    @classmethod
    def from_evaluation(cls, ev: Evaluation, config: Config | str, gate: Gate | None = None, **kw) -> "GateTable":
        """The table of ``config`` in ``ev`` at ``gate`` (:func:`gate_table`)."""
        return gate_table(ev, config, gate, **kw)

    @classmethod
    def from_rows(cls, rows: Sequence[dict], *, gate: Gate, config: str = "",
                  needle_rank: Sequence[int] | None = None) -> "GateTable":
        """The table written by :meth:`rows` read back (the per-query half of a run folder).

        ``rows`` hold :data:`ROW_COLUMNS` with checked values (distances as floats,
        ``inf`` for none); ``needle_rank``: each query's rank (0: not ranked), from
        ``per_query.csv``. Out-of-domain queries have ``question_id`` empty.

        >>> rows = [{"query_id": "a", "question_id": "q1", "kind": "answerable", "keep": 4, "closest": 0.2,
        ...          "closest_holder": 0.3, "text": "how?"},
        ...         {"query_id": "o", "question_id": "", "kind": "far", "keep": 4, "closest": 0.5,
        ...          "closest_holder": float("inf"), "text": "pizza?"}]
        >>> t = GateTable.from_rows(rows, gate=Gate(keep=4, cut=0.4), needle_rank=[2, 0])
        >>> t.answered().tolist(), t.given_sources().tolist(), t.found().tolist()
        ([True, False], [True, False], [True, False])
        >>> t.rows() == rows
        True
        """
        in_domain = np.array([r["kind"] == "answerable" for r in rows], dtype=bool)
        rank = None if needle_rank is None else np.asarray(needle_rank, dtype=np.int64)
        window = int(rows[0]["keep"]) if rows else gate.window(gate.keep)
        return cls(tuple(r["query_id"] for r in rows), in_domain,
                   np.array([float(r["closest"]) for r in rows], dtype=np.float64),
                   np.array([float(r["closest_holder"]) for r in rows], dtype=np.float64), window,
                   groups=tuple(r["question_id"] or r["query_id"] for r in rows),
                   kinds=tuple(None if i else r["kind"] for r, i in zip(rows, in_domain)),
                   reached=None,
                   gate=gate, config=config, needle_rank=rank, texts=tuple(r["text"] for r in rows))

    def rows(self) -> list[dict]:
        """One dict per query with :data:`ROW_COLUMNS` (what ``gate_inputs.csv`` holds; :meth:`from_rows` reads it)."""
        texts = self.texts or ("",) * len(self.query_ids)
        kinds = self.kind_names()
        return [{"query_id": q, "question_id": self.question_id(i), "kind": kinds[i], "keep": self.window,
                 "closest": float(self.closest[i]), "closest_holder": float(self.closest_holder[i]),
                 "text": texts[i]} for i, q in enumerate(self.query_ids)]

    def question_id(self, i: int) -> str:
        """The question of query ``i`` (``""`` for an out-of-domain query: it answers none)."""
        return self.group_ids()[i] if self.in_domain[i] else ""

    def kind_names(self) -> tuple[str, ...]:
        """Per query: ``"answerable"``, or its out-of-domain kind (``"near"``, ``"far"``; ``"ood"`` when unknown)."""
        return tuple("answerable" if i else (k or "ood") for i, k in zip(self.in_domain, self.kind_of()))

    def found(self, k: int | None = None) -> np.ndarray:
        """Per query: an answerable query whose needle is ranked in the top ``k`` (default the gate's k).

        The needle rank of the final ranking, before the gate's cut: recall@k's hit.
        """
        if self.needle_rank is None:
            if k is None and self.reached is not None:
                return self.reached
            raise ValueError(f"{self.config or 'this table'} has no needle ranks: found() needs them")
        from ..core.metrics import hits_at_k

        # -1 (an external run: not ranked) counts as not found, as 0 does
        return self.in_domain & hits_at_k(np.maximum(self.needle_rank, 0), self._gate(None).k if k is None else k)

    def group_ids(self) -> tuple[str, ...]:
        """The question of each query (each query its own when ``groups`` is empty)."""
        return self.groups or self.query_ids

    def kind_of(self) -> tuple:
        """The ood kind of each query (``None`` for all when ``kinds`` is empty)."""
        return self.kinds or (None,) * len(self.query_ids)

    @property
    def n_answerable(self) -> int:
        return int(self.in_domain.sum())

    @property
    def n_ood(self) -> int:
        return int((~self.in_domain).sum())

    def answered(self, cut: float | None = None) -> np.ndarray:
        """Per query: the gate keeps a chunk holding the needle (``closest_holder`` under the cut)."""
        return self._gate(cut).under(self.closest_holder)

    def given_sources(self, cut: float | None = None) -> np.ndarray:
        """Per query: the gate keeps anything (``closest`` under the cut); for an ood query, a bluff."""
        return self._gate(cut).under(self.closest)

    def _gate(self, cut: float | None) -> Gate:
        if cut is None:
            if self.gate is None:
                raise ValueError("this table has no gate: pass a cut")
            return self.gate
        return (self.gate or Gate(keep=max(self.window, 1))).with_cut(cut)

    def at(self, cut: float) -> "GateTable":
        """The same table at another cut: ``kept`` and ``outcome`` recomputed, ranks and distances reused."""
        gate = self._gate(cut)
        if self.top_distance is None or self.needle_rank is None:
            return replace(self, gate=gate)
        codes = _codes(self, gate)
        kept = gate.kept(self.top_distance).sum(axis=1)
        return replace(self, gate=gate, kept=kept,
                       outcome=tuple(OUTCOMES[c] for c in codes) if self.outcome else ())

    def outcomes(self) -> tuple[QueryOutcome, ...]:
        """One :class:`~ragdiag.analyses.outcomes.QueryOutcome` record per query (the Inspector's and the CSV's row)."""
        if not self.outcome or self.gate is None:
            raise ValueError(f"{self.config or 'this table'} has no ladder (an external run, or a hand-made table)")
        g = self.gate
        out = []
        for i, qid in enumerate(self.query_ids):
            nd = float(self.needle_distance[i])
            c = float(self.closest[i])
            out.append(QueryOutcome(
                query_id=qid, question_id=self.group_ids()[i], outcome=self.outcome[i],
                needle_rank=int(self.needle_rank[i]) or None, closest=c if np.isfinite(c) else None,
                needle_distance=None if np.isnan(nd) else nd, gate=g,
                kept=int(self.kept[i]), in_domain=bool(self.in_domain[i])))
        return tuple(out)


def _codes(t: GateTable, gate: Gate) -> np.ndarray:
    return ladder_codes(in_domain=t.in_domain, destroyed=t.destroyed, truncated=t.truncated,
                        final_rank=t.needle_rank, pool_rank=t.pool_rank, closest=t.closest,
                        closest_holder=t.closest_holder, k=gate.k, pool=t.pool, gate=gate)


def table_from(result, query_ids: Sequence[str], in_domain: np.ndarray, gate: Gate | None = None, *,
               groups: Sequence[str] | None = None, kinds: Sequence | None = None) -> GateTable:
    """The distance columns of a table from a ranked result (``top_distance``, ``top_holds``; ``needle_rank`` if any).

    ``groups`` names the question of each query (phrasings of one question are
    one unit for intervals and cross-validation); ``kinds`` the out-of-domain
    kind (near/far) of each query.

    >>> from types import SimpleNamespace
    >>> r = SimpleNamespace(top_distance=np.array([[0.3, 0.2, 0.1], [0.4, 0.5, 0.6]]),
    ...                     top_holds=np.array([[False, True, True], [False, False, False]]))
    >>> t = table_from(r, ["a", "o"], np.array([True, False]), Gate(keep=2))  # a's 0.1 holder is third: not kept
    >>> t.closest.tolist(), t.closest_holder.tolist()
    ([0.2, 0.4], [0.2, inf])
    """
    gate = Gate() if gate is None else gate
    in_domain = np.asarray(in_domain, dtype=bool)
    closest, holder = gate_values(result.top_distance, result.top_holds, gate=gate)
    holder[~in_domain] = np.inf
    rank = getattr(result, "needle_rank", None)
    reached = None
    if rank is not None:
        rank = np.asarray(rank)
        reached = in_domain & (rank >= 1) & (rank <= gate.k)
    return GateTable(tuple(query_ids), in_domain, closest, holder, gate.window(result.top_distance.shape[1]),
                     tuple(groups) if groups is not None else (), tuple(kinds) if kinds is not None else (),
                     reached, gate)


def gate_table(ev: Evaluation, config: Config | str, gate: Gate | None = None, *, pool: int = RERANK_HEAD,
               pool_rank: np.ndarray | None = None) -> GateTable:
    """The gate table of ``config`` at ``gate`` (default :class:`~ragdiag.core.gate.Gate`): every column.

    ``pool_rank``: per query, the first-stage rank a reranker's pool is cut from
    (the funnel passes the pool retriever's); default the configuration's own
    needle rank, which gives the same rung when ``pool`` is the reranker's head
    (it reorders only its head, the tail keeps the base order). External runs
    get the distance columns only (no ladder: it needs ragdiag's chunks); an
    external run without distances cannot be gated (``ValueError``).
    """
    from ..core.validate import require_type
    from ..evaluation.records import Evaluation as _Evaluation

    require_type(ev, _Evaluation, "ev", hint="the result of ragdiag.evaluation.evaluate.evaluate")
    gate = Gate() if gate is None else require_type(gate, Gate, "gate", hint="e.g. Gate(keep=4, cut=0.6)")
    res = ev.result(config)
    cfg = res.config
    if cfg.external and not ev.external[cfg.retriever].distances:
        raise ValueError(f"{cfg.label} has no distances: the gate needs hit scores that are cosine "
                         "distances (eval-run --distances)")
    queries = ev.queries
    table = table_from(res, [q.id for q in queries], ev.in_domain, gate,
                       groups=[q.question_id or q.id for q in queries],
                       kinds=[None if q.in_domain else (q.kind or "ood") for q in queries])
    final = np.asarray(res.needle_rank)
    table = replace(table, config=cfg.label, needle_rank=final, needle_distance=np.asarray(res.needle_distance),
                    top_distance=res.top_distance, kept=gate.kept(res.top_distance).sum(axis=1),
                    texts=tuple(q.text for q in queries))
    if cfg.external:
        return table
    width = res.top_distance.shape[1]
    # fewer ranks than TOP means the corpus has fewer chunks: every chunk is ranked, so any k sees them all
    if gate.k > width and width >= TOP:
        raise ValueError(f"k must be between 1 and {width} (the ranks kept per query), got {gate.k}")
    if pool < gate.k:
        raise ValueError(f"the pool ({pool}) must hold at least k ({gate.k}) candidates")
    index = ev.indexes[cfg.strategy]
    in_domain = table.in_domain
    destroyed = np.array([q.in_domain and not index.holders[q.question_id].size for q in queries], dtype=bool)
    truncated = np.array([q.in_domain and bool(index.holders[q.question_id].size)
                          and index.truncated_before_needle(q.question_id, ev.truth.question(q.question_id).end)
                          for q in queries], dtype=bool)
    table = replace(table, pool_rank=final if pool_rank is None else np.asarray(pool_rank),
                    destroyed=destroyed & in_domain, truncated=truncated & in_domain, pool=pool)
    return replace(table, outcome=tuple(OUTCOMES[c] for c in _codes(table, gate)))


def query_outcomes(ev: Evaluation, config: Config | str, gate: Gate | None = None, *, pool: int = RERANK_HEAD,
                   pool_rank: np.ndarray | None = None) -> tuple[QueryOutcome, ...]:
    """Every query of ``ev`` (answerable and out-of-domain, in order) with its outcome under ``config`` at ``gate``."""
    res = ev.result(config)
    if res.config.external:
        raise ValueError(f"{res.config.label} is an external run: the ladder needs ragdiag's chunks "
                         "(destroyed, truncated); use a ragdiag configuration")
    return gate_table(ev, config, gate, pool=pool, pool_rank=pool_rank).outcomes()
