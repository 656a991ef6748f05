"""Checks of public arguments at the library's boundary: a wrong type or range is a message naming the argument.

Without them a wrong type fails deep inside (``AttributeError: 'str' object has no attribute 'documents'``)
and a NaN or zero slips through as a silent wrong answer.

>>> positive_int(3, "rerank_head")
3
>>> positive_int(0, "rerank_head")
Traceback (most recent call last):
ValueError: rerank_head must be an integer >= 1, got 0
"""

from __future__ import annotations

import numbers

__all__ = ["require_type", "positive_int"]


def require_type(value, kind: type | tuple[type, ...], name: str, *, hint: str = ""):
    """``value`` when it is a ``kind``, else TypeError naming ``name``, the type expected and the type given."""
    if not isinstance(value, kind):
        want = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        article = "an" if want[0].lower() in "aeiou" else "a"
        raise TypeError(f"{name} must be {article} {want}, got {type(value).__name__}" + (f" ({hint})" if hint else ""))
    return value


def positive_int(value, name: str) -> int:
    """``value`` when it is an integer >= 1 (bools refused), else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)
