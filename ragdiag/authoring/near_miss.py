"""Near-miss out-of-domain candidates: an answerable fact with its subject swapped, that no chunk answers.

An off-topic question is hardest for the gate when it speaks the corpus's own
language. This module takes answerable facts (the drafted questions of
:mod:`ragdiag.authoring.drafts`: "Wie wird der Rahmen gewaschen?") and swaps
their subject:

* **near**: for a subject another document uses in a question of the same frame
  (same rule and verb form, code for code, so the question stays grammatical):
  "Wie wird der Deckel gewaschen?";
* **far**: for a term from outside the corpus vocabulary (a fixed list per
  language; none of its content words occurs in the corpus): "Wie wird die
  Wärmepumpe gewaschen?".

A candidate is kept only when no chunk (of the default strategy's chunks)
answers it under three checks, each against the drafted question and its
**needle-bearing chunk** (the chunk holding the needle whole):

1. *words*: no chunk holds every content word of the swapped-in subject
   together with half (rounded up) of the question's other content words;
2. *BM25*: no chunk scores as high as the drafted question scores with its
   needle-bearing chunk (:class:`ragdiag.retrieval.bm25.BM25Index`, the scores
   the ``bm25`` retriever ranks by);
3. *dense*: no chunk is as close (cosine similarity of the unit embeddings the
   ``dense`` retriever and the gate use) as the drafted question is to its
   needle-bearing chunk. Without an encoder this check is not run, and the
   result says so.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..core.defaults import DEFAULT_STRATEGY, SEED
from ..documents.corpus import Corpus
from .drafts import DraftParts, document_language, draft_parts, specificity
from .text import content_words, corpus_sentences

__all__ = ["NearMiss", "NearMisses", "near_misses", "FAR_TERMS", "CHECKS"]

#: Terms from outside a corpus's vocabulary, per language and grammatical number (each checked against the corpus).
FAR_TERMS = {
    ("en", "code"): ("`BrewTimer`", "`pedal_torque`", "`SoilMoisture`", "`roast_level`"),
    ("en", "sg"): ("the espresso machine", "a sourdough starter", "the heat pump", "a tax return", "the bicycle chain"),
    ("en", "pl"): ("espresso machines", "heat pumps", "winter tyres", "tax returns"),
    ("de", "sg"): ("die Steuererklärung", "der Reisepass", "die Wärmepumpe", "das Aquarium", "der Zahnarzttermin"),
    ("de", "pl"): ("Solarmodule", "Winterreifen", "Kontaktlinsen", "Steuerbescheide"),
}
_PLURAL = frozenset("are do were werden sind müssen sollten sollen können dürfen brauchen bringen enthalten "
                    "benötigen liefern verhindern".split())
#: The checks, in words (the output states them).
CHECKS = ("words: no chunk holds the swapped-in subject with half of the question's other content words",
          "BM25: no chunk scores as high as the drafted question scores with its needle-bearing chunk",
          "dense: no chunk is as close (cosine) as the drafted question is to its needle-bearing chunk")
#: Near candidates per fact (other subjects tried), far candidates per fact.
NEAR_PER_FACT, FAR_PER_FACT = 8, 2
_IDENT = re.compile(r"`([A-Za-z_][\w.]{2,40})`")
_GENERIC_TITLES = frozenset("""introduction overview implementation details example examples reference tips usage
complexity formulation mathematical note notes summary classification regression algorithms""".split())


@dataclass(frozen=True)
class NearMiss:
    """An off-topic candidate: ``query``, ``kind`` (near, far), the fact it came from and its check scores.

    ``bm25``/``dense``: the best chunk's score for the candidate; ``bm25_ref``/``dense_ref``: the drafted
    question's score with its needle-bearing chunk (the level a chunk that answers reaches).
    """

    query: str
    kind: str
    fact: str
    doc_id: str
    swapped: str
    swapped_in: str
    swapped_from: str  # a document id, or "outside the corpus"
    bm25: float
    bm25_ref: float
    dense: float | None = None
    dense_ref: float | None = None

    def as_json(self) -> dict:
        """Plain fields, scores rounded to 4 decimals."""
        r = (lambda x: None if x is None else round(float(x), 4))
        return {"query": self.query, "kind": self.kind, "fact": self.fact, "doc": self.doc_id,
                "swapped": self.swapped, "swapped_in": self.swapped_in, "from": self.swapped_from,
                "bm25": {"best_chunk": r(self.bm25), "threshold": r(self.bm25_ref)},
                "dense": None if self.dense is None else {"best_chunk": r(self.dense), "threshold": r(self.dense_ref)}}


@dataclass(frozen=True)
class NearMisses:
    """Kept candidates, how many were dropped by which check, and the chunks checked against."""

    kept: tuple[NearMiss, ...]
    dropped: dict
    generated: int
    strategy: str
    dense_checked: bool
    notes: tuple[str, ...] = field(default=())

    def checks(self) -> tuple[str, ...]:
        """The checks that were run, in words."""
        return CHECKS if self.dense_checked else CHECKS[:2]

    def as_json(self) -> dict:
        """The ``truth near-miss --json`` object."""
        return {"kept": len(self.kept), "generated": self.generated, "dropped": dict(self.dropped),
                "chunks": f"strategy {self.strategy}", "checks": list(self.checks()),
                "dense_checked": self.dense_checked, "candidates": [c.as_json() for c in self.kept],
                "notes": list(self.notes)}

    def text(self) -> str:
        """The plain-text listing of ``truth near-miss``."""
        kinds = Counter(c.kind for c in self.kept)
        drop = ", ".join(f"{n} by {k}" for k, n in self.dropped.items() if n) or "none"
        lines = [f"{len(self.kept)} near-miss off-topic candidates ({kinds['near']} near, {kinds['far']} far) of "
                 f"{self.generated} generated; dropped: {drop}",
                 f"kept only when no chunk of strategy {self.strategy} answers them:"]
        lines += [f"  - {c}" for c in self.checks()]
        if not self.dense_checked:
            lines.append("  (the dense check was not run: no encoder; drop --no-dense to run it)")
        lines.append("")
        for c in self.kept:
            dense = "" if c.dense is None else f"; dense best {c.dense:.3f} < {c.dense_ref:.3f}"
            lines.append(f"[{c.kind}] {c.query}")
            lines.append(f"    from: {c.fact} ({c.swapped} -> {c.swapped_in}, {c.swapped_from}); "
                         f"BM25 best {c.bm25:.2f} < {c.bm25_ref:.2f}{dense}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def ood_entries(self, *, prefix: str = "nm", taken: set[str] | frozenset = frozenset()) -> list[dict]:
        """Ground-truth ``ood`` entries of the kept candidates (ids ``nm01``... not in ``taken``)."""
        out, i = [], 0
        for c in self.kept:
            i += 1
            while f"{prefix}{i:02d}" in taken:
                i += 1
            out.append({"id": f"{prefix}{i:02d}", "kind": c.kind, "query": c.query, "source": "near-miss"})
        return out


def _is_code(subject: str) -> bool:
    return "`" in subject


def _number(frame: str) -> str:
    """``pl`` when the verb before the subject is plural ("What are {}?", "Müssen {} ... werden?"), else ``sg``."""
    head = frame.split("{}")[0].split()
    return "pl" if any(w.lower() in _PLURAL for w in head) else "sg"


def _key(language: str, parts: DraftParts) -> tuple:
    frame = parts.frame or ""
    head = " ".join(frame.split("{}")[0].split()[:2])
    return language, parts.rule, head, _number(frame), _is_code(parts.subject or "")


@dataclass(frozen=True)
class _Fact:
    question: str
    needle: str
    doc_id: str
    start: int
    parts: DraftParts
    language: str


def _facts_and_pool(corpus: Corpus, n_facts: int):
    """Facts to swap (the drafts of the needle suggestions, then other drafted sentences, ``n_facts`` at most)
    and the pool of subjects per frame."""
    from ..documents.truth import NEEDLE_MAX, NEEDLE_MIN, needle_length
    from .suggest import suggest

    langs = {d.id: document_language(d) for d in corpus.documents}
    specific = specificity(corpus)
    facts: list[_Fact] = []
    seen: set[str] = set()

    def add(needle: str, doc_id: str, start: int) -> None:
        lang = langs.get(doc_id)
        parts = draft_parts(needle, lang, specific)
        if parts is not None and parts.frame is not None and parts.question not in seen and len(facts) < n_facts:
            seen.add(parts.question)
            facts.append(_Fact(parts.question, needle, doc_id, start, parts, lang))

    for c in suggest(corpus, n_facts, n_ood=0).questions:
        add(c.needle, c.doc_id, c.start)
    pool: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
    texts = {d.id: d.text for d in corpus.documents}
    for s in corpus_sentences(corpus):
        lang = langs.get(s.doc_id)
        parts = draft_parts(s.text, lang, specific)
        if parts is None or parts.frame is None or not parts.subject:
            continue
        entry = (parts.subject, s.doc_id)
        if entry not in pool[_key(lang, parts)]:
            pool[_key(lang, parts)].append(entry)
        if NEEDLE_MIN <= needle_length(s.text) <= NEEDLE_MAX and texts[s.doc_id].count(s.text) == 1:
            add(s.text, s.doc_id, s.start)
    return facts, pool


def _terms(corpus: Corpus) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Code identifiers and short section titles that occur in one document only: ``(term, doc_id)``."""
    idents: dict[str, set] = defaultdict(set)
    titles: dict[str, set] = defaultdict(set)
    for d in corpus.documents:
        for m in _IDENT.finditer(d.text):
            idents[m.group(0)].add(d.id)
        for s in d.sections:
            t = s.title.strip()
            if (t and 1 <= len(t.split()) <= 3 and not re.search(r"[()\[\]:`,]", t)
                    and not content_words(t) & _GENERIC_TITLES):
                titles[t].add(d.id)
    one = lambda found: sorted((t, next(iter(ds))) for t, ds in found.items() if len(ds) == 1)  # noqa: E731
    return one(idents), one(titles)


