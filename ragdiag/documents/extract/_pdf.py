"""PDF to canonical text with page boundaries (pypdf).

Each page's text layer is extracted in content order, lightly normalised
(line ends, trailing spaces, typographic ligatures such as U+FB01 "fi"), and
the pages are joined with a blank line; ``page_starts`` records where each page
begins. Nothing in the PDF is executed (pypdf does not run JavaScript or fetch
anything); every pypdf failure becomes an :class:`ExtractionError` with a reason.
"""

from __future__ import annotations

import io
import logging
import threading
from contextlib import contextmanager
from pathlib import Path

import pypdf
from pypdf.errors import DependencyError, FileNotDecryptedError, LimitReachedError

from .base import ExtractionError, ExtractOptions, Extracted
from ._checks import (
    Deadline,
    find_furniture,
    furniture_warning,
    join_pages,
    replacement_warning,
    short_lines_warning,
    strip_furniture,
)

VERSION = 1
EXTRACTOR = f"pdf/{VERSION}+pypdf-{pypdf.__version__}"

_LIGATURES = str.maketrans({
    "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st", "\ufb06": "st",
})
_REPAIR_WORDS = ("xref", "startxref", "eof marker", "trailer")


class _Collect(logging.Handler):
    """Collects pypdf's log records from this thread (they would go to stderr)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.thread = threading.get_ident()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.messages.append(record.getMessage())


@contextmanager
def _pypdf_log():
    handler = _Collect()
    logger = logging.getLogger("pypdf")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def _page_text(page) -> str:
    text = page.extract_text() or ""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").translate(_LIGATURES)
    return "\n".join(ln.rstrip() for ln in text.split("\n")).strip("\n")


def _has_images(page) -> bool:
    try:
        return len(page.images) > 0
    except Exception:
        return False


def _page_list(pages: list[int], limit: int = 10) -> str:
    shown = ", ".join(str(p) for p in pages[:limit])
    more = f" and {len(pages) - limit} more" if len(pages) > limit else ""
    return f"{'page' if len(pages) == 1 else 'pages'} {shown}{more}"


def _truncated(data: bytes) -> bool:
    return b"%%EOF" not in data[-4096:]


def extract_pdf(path: Path, data: bytes, options: ExtractOptions) -> Extracted:
    """Canonical text and ``page_starts`` of a PDF's text layer; :class:`ExtractionError` with a reason."""
    if not data:
        raise ExtractionError("empty file (0 bytes)")
    if b"%PDF-" not in data[:1024]:
        raise ExtractionError("corrupt PDF: no %PDF- header (not a PDF file?)")
    deadline = Deadline(options.time_limit_s)
    with _pypdf_log() as log:
        try:
            return _extract(data, options, deadline, log)
        except ExtractionError:
            raise
        except LimitReachedError as exc:
            raise ExtractionError(f"too large: PDF exceeds a decompression limit ({exc})") from None
        except RecursionError:
            raise ExtractionError("corrupt PDF: object structure nested too deeply") from None
        except MemoryError:
            raise ExtractionError("too large: out of memory while reading the PDF") from None
        except Exception as exc:  # pypdf raises many types (PdfReadError, ValueError, KeyError, ...)
            detail = str(exc) or type(exc).__name__
            if _truncated(data):
                raise ExtractionError(f"corrupt PDF (truncated: no %%EOF marker at the end): {detail}") from None
            raise ExtractionError(f"corrupt PDF: {detail}") from None


def _extract(data: bytes, options: ExtractOptions, deadline: Deadline, log: _Collect) -> Extracted:
    reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
    if reader.is_encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError:
            raise ExtractionError("encrypted PDF (cannot decrypt: the 'cryptography' package is missing)") from None
        except Exception as exc:
            raise ExtractionError(f"encrypted PDF (cannot decrypt: {exc})") from None
        if not opened:
            raise ExtractionError("encrypted PDF (password required)")
    try:
        n_pages = len(reader.pages)
    except FileNotDecryptedError:
        raise ExtractionError("encrypted PDF (password required)") from None
    if n_pages == 0:
        raise ExtractionError("empty: the PDF has no pages")
    if options.max_pages is not None and n_pages > options.max_pages:
        raise ExtractionError(f"too large: {n_pages:,} pages (limit {options.max_pages:,})")

    texts: list[str] = []
    no_layer: list[int] = []
    failed: list[tuple[int, str]] = []
    for i in range(n_pages):
        deadline.check(f"page {i + 1} of {n_pages}")
        page = reader.pages[i]
        try:
            text = _page_text(page)
        except (LimitReachedError, MemoryError, RecursionError):
            raise
        except Exception as exc:
            failed.append((i + 1, str(exc) or type(exc).__name__))
            text = ""
        else:
            if not text.strip():
                text = ""
                if _has_images(page):
                    no_layer.append(i + 1)
        texts.append(text)

    if not any(texts):
        if failed and len(failed) == n_pages:
            raise ExtractionError(f"corrupt PDF: text extraction failed on every page ({failed[0][1]})")
        if no_layer:
            raise ExtractionError("PDF has no text layer on any page (scanned? run OCR first)")
        raise ExtractionError("empty: the PDF has no text on any page")

    warnings: list[str] = []
    if no_layer:
        warnings.append(
            f"no text layer on {len(no_layer)} of {n_pages} pages ({_page_list(no_layer)}; scanned? run OCR first)"
        )
    if failed:
        warnings.append(f"text extraction failed on {_page_list([p for p, _ in failed])} ({failed[0][1]})")
    furniture = find_furniture(texts)
    stripped = bool(furniture) and options.strip_repeated
    if furniture:
        if stripped:
            texts = strip_furniture(texts, furniture)
        warnings.append(furniture_warning(furniture, removed=stripped))
    text, page_starts = join_pages(texts)
    for check in (short_lines_warning, replacement_warning):
        w = check(text)
        if w:
            warnings.append(w)
    repairs = [m for m in log.messages if any(word in m.lower() for word in _REPAIR_WORDS)]
    if _truncated(data):
        warnings.append("the file seems truncated (no %%EOF marker at the end); some content may be missing")
    elif repairs:
        warnings.append(f"damaged PDF structure was repaired while reading ({repairs[0]})")

    title = ""
    try:
        meta = reader.metadata
        if meta is not None and meta.title:
            title = " ".join(str(meta.title).split())
            # Producer boilerplate rather than a title.
            if title.lower() in ("untitled", "title", "document") or title.lower().startswith("microsoft word - "):
                title = ""
    except Exception:
        pass
    # The stamp changes only when the text did, so indexes built without the option stay valid.
    extractor = EXTRACTOR + ("+strip-furniture" if stripped else "")
    return Extracted(
        text=text,
        kind="pdf",
        extractor=extractor,
        page_starts=page_starts,
        warnings=tuple(warnings),
        pages=n_pages,
        title=title,
    )
