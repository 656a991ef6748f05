"""Where each answerable query was lost: one stage per query and configuration, in pipeline order.

The stage is the query's rung of the outcome ladder (:mod:`ragdiag.analyses.outcomes`,
defined there once: destroyed, truncated, not-in-pool, ranked-low, refused,
kept-but-wrong, answered) at this funnel's ``k``, ``keep`` and ``cut``. The
funnel adds what the ladder does not need:

* ``pool``: :data:`ragdiag.core.defaults.RERANK_HEAD` (25) candidates of the
  ranking its spec names as its ``pool`` (a reranker: the ranking whose head
  it rescored), else of its own ranking (what it would hand to a reranker).
  For one that ``fuses`` rankings (hybrid) the row says which input had the
  holder and at what rank.
* For a reranker, ``demoted`` marks a holder the reranker moved from inside
  ``k`` (pool rank <= k) to outside (reranker inversion); ``promoted`` marks
  the reverse (those queries go on to the gate).

Ranks at each stage (1-based, of the best-ranked chunk holding the needle, over
the full ranking): ``dense_rank`` and ``bm25_rank`` (under those retrievers where
the pipeline runs them; read from ``S/dense`` and ``S/bm25`` when evaluated,
computed with the same retrievers otherwise), ``pool_rank`` (the rank the pool is cut from: the pool retriever's
rank for a reranker, the configuration's own rank otherwise) and ``final_rank``.

Counts are per query; a question has several phrasings, so intervals
are clustered Wilson over questions (:func:`ragdiag.analyses.compare.intervals.clustered_share`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .compare.intervals import SHARE_INTERVAL_LABEL, clustered_share
from ..core.defaults import RERANK_HEAD, SEED
from ..evaluation.records import Config, Evaluation, parse_key
from ..core.gate import Gate, OnGate
from .gate_table import query_outcomes
from .outcomes import LADDER
from ..retrieval.base import QueryBatch
from ..retrieval.hybrid import ranks_from_orders
from ..retrieval.registry import RunContext, build_retriever, embeds, index_context, retriever_spec
from ..core.stats import Interval
from ..core.tables import format_rows
from ..core.words import RUNG_WORDS, count_rate_text, cut_as_given

__all__ = [
    "QueryStage",
    "Funnel",
    "funnel",
    "funnels",
    "funnel_rows",
    "funnel_long",
    "stage_records",
    "format_funnel",
    "needle_ranks",
]

#: The stage-rank columns (``per_query.csv``): the rank under the retriever each is named after.
RANK_COLUMNS = ("dense_rank", "bm25_rank")


@dataclass(frozen=True)
class QueryStage:
    """One answerable query under one configuration: the stage it was lost at, and its ranks."""

    query_id: str
    question_id: str
    phrasing: str
    stage: str
    rerank: str  # "promoted", "demoted" or "" (rerankers only)
    dense_rank: int | None  # None: not a stage of this pipeline
    bm25_rank: int | None
    pool_rank: int | None  # None: destroyed (no holder)
    final_rank: int | None
    detail: str

    def row(self) -> dict:
        """The flat table row (field name to value) the page and the export show."""
        return {"query_id": self.query_id, "question_id": self.question_id, "phrasing": self.phrasing,
                "stage": self.stage, "rerank": self.rerank, "dense_rank": self.dense_rank,
                "bm25_rank": self.bm25_rank, "pool_rank": self.pool_rank, "final_rank": self.final_rank,
                "detail": self.detail}


@dataclass(frozen=True)
class Funnel(OnGate):
    """Every answerable query of one configuration with its stage (``rows``, in query order), at ``gate``."""

    config: Config
    gate: Gate
    pool: int
    rows: tuple[QueryStage, ...]

    def counts(self) -> dict[str, int]:
        """Queries per stage, every stage of :data:`~ragdiag.analyses.outcomes.LADDER` present (0 when none)."""
        out = dict.fromkeys(LADDER, 0)
        for r in self.rows:
            out[r.stage] += 1
        return out

    @property
    def reranker(self) -> bool:
        """Does the configuration rescore another ranking's head (its spec names a ``pool``)?"""
        return retriever_spec(self.config.retriever).pool is not None

    @property
    def promoted(self) -> int:
        """Queries whose reranker moved the needle's holder up (rerankers only)."""
        return sum(r.rerank == "promoted" for r in self.rows)

    @property
    def demoted(self) -> int:
        """Queries whose reranker moved the needle's holder down (rerankers only)."""
        return sum(r.rerank == "demoted" for r in self.rows)

    def queries(self, stage: str) -> list[str]:
        """Ids of the queries lost at ``stage`` (ValueError naming the stages for an unknown one)."""
        if stage not in LADDER:
            raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(LADDER)}")
        return [r.query_id for r in self.rows if r.stage == stage]

    def intervals(self, *, seed: int = SEED) -> dict[str, Interval]:
        """Per stage: the share of queries with the clustered Wilson interval over questions (``seed`` unused)."""
        clusters = [r.question_id for r in self.rows]
        return {s: clustered_share([r.stage == s for r in self.rows], clusters) for s in LADDER}


