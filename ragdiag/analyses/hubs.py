"""What crowded the answer out: hub chunks, boilerplate-like text, and the chunks above a holder.

A *hub* is a chunk in the top ``k`` of an unusually large share of queries.
Its k-occurrence ``N_k`` (queries whose top ``k`` holds it, ood queries
included: a hub crowds every query) is set against the expectation if every
chunk were equally likely, ``E = queries * k / chunks``. A chunk is flagged a
hub when ``N_k >= HUB_RATIO * E`` and it reaches the top ``k`` of at least
``HUB_MIN_CLUSTERS`` different questions (the phrasings of one question
legitimately share a chunk, so they count once).

Boilerplate-like text is recognised line by line (:func:`boilerplate_flags`):
navigation (short link/list lines, "Examples:"/"See also" lists), licence
lines, reference lists, code-only and table-only chunks.

A hub *displaced* an answerable query when it is in that query's top ``k``
while no chunk holding the query's needle is (and the needle was not destroyed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from .clustered import query_clusters
from ..core.defaults import PRIMARY_K
from ..evaluation.records import Config, Evaluation

__all__ = [
    "HUB_RATIO",
    "HUB_MIN_CLUSTERS",
    "boilerplate_flags",
    "k_occurrence",
    "Hub",
    "hubs",
    "hub_rows",
    "hubness",
    "Crowder",
    "Crowding",
    "crowding",
]

#: A hub reaches the top k at least this many times its expected k-occurrence ...
HUB_RATIO = 5.0
#: ... of at least this many different questions (or ood queries).
HUB_MIN_CLUSTERS = 3

_LICENCE = re.compile(r"copyright|all rights reserved|spdx-license|licensed under|released under the .{0,40}licen|"
                      r"\b(bsd|mit|apache|gnu|gpl|creative commons)\b[- ]?\S*\s*licen|©|permission is hereby granted",
                      re.I)
_REF_HEAD = re.compile(r"^\s*(#+\s*)?(references|bibliography|citations|further reading)\s*:?\s*$", re.I)
_REF_LINE = re.compile(r"^\s*(\[[\w.+:-]{1,20}\](?!\()|\d+\.\s+[A-Z][\w-]+,)|\bet al\.|\bdoi\b|arxiv|proceedings|"
                       r"journal of|\bvol\.|\bpp\.|“[^”]{8,}”.*\b(19|20)\d\d\b|\((19|20)\d\d[a-z]?\)\.|"
                       r"\b(proc\.|university press|conference on|workshop on|transactions on|symposium on)", re.I)
_NAV_HEAD = re.compile(r"^\s*(#+\s*)?(examples?|see also|related|contents|table of contents|navigation|"
                       r"next|previous|prev|back to top|skip to content|on this page)\s*:?\s*$", re.I)
_SEE_ALSO = re.compile(r"^\W{0,4}see also\b", re.I)  # a cross-reference line: "See also X for Y."
_LINK = re.compile(r"\[[^\]]+\]\([^)]+\)")
_LIST = re.compile(r"^\s*([-*+•]|\d+[.)])\s+")
_CODE_LINE = re.compile(r"^\s*(>>>|\.\.\.(\s|$)|\$ |#!|import |from \S+ import )")
_TABLE = re.compile(r"^\s*\|.*\|?\s*$|^\s*[-:| ]{3,}\s*$")


def boilerplate_flags(text: str) -> tuple[str, ...]:
    """Boilerplate kinds of a chunk's text, judged by the share of its non-blank characters.

    ``navigation``: at least half are markdown links, "Examples:"/"See also"-style
    headings, or short title-like list items (capitalised, no closing
    punctuation) under such a heading or in a chunk that starts inside a list;
    ``references``: at least half are a references heading or citation lines;
    ``code-only``: at least 80% inside code fences or interpreter lines;
    ``table-only``: at least 80% table rows; ``licence``: at least a quarter are
    short licence or copyright lines.

    >>> boilerplate_flags("Copyright 2024 ACME. All rights reserved.")
    ('licence',)
    >>> boilerplate_flags("```python\\n>>> import numpy as np\\n>>> np.zeros(3)\\n```")
    ('code-only',)
    >>> boilerplate_flags("The kernel cache size has a strong impact on run times for large problems.")
    ()
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    total = sum(len(ln.strip()) for ln in lines)
    if not total:
        return ()
    nav = refs = code = table = lic = 0
    # A chunk can start inside a code block (the cut fell in it). A fence with a language tag opens a block;
    # a bare first fence with text before it closes one when the fences are odd, or when the next one opens.
    fences = [i for i, ln in enumerate(lines) if ln.strip().startswith(("```", "~~~"))]
    tagged = [lines[i].strip() not in ("```", "~~~") for i in fences]
    fenced = bool(fences and fences[0] > 0 and not tagged[0]
                  and (len(fences) % 2 == 1 or (len(fences) > 1 and tagged[1])))
    in_refs = False
    # List items count as navigation only in a list context: after an "Examples:"-style heading, or in a
    # chunk that starts inside a list (a list of example titles cut from its heading).
    nav_context = bool(_LIST.match(lines[0]))
    for ln in lines:
        s = ln.strip()
        n = len(s)
        if s.startswith("```") or s.startswith("~~~"):
            fenced = not fenced
            code += n
            continue
        if fenced or _CODE_LINE.match(ln):
            code += n
            continue
        if _LICENCE.search(s) and n < 300:
            lic += n
        if _REF_HEAD.match(s):
            in_refs = True
            refs += n
            continue
        if s.startswith("#") and not _NAV_HEAD.match(s):
            in_refs = False  # a new section ends a reference list
        if _NAV_HEAD.match(s) or (_SEE_ALSO.match(s) and n < 200):
            in_refs = False
            nav_context = True
            nav += n
            continue
        if (_TABLE.match(ln) and "|" in s) or s.count("|") >= 2 or re.fullmatch(r"[-:| ]{3,}", s):
            table += n
            continue
        if _REF_LINE.search(s) or (in_refs and (_LIST.match(ln) or len(s) < 200)):
            refs += n
            continue
        links = sum(len(m.group(0)) for m in _LINK.finditer(s))
        body = _LIST.sub("", s, count=1)
        title_like = bool(_LIST.match(ln)) and n < 100 and body[:1].isupper() and not body.endswith((".", ":", ";", ","))
        if links >= n / 2 or (nav_context and title_like):
            nav += n
    out = []
    if nav >= total / 2:
        out.append("navigation")
    if lic >= total / 4:
        out.append("licence")
    if refs >= total / 2:
        out.append("references")
    if code >= 0.8 * total:
        out.append("code-only")
    if table >= 0.8 * total:
        out.append("table-only")
    return tuple(out)


