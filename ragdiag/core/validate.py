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

import json
import numbers
from typing import Callable, Iterable, Iterator, Mapping, TypeVar

T = TypeVar("T")

__all__ = ["require_type", "positive_int", "json_objects", "one_by_id"]


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


def json_objects(lines: Iterable[str], where: Callable[[int], str], *, expected: str = "a JSON object",
                 error: type[ValueError] = ValueError) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` of each non-blank line of JSON Lines ``lines``; ``error`` names a bad line.

    >>> list(json_objects(['{"a": 1}', '', '{"b": 2}'], lambda n: f"line {n}"))
    [(1, {'a': 1}), (3, {'b': 2})]
    >>> list(json_objects(['[1]'], lambda n: f"line {n}"))
    Traceback (most recent call last):
    ValueError: line 1: expected a JSON object
    """
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{where(n)}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise error(f"{where(n)}: expected {expected}")
        yield n, obj


def one_by_id(table: Mapping[str, T], key: str, what: str, where: str = "") -> T:
    """``table[key]``; else KeyError saying no ``what`` has that id (``where``) and naming some that do.

    >>> one_by_id({"q1": 1, "q2": 2}, "q9", "question")
    Traceback (most recent call last):
    KeyError: "no question 'q9' (there are 2: 'q1', 'q2')"
    """
    try:
        return table[key]
    except KeyError:
        some = ", ".join(repr(k) for k in list(table)[:3]) + (", ..." if len(table) > 3 else "")
        raise KeyError(f"no {what} {key!r}{where} (there are {len(table)}: {some})") from None
