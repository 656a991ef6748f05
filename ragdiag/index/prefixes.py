"""Imported context prefixes: a short text per chunk, written elsewhere (by any LLM), embedded before the chunk.

"Contextual retrieval" writes, for each chunk, a sentence or two situating it in
its document and embeds that with the chunk. ragdiag calls no LLM: it reads the
prefixes from a JSON Lines file, one object a line::

    {"doc": "svm", "start": 1200, "end": 1690, "prefix": "From the SVM chapter, on kernel choice."}

``doc`` is a document id of the corpus and ``start``/``end`` the offsets of a
chunk of the strategy the prefixes were written for (``chunk_id`` may be given
too; it is not read). A chunk at exactly that span embeds ``prefix``, a newline,
then what it embedded before (the header line of E and F, then its text); its
quote, its offsets and its citation stay its own text. Every other chunk embeds
exactly what it did, so a store reuses every other vector.

A needle is destroyed when no chunk holds it whole, whatever prefix the chunk
gets: a prefix adds context to the vector, never text to the chunk.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..core.validate import json_objects
from ..documents.corpus import Corpus
from .chunking import Chunk, Strategy, chunk_corpus

__all__ = ["Prefix", "load_prefixes", "parse_prefixes", "with_prefixes", "unmatched", "MAX_PREFIX_CHARS"]

Prefix = tuple[str, int, int, str]
#: A prefix longer than this is refused (contextual-retrieval prefixes are 50-100 words; the encoder reads 256
#: wordpieces of prefix and chunk together).
MAX_PREFIX_CHARS = 2000


def parse_prefixes(lines, corpus: Corpus, *, source: str = "prefixes") -> tuple[Prefix, ...]:
    """The prefixes of JSON Lines ``lines``, checked against ``corpus``; ValueError names the line and what is wrong.

    >>> from ragdiag.documents.corpus import make_document
    >>> c = Corpus(root="r", documents=(make_document("d", "One. Two."),), name="r")
    >>> parse_prefixes(['{"doc": "d", "start": 0, "end": 4, "prefix": "Counting."}'], c)
    (('d', 0, 4, 'Counting.'),)
    """
    docs = {d.id: d for d in corpus.documents}
    out: dict[tuple[str, int, int], str] = {}
    for n, rec in json_objects(lines, lambda n: f"{source} line {n}",
                               expected="an object with doc, start, end and prefix"):
        where = f"{source} line {n}"
        doc, start, end, prefix = rec.get("doc"), rec.get("start"), rec.get("end"), rec.get("prefix")
        if doc not in docs:
            raise ValueError(f"{where}: unknown document {doc!r} (the corpus has {len(docs)}: e.g. "
                             f"{', '.join(list(docs)[:3])})")
        if not (type(start) is int and type(end) is int and 0 <= start < end <= len(docs[doc].text)):
            raise ValueError(f"{where}: start and end must be whole numbers with 0 <= start < end <= "
                             f"{len(docs[doc].text)} (the length of {doc!r}), got {start!r} and {end!r}")
        if not isinstance(prefix, str) or not prefix.strip():
            raise ValueError(f"{where}: prefix must be non-empty text")
        if len(prefix) > MAX_PREFIX_CHARS:
            raise ValueError(f"{where}: a prefix of {len(prefix)} characters is over {MAX_PREFIX_CHARS}")
        if (doc, start, end) in out and out[(doc, start, end)] != prefix.strip():
            raise ValueError(f"{where}: a second, different prefix for {doc} {start}-{end}")
        out[(doc, start, end)] = prefix.strip()
    if not out:
        raise ValueError(f"{source}: no prefixes")
    return tuple((d, s, e, p) for (d, s, e), p in out.items())


def load_prefixes(path: str | Path, corpus: Corpus) -> tuple[Prefix, ...]:
    """The prefixes of the JSON Lines file ``path`` (see :func:`parse_prefixes`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the prefixes {path.name}: {exc}") from None
    return parse_prefixes(text.splitlines(), corpus, source=path.name)


def with_prefixes(strategy: Strategy, prefixes: tuple[Prefix, ...], *, name: str | None = None) -> Strategy:
    """``strategy`` with imported ``prefixes`` (named ``<strategy>+P`` unless ``name`` says otherwise)."""
    if strategy.prefixes:
        raise ValueError(f"strategy {strategy.name} already has imported prefixes")
    return replace(strategy, name=name or f"{strategy.name}+P", prefixes=tuple(prefixes))


def unmatched(prefixes: tuple[Prefix, ...], chunks: tuple[Chunk, ...] | None = None, *, corpus: Corpus | None = None,
              strategy: Strategy | None = None) -> list[Prefix]:
    """The prefixes whose span is no chunk's (of ``chunks``, or of ``strategy`` on ``corpus``): they embed nowhere."""
    if chunks is None:
        if corpus is None or strategy is None:
            raise ValueError("give the chunks, or the corpus and the strategy")
        chunks = chunk_corpus(corpus, replace(strategy, prefixes=()))
    spans = {(c.doc_id, c.start, c.end) for c in chunks}
    return [p for p in prefixes if (p[0], p[1], p[2]) not in spans]