def _candidates(corpus: Corpus, facts: list[_Fact], pool) -> list[tuple[_Fact, str, str, str]]:
    """``(fact, query, swapped_in, from)`` for near and far swaps, deterministic (seeded shuffles)."""
    vocab = set()
    for d in corpus.documents:
        vocab |= content_words(d.text)
    idents, titles = _terms(corpus)
    rng = random.Random(SEED)
    out, seen = [], set()
    for f in facts:
        own = content_words(f.parts.subject or "")
        options = list(pool.get(_key(f.language, f.parts), []))
        if _is_code(f.parts.subject):
            options += idents
        elif f.language == "en" and _number(f.parts.frame) == "sg":
            options += titles
        options = [(s, d) for s, d in dict.fromkeys(options) if d != f.doc_id and content_words(s)
                   and not (content_words(s) & own)]
        rng.shuffle(options)
        for subject, doc in options[:NEAR_PER_FACT]:
            q = f.parts.frame.format(subject)
            if q not in seen:
                seen.add(q)
                out.append((f, q, subject, doc))
        kind = "code" if _is_code(f.parts.subject) else _number(f.parts.frame)
        far = [t for t in FAR_TERMS.get((f.language, kind), ()) if not content_words(t) & vocab]
        rng.shuffle(far)
        for term in far[:FAR_PER_FACT]:
            q = f.parts.frame.format(term)
            if q not in seen:
                seen.add(q)
                out.append((f, q, term, "outside the corpus"))
    return out


