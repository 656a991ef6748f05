"""Context at retrieval time: the gate keeps a chunk, the prompt gets its neighbours or its section.

Retrieve small, hand over more: a kept chunk is widened before it reaches the
prompt, the ranking and the gate unchanged.

* ``neighbours``: the chunk with the one before and the one after it in the same
  document (:data:`NEIGHBOURS` either side, the strategy's own chunks);
* ``section``: the ``## `` section the chunk starts in (its parent).

Widened spans of one document that overlap are merged into one passage, in the
order their first chunk was kept; each passage is quoted exactly from the
document, so citations stay exact. A query is answered when a passage holds its
needle whole: expansion can recover a needle the chunking destroyed (cut
between two chunks), which stays ``destroyed`` on the ladder (no chunk holds it
whole) and is counted as recovered from that rung by the ledger. The prompt
wordpieces are those of the prompt built from the passages
(:func:`ragdiag.index.citations.cite`), so the ledger prices what expansion adds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.gate import Gate
from ..index.chunking import Chunk
from ..index.citations import cite
from .threshold.gate import answer_tokens, kept_chunks

if TYPE_CHECKING:  # pragma: no cover
    from ..evaluation.records import Config, Evaluation

__all__ = ["EXPANSIONS", "NEIGHBOURS", "Expanded", "expand"]

#: Chunks either side handed over with a kept chunk (``neighbours``).
NEIGHBOURS = 1
#: The expansions and their words.
EXPANSIONS = {"neighbours": f"kept chunks with {NEIGHBOURS} neighbour either side at retrieval",
              "section": "kept chunks' whole sections at retrieval"}


@dataclass(frozen=True)
class Expanded:
    """Per query of the evaluation: answered with the widened passages, and the prompt's wordpieces (0: none)."""

    answered: np.ndarray  # bool
    prompt_tokens: np.ndarray  # int (nan-free; 0 when nothing is kept or no encoder counted)
    passages: tuple[tuple[tuple[str, int, int], ...], ...]  # per query: (doc, start, end) handed over


def _widen(chunks, position: int, how: str, corpus) -> tuple[str, int, int]:
    c = chunks[position]
    if how == "section":
        section = corpus.document(c.doc_id).section_at(c.start)
        return c.doc_id, min(section.start, c.start), max(section.end, c.end)
    lo, hi = c.start, c.end
    for p in range(max(position - NEIGHBOURS, 0), min(position + NEIGHBOURS + 1, len(chunks))):
        if chunks[p].doc_id == c.doc_id:
            lo, hi = min(lo, chunks[p].start), max(hi, chunks[p].end)
    return c.doc_id, lo, hi


def _merged(spans: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Overlapping or touching spans of one document merged, in the order of first appearance.

    >>> _merged([("d", 0, 10), ("e", 0, 5), ("d", 20, 30), ("d", 10, 20)])
    [('d', 0, 30), ('e', 0, 5)]
    """
    out: list[list] = []
    for d, s, e in spans:
        cur = [d, s, e]
        # absorb every passage the new span touches (it can bridge two earlier ones)
        for m in [m for m in out if m[0] == d and m[1] <= cur[2] and cur[1] <= m[2]]:
            cur[1], cur[2] = min(cur[1], m[1]), max(cur[2], m[2])
        touched = [i for i, m in enumerate(out) if m[0] == d and m[1] <= cur[2] and cur[1] <= m[2]]
        if touched:
            out[touched[0]] = cur
            out = [m for i, m in enumerate(out) if i not in touched[1:]]
        else:
            out.append(cur)
    return [tuple(m) for m in out]


def expand(ev: Evaluation, config: Config | str, gate: Gate, how: str, *, encoder=None) -> Expanded:
    """Each query's kept chunks of ``config`` at ``gate``, widened by ``how`` (``neighbours`` or ``section``)."""
    if how not in EXPANSIONS:
        raise ValueError(f"unknown expansion {how!r}; choose from {', '.join(EXPANSIONS)}")
    res = ev.result(config)
    if res.config.external:
        raise ValueError(f"{res.config.label} is an external run: there are no chunks of ours to widen")
    chunks = ev.indexes[res.config.strategy].chunks
    answered = np.zeros(len(ev.queries), dtype=bool)
    passages, answers = [], [None] * len(ev.queries)
    for i, q in enumerate(ev.queries):
        kept = kept_chunks(res, i, gate)
        spans = _merged([_widen(chunks, p, how, ev.corpus) for p, _ in kept])
        passages.append(tuple(spans))
        if q.in_domain:
            needle = ev.truth.question(q.question_id)
            answered[i] = any(d == needle.doc_id and s <= needle.start and needle.end <= e for d, s, e in spans)
        if spans and encoder is not None:
            distance = {}
            for p, dist in kept:  # a passage carries the distance of the first kept chunk it holds
                key = next(sp for sp in spans if sp[0] == chunks[p].doc_id and sp[1] <= chunks[p].start
                           and chunks[p].end <= sp[2])
                distance.setdefault(key, dist)
            pseudo = [(Chunk(f"passage:{d}:{s}", d, "", "", s, e, ev.corpus.document(d).text[s:e],
                             ev.corpus.document(d).text[s:e]), distance[(d, s, e)]) for d, s, e in spans]
            answers[i] = cite(q.text, pseudo, ev.corpus, Gate(keep=len(pseudo), cut=gate.cut, k=len(pseudo)))
    return Expanded(answered, answer_tokens(encoder, answers), tuple(passages))
