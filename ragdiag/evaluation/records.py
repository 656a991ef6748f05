"""What an evaluation holds: configurations, external runs, per-query results.

A :class:`Config` is one of ragdiag's configurations (a chunking strategy and
a retriever, ``E/hybrid``); an :class:`ExternalKey` names another system's run
(``ext/NAME``, see :mod:`ragdiag.evaluation.external`). Both key the results of an
:class:`Evaluation`, which is immutable: attaching a run
(:func:`ragdiag.evaluation.external.attach_run`) returns a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Mapping, Union

import numpy as np

from ..index.audit import ChunkReport
from ..index.chunking import STRATEGIES, Chunk, Strategy
from ..documents.corpus import Corpus
from ..retrieval.registry import retriever_names, retriever_spec
from ..documents.truth import GroundTruth, Query

__all__ = ["Config", "ExternalKey", "ResultKey", "parse_key", "StrategyIndex", "ConfigResult", "Evaluation",
           "EXTERNAL"]

EXTERNAL = "ext"  # the strategy column of an external run in tables and files


@dataclass(frozen=True, order=True)
class Config:
    """A configuration: a chunking strategy and a retriever, written ``E/hybrid``.

    >>> Config.parse("e/Dense").label
    'E/dense'
    """
    strategy: str
    retriever: str

    def __post_init__(self) -> None:
        if self.strategy == EXTERNAL:
            raise ValueError(f"{EXTERNAL}/{self.retriever} names an external run, not a configuration: "
                             f"use ExternalKey({self.retriever!r})")

    @property
    def label(self) -> str:
        """``STRATEGY/RETRIEVER``, as users type it."""
        return f"{self.strategy}/{self.retriever}"

    @property
    def external(self) -> bool:
        """False: a configuration of ours (another system's run is an :class:`ExternalKey`)."""
        return False

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(cls, text: str) -> "Config":
        """``"E/dense"`` -> Config("E", "dense"); ``ValueError`` names what to write instead.

        ``ext/NAME`` is an external run, not a configuration: :func:`parse_key` reads both.
        """
        strategy, sep, retriever = text.strip().partition("/")
        if strategy != EXTERNAL:  # lower-case the name, not an @parameter (a model folder's path keeps its case)
            base, at, param = retriever.strip().partition("@")
            retriever = base.lower() + at + param
        retriever = retriever.strip()
        if sep and strategy == EXTERNAL and retriever:
            raise ValueError(f"{text.strip()!r} names an external run, not a configuration: read it with "
                             "ExternalKey.parse or parse_key (Evaluation.result finds both)")
        known = True
        try:
            retriever_spec(retriever)
        except ValueError:
            known = False
        if not sep or strategy.upper() not in STRATEGIES or not known:
            raise ValueError(
                f"bad configuration {text!r}: write STRATEGY/RETRIEVER, strategy one of "
                f"{','.join(STRATEGIES)}, retriever one of {','.join(retriever_names())} (e.g. E/hybrid)"
            )
        return cls(strategy.upper(), retriever)


@dataclass(frozen=True, order=True)
class ExternalKey:
    """Another system's run among an evaluation's results, written ``ext/NAME``.

    Not a configuration (its hits are not chunks of ours), but it answers what
    tables and files read from one: ``label``, ``strategy`` (``"ext"``),
    ``retriever`` (the run's name) and ``external`` (True).

    >>> key = ExternalKey.parse("ext/prod")
    >>> key.label, key.strategy, key.retriever, key.external
    ('ext/prod', 'ext', 'prod', True)
    """
    name: str
    strategy: ClassVar[str] = EXTERNAL
    external: ClassVar[bool] = True

    @property
    def retriever(self) -> str:
        """The run's name (the retriever column of tables and files)."""
        return self.name

    @property
    def label(self) -> str:
        """``ext/NAME``, as tables show it."""
        return f"{EXTERNAL}/{self.name}"

    def __str__(self) -> str:
        return self.label

    @classmethod
    def parse(cls, text: str) -> "ExternalKey":
        """``"ext/NAME"`` -> ExternalKey("NAME"); ``ValueError`` for anything else."""
        strategy, sep, name = text.strip().partition("/")
        if strategy != EXTERNAL or not sep or not name.strip():
            raise ValueError(f"bad external run {text!r}: write {EXTERNAL}/NAME (e.g. {EXTERNAL}/my-system)")
        return cls(name.strip())


ResultKey = Union[Config, ExternalKey]


def parse_key(text: str) -> ResultKey:
    """Any label of an evaluation's results: ``ext/NAME`` -> :class:`ExternalKey`, else :meth:`Config.parse`.

    >>> parse_key("ext/prod"), parse_key("C/bm25")
    (ExternalKey(name='prod'), Config(strategy='C', retriever='bm25'))
    """
    strategy, sep, name = text.strip().partition("/")
    if strategy == EXTERNAL and sep and name.strip():
        return ExternalKey(name.strip())
    return Config.parse(text)


@dataclass(frozen=True)
class StrategyIndex:
    """One strategy's chunks, vectors, audit, and which chunks hold each needle."""

    strategy: Strategy
    chunks: tuple[Chunk, ...]
    vectors: np.ndarray
    report: ChunkReport
    holders: dict[str, np.ndarray]  # question id -> chunk positions holding its needle
    embedded: int = 0  # vectors computed (not reused from the store) while building
    normalisation_error: float = 0.0

    def truncated_before_needle(self, question_id: str, needle_end: int) -> bool:
        """Every chunk holding the needle is cut by the encoder window before it ends."""
        h = self.holders[question_id]
        return bool(h.size) and bool((self.report.audit.window_end[h] < needle_end).all())


@dataclass(frozen=True)
class ConfigResult:
    """Per-query outcome of one configuration (or external run), in the order of ``Evaluation.queries``."""

    config: ResultKey
    needle_rank: np.ndarray  # int, 1-based, 0 = no chunk holding the needle in the list (ood: 0)
    needle_distance: np.ndarray  # closest holder's cosine distance (nan: destroyed / ood)
    top1_distance: np.ndarray
    top_order: np.ndarray  # (queries, TOP) chunk positions
    top_scores: np.ndarray  # retriever's scores
    top_distance: np.ndarray  # cosine distances
    top_holds: np.ndarray  # bool: does that chunk hold the query's needle
    seconds: float = 0.0
    # Per query, how many of the top positions were really retrieved (BM25: chunks sharing a word with the
    # query); None: all of them. Exports stop there, so other tools count what ragdiag counts.
    retrieved: np.ndarray | None = None


@dataclass(frozen=True)
class Evaluation:
    """Everything one run computed; the dashboard, CLI and reports read from it.

    Immutable, and its mappings are never changed after construction: a
    variant (another run attached, a subset of results) is a new Evaluation,
    made with :func:`dataclasses.replace`.
    """

    corpus: Corpus
    truth: GroundTruth
    queries: tuple[Query, ...]
    indexes: Mapping[str, StrategyIndex]
    results: Mapping[ResultKey, ConfigResult]
    unavailable: Mapping[str, str] = field(default_factory=dict)
    encoder_stamp: Mapping = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    external: Mapping = field(default_factory=dict)  # run name -> ExternalRun (see ragdiag.evaluation.external)
    retriever_stamps: Mapping = field(default_factory=dict)  # config label -> what made it (precision, index, model)
    notes: Mapping[str, str] = field(default_factory=dict)  # what the reader must know (e.g. queries BM25 cannot match)

    @property
    def in_domain(self) -> np.ndarray:
        """Per query: does it have an answer in the corpus (False for out-of-domain)?"""
        return np.array([q.in_domain for q in self.queries])

    def mask(self, phrasing: str = "all") -> np.ndarray:
        """In-domain queries of a phrasing (``all``, ``course``, ``ticket``...)."""
        if phrasing == "all":
            return self.in_domain
        return np.array([q.phrasing == phrasing for q in self.queries])

    def groups(self, mask: np.ndarray) -> list[str]:
        """The question of each query selected by ``mask`` (a question's phrasings are one unit)."""
        return [q.question_id or q.id for q, m in zip(self.queries, mask) if m]

    def result(self, config: ResultKey | str) -> ConfigResult:
        """The per-query result of a configuration or external run (a key or its label); KeyError says why it is missing."""
        cfg = parse_key(config) if isinstance(config, str) else config
        if cfg not in self.results:
            reason = self.unavailable.get(cfg.retriever)
            known = ", ".join(c.label for c in self.results)
            raise KeyError(f"{cfg.label} was not evaluated" + (f" ({reason})" if reason else f"; evaluated: {known}"))
        return self.results[cfg]

    def hit_label(self, config: ResultKey, position: int) -> str:
        """A readable id for a ranked item: the chunk id, or ``hit N`` of an external run."""
        if config.external:
            return f"{config.retriever} hit {position + 1}" if position >= 0 else ""
        return self.indexes[config.strategy].chunks[position].id

    def query_index(self, query_id: str) -> int:
        """Position of query ``query_id`` in ``queries``."""
        for i, q in enumerate(self.queries):
            if q.id == query_id:
                return i
        raise KeyError(f"no query {query_id!r}")
