"""A plugin defined only in the tests: one retriever and one chunking strategy, no ragdiag file edited.

Loaded with ``RAGDIAG_PLUGINS=plugin_example`` (this folder on ``PYTHONPATH``);
``tests/test_registry.py`` runs it through the library, ``eval`` and the dashboard.

- ``header-bm25``: BM25 over each chunk's ``Doc title > Section`` header only
  (a deliberately weak retriever: every chunk of a section ties).
- strategy ``P``: every paragraph its own chunk (the ``paragraphs`` span
  algorithm), no header, no overlap.
"""

from __future__ import annotations

import re

from ragdiag.chunking import Strategy, register_spanner, register_strategy
from ragdiag.retrieval.bm25 import BM25Retriever
from ragdiag.retrieval.registry import RetrieverSpec, register_retriever

_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\n[ \t]*\n|\s*\Z)", re.S)


def paragraph_spans(doc, size: int) -> list[tuple[int, int]]:
    """Each paragraph (text between blank lines), trimmed; ``size`` is ignored."""
    return [(m.start(), m.end()) for m in _PARAGRAPH.finditer(doc.text)]


register_spanner("paragraphs", paragraph_spans)
register_strategy(Strategy("P", boundaries=True, header=False, overlap=False, cuts="paragraphs"))
register_retriever(RetrieverSpec(
    "header-bm25", build=lambda ctx: BM25Retriever([c.header for c in ctx.chunks]),
    description="BM25 over chunk headers only (a test plugin)", default=False))
