"""Recall at every granularity, and redundancy of the top k.

**Granularity.** Span-level recall is ragdiag's rule: a chunk of the top k
holds the needle whole. Section-level: a chunk of the top k overlaps the
needle's section (same document, ``##`` section span). Document-level: a chunk
of the top k comes from the needle's document. When document recall is high
and span recall low, the retriever finds the right place but the chunking
splits the answer. Ranks past the kept top list (20) count as misses, so
these are exact for every k up to 20. Intervals are the same 95% Wilson
intervals as span recall (:func:`ragdiag.analyses.summary.summary_rows`).

**Credit once.** Every level credits a query once, at its first (best-ranked)
qualifying chunk: with overlapping chunks several chunks may hold the same
needle, and recall stays a share of queries in [0, 1], never above 1.

**Redundancy.** A top-k slot is redundant when its chunk's text overlaps a
higher-ranked chunk of the same list (same document) by more than half of the
shorter of the two: wasted context. Per configuration: the share of the top-k
slots of every query that are redundant, with a 95% clustered Wilson
interval over questions (all phrasings of one question one unit).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .clustered import query_clusters
from .compare.intervals import clustered_rate, clustered_share
from ..core.defaults import KS, PRIMARY_K
from ..evaluation.records import Config, Evaluation, parse_key
from ..core.metrics import hits_at_k
from ..evaluation.rows import GranularRow, RedundancyRow
from ..core.stats import Interval

__all__ = ["LEVELS", "level_ranks", "granular_rows", "redundant_slots", "redundancy", "redundancy_rows"]

LEVELS = ("document", "section", "span")


def level_ranks(ev: Evaluation, config: Config | str, level: str) -> np.ndarray:
    """Per query: 1-based rank of the first chunk that counts at ``level`` (0: none in the kept list; ood: 0)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; choose from {', '.join(LEVELS)}")
    res = ev.result(config)
    if level == "span":
        return res.needle_rank.copy()
    if res.config.external:
        raise ValueError(f"{res.config.label} is an external run: its hits carry no chunk of ours to place; "
                         "only span-level recall applies")
    chunks = ev.indexes[res.config.strategy].chunks
    out = np.zeros(len(ev.queries), dtype=np.int64)
    for i, q in enumerate(ev.queries):
        if not q.in_domain:
            continue
        question = ev.truth.question(q.question_id)
        sec = ev.corpus.document(question.doc_id).section_at(question.start)
        for r, pos in enumerate(res.top_order[i], 1):
            c = chunks[int(pos)]
            if c.doc_id != question.doc_id:
                continue
            if level == "document" or (c.start < sec.end and c.end > sec.start):
                out[i] = r
                break
    return out


def granular_rows(ev: Evaluation, *, phrasing: str = "all", ks: Sequence[int] = KS,
                  configs: Sequence[Config | str] | None = None) -> list[GranularRow]:
    """One :class:`~ragdiag.evaluation.rows.GranularRow` per (configuration, level): R@k with 95% intervals over questions."""
    mask = ev.mask(phrasing)
    rows = []
    for cfg in configs or list(ev.results):
        cfg = parse_key(cfg) if isinstance(cfg, str) else cfg
        for level in LEVELS:
            if cfg.external and level != "span":
                continue
            ranks = level_ranks(ev, cfg, level)[mask]
            recall = {k: clustered_rate(hits_at_k(ranks, k), ev.groups(mask)) for k in ks}
            rows.append(GranularRow(cfg.label, level, int(mask.sum()), recall))
    return rows


def redundant_slots(spans: Sequence[tuple[str, int, int]]) -> np.ndarray:
    """Per slot of a ranked list of ``(doc_id, start, end)``: does it overlap a higher-ranked span by more than half?

    More than half of the shorter of the two spans, in the same document.

    >>> redundant_slots([("a", 0, 100), ("a", 40, 140), ("a", 60, 200), ("b", 0, 100)]).tolist()
    [False, True, True, False]
    >>> redundant_slots([("a", 0, 100), ("a", 50, 150)]).tolist()  # exactly half: not more than half
    [False, False]
    """
    out = np.zeros(len(spans), dtype=bool)
    for j, (dj, sj, ej) in enumerate(spans):
        for di, si, ei in spans[:j]:
            if di != dj:
                continue
            overlap = min(ei, ej) - max(si, sj)
            if overlap > 0 and 2 * overlap > min(ei - si, ej - sj):
                out[j] = True
                break
    return out


def redundancy(ev: Evaluation, config: Config | str, *, k: int = PRIMARY_K) -> Interval:
    """Share of the top-k slots (over all queries) whose text repeats a higher-ranked chunk's, question-clustered."""
    res = ev.result(config)
    if res.config.external:
        raise ValueError(f"{res.config.label} is an external run: its hits carry no spans of ours to compare")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    k = min(k, res.top_order.shape[1])  # a corpus with fewer chunks than k: the whole list
    chunks = ev.indexes[res.config.strategy].chunks
    per_query = np.array([
        redundant_slots([(chunks[int(p)].doc_id, chunks[int(p)].start, chunks[int(p)].end)
                         for p in res.top_order[i, :k]]).sum()
        for i in range(len(ev.queries))
    ], dtype=np.float64)
    slots = np.full(len(ev.queries), float(min(k, res.top_order.shape[1])))
    return clustered_share(per_query, query_clusters(ev.queries), slots)


def redundancy_rows(ev: Evaluation, *, k: int = PRIMARY_K) -> list[RedundancyRow]:
    """One :class:`~ragdiag.evaluation.rows.RedundancyRow` per ragdiag configuration: redundant slots of the top k."""
    rows = []
    for cfg in ev.results:
        if cfg.external:
            continue
        iv = redundancy(ev, cfg, k=k)
        rows.append(RedundancyRow(cfg.label, k, iv.successes, iv.trials, iv))
    return rows
