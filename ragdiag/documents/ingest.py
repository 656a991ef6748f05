"""Per-document ingest report: what loaded, what looked odd, what failed and why.

One row per file the loader saw, loaded or not::

    {"path": "pdf/manual.pdf", "id": "pdf/manual", "type": "pdf", "pages": 12,
     "characters": 30512, "sections": 1, "status": "warning",
     "reason": "no text layer on 1 of 12 pages (page 7; scanned? run OCR first)"}

``status`` is ``ok``, ``warning`` (loaded; ``reason`` says what was odd) or
``failed`` (not loaded; ``reason`` says why). Failed rows have ``id`` ""
and None for the counts.
"""

from __future__ import annotations

from pathlib import Path

from .corpus import Corpus, Document, load_corpus
from .walk import CorpusError
from .extract import kind_for
from ..core.tables import align

__all__ = ["ingest_rows", "format_ingest_table", "ingest_folder", "STATUSES"]

STATUSES = ("ok", "warning", "failed")


def _doc_row(doc: Document) -> dict:
    return {
        "path": doc.path or doc.id,
        "id": doc.id,
        "type": doc.kind,
        "pages": len(doc.page_starts) if doc.page_starts else None,
        "characters": len(doc.text),
        "sections": sum(1 for s in doc.sections if s.title),
        "status": doc.status,
        "reason": "; ".join(doc.warnings),
    }


def _failure_row(path: str, reason: str) -> dict:
    return {
        "path": path,
        "id": "",
        "type": kind_for(path),
        "pages": None,
        "characters": None,
        "sections": None,
        "status": "failed",
        "reason": reason,
    }


def ingest_rows(corpus: Corpus) -> list[dict]:
    """One row per loaded document and per failure of ``corpus``, sorted by path.

    >>> from ragdiag.documents.corpus import Corpus, LoadFailure, make_document
    >>> doc = make_document("a", "# A\\n\\n## One\\ntext\\n", path="a.md")
    >>> rows = ingest_rows(Corpus("kb", (doc,), (LoadFailure("b.pdf", "encrypted PDF (password required)"),)))
    >>> [(r["path"], r["type"], r["status"], r["sections"]) for r in rows]
    [('a.md', 'markdown', 'ok', 1), ('b.pdf', 'pdf', 'failed', None)]
    """
    rows = [_doc_row(d) for d in corpus.documents]
    rows += [_failure_row(f.path, f.reason) for f in corpus.failures]
    return sorted(rows, key=lambda r: r["path"])


def ingest_folder(root: str | Path, **load_kwargs) -> tuple[list[dict], Corpus | None]:
    """Load ``root`` and report every file: ``(rows, corpus)``.

    When nothing could be loaded, ``corpus`` is None and the rows are the
    failures (exit non-zero then). A folder that is missing, not a folder, or
    holds no supported file at all raises :class:`CorpusError`.
    ``load_kwargs`` go to :func:`ragdiag.documents.corpus.load_corpus` (``max_bytes``,
    ``strip_page_furniture``).
    """
    try:
        corpus = load_corpus(root, **load_kwargs)
    except CorpusError as exc:
        failures = getattr(exc, "failures", ())
        if not failures:
            raise
        return sorted((_failure_row(f.path, f.reason) for f in failures), key=lambda r: r["path"]), None
    return ingest_rows(corpus), corpus


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


_COLUMNS = (
    # (header, key, right-aligned)
    ("STATUS", "status", False),
    ("TYPE", "type", False),
    ("PAGES", "pages", True),
    ("CHARS", "characters", True),
    ("SECTIONS", "sections", True),
    ("PATH", "path", False),
    ("REASON", "reason", False),
)


def format_ingest_table(rows: list[dict], *, summary: bool = True) -> str:
    """A plain-text table of ingest rows, columns aligned, reason last; then a one-line summary.

    >>> print(format_ingest_table([
    ...     {"path": "a.md", "id": "a", "type": "markdown", "pages": None, "characters": 1200,
    ...      "sections": 3, "status": "ok", "reason": ""},
    ...     {"path": "b.pdf", "id": "", "type": "pdf", "pages": None, "characters": None,
    ...      "sections": None, "status": "failed", "reason": "encrypted PDF (password required)"}]))
    STATUS  TYPE      PAGES  CHARS  SECTIONS  PATH   REASON
    ok      markdown      -  1,200         3  a.md
    failed  pdf           -      -         -  b.pdf  encrypted PDF (password required)
    2 files: 1 ok, 0 warning, 1 failed
    """
    table = [[h for h, _, _ in _COLUMNS]] + [[_cell(r.get(k)) for _, k, _ in _COLUMNS] for r in rows]
    right = [i for i, (_, _, r) in enumerate(_COLUMNS) if r]
    out = [line.rstrip() for line in align(table, right=right, last_free=True)]
    if summary:
        counts = {s: sum(1 for r in rows if r.get("status") == s) for s in STATUSES}
        noun = "file" if len(rows) == 1 else "files"
        out.append(f"{len(rows)} {noun}: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES))
    return "\n".join(out)
