"""What extraction notices: odd text, repeated page furniture, time limits.

Pure functions over strings, shared by the extractors. Warnings are short
sentences meant for a person reading an ingest report.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass

from .base import ExtractionError

__all__ = [
    "Deadline",
    "Furniture",
    "find_furniture",
    "strip_furniture",
    "furniture_warning",
    "join_pages",
    "replacement_warning",
    "short_lines_warning",
]

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")

#: How many non-empty lines at the top and at the bottom of a page may be furniture.
FURNITURE_DEPTH = 2
#: Furniture must repeat on at least this many pages ...
FURNITURE_MIN_PAGES = 3
#: ... and on more than this share of the pages that have text.
FURNITURE_MIN_SHARE = 0.5


class Deadline:
    """A cooperative time limit: call :meth:`check` between units of work."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self._end = None if seconds is None else time.monotonic() + seconds

    def expired(self) -> bool:
        """Whether the time limit has passed (never, without one)."""
        return self._end is not None and time.monotonic() > self._end

    def check(self, where: str = "") -> None:
        """Raise :class:`ExtractionError` naming ``where`` once the time limit has passed."""
        if self.expired():
            at = f"; stopped at {where}" if where else ""
            raise ExtractionError(f"too slow: extraction exceeded the time limit of {self.seconds:g} s{at}")


def replacement_warning(text: str) -> str | None:
    """A warning when ``text`` holds U+FFFD replacement characters."""
    n = text.count("\ufffd")
    if not n:
        return None
    plural = "s" if n != 1 else ""
    return f"{n} replacement character{plural} (U+FFFD) in the text: some characters were undecodable somewhere upstream"


def short_lines_warning(text: str, *, max_len: int = 3, min_lines: int = 20, min_share: float = 0.3) -> str | None:
    """A warning when many non-empty lines are very short (split columns, tables, vertical text).

    >>> short_lines_warning("a\\n" * 30) is not None
    True
    >>> short_lines_warning("a full line of ordinary prose text\\n" * 30) is None
    True
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if len(lines) < min_lines:
        return None
    short = sum(1 for ln in lines if len(ln) <= max_len)
    if short / len(lines) < min_share:
        return None
    return (
        f"many very short lines ({short} of {len(lines)} lines have at most {max_len} characters): "
        "columns, tables or rotated text may have been split apart"
    )


def _norm(line: str) -> str:
    """A line with digit runs replaced by ``#`` and white space collapsed (page numbers vary)."""
    return _SPACE.sub(" ", _DIGITS.sub("#", line)).strip()


def _min_lines(depth: int) -> int:
    """Non-empty lines a page needs before its line at ``depth`` (from top or bottom) can be furniture:
    2 for the outermost line, and room for a body between header and footer further in."""
    return 2 if depth == 0 else 2 * depth + 3


def _nonempty(lines: list[str]) -> list[int]:
    return [i for i, ln in enumerate(lines) if ln.strip()]


@dataclass(frozen=True)
class Furniture:
    """Lines repeated at the top or bottom of most pages (running headers, footers, page numbers).

    ``head[k]`` / ``tail[k]``: normalised forms of the k-th non-empty line from the
    top / bottom that count as furniture. ``pages``: pages where furniture was
    found; ``text_pages``: pages with any text; ``example``: one such line as printed.
    """

    head: tuple[frozenset[str], ...]
    tail: tuple[frozenset[str], ...]
    pages: int
    text_pages: int
    example: str

    def __bool__(self) -> bool:
        return self.pages > 0

    def lines_to_remove(self, lines: list[str]) -> set[int]:
        """Indices of the furniture lines in one page's ``lines``."""
        idx = _nonempty(lines)
        out: set[int] = set()
        for k, keys in enumerate(self.head):
            if len(idx) >= _min_lines(k) and _norm(lines[idx[k]]) in keys:
                out.add(idx[k])
        for k, keys in enumerate(self.tail):
            if len(idx) >= _min_lines(k) and _norm(lines[idx[-1 - k]]) in keys:
                out.add(idx[-1 - k])
        # Never take a whole page: what repeats everywhere with nothing else is content.
        return set() if len(out) >= len(idx) else out


def find_furniture(pages: list[str]) -> Furniture | None:
    """Detect running headers/footers: the same first or last non-empty lines
    (digits normalised) on most pages. None when there are none.

    >>> pages = [f"Manual v2\\nbody text {i}\\nmore\\n{i}/9" for i in range(1, 6)]
    >>> f = find_furniture(pages)
    >>> (f.pages, f.text_pages, f.example)
    (5, 5, 'Manual v2')
    >>> find_furniture(["a\\nb", "c\\nd", "e\\nf"]) is None
    True
    """
    split = [p.splitlines() for p in pages]
    text_pages = [ls for ls in split if any(ln.strip() for ln in ls)]
    n = len(text_pages)
    if n < FURNITURE_MIN_PAGES:
        return None
    need = max(FURNITURE_MIN_PAGES, int(n * FURNITURE_MIN_SHARE) + 1)
    head: list[frozenset[str]] = []
    tail: list[frozenset[str]] = []
    for k in range(FURNITURE_DEPTH):
        for side, out in ((0, head), (1, tail)):
            counts: Counter[str] = Counter()
            for lines in text_pages:
                idx = _nonempty(lines)
                if len(idx) < _min_lines(k):
                    continue
                counts[_norm(lines[idx[k] if side == 0 else idx[-1 - k]])] += 1
            out.append(frozenset(key for key, c in counts.items() if c >= need))
    # Furniture at depth k only counts when the lines outside it are furniture too.
    for seq in (head, tail):
        for k in range(1, len(seq)):
            if not seq[k - 1]:
                seq[k] = frozenset()
    if not any(head) and not any(tail):
        return None
    probe = Furniture(tuple(head), tuple(tail), 0, n, "")
    hit_pages = 0
    example = ""
    for lines in split:
        found = probe.lines_to_remove(lines)
        if found:
            hit_pages += 1
            if not example:
                example = lines[min(found)].strip()
    return Furniture(tuple(head), tuple(tail), hit_pages, n, example)


def strip_furniture(pages: list[str], furniture: Furniture) -> list[str]:
    """``pages`` with the furniture lines removed (and blank lines at the page edges)."""
    out = []
    for page in pages:
        lines = page.splitlines()
        drop = furniture.lines_to_remove(lines)
        kept = [ln for i, ln in enumerate(lines) if i not in drop]
        out.append("\n".join(kept).strip("\n"))
    return out


def furniture_warning(furniture: Furniture, *, removed: bool) -> str:
    """The document warning about repeated page headers/footers: where, an example, removed or kept."""
    example = furniture.example if len(furniture.example) <= 60 else furniture.example[:57] + "..."
    where = f"{furniture.pages} of {furniture.text_pages} pages"
    if removed:
        return f"repeated page headers/footers removed from {where} (e.g. {example!r})"
    return f"repeated page headers/footers on {where} (e.g. {example!r}); kept in the text"


def join_pages(pages: list[str]) -> tuple[str, tuple[int, ...]]:
    """Join page texts with a blank line; return the text and where each page starts.

    >>> join_pages(["one", "", "three"])
    ('one\\n\\n\\n\\nthree', (0, 5, 7))
    """
    starts = []
    pos = 0
    for page in pages:
        starts.append(pos)
        pos += len(page) + 2
    return "\n\n".join(pages), tuple(starts)