def k_occurrence(result, k: int, *, mask: np.ndarray | None = None, n_chunks: int | None = None) -> np.ndarray:
    """Per chunk position: in how many queries' top ``k`` it is (``mask`` selects the queries).

    >>> from types import SimpleNamespace
    >>> res = SimpleNamespace(top_order=np.array([[0, 1, 2], [0, 2, 1], [0, 1, 3]]))
    >>> k_occurrence(res, 2).tolist()  # chunk 0 in all three top 2s, chunk 1 in two, chunk 2 in one
    [3, 2, 1, 0]
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    k = min(k, result.top_order.shape[1])  # a corpus with fewer chunks than k: the whole list
    top = result.top_order[:, :k] if mask is None else result.top_order[np.asarray(mask, dtype=bool), :k]
    n = n_chunks if n_chunks is not None else int(result.top_order.max()) + 1
    return np.bincount(top.ravel(), minlength=n)


def hubness(ev: Evaluation, config: Config | str, *, k: int = PRIMARY_K) -> float:
    """Skewness of the k-occurrence distribution over all chunks (0: no hubs; large positive: hubs)."""
    from scipy.stats import skew

    res = ev.result(config)
    counts = k_occurrence(res, k, n_chunks=len(ev.indexes[res.config.strategy].chunks))
    return float(skew(counts)) if counts.std() > 0 else 0.0


@dataclass(frozen=True)
class Hub:
    """One chunk's k-occurrence under a configuration."""

    config: str
    chunk_id: str
    position: int
    doc_id: str
    section: str
    occurrences: int  # queries whose top k holds it
    clusters: int  # different questions (ood queries count alone) among them
    expected: float  # queries * k / chunks
    holds_for: tuple[str, ...]  # question ids whose needle it holds
    flags: tuple[str, ...]  # boilerplate kinds
    queries: tuple[str, ...]  # the queries whose top k holds it
    displaced: tuple[str, ...]  # answerable queries it sat in while their needle was outside the top k
    preview: str

    @property
    def ratio(self) -> float:
        """k-occurrence over its expectation, ``N_k / E`` (infinite when nothing was expected).

        A chunk in the top 4 of 12 queries, out of 80 chunks and 60 queries
        (``E = 60 * 4 / 80 = 3``), occurs four times as often as expected:

        >>> h = Hub("C/dense", "c1", 0, "d", "", occurrences=12, clusters=5, expected=60 * 4 / 80,
        ...         holds_for=(), flags=(), queries=(), displaced=(), preview="")
        >>> h.ratio, h.hub
        (4.0, False)
        """
        return self.occurrences / self.expected if self.expected else float("inf")

    @property
    def hub(self) -> bool:
        """Flagged a hub: ``ratio >= HUB_RATIO`` and in the top k of at least ``HUB_MIN_CLUSTERS`` questions."""
        return self.ratio >= HUB_RATIO and self.clusters >= HUB_MIN_CLUSTERS

    def row(self) -> dict:
        """The flat table row (column name to value) the page and the export show."""
        return {"config": self.config, "chunk": self.chunk_id, "doc_id": self.doc_id,
                "section": self.section or "(preamble)", "occurrences": self.occurrences,
                "questions": self.clusters, "expected": round(self.expected, 4), "ratio": round(self.ratio, 2),
                "hub": self.hub, "boilerplate": ", ".join(self.flags), "holds needle of": ", ".join(self.holds_for),
                "displaced": len(self.displaced), "displaced queries": ", ".join(self.displaced),
                "preview": self.preview}


