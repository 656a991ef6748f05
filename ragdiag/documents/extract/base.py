"""What extraction produces and is told: the canonical text of one file, its options, its error.

The types every extractor (:mod:`ragdiag.documents.extract`, ``_html``, ``_pdf``) shares,
in their own module so the extractors import them without importing the
package that dispatches to them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Extracted", "ExtractionError", "ExtractOptions", "DEFAULT_MAX_PAGES", "DEFAULT_TIME_LIMIT_S"]

DEFAULT_MAX_PAGES = 2000
DEFAULT_TIME_LIMIT_S = 60.0


class ExtractionError(Exception):
    """A file that cannot be turned into text; ``reason`` is shown to the user."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Extracted:
    """The canonical text of one file and what extraction noticed.

    ``page_starts[i]`` is the offset in ``text`` where page ``i + 1`` begins
    (PDF only; empty for formats without pages; pages are joined with a blank
    line). ``title`` is the title the file declares (HTML ``<title>``, PDF
    metadata), empty when none.
    """

    text: str
    kind: str
    extractor: str
    page_starts: tuple[int, ...] = ()
    warnings: tuple[str, ...] = ()
    pages: int = 0
    title: str = ""


@dataclass(frozen=True)
class ExtractOptions:
    """Knobs of extraction.

    ``strip_repeated``: remove repeated page headers/footers (PDF) before the
    text is used; they are reported as a warning either way. ``max_pages``:
    a PDF with more pages fails as too large (None: no limit).
    ``time_limit_s``: a document whose extraction takes longer fails; checked
    between pages (PDF) or between blocks (HTML), so one slow page can overrun
    it (None: no limit).
    """

    strip_repeated: bool = False
    max_pages: int | None = DEFAULT_MAX_PAGES
    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S