def _holder_ranks(orders: np.ndarray, holders: dict[str, np.ndarray], queries,
                  scores: np.ndarray | None = None) -> np.ndarray:
    """Best 1-based rank of a needle holder in each full ranking (0: no holder / ood).

    ``scores`` (BM25's, aligned with ``orders``): a holder scoring 0 was not retrieved (rank 0), as in
    :func:`ragdiag.evaluation.evaluate.evaluate`.
    """
    ranks = ranks_from_orders(orders)
    out = np.zeros(len(queries), dtype=np.int64)
    for i, q in enumerate(queries):
        if q.in_domain and holders[q.question_id].size:
            out[i] = ranks[i, holders[q.question_id]].min()
            if scores is not None and scores[i, out[i] - 1] == 0:
                out[i] = 0
    return out


def needle_ranks(ev: Evaluation, strategy: str, names: Iterable[str] | None = None, *, encoder=None,
                 store=None) -> dict[str, np.ndarray]:
    """Needle ranks under the retrievers ``names`` on one strategy's index (default: the strategy's evaluated
    configurations and the rankings their funnels read): ``S/NAME``'s ``needle_rank`` when evaluated, else
    built from the registry (one that embeds needs the ``encoder``; the ``store`` reuses query vectors)."""
    if names is None:
        own = [c.retriever for c in ev.results if not c.external and c.strategy == strategy]
        names = [n for r in own for n in (r, *retriever_spec(r).stage_inputs())]
    names = list(dict.fromkeys(names))
    out = {}
    for name in names:
        cfg = Config(strategy, name)
        if cfg in ev.results:
            out[name] = ev.results[cfg].needle_rank
    missing = [n for n in names if n not in out]
    if not missing:
        return out
    index = ev.indexes[strategy]
    texts = tuple(q.text for q in ev.queries)
    vectors = None
    embedding = [n for n in missing if embeds(n)]
    if embedding:
        if encoder is None:
            raise ValueError(f"{strategy}/{embedding[0]} was not evaluated: pass encoder= to compute its ranks "
                             f"(it ranks by the query embeddings), or evaluate {strategy}/{embedding[0]} too")
        vectors = store.embed(encoder, list(texts)).vectors if store is not None else encoder.encode(list(texts))
    batch = QueryBatch(texts, vectors)
    # Built from the registry, exactly as the evaluation builds them.
    ctx = index_context(index, RunContext(encoder=encoder, store=store))
    for name in missing:
        retriever = build_retriever(name, ctx)
        rankings = retriever.rank(batch)
        orders = np.stack([r.order for r in rankings])
        # A retriever that declares a zero score "not retrieved" (BM25) is counted as the evaluation counts it.
        scores = np.stack([r.scores for r in rankings]) if getattr(retriever, "zero_is_unmatched", False) else None
        out[name] = _holder_ranks(orders, index.holders, ev.queries, scores)
    return out


def _fmt_rank(rank: int, pool: int) -> str:
    return f"{rank}" + (" (in its top %d)" % pool if rank <= pool else "")