def hubs(ev: Evaluation, config: Config | str, *, k: int = PRIMARY_K, top: int | None = 20,
         only_hubs: bool = False) -> list[Hub]:
    """Chunks of ``config`` by k-occurrence, most frequent first (ties: more questions, then chunk order)."""
    from ..core.validate import positive_int, require_type

    require_type(ev, Evaluation, "ev", hint="the result of ragdiag.evaluation.evaluate.evaluate")
    positive_int(k, "k")
    if top is not None:
        positive_int(top, "top")
    res = ev.result(config)
    cfg = res.config
    if cfg.external:
        raise ValueError(f"{cfg.label} is an external run: its hits are not chunks of an index of ours")
    index = ev.indexes[cfg.strategy]
    chunks = index.chunks
    counts = k_occurrence(res, k, n_chunks=len(chunks))
    nq = len(ev.queries)
    expected = nq * k / max(len(chunks), 1)
    clusters = query_clusters(ev.queries)
    topk = res.top_order[:, :k]
    holds_for: dict[int, list[str]] = {}
    for qid, h in index.holders.items():
        for p in h.tolist():
            holds_for.setdefault(int(p), []).append(qid)
    missed = np.array([q.in_domain and index.holders[q.question_id].size > 0 and not 1 <= res.needle_rank[i] <= k
                       for i, q in enumerate(ev.queries)])
    n_clusters = np.array([len(set(clusters[(topk == p).any(axis=1)])) if counts[p] else 0
                           for p in range(len(chunks))])
    order = sorted(np.flatnonzero(counts), key=lambda p: (-counts[p], -n_clusters[p], p))
    out = []
    for p in order:
        c = chunks[p]
        in_top = (topk == p).any(axis=1)
        h = Hub(
            config=cfg.label, chunk_id=c.id, position=int(p), doc_id=c.doc_id, section=c.section,
            occurrences=int(counts[p]), clusters=int(n_clusters[p]), expected=expected,
            holds_for=tuple(holds_for.get(int(p), ())), flags=(),
            queries=tuple(ev.queries[i].id for i in np.flatnonzero(in_top)),
            displaced=tuple(ev.queries[i].id for i in np.flatnonzero(in_top & missed)),
            preview=" ".join(c.content.split())[:160],
        )
        if only_hubs and not h.hub:
            continue  # before reading its text: most chunks that occur are not hubs
        out.append(replace(h, flags=boilerplate_flags(c.content)))
        if top is not None and len(out) >= top:
            break
    return out


