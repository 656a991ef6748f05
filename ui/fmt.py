"""One grammar for every table and sentence: ``55% (42–67)``, a dash for nothing, plain headers, the chosen row marked.

Counts go in their own column; a rate's cell holds the percentage and its 95%
interval in points. Pure functions over values and DataFrames (no streamlit).
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd

from ragdiag.core.words import (DASH, MINUS, difference_text, interval, pct, rate_text,  # the library's one format
                                signed_whole as signed)

__all__ = ["DASH", "MINUS", "pct", "rate", "interval", "difference_text", "signed", "share", "ordinal", "drop_constant",
           "dash_missing", "one_type", "highlight_row", "said_once", "ACCENT", "ACCENT_BG", "NEUTRAL"]

#: The chosen configuration in charts and tables (everything else grey).
ACCENT = "#1565c0"
ACCENT_BG = "background-color: #e3f2fd; color: #0d47a1; font-weight: 600"
#: Chart text and rules that must read on a light and a dark theme alike (about 4.5:1 on white and on near-black).
NEUTRAL = "#7a7a7a"


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def rate(cell) -> str:
    """A :class:`~ragdiag.evaluation.rows.RateCell` or :class:`~ragdiag.core.stats.Interval` as ``"55% (42–67)"``,
    a dash over no queries: :func:`ragdiag.core.words.rate_text` with the dashboard's dash."""
    return rate_text(cell, missing=DASH)


def share(count: int, total: int) -> str:
    """``"3 of 30"``."""
    return f"{count} of {total}"


def ordinal(n: int) -> str:
    """``1`` -> ``"1st"``, ``10`` -> ``"10th"``, ``22`` -> ``"22nd"``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def dash_missing(df: pd.DataFrame) -> pd.DataFrame:
    """Every missing value (None, NaN) shown as a dash, never "None"; one type per column (:func:`one_type`)."""
    return one_type(df.astype(object).where(df.notna(), DASH))


def _kind(value) -> str:
    """What Arrow makes of a value: numbers of any width mix, text does not mix with them."""
    import numbers

    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Number):
        return "number"
    return type(value).__name__


def _text(v) -> str:
    """A cell as text: a whole float (a rank that pandas widened to float beside a missing value) without ".0"."""
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def one_type(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with every column of mixed Python types (integers and dashes) turned to text, so Arrow can
    serialise it: Streamlit would otherwise log a traceback per table and convert it itself.

    >>> import pyarrow as pa
    >>> f = one_type(pd.DataFrame({"rank": [3, DASH], "n": [1, 2]}))
    >>> f["rank"].tolist(), f["n"].tolist(), pa.Table.from_pandas(f).num_rows
    (['3', '–'], [1, 2], 2)
    """
    out = df
    for col in df.columns:
        values = df[col]
        if values.dtype != object:
            continue
        kinds = {_kind(v) for v in values if v is not None}
        if len(kinds) > 1:
            if out is df:
                out = df.copy()
            out[col] = values.map(_text)
    return out


def drop_constant(df: pd.DataFrame, keep: Iterable[str] = ()) -> tuple[pd.DataFrame, dict]:
    """Drop columns with one value on every row (state them once, in a caption): ``(frame, {column: value})``.

    Tables of a single row keep every column; columns in ``keep`` are never dropped.
    """
    df = one_type(df)
    if len(df) < 2:
        return df, {}
    keep = set(keep)
    const = {c: df[c].iloc[0] for c in df.columns
             if c not in keep and df[c].astype(str).nunique(dropna=False) == 1}
    return df.drop(columns=list(const)), const


def highlight_row(df: pd.DataFrame, column: str, value) -> "pd.io.formats.style.Styler":
    """The frame styled with the row whose ``column`` equals ``value`` marked (the chosen configuration)."""
    def mark(row):
        return [ACCENT_BG if row[column] == value else ""] * len(row)

    return df.style.apply(mark, axis=1)


def said_once(constant: dict, lead: str = "Same on every row") -> str:
    """The columns :func:`drop_constant` dropped, as one caption: ``"Same on every row: tier best set."``
    (empty when none). Markdown-sensitive text is the caller's to escape."""
    if not constant:
        return ""
    return f"{lead}: " + "; ".join(f"{k} {DASH if _missing(v) else v}" for k, v in constant.items()) + "."
