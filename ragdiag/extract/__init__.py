"""Extraction: one file in, canonical text out.

Every extractor turns a file into the *canonical text* that all offsets index
into, plus what it noticed on the way (page boundaries, warnings). An
extractor never executes anything from the file.  Each has a version that is
stamped into every index built from its output, so a change in extraction
invalidates the vectors computed from the old text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Extracted", "ExtractionError", "extract", "extractor_for", "SUPPORTED_SUFFIXES"]


class ExtractionError(Exception):
    """A file that cannot be turned into text; ``reason`` is shown to the user."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Extracted:
    """The canonical text of one file and what extraction noticed.

    ``page_starts[i]`` is the offset in ``text`` where page ``i + 1`` begins
    (PDF only; empty for formats without pages).
    """

    text: str
    kind: str
    extractor: str
    page_starts: tuple[int, ...] = ()
    warnings: tuple[str, ...] = ()
    pages: int = 0


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


def _extract_markdown(path: Path, data: bytes) -> Extracted:
    text = _decode_text(data, path)
    if not text.strip():
        raise ExtractionError("empty file (whitespace only)")
    kind = "text" if path.suffix.lower() == ".txt" else "markdown"
    return Extracted(text=text, kind=kind, extractor="markdown/1")


_EXTRACTORS = {
    ".md": _extract_markdown,
    ".markdown": _extract_markdown,
    ".txt": _extract_markdown,
}

SUPPORTED_SUFFIXES = tuple(_EXTRACTORS)


def extractor_for(path: Path):
    """The extractor function for ``path``'s type, or None when unsupported."""
    return _EXTRACTORS.get(path.suffix.lower())


def extract(path: Path, data: bytes | None = None) -> Extracted:
    """Extract one file; raise :class:`ExtractionError` with a reason on failure."""
    fn = extractor_for(path)
    if fn is None:
        raise ExtractionError(f"unsupported type {path.suffix or '(no extension)'!r}")
    if data is None:
        data = path.read_bytes()
    return fn(path, data)