def hub_rows(items: Sequence[Hub]) -> list[dict]:
    """The table rows of ``items``, in their order (see :meth:`Hub.row`)."""
    return [h.row() for h in items]


@dataclass(frozen=True)
class Crowder:
    """One passage given in the answer's place: ranked above the passage holding the answer, within the gate's keep.

    ``closer_by``: the answer's distance minus this passage's (positive: this one is closer to the query; None
    when the answer's distance is unknown).
    """

    rank: int
    chunk: str
    doc_id: str
    section: str
    distance: float
    closer_by: float | None
    k_occurrence: int
    ratio: float | None  # k-occurrence over its expectation if every chunk were as likely
    boilerplate: tuple[str, ...]


@dataclass(frozen=True)
class Crowding:
    """What crowded one query's answer out of what the gate gives (:func:`crowding`).

    ``answer_position``: the chunk quoted as the answer's passage (the first holder in the ranked list, else the
    first passage holding the answer; None: no passage holds it whole); ``answer_rank``: its rank (None: not in the
    ranked list); ``answer_distance``: its distance when ranked, else the closest holder's; ``above``: how many
    passages rank above it (every ranked one when it is not ranked); ``crowders``: those of them the gate's keep
    gives instead (empty when the answer is itself within keep).
    """

    answer_position: int | None
    answer_rank: int | None
    answer_distance: float | None
    holders: int
    above: int
    crowders: tuple[Crowder, ...]


def crowding(ev: Evaluation, config: Config | str, query_index: int, *, keep: int = PRIMARY_K) -> Crowding:
    """The passages given in place of the answer for one query: the first ``keep`` ranked above its first holder.

    Each with its distance against the answer's, its k-occurrence at ``keep`` under ``config`` and boilerplate
    flags: what pushed the answer out of the passages given.
    """
    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep}")
    res = ev.result(config)
    chunks = ev.indexes[res.config.strategy].chunks
    query = ev.queries[query_index]
    holders = ev.indexes[res.config.strategy].holders.get(query.question_id, ()) if query.in_domain else ()
    counts = k_occurrence(res, keep, n_chunks=len(chunks))
    expected = len(ev.queries) * keep / max(len(chunks), 1)
    width = res.top_order.shape[1]
    rank = int(res.needle_rank[query_index]) if query.in_domain else 0
    if rank >= 1:
        position, distance = int(res.top_order[query_index, rank - 1]), float(res.top_distance[query_index, rank - 1])
    else:
        nd = float(res.needle_distance[query_index]) if query.in_domain else float("nan")
        position, distance = (int(holders[0]) if len(holders) else None), (nd if np.isfinite(nd) else None)
    above = rank - 1 if rank >= 1 else width
    out = []
    given_instead = 0 if 1 <= rank <= keep else min(above, keep, width)  # the answer within keep: nobody took its place
    for r in range(given_instead):
        p = int(res.top_order[query_index, r])
        d = float(res.top_distance[query_index, r])
        c = chunks[p]
        out.append(Crowder(r + 1, c.id, c.doc_id, c.section or "(preamble)", d,
                           None if distance is None else distance - d, int(counts[p]),
                           float(round(counts[p] / expected, 2)) if expected else None, boilerplate_flags(c.content)))
    return Crowding(position, rank or None, distance, len(holders), above, tuple(out))