def _holder(chunks, f: _Fact) -> int | None:
    end = f.start + len(f.needle)
    return next((i for i, c in enumerate(chunks) if c.doc_id == f.doc_id and c.start <= f.start and end <= c.end),
                None)


def _words_answer(chunk_words: list[set], subject: str, query: str) -> bool:
    need = content_words(subject)
    rest = content_words(query) - need
    k = math.ceil(len(rest) / 2)
    return any(need <= w and len(rest & w) >= k for w in chunk_words)


def near_misses(corpus: Corpus, n: int = 30, *, encoder=None, store=None, strategy: str = DEFAULT_STRATEGY,
                facts: int = 40) -> NearMisses:
    """Up to ``n`` near-miss off-topic candidates that no chunk answers (see the module docstring).

    Parameters
    ----------
    encoder : optional
        The embedding model for the dense check (``encode(texts)`` -> unit vectors); None: BM25 and words only.
    store : Store, optional
        Where chunk vectors are looked up and kept (:meth:`ragdiag.index.store.Store.embed`).
    strategy : str
        The chunking strategy whose chunks are checked (default: the default strategy).
    facts : int
        Needle suggestions drafted into the facts that are swapped.
    """
    from ..index.chunking import chunk_corpus, parse_strategies
    from ..retrieval.bm25 import BM25Index

    if n < 1:
        raise ValueError(f"ask for at least one candidate (-n 1 or more), got {n}")
    strat = parse_strategies(strategy)[0]
    chunks = chunk_corpus(corpus, strat)
    texts = [c.embed_text for c in chunks]
    fact_list, pool = _facts_and_pool(corpus, facts)
    cands = _candidates(corpus, fact_list, pool)
    dropped = Counter({"words": 0, "BM25": 0, "dense": 0, "no needle-bearing chunk": 0})
    if not cands:
        return NearMisses((), dict(dropped), 0, strat.name, encoder is not None,
                          ("no drafted fact has a subject another document shares a frame with",))
    holders = {id(f): _holder(chunks, f) for f in fact_list}
    bm25 = BM25Index(texts)
    cand_scores = bm25.scores([q for _, q, _, _ in cands])
    fact_scores = bm25.scores([f.question for f in fact_list])
    fact_row = {id(f): i for i, f in enumerate(fact_list)}
    dense_c = dense_f = chunk_vecs = None
    if encoder is not None:
        chunk_vecs = (store.embed(encoder, texts).vectors if store is not None
                      else np.asarray(encoder.encode(texts), dtype=np.float32))
        dense_c = np.asarray(encoder.encode([q for _, q, _, _ in cands]), dtype=np.float32) @ chunk_vecs.T
        dense_f = np.asarray(encoder.encode([f.question for f in fact_list]), dtype=np.float32) @ chunk_vecs.T
    chunk_words = [content_words(t) for t in texts]
    kept: list[NearMiss] = []
    for i, (f, q, subject, source) in enumerate(cands):
        h = holders[id(f)]
        if h is None:
            dropped["no needle-bearing chunk"] += 1
            continue
        if _words_answer(chunk_words, subject, q):
            dropped["words"] += 1
            continue
        ref = float(fact_scores[fact_row[id(f)], h])
        best = float(cand_scores[i].max())
        if best >= ref:
            dropped["BM25"] += 1
            continue
        d_best = d_ref = None
        if dense_c is not None:
            d_ref = float(dense_f[fact_row[id(f)], h])
            d_best = float(dense_c[i].max())
            if d_best >= d_ref:
                dropped["dense"] += 1
                continue
        kind = "far" if source == "outside the corpus" else "near"
        kept.append(NearMiss(q, kind, f.question, f.doc_id, f.parts.subject, subject, source, best, ref, d_best, d_ref))
    # spread over facts: round-robin so one productive frame does not fill the list
    by_fact: dict[str, list[NearMiss]] = defaultdict(list)
    for c in kept:
        by_fact[c.fact].append(c)
    spread: list[NearMiss] = []
    while len(spread) < n and any(by_fact.values()):
        for fact in list(by_fact):
            if by_fact[fact] and len(spread) < n:
                spread.append(by_fact[fact].pop(0))
    notes = () if len(spread) >= n else (f"only {len(spread)} of {n} asked passed the checks",)
    return NearMisses(tuple(spread), {k: v for k, v in dropped.items()}, len(cands), strat.name,
                      encoder is not None, notes)