def funnel(ev: Evaluation, config: Config | str, gate: Gate | None = None, *, pool: int = RERANK_HEAD, encoder=None,
           store=None, _ranks: dict[str, np.ndarray] | None = None) -> Funnel:
    """The stage at which each answerable query was lost under ``config`` at ``gate`` (see the module notes)."""
    res = ev.result(config)
    cfg = res.config
    if cfg.external:
        raise ValueError(f"{cfg.label} is an external run: its pipeline stages are not ours to see; "
                         "the funnel needs a ragdiag configuration (e.g. E/hybrid)")
    gate = Gate() if gate is None else gate
    width = res.top_order.shape[1]  # a corpus with fewer chunks than k or keep: the whole list
    gate = Gate(min(gate.keep, width), gate.cut, min(gate.k, width))
    k, cut = gate.k, gate.cut
    index = ev.indexes[cfg.strategy]
    spec = retriever_spec(cfg.retriever)
    reranker = spec.pool is not None  # it rescores another ranking's head
    inputs = spec.stage_inputs()
    ranks = _ranks
    if ranks is None and inputs:
        ranks = needle_ranks(ev, cfg.strategy, inputs, encoder=encoder, store=store)
    fused = retriever_spec(spec.pool).fuses if reranker else spec.fuses
    pool_ranks = np.asarray(ranks[spec.pool]) if reranker else res.needle_rank
    ladder = query_outcomes(ev, cfg, gate, pool=pool, pool_rank=pool_ranks)
    rows = []
    for i, q in enumerate(ev.queries):
        if not q.in_domain:
            continue
        question = ev.truth.question(q.question_id)
        final = int(res.needle_rank[i])
        holders = index.holders[q.question_id]
        stage_ranks = {n: int(ranks[n][i]) for n in inputs}
        stage_ranks[cfg.retriever] = final
        dense_rank, bm25_rank = (stage_ranks.get(c.removesuffix("_rank")) or None for c in RANK_COLUMNS)
        pool_rank = int(pool_ranks[i])
        rerank = ""
        if reranker and holders.size:
            inside_before, inside_after = 1 <= pool_rank <= k, 1 <= final <= k
            rerank = "demoted" if inside_before and not inside_after else (
                "promoted" if inside_after and not inside_before else "")
        stage = ladder[i].outcome
        detail = ""
        if stage == "destroyed":
            cuts = [d.cuts for d in index.report.destroyed if d.question_id == q.question_id]
            detail = f"cut at {', '.join(map(str, cuts[0]))}" if cuts and cuts[0] else "no chunk holds it whole"
        elif stage == "truncated":
            detail = f"every holder is cut by the encoder window before character {question.end}"
        elif stage == "not-in-pool":
            if reranker:
                detail = f"{spec.pool} rank {pool_rank}, outside the {pool} candidates reranked"
            elif fused:
                said = [f"{n} rank {_fmt_rank(stage_ranks[n] or None, pool)}" for n in fused]
                had = [n for n in fused if stage_ranks[n] and stage_ranks[n] <= pool]
                detail = (f"{cfg.retriever} rank {pool_rank}; " + ", ".join(said)
                          + (f"; {' and '.join(had)} had it" if had else "; neither input had it in its top %d" % pool))
            else:
                detail = f"rank {pool_rank}, outside the top {pool}"
        elif stage == "ranked-low":
            detail = f"rank {final} > k = {k}" + (f" ({spec.pool} rank {pool_rank})" if reranker else "")
        elif stage == "refused":
            detail = f"nothing in the top {gate.window(width)} is closer than {cut_as_given(cut)}"
        elif stage == "kept-but-wrong":
            d = res.needle_distance[i]
            detail = (f"the holder is at distance {d:.3f} (>= cut {cut_as_given(cut)}) or outside the top "
                      f"{gate.window(width)}")
        rows.append(QueryStage(q.id, q.question_id, q.phrasing, stage, rerank, dense_rank, bm25_rank,
                               pool_rank or None, final or None, detail))
    return Funnel(cfg, gate, pool, tuple(rows))


