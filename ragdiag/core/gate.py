"""The gate as one value: how many chunks are kept, the rank that counts as found, and the abstention cut.

A pipeline answers a query in two steps: the retriever ranks chunks and hands
its top ``k`` on; the gate keeps at most ``keep`` of those (its top
``min(k, keep)``, the *window*), only the chunks whose cosine distance to the
query is strictly under the cut (``d < cut``). Every surface of ragdiag (the
sweep, the rates, the cut chooser, the funnel, the Inspector, the report, the
export, the regression gate, the citations) reads the decision from one
:class:`Gate`; this module is the only place that checks its ranges and the
only place that says what "under the cut" and "the window" mean
(:meth:`Gate.under`, :meth:`Gate.window`, :meth:`Gate.kept`).

>>> g = Gate(keep=4, cut=0.5)
>>> g.k, g.window(20), g.window(3)
(4, 4, 3)
>>> g.under(np.array([0.2, 0.5, 0.7])).tolist()
[True, False, False]
>>> Gate(keep=4, cut=float("nan"))
Traceback (most recent call last):
ragdiag.core.gate.GateError: cut must be a finite cosine distance in [0, 2], got nan
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, Mapping

import numpy as np

from .defaults import DEFAULT_CUT, DEFAULT_KEEP, TOP

__all__ = ["Gate", "GateError", "MIN_CUT", "MAX_CUT", "MAX_K", "check_cut", "check_cut_array", "count_under", "under_each",
           "CUT_DECIMALS", "cut_text", "floor_cut", "ceil_cut"]

#: Cosine distances of unit vectors lie in [0, 2]: a cut outside this range is not a cut.
MIN_CUT, MAX_CUT = 0.0, 2.0
#: The ranks kept per query (:data:`ragdiag.core.defaults.TOP`): ``k`` and ``keep`` cannot look further.
MAX_K = TOP
#: Every surface prints a cut with this many decimals, rounded *down* (a lower cut keeps a bluff guarantee).
CUT_DECIMALS = 3


class GateError(ValueError):
    """A gate setting out of its range; the message names the field and what to do."""


def _int(value: Any, name: str, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and math.isfinite(value) and value == int(value):
            value = int(value)
        else:
            raise GateError(f"{name} must be a whole number from 1 to {hi}, got {value!r}")
    if not 1 <= int(value) <= hi:
        raise GateError(f"{name} must be a whole number from 1 to {hi}, got {value!r}")
    return int(value)


def check_cut(value: Any, name: str = "cut") -> float:
    """``value`` as a float when it is a finite cosine distance in [0, 2], else :class:`GateError` naming ``name``.

    The one range of a cut, everywhere: ``0`` keeps nothing, ``2`` keeps every chunk of the window.

    >>> check_cut(0.524)
    0.524
    >>> check_cut("0.5")
    Traceback (most recent call last):
    ragdiag.core.gate.GateError: cut must be a finite cosine distance in [0, 2], got '0.5'
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise GateError(f"{name} must be a finite cosine distance in [{MIN_CUT:g}, {MAX_CUT:g}], got {value!r}")
    v = float(value)
    if not (math.isfinite(v) and MIN_CUT <= v <= MAX_CUT):
        raise GateError(f"{name} must be a finite cosine distance in [{MIN_CUT:g}, {MAX_CUT:g}], got {value!r}")
    return v


def check_cut_array(cuts: Any, name: str = "cut") -> np.ndarray:
    """Cuts as a float64 array, each checked as :func:`check_cut` does (a sweep's cuts).

    >>> check_cut_array(0.5).tolist()
    [0.5]
    """
    arr = np.atleast_1d(np.asarray(cuts, dtype=np.float64))
    bad = ~np.isfinite(arr) | (arr < MIN_CUT) | (arr > MAX_CUT)
    if bad.any():
        check_cut(float(arr[bad][0]), name)
    return arr


def _under(values, cut):
    # The gate's rule, the only place it is written: a chunk is kept when its distance is strictly under the cut.
    return values < cut


def under_each(values: Any, cuts: Any) -> np.ndarray:
    """A (cuts, values) mask: value ``j`` strictly under cut ``i`` (:meth:`Gate.under` for many cuts at once).

    >>> under_each([0.2, 0.5], [0.5, 0.6]).tolist()
    [[True, False], [True, True]]
    """
    return _under(np.asarray(values, dtype=np.float64)[None, :], np.atleast_1d(np.asarray(cuts, dtype=np.float64))[:, None])


