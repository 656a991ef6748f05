"""Extraction: one file in, canonical text out.

Every extractor turns a file into the *canonical text* that all offsets index
into, plus what it noticed on the way (page boundaries, warnings). An
extractor never executes anything from the file.  Each has a version that is
stamped into every index built from its output, so a change in extraction
invalidates the vectors computed from the old text.
"""

from __future__ import annotations

from pathlib import Path

from .base import DEFAULT_MAX_PAGES, DEFAULT_TIME_LIMIT_S, ExtractionError, Extracted, ExtractOptions

__all__ = [
    "Extracted",
    "ExtractionError",
    "ExtractOptions",
    "extract",
    "extractor_for",
    "kind_for",
    "SUPPORTED_SUFFIXES",
    "DEFAULT_MAX_PAGES",
    "DEFAULT_TIME_LIMIT_S",
]


def _decode_text(data: bytes, path: Path) -> str:
    if not data.strip():
        raise ExtractionError("empty file")
    if b"\x00" in data[:8192]:
        raise ExtractionError("binary content (NUL bytes) in a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ExtractionError(
            f"not UTF-8 (invalid byte 0x{data[exc.start]:02x} at byte {exc.start}); "
            "re-save the file as UTF-8"
        ) from None


def _extract_markdown(path: Path, data: bytes, options: ExtractOptions | None = None) -> Extracted:
    text = _decode_text(data, path)
    if not text.strip():
        raise ExtractionError("empty file (whitespace only)")
    kind = "text" if path.suffix.lower() == ".txt" else "markdown"
    warnings = ()
    if "\ufffd" in text:
        from ._checks import replacement_warning

        warnings = (replacement_warning(text),)
    return Extracted(text=text, kind=kind, extractor="markdown/1", warnings=warnings)


def _extract_html(path: Path, data: bytes, options: ExtractOptions | None = None) -> Extracted:
    from ._html import extract_html  # imported on first use: bs4 is not needed for Markdown

    return extract_html(path, data, options or ExtractOptions())


def _extract_pdf(path: Path, data: bytes, options: ExtractOptions | None = None) -> Extracted:
    from ._pdf import extract_pdf  # imported on first use: pypdf is not needed for Markdown

    return extract_pdf(path, data, options or ExtractOptions())


_EXTRACTORS = {
    ".md": _extract_markdown,
    ".markdown": _extract_markdown,
    ".txt": _extract_markdown,
    ".html": _extract_html,
    ".htm": _extract_html,
    ".xhtml": _extract_html,
    ".pdf": _extract_pdf,
}

_KINDS = {
    ".md": "markdown", ".markdown": "markdown", ".txt": "text",
    ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf",
}

SUPPORTED_SUFFIXES = tuple(_EXTRACTORS)


def extractor_for(path: Path):
    """The extractor function ``fn(path, data, options)`` for ``path``'s type, or None when unsupported."""
    return _EXTRACTORS.get(Path(path).suffix.lower())


def kind_for(path: str | Path) -> str:
    """The document type a file would load as, by suffix ('pdf', 'html', ...), else the suffix or '-'.

    >>> kind_for("a/b.PDF"), kind_for("notes.txt"), kind_for("x.docx"), kind_for("README")
    ('pdf', 'text', 'docx', '-')
    """
    suffix = Path(path).suffix.lower()
    return _KINDS.get(suffix) or suffix.lstrip(".") or "-"


def extract(path: Path, data: bytes | None = None, options: ExtractOptions | None = None) -> Extracted:
    """Extract one file; raise :class:`ExtractionError` with a reason on failure.

    Any other exception from a parser is turned into an ExtractionError too, so
    one bad file can never stop a folder from loading.
    """
    path = Path(path)
    fn = extractor_for(path)
    if fn is None:
        raise ExtractionError(f"unsupported type {path.suffix or '(no extension)'!r}")
    if data is None:
        data = path.read_bytes()
    options = options or ExtractOptions()
    try:
        return fn(path, data, options)
    except ExtractionError:
        raise
    except RecursionError:
        raise ExtractionError("too deeply nested to extract") from None
    except MemoryError:
        raise ExtractionError("too large: out of memory during extraction") from None
    except Exception as exc:
        raise ExtractionError(f"extraction failed: {type(exc).__name__}: {exc}") from None