def funnels(ev: Evaluation, configs: Iterable[Config | str] | None = None, gate: Gate | None = None, *,
            pool: int = RERANK_HEAD, encoder=None, store=None, errors: dict[str, str] | None = None) -> list[Funnel]:
    """:func:`funnel` of every (or each given) ragdiag configuration; external runs are skipped.

    A ranking's needle ranks are computed once per strategy for all the
    configurations that read them. ``errors``: when given, a configuration whose funnel
    cannot be had (a ``ValueError``, e.g. a reranker without ``S/dense`` and
    no ``encoder``) is left out and its reason recorded there under its
    label; otherwise the error propagates.
    """
    chosen = [parse_key(c) if isinstance(c, str) else c for c in (configs or ev.results)]
    known: dict[str, dict[str, np.ndarray]] = {}  # strategy -> ranking -> needle ranks
    failed: dict[tuple[str, tuple[str, ...]], ValueError] = {}

    def ranks_of(strategy: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        have = known.setdefault(strategy, {})
        missing = tuple(n for n in names if n not in have)
        if missing:
            if (strategy, missing) not in failed:
                try:
                    have.update(needle_ranks(ev, strategy, missing, encoder=encoder, store=store))
                except ValueError as exc:  # the same reason for every configuration that needs them
                    failed[(strategy, missing)] = exc
            if (strategy, missing) in failed:
                raise failed[(strategy, missing)]
        return {n: have[n] for n in names}

    out = []
    for cfg in chosen:
        if cfg.external:
            continue
        try:
            inputs = retriever_spec(cfg.retriever).stage_inputs()
            ranks = ranks_of(cfg.strategy, inputs) if inputs else None
            out.append(funnel(ev, cfg, gate, pool=pool, _ranks=ranks))
        except ValueError as exc:
            if errors is None:
                raise
            errors[cfg.label] = str(exc)
    return out


def funnel_rows(items: Sequence[Funnel]) -> list[dict]:
    """One row per configuration: count per stage, promoted/demoted, and the queries."""
    rows = []
    for f in items:
        row: dict = {"config": f.config.label, "queries": len(f.rows)}
        row.update(f.counts())
        reranker = f.reranker
        row["promoted"] = f.promoted if reranker else None
        row["demoted"] = f.demoted if reranker else None
        rows.append(row)
    return rows


def funnel_long(items: Sequence[Funnel], *, seed: int = SEED) -> list[dict]:
    """One row per (configuration, stage): count, share and its 95% clustered Wilson interval over questions."""
    out = []
    for f in items:
        ivs = f.intervals(seed=seed)
        for s in LADDER:
            iv = ivs[s]
            out.append({"config": f.config.label, "stage": s, "queries": iv.successes, "of": iv.trials,
                        "share": iv.estimate, "low": iv.low, "high": iv.high})
    return out


def stage_records(f: Funnel, ev: Evaluation | None = None) -> list[dict]:
    """Per query rows of a funnel (with the query text when ``ev`` is given)."""
    texts = {q.id: q.text for q in ev.queries} if ev is not None else {}
    return [{"config": f.config.label, **r.row(), **({"text": texts[r.query_id]} if texts else {})} for r in f.rows]


def format_funnel(items: Sequence[Funnel], *, seed: int = SEED) -> str:
    """The funnel as a text table: count and share [95% clustered Wilson interval over questions] per stage."""
    table = []
    for f in items:
        ivs = f.intervals(seed=seed)
        row = {"config": f.config.label, "queries": len(f.rows)}
        for s in LADDER:  # each rung under its one name (the JSON keeps the machine names)
            iv = ivs[s]
            row[RUNG_WORDS[s]] = count_rate_text(iv) if iv.trials else "0"
        if f.reranker:
            row["promoted/demoted"] = f"+{f.promoted}/-{f.demoted}"
        else:
            row["promoted/demoted"] = ""
        table.append(row)
    first = items[0] if items else None
    head = (f"first stage lost per answerable query (k = {first.k}, pool = {first.pool}, gate cut "
            f"{cut_as_given(first.cut)} "
            f"keep {first.keep}); count (share [{SHARE_INTERVAL_LABEL}])"
            if first else "")
    return head + "\n" + format_rows(table)


#: The funnel's rank columns of ``per_query`` (:func:`stage_columns`).
STAGE_COLUMNS = (*RANK_COLUMNS, "pool_rank", "final_rank")


def stage_columns(ev: Evaluation, gate: Gate | None = None, *, encoder=None,
                  store=None) -> dict[tuple[str, str], dict]:
    """``(config label, query id) -> {dense_rank, bm25_rank, pool_rank, final_rank}`` for ``per_query``.

    Answerable queries of ragdiag configurations only. A configuration whose
    first-stage ranks cannot be had (a reranker or hybrid evaluated without
    ``S/dense`` and no ``encoder`` given) is left out, never guessed.
    """
    out: dict[tuple[str, str], dict] = {}
    for f in funnels(ev, gate=gate, encoder=encoder, store=store, errors={}):
        for r in f.rows:
            out[(f.config.label, r.query_id)] = {"dense_rank": r.dense_rank, "bm25_rank": r.bm25_rank,
                                                 "pool_rank": r.pool_rank, "final_rank": r.final_rank}
    return out
