"""The splitters teams use, as span algorithms with exact offsets (one module each).

==========  =====================  ==============================================================
strategy    span algorithm         what it does
==========  =====================  ==============================================================
R           ``recursive``          LangChain's ``RecursiveCharacterTextSplitter`` (optional
                                   dependency, ``requirements-splitters.txt``), mapped to offsets
M           ``markdown-headers``   a piece per Markdown heading (``#`` to ``######``), longer
                                   pieces split recursively
W           ``sentence-windows``   every sentence with its neighbours (one either side)
S           ``semantic``           a cut where consecutive sentences' embeddings diverge
==========  =====================  ==============================================================

Each is a function ``(doc, size) -> [(start, end), ...]`` registered in
:data:`ragdiag.index.chunking.SPANNERS`; none is evaluated unless named
(``--strategies R,M,W,S``), so the six strategies of the study and their results
are unchanged. The modules import only the documents layer, never the chunker.
"""

from __future__ import annotations

from .markdown import markdown_header_spans
from .recursive import recursive_spans
from .semantic import semantic_spans
from .sentences import sentence_window_spans

__all__ = ["recursive_spans", "markdown_header_spans", "sentence_window_spans", "semantic_spans"]
