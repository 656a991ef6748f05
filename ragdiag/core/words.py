"""How every surface writes a number: the CLI, the report and the dashboard read these (one format each).

A rate is ``55% (42–67)`` (estimate and 95% interval in whole points), a
difference ``+5 points``, a cut three decimals rounded down
(:func:`ragdiag.core.gate.cut_text`, re-stated here as the words of a number).
"""

from __future__ import annotations

from .gate import cut_text

__all__ = ["DASH", "plural", "f3", "pct", "pct_cell", "pct_range", "rate_text", "count_rate_text", "points",
           "signed_points", "pp", "thousands", "secs", "cut_text"]

#: What a table cell or a sentence shows for "nothing" (no estimate, not measured).
DASH = "–"


def plural(n: int, word: str) -> str:
    """``"1 bluff"``, ``"2 bluffs"``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def f3(x) -> str:
    """Three decimals; ``n/a`` for None or NaN."""
    return "n/a" if x is None or x != x else f"{x:.3f}"


def pct(x) -> str:
    """A share as a percentage with one decimal; ``n/a`` for None or NaN."""
    return "n/a" if x is None or x != x else f"{100 * x:.1f}%"


def pct_cell(cell) -> str:
    """A rate cell's estimate as a whole percentage, ``"55%"`` (``"n/a"`` over no queries)."""
    return "n/a" if cell is None or cell.rate is None else f"{100 * cell.rate:.0f}%"


def pct_range(cell) -> str:
    """A rate cell's 95% interval, ``"42–67%"``."""
    return "n/a" if cell is None or cell.rate is None else f"{100 * cell.low:.0f}–{100 * cell.high:.0f}%"


def rate_text(cell) -> str:
    """The one format of a rate everywhere: ``"55% (42–67)"``.

    >>> from ragdiag.evaluation.rows import RateCell
    >>> rate_text(RateCell(35, 35 / 64, 0.42, 0.67))
    '55% (42–67)'
    """
    if cell is None or cell.rate is None:
        return "n/a"
    return f"{100 * cell.rate:.0f}% ({100 * cell.low:.0f}–{100 * cell.high:.0f})"


def points(n: int, of: int) -> str:
    """``n`` of ``of`` as a whole percentage."""
    return "n/a" if of == 0 else f"{100 * n / of:.0f}%"


def signed_points(d: float) -> str:
    """A difference of shares in points, ``"+5 points"``, ``"-3 points"``, ``"0 points"``."""
    r = round(d)
    return "0 points" if r == 0 else f"{r:+d} point{'' if abs(r) == 1 else 's'}"


def pp(x: float) -> str:
    """A signed bound in points: whole points, one decimal under 1 so that a bound near zero keeps its side.

    >>> pp(12.4), pp(-0.3), pp(0.0)
    ('+12', '-0.3', '0')
    """
    if round(x, 1) == 0:
        return "0"
    return f"{x:+.1f}" if abs(x) < 1 else f"{x:+.0f}"


def thousands(x) -> str:
    """An integer with thousands separators; ``n/a`` for None (an external run has no chunks of ours)."""
    return "n/a" if x is None else f"{int(x):,}"


def secs(x) -> str:
    """Seconds from 0.1 s up, milliseconds below; ``n/a`` for None."""
    if x is None:
        return "n/a"
    return f"{x:.2f} s" if x >= 0.1 else f"{1000 * x:.1f} ms"


def count_rate_text(cell, total: int | None = None) -> str:
    """A count and its rate, as a sentence writes it: ``"35 of 64: 55% (42–67)"``.

    >>> from ragdiag.evaluation.rows import RateCell
    >>> count_rate_text(RateCell(35, 35 / 64, 0.42, 0.67), 64)
    '35 of 64: 55% (42–67)'
    """
    if cell is None:
        return DASH
    of = f" of {total}" if total is not None else ""
    return f"{cell.count}{of}: {rate_text(cell)}"
