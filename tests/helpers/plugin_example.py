"""A plugin defined only in the tests: one retriever and one chunking strategy, no ragdiag file edited.

Loaded with ``RAGDIAG_PLUGINS=plugin_example`` (this folder on ``PYTHONPATH``);
``tests/pages/test_registry.py`` runs it through the library, ``eval`` and the dashboard.

- ``header-bm25``: BM25 over each chunk's ``Doc title > Section`` header only
  (a deliberately weak retriever: every chunk of a section ties).
- ``word-rerank``: a reranker of BM25's top 25 by the number of distinct query
  words a chunk holds. Its spec says what the funnel and the cost table need:
  its pool is ``bm25``, it embeds nothing, it builds nothing beyond its pool.
- strategy ``P``: every paragraph its own chunk (the ``paragraphs`` span
  algorithm), no header, no overlap.
"""

from __future__ import annotations

import re

import numpy as np

from ragdiag.index.chunking import Strategy, register_spanner, register_strategy
from ragdiag.core.defaults import RERANK_HEAD
from ragdiag.retrieval.bm25 import BM25Retriever, tokenize
from ragdiag.retrieval.registry import RetrieverSpec, register_retriever
from ragdiag.retrieval.rerank import RerankRetriever

_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", re.S)


def paragraph_spans(doc, size: int) -> list[tuple[int, int]]:
    """Each paragraph (text between blank lines), trimmed; ``size`` is ignored."""
    return [(m.start(), m.end()) for m in _PARAGRAPH.finditer(doc.text)]


register_spanner("paragraphs", paragraph_spans)
register_strategy(Strategy("P", boundaries=True, header=False, overlap=False, cuts="paragraphs"))
register_retriever(RetrieverSpec(
    "header-bm25", build=lambda ctx: BM25Retriever([c.header for c in ctx.chunks]),
    embeds=False, builds=("bm25",), description="BM25 over chunk headers only (a test plugin)", default=False))


class WordOverlapScorer:
    """Scores a text by how many distinct words of the query it holds (a pair scorer with no model)."""

    identity = "word-overlap"

    def score(self, query: str, texts) -> np.ndarray:
        """One score per text: distinct query words present in it."""
        words = set(tokenize(query))
        return np.array([len(words & set(tokenize(t))) for t in texts], dtype=float)


register_retriever(RetrieverSpec(
    "word-rerank", build=lambda ctx: RerankRetriever(ctx.name, ctx.retriever("bm25"), WordOverlapScorer(), ctx.texts,
                                                     head=RERANK_HEAD),
    requires=("bm25",), pool="bm25", embeds=False, default=False,
    description=f"BM25's top {RERANK_HEAD} reordered by shared query words (a test plugin)"))
