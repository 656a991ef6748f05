"""Typed table rows: every table the library returns is a list of these frozen rows.

Field names are the column names of the tables (``row.answered``); columns
whose names are not identifiers become mappings (``SummaryRow.recall[4]`` is
the ``R@4`` interval). Every row has :meth:`cells`, the flat ``{column: value}``
dict that text tables, JSON, CSV and Parquet files are written from, so files
keep their columns whatever the row type.

- :class:`SummaryRow` -- one configuration's recall table row (:func:`ragdiag.analyses.summary.summary_rows`).
- :class:`SweepRow` -- gate counts at one cut (:meth:`ragdiag.analyses.threshold.SweepTable.row`).
- :class:`RateRow` / :class:`RateCell` -- gate rates with intervals at one cut (:func:`ragdiag.analyses.threshold.rate_rows`).
- :class:`PairRow` -- one paired comparison of a family (:func:`ragdiag.analyses.compare.family_rows`).
- :class:`ChunkingRow` -- one strategy's chunking audit (:func:`ragdiag.analyses.summary.chunking_rows`).
- :class:`GranularRow`, :class:`RedundancyRow` -- :mod:`ragdiag.analyses.granular` tables.
- :class:`QueryRow` -- one (configuration, query) line of ``per_query.csv``
  (:func:`ragdiag.present.per_query.per_query_records`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Mapping

from ..core.stats import Interval

__all__ = [
    "SummaryRow",
    "SweepRow",
    "RateCell",
    "RateRow",
    "PairRow",
    "ChunkingRow",
    "GranularRow",
    "RedundancyRow",
    "QueryRow",
    "interval_cells",
    "OUTCOME_KEYS",
]

#: The outcomes of a :class:`RateRow`, in column order.
OUTCOME_KEYS = ("answered", "wrong_sources", "no_answer", "bluffs", "bluffs_near", "bluffs_far")


def _flat(name: str, iv: Interval) -> dict:
    return {name: iv.estimate, f"{name}_low": iv.low, f"{name}_high": iv.high}


def _plain(row) -> dict:
    return {f.name: getattr(row, f.name) for f in fields(row)}


class _FieldCells:
    """For a row whose flat row is its fields as they are: :meth:`cells` reads them, columns in field order."""

    def cells(self) -> dict:
        """The flat row, columns in field order."""
        return _plain(self)


@dataclass(frozen=True)
class SummaryRow:
    """One configuration's line of the recall table.

    ``recall[k]`` is R@k with its 95% interval over questions; ``mrr`` is the
    mean reciprocal rank with its cluster-robust interval. The audit columns
    (``destroyed`` ... ``truncated``) are ``None`` for an external run.

    Examples
    --------
    >>> from ragdiag.core.stats import wilson
    >>> r = SummaryRow("E/hybrid", "E", "hybrid", "all", 4, {1: wilson(2, 4)}, Interval(0.5, 0.25, 0.75, 0, 4),
    ...                0, 9, 120, 0.1, 0, 0.01)
    >>> r.cells()["R@1"], r.cells()["MRR_high"], list(r.cells())[5:9]
    (0.5, 0.75, ['R@1', 'R@1_low', 'R@1_high', 'MRR'])
    """

    config: str
    strategy: str
    retriever: str
    phrasing: str
    queries: int
    recall: Mapping[int, Interval]
    mrr: Interval
    destroyed: int | None
    chunks: int | None
    embedded_tokens: int | None
    header_share: float | None
    truncated: int | None
    seconds: float

    def cells(self) -> dict:
        """The flat row: ``R@k``, ``R@k_low``, ``R@k_high`` per k, ``MRR``, ``MRR_low``, ``MRR_high``, the rest as is."""
        out = {"config": self.config, "strategy": self.strategy, "retriever": self.retriever,
               "phrasing": self.phrasing, "queries": self.queries}
        for k, iv in self.recall.items():
            out.update(_flat(f"R@{k}", iv))
        out.update(_flat("MRR", self.mrr))
        out.update(destroyed=self.destroyed, chunks=self.chunks, embedded_tokens=self.embedded_tokens,
                   header_share=self.header_share, truncated=self.truncated, seconds=self.seconds)
        return out


@dataclass(frozen=True)
class SweepRow:
    """Gate counts at one cut: in-domain ``answered + wrong_sources + no_answer``, ood ``bluffs + abstained``.

    ``wrong_sources``: answerable queries given sources, none holding the
    answer; ``no_answer``: answerable queries given nothing (whatever their rung
    of :data:`ragdiag.analyses.outcomes.LADDER`: the ladder's ``kept-but-wrong`` and
    ``refused`` are the part of these whose needle was in the top k).
    ``lost`` is the answerable queries not answered; ``bluffs_by_kind`` the
    bluffs per out-of-domain kind (columns ``bluffs_near``, ``bluffs_far``).

    >>> SweepRow(0.5, 3, 1, 0, 1, 2, 4, {"near": 2, "far": 0}).cells()["bluffs_near"]
    2
    """

    cut: float
    answered: int
    wrong_sources: int
    no_answer: int
    lost: int
    bluffs: int
    abstained: int
    bluffs_by_kind: Mapping[str, int]

    def cells(self) -> dict:
        """The flat row, with one ``bluffs_KIND`` column per out-of-domain kind."""
        out = _plain(self)
        del out["bluffs_by_kind"]
        out.update({f"bluffs_{k}": v for k, v in self.bluffs_by_kind.items()})
        return out


@dataclass(frozen=True)
class RateCell(_FieldCells):
    """A count with its rate and 95% interval (``rate`` is ``None`` over 0 queries); its cells: the four fields."""

    count: int
    rate: float | None
    low: float
    high: float

    @classmethod
    def of(cls, iv: Interval) -> "RateCell":
        """The cell of an :class:`~ragdiag.core.stats.Interval` (its successes, estimate and bounds)."""
        return cls(int(iv.successes), None if iv.trials == 0 else float(iv.estimate), float(iv.low), float(iv.high))

    def words(self) -> str:
        """The count and its rate as every surface writes them (:func:`ragdiag.core.words.count_rate_text`),
        ``"3 = 75% (30–95)"``; over 0 queries ``"0 = no queries"`` (there is no rate to show).

        >>> RateCell(3, 0.75, 0.3, 0.95).words(), RateCell(0, None, 0.0, 1.0).words()
        ('3 = 75% (30–95)', '0 = no queries')
        """
        from ..core.words import count_rate_text

        if self.rate is None:
            return f"{self.count} = no queries"
        return count_rate_text(self)


@dataclass(frozen=True)
class RateRow:
    """Per outcome of the gate at ``cut``: a :class:`RateCell` (see :func:`ragdiag.analyses.threshold.rate_rows`)."""

    cut: float
    answered: RateCell
    wrong_sources: RateCell
    no_answer: RateCell
    bluffs: RateCell
    bluffs_near: RateCell
    bluffs_far: RateCell

    def cells(self) -> dict:
        """``{"cut": cut, outcome: {count, rate, low, high}, ...}`` (the JSON form)."""
        return {"cut": self.cut, **{k: getattr(self, k).cells() for k in OUTCOME_KEYS}}

    def outcomes(self) -> dict[str, RateCell]:
        """``{outcome: RateCell}`` in :data:`OUTCOME_KEYS` order."""
        return {k: getattr(self, k) for k in OUTCOME_KEYS}

    def outcome(self, name: str) -> RateCell:
        """The cell of outcome ``name`` (one of :data:`OUTCOME_KEYS`)."""
        if name not in OUTCOME_KEYS:
            raise ValueError(f"unknown outcome {name!r}; choose one of {', '.join(OUTCOME_KEYS)}")
        return getattr(self, name)


@dataclass(frozen=True)
class PairRow(_FieldCells):
    """One paired comparison of a family: ``a`` against ``b`` over questions, simultaneous within the family.

    ``wins``, ``losses`` and ``ties`` count questions; ``difference`` is the
    mean difference ``a - b`` with the bounds ``low``/``high`` of the interval
    of kind ``kind`` (``simultaneous``: the one ``status`` was decided with;
    ``status`` is ``different`` exactly when it excludes 0). ``p_adjusted`` is
    the family's max-T adjusted p, ``q_value`` the Benjamini-Hochberg q
    (exploratory), ``low_unadjusted``/``high_unadjusted`` the pair-alone
    question-bootstrap interval.
    """

    a: str
    b: str
    wins: int
    losses: int
    ties: int
    p: float
    p_adjusted: float | None
    difference: float
    low: float
    high: float
    status: str
    n_questions: int
    kind: str = "simultaneous"
    q_value: float | None = None
    low_unadjusted: float | None = None
    high_unadjusted: float | None = None


@dataclass(frozen=True)
class ChunkingRow(_FieldCells):
    """One strategy's line of the chunking table (sizes, tokens, header share, truncation, destroyed)."""

    strategy: str
    description: str
    chunks: int
    mean_chars: float
    destroyed: int
    embedded_tokens: int
    tokens_per_chunk: float
    header_tokens: int
    header_share: float
    truncated: int
    chars_lost: int


