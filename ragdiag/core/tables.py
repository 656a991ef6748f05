"""The one place for text tables and escaping.

* :func:`align` pads rows of text into aligned columns and :func:`format_rows`
  prints library rows (dicts, or typed rows with ``cells()``) that way, for the
  terminal;
* :func:`md_escape` / :func:`md_line` make untrusted text safe for Markdown
  (every Markdown-, HTML- and Streamlit-significant character backslash-escaped,
  line-start markers only at line starts, so text shows as typed), and :func:`md_table` writes a Markdown pipe table;
* :class:`Table` is one table (headers, rows, numeric columns, an id) that the
  report's HTML and Markdown templates both render.

HTML escaping is :func:`html.escape` (or Jinja2's autoescape in the report).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Sequence

import numpy as np

__all__ = ["MD_SPECIAL", "md_escape", "md_line", "md_table", "align", "format_rows", "Table"]

#: Characters that mean something to Markdown, HTML inside Markdown or math (``$``) wherever they
#: stand: each is backslash-escaped in untrusted text. A colon is escaped where a name follows it
#: (``:icon:``, ``:red[...]``, ``:material/x:`` in Streamlit, ``:emoji:`` on GitHub), not before a space.
MD_SPECIAL = frozenset("\\`*_[]#|<>~$&")

# Characters that mean something only at the start of a line (a list item, a setext underline, an
# ordered list "1." / "1)"); escaping them everywhere would litter every number and hyphenated word.
_LINE_START = re.compile(r"(?:^|(?<=\r))([ \t]*)([-+=]|\d+[.)](?=[ \t\r\n]|$))", re.M)


def md_escape(text: Any) -> str:
    r"""``text`` with every Markdown-significant character backslash-escaped (line breaks kept).

    Characters in :data:`MD_SPECIAL` are escaped everywhere, a colon unless a space or the end follows
    it; ``- + =`` and the ``.``/``)`` of
    ``1.``/``1)`` only at the start of a line, where they would start a list or a heading.
    A backslash before ASCII punctuation renders as the character itself (CommonMark), so the text
    shows as typed.

    >>> md_escape("<b>*x*</b> [a](b)")
    '\\<b\\>\\*x\\*\\</b\\> \\[a\\](b)'
    >>> md_escape("- 0.812 out-of-domain")
    '\\- 0.812 out-of-domain'
    >>> md_escape("1. first")
    '1\\. first'
    """
    text = str(text)
    out = "".join("\\" + ch if ch in MD_SPECIAL or (ch == ":" and text[i + 1:i + 2].strip()) else ch
                  for i, ch in enumerate(text))
    return _LINE_START.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], out)


def md_line(text: Any) -> str:
    r"""Untrusted text for one Markdown line or table cell: white space collapsed, then :func:`md_escape`.

    >>> md_line("a |\n b")
    'a \\| b'
    """
    return md_escape(" ".join(str(text).split()))


def md_table(headers: Sequence[Any], rows: Iterable[Sequence[Any]], *, numeric: Collection[int] = ()) -> str:
    r"""A Markdown pipe table; every cell goes through :func:`md_line`; ``numeric`` columns align right.

    >>> print(md_table(["name", "n"], [["a|b", 3]], numeric=(1,)))
    | name | n |
    |---|---:|
    | a\|b | 3 |
    """
    lines = ["| " + " | ".join(md_line(h) for h in headers) + " |",
             "|" + "|".join("---:" if i in numeric else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(md_line(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def align(table: Sequence[Sequence[str]], *, right: Collection[int] | Callable[[int, str], bool] = (),
          last_free: bool = False, rule: str = "", sep: str = "  ", min_width: Sequence[int] = ()) -> list[str]:
    """Rows of text (the first the header) padded into aligned columns, one line per row.

    ``right``: the columns aligned right, or a predicate ``(column, text) -> bool`` per cell;
    ``last_free``: the last column is not padded (free text such as a reason); ``rule``: a
    character repeated under the header to the width of each column; ``min_width``: the
    narrowest each column may be. Lines are not stripped.

    >>> align([["name", "n"], ["ab", "10"]], right=(1,), rule="-")
    ['name   n', '----  --', 'ab    10']
    """
    n = max(len(r) for r in table)
    padded = n - 1 if last_free else n
    least = [*min_width, *[0] * padded]
    widths = [max(least[i], *(len(r[i]) for r in table)) for i in range(padded)]
    is_right = right if callable(right) else (lambda i, _v: i in right)
    lines = []
    for r in table:
        cells = [v.rjust(w) if is_right(i, v) else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths))]
        lines.append(sep.join(cells + list(r[padded:])))
    if rule:
        lines.insert(1, sep.join(rule * w for w in widths))
    return lines


def format_rows(rows: Sequence[Any], columns: Sequence[str] | None = None) -> str:
    """A plain aligned text table of rows (dicts, or typed rows with ``cells() -> dict``).

    Floats print with 3 decimals, None as blank; cells that look numeric align right.

    >>> print(format_rows([{"config": "C/dense", "recall": 0.5}]))
    config   recall
    -------  ------
    C/dense   0.500
    """
    if not rows:
        return "(no rows)"
    dicts = [r.cells() if hasattr(r, "cells") else r for r in rows]
    columns = list(columns or dicts[0].keys())
    cells = [[_fmt(r.get(c)) for c in columns] for r in dicts]
    return "\n".join(align([columns, *cells], right=lambda _i, v: _numeric(v), rule="-"))


def _numeric(v: str) -> bool:
    return bool(v) and (v[0].isdigit() or v[0] in "-+.") and "/" not in v


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "nan" if np.isnan(v) else f"{v:.3f}"
    return str(v)


@dataclass(frozen=True)
class Table:
    """One table of the report: header cells, rows of values, right-aligned columns, an HTML id.

    Values are shown with ``str`` (Markdown) or the report's HTML cell filter; ``row_class`` is
    the HTML class of each row ("" for none).
    """

    headers: tuple[str, ...]
    rows: tuple[tuple, ...]
    numeric: frozenset[int] = frozenset()
    id: str = ""
    row_class: tuple[str, ...] = ()

    @classmethod
    def of(cls, headers: Iterable[str], rows: Iterable[Iterable], *, numeric: Iterable[int] = (), id: str = "",
           row_class: Iterable[str] = ()) -> "Table":
        """A table from any iterables (made into tuples)."""
        return cls(tuple(headers), tuple(tuple(r) for r in rows), frozenset(numeric), id, tuple(row_class))

    def markdown(self) -> str:
        """The table as Markdown (:func:`md_table`)."""
        return md_table(self.headers, self.rows, numeric=self.numeric)