def count_under(sorted_values: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Per cut, how many of ``sorted_values`` are strictly under it: :meth:`Gate.under` counted for many cuts at once.

    ``searchsorted(side="left")`` counts the values ``< cut``, the gate's strict
    rule, in O(m log n) for m cuts (the sweep's trick).

    >>> count_under(np.array([0.2, 0.5, 0.5, 0.7]), np.array([0.5, 0.6])).tolist()
    [1, 3]
    """
    return np.searchsorted(sorted_values, cuts, side="left")


def floor_cut(cut: float) -> float:
    """``cut`` rounded down to :data:`CUT_DECIMALS` (the safe side for a bluff goal: it only refuses more).

    >>> floor_cut(0.52499), floor_cut(0.6)
    (0.524, 0.6)
    """
    x, step = float(cut), 10 ** CUT_DECIMALS
    c = math.ceil(x * step) / step
    while c > x:  # the largest multiple of 0.001 that is <= x, exactly (x * step is itself rounded)
        c = round(c - 1 / step, CUT_DECIMALS)
    return c


def ceil_cut(cut: float) -> float:
    """``cut`` rounded up to :data:`CUT_DECIMALS`, at most 2 (the safe side for an answered goal: it only keeps more).

    >>> ceil_cut(0.30000000000000004), ceil_cut(0.6)
    (0.301, 0.6)
    """
    x, step = float(cut), 10 ** CUT_DECIMALS
    c = math.floor(x * step) / step
    while c < x:  # the smallest multiple of 0.001 that is >= x, exactly
        c = round(c + 1 / step, CUT_DECIMALS)
    return min(c, MAX_CUT)


def cut_text(cut: float) -> str:
    """A cut as every surface prints it: :data:`CUT_DECIMALS` decimals, rounded down (never past a distance).

    A proposed cut is already a multiple of 0.001, so it prints as itself; an
    exact in-sample cut sitting on a query's distance prints just under it, so
    typing the printed value back gives the same rates.

    >>> cut_text(0.524), cut_text(0.52859), cut_text(0.6)
    ('0.524', '0.528', '0.600')
    """
    return f"{floor_cut(cut):.{CUT_DECIMALS}f}"


@dataclass(frozen=True)
class Gate:
    """The decision a pipeline applies to every query: keep at most ``keep`` chunks under ``cut``; found = in the top ``k``.

    ``k`` defaults to ``keep`` (the gate's k is its keep: the recall headline is
    at the rank the gate looks at). Built from any surface by
    :meth:`from_options` (CLI options, a library call), :meth:`from_stamp` (a
    run's ``summary.json``) or :meth:`from_text` (the dashboard's URL), each
    checking the ranges once.
    """

    keep: int = DEFAULT_KEEP
    cut: float = DEFAULT_CUT
    k: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "keep", _int(self.keep, "keep", MAX_K))
        object.__setattr__(self, "cut", check_cut(self.cut))
        object.__setattr__(self, "k", self.keep if self.k is None else _int(self.k, "k", MAX_K))

    # --- building -----------------------------------------------------------------------------------------
    @classmethod
    def from_options(cls, *, keep: Any = None, cut: Any = None, k: Any = None) -> "Gate":
        """A gate from optional settings (``None``: the default; ``k`` ``None``: ``keep``).

        >>> Gate.from_options(cut=0.524)
        Gate(keep=4, cut=0.524, k=4)
        """
        return cls(DEFAULT_KEEP if keep is None else keep, DEFAULT_CUT if cut is None else cut, k)

    @classmethod
    def from_stamp(cls, stamp: Any, *, where: str = "summary.json") -> "Gate":
        """The gate a run was stamped with (``summary.json``'s ``gate``: ``cut``, ``keep``, ``primary_k``).

        Nothing is defaulted: a missing or malformed field is a :class:`GateError`
        naming ``where`` and the field (a gate that could be made to pass by its
        input would be a silent wrong answer in CI).

        >>> Gate.from_stamp({"cut": 0.6, "keep": 4, "primary_k": 4})
        Gate(keep=4, cut=0.6, k=4)
        >>> Gate.from_stamp({"cut": -1, "keep": 4, "primary_k": 4})
        Traceback (most recent call last):
        ragdiag.core.gate.GateError: summary.json: gate.cut must be a finite cosine distance in [0, 2], got -1
        """
        if not isinstance(stamp, Mapping):
            raise GateError(f"{where}: gate must be a mapping with cut, keep and primary_k, got {type(stamp).__name__}")
        for key in ("cut", "keep", "primary_k"):
            if key not in stamp:
                raise GateError(f"{where}: gate.{key} is missing (re-run eval --out to stamp the gate)")
        try:
            return cls(stamp["keep"], stamp["cut"], stamp["primary_k"])
        except GateError as exc:
            field = str(exc).split(" ", 1)[0]
            field = "primary_k" if field == "k" else field
            raise GateError(f"{where}: gate.{field} {str(exc).split(' ', 1)[1]}") from None

    @classmethod
    def from_text(cls, *, keep: str | None = None, cut: str | None = None, k: str | None = None) -> "Gate":
        """A gate from text (a URL's query parameters); unparsable text is a :class:`GateError`.

        >>> Gate.from_text(cut="0.524", keep="6")
        Gate(keep=6, cut=0.524, k=6)
        """
        def num(text, parse, name):
            if text is None or text == "":
                return None
            try:
                return parse(str(text))
            except ValueError:
                raise GateError(f"{name} must be a number, got {text!r}") from None

        return cls.from_options(keep=num(keep, int, "keep"), cut=num(cut, float, "cut"), k=num(k, int, "k"))

    def with_cut(self, cut: Any) -> "Gate":
        """The same gate at another cut (checked)."""
        return replace(self, cut=cut)

    # --- the rule -----------------------------------------------------------------------------------------
    def window(self, width: int) -> int:
        """How many ranks the gate looks at: ``min(k, keep, width)`` (a corpus with fewer chunks: all of them)."""
        return min(self.k, self.keep, int(width))

    def in_window(self, rank: int) -> bool:
        """Whether the 1-based ``rank`` is one the gate looks at (``1 <= rank <= min(k, keep)``).

        >>> Gate(keep=4, k=6).in_window(4), Gate(keep=4, k=6).in_window(5), Gate(keep=4).in_window(0)
        (True, False, False)
        """
        return 1 <= int(rank) <= min(self.k, self.keep)

    def under(self, distances: Any) -> np.ndarray:
        """Which distances are strictly under the cut: the only test of "kept" in ragdiag (``d < cut``)."""
        return _under(np.asarray(distances, dtype=np.float64), self.cut)

    def kept(self, top_distance: np.ndarray) -> np.ndarray:
        """Per query and rank, whether the gate keeps that chunk: in the window *and* under the cut.

        The window comes first (the top ``min(k, keep)``), then the cut: a chunk
        ranked past ``keep`` is never kept, however close.

        >>> Gate(keep=2, cut=0.5).kept(np.array([[0.6, 0.4, 0.1]])).tolist()
        [[False, True, False]]
        """
        d = np.atleast_2d(np.asarray(top_distance, dtype=np.float64))
        mask = np.zeros(d.shape, dtype=bool)
        w = self.window(d.shape[1])
        mask[:, :w] = self.under(d[:, :w])
        return mask

    def stamp(self) -> dict:
        """The gate as ``summary.json`` stamps it (read back by :meth:`from_stamp`)."""
        return {"cut": self.cut, "keep": self.keep, "primary_k": self.k}

    @property
    def cut_words(self) -> str:
        """The cut as printed everywhere (:func:`cut_text`)."""
        return cut_text(self.cut)


class OnGate:
    """For a record that holds a :class:`Gate` as ``gate``: its ``cut``, ``keep`` and ``k`` read through it.

    The record keeps one field, the gate; these are views of it, never copies.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Row(OnGate):
    ...     gate: Gate
    >>> r = Row(Gate(keep=6, cut=0.5))
    >>> r.cut, r.keep, r.k, r.cut_words
    (0.5, 6, 6, '0.500')
    """

    gate: Gate

    cut = property(attrgetter("gate.cut"), doc="The gate's cut (a cosine distance).")
    keep = property(attrgetter("gate.keep"), doc="The most chunks the gate keeps.")
    k = property(attrgetter("gate.k"), doc="The rank that counts as found (recall's k).")

    @property
    def cut_words(self) -> str:
        """The cut as printed everywhere (:func:`cut_text`)."""
        return cut_text(self.gate.cut)