@dataclass(frozen=True)
class GranularRow:
    """Recall of one configuration at one level (document, section, span): ``recall[k]`` is R@k."""

    config: str
    level: str
    queries: int
    recall: Mapping[int, Interval]

    def cells(self) -> dict:
        """The flat row: ``R@k``, ``R@k_low``, ``R@k_high`` per k."""
        out = {"config": self.config, "level": self.level, "queries": self.queries}
        for k, iv in self.recall.items():
            out.update(_flat(f"R@{k}", iv))
        return out


@dataclass(frozen=True)
class RedundancyRow:
    """Redundant slots of one configuration's top ``k`` (column ``redundant slots``), with the share's interval."""

    config: str
    k: int
    redundant_slots: int
    slots: int
    redundancy: Interval

    def cells(self) -> dict:
        """The flat row: ``redundant slots``, ``slots``, ``redundancy`` with ``_low``/``_high``."""
        return {"config": self.config, "k": self.k, "redundant slots": self.redundant_slots, "slots": self.slots,
                **_flat("redundancy", self.redundancy)}


@dataclass(frozen=True)
class QueryRow(_FieldCells):
    """One (configuration, query): the needle's rank and distance, its outcome and the funnel's ranks.

    ``outcome``: the query's rung of :data:`ragdiag.analyses.outcomes.LADDER` (ood:
    ``bluff`` / ``abstained``) at the gate's k, keep and cut; ``kept``: the
    chunks the gate keeps there. ``None`` where a value does not apply (no
    needle found, an ood query, an external run). Its cells are the columns of ``per_query.csv``, in field order.
    """

    strategy: str
    retriever: str
    query_id: str
    question_id: str
    phrasing: str
    needle_rank: int | None
    outcome: str | None
    kept: int | None
    needle_distance: float | None
    top1_distance: float | None
    top1_chunk: str
    reciprocal_rank: float | None
    dense_rank: int | None
    bm25_rank: int | None
    pool_rank: int | None
    final_rank: int | None


def interval_cells(row) -> dict:
    """The flat cells of a row: a typed row's :meth:`cells`, or a dict with :class:`Interval` values flattened.

    >>> interval_cells({"config": "E/hybrid", "R@4": Interval(0.5, 0.2, 0.8, 2, 4)})
    {'config': 'E/hybrid', 'R@4': 0.5, 'R@4_low': 0.2, 'R@4_high': 0.8}
    """
    if hasattr(row, "cells"):
        return row.cells()
    out = {}
    for key, value in row.items():
        if isinstance(value, Interval):
            out.update(_flat(key, value))
        else:
            out[key] = value
    return out
