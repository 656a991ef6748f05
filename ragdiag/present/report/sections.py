"""The report's data: one frozen dataclass per section, built by :func:`ragdiag.present.report.build_report`.

Sections hold the library's numbers (never its row dicts) and say how they read:
each table once as a :class:`ragdiag.core.tables.Table`, each sentence once, for both
the HTML and the Markdown template. Nothing here computes a metric.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.defaults import KS
from ...core.stats import Interval
from ...core.tables import Table
from ...core.words import f3, pct, secs, thousands
from .words import timing_name

__all__ = ["DestroyedNeedle", "CutText", "BluffRow", "Provenance", "RecallRow", "RecallSection", "NeedleSection",
           "BluffSection", "ChunkingRow", "RankingRow", "CostSection"]

@dataclass(frozen=True)
class CutText:
    """A needle split at the chunker's cuts; ``str`` joins the pieces with a scissors mark."""

    pieces: tuple[str, ...]

    def __str__(self) -> str:
        return " ✂ ".join(self.pieces)


@dataclass(frozen=True)
class DestroyedNeedle:
    """A needle no chunk of ``strategy`` holds whole; ``cuts`` are document offsets inside it."""

    strategy: str
    question_id: str
    doc_id: str
    section: str
    start: int
    end: int
    cuts: tuple[int, ...]
    needle: str

    def cut_groups(self) -> list[tuple[int, ...]]:
        """The cuts, one group per place: a chunk end and the next chunk's start with only
        whitespace between them (trimmed away by the chunker) are one cut."""
        groups: list[list[int]] = []
        for c in self.cuts:
            if groups and not self.needle[groups[-1][-1] - self.start:c - self.start].strip():
                groups[-1].append(c)
            else:
                groups.append([c])
        return [tuple(g) for g in groups]

    @property
    def where(self) -> str:
        """Where the cut(s) fell: characters of the needle before each cut, and the document offsets."""
        groups = self.cut_groups()
        rel = ", ".join(str(g[0] - self.start) for g in groups)
        offsets = ", ".join("/".join(map(str, g)) for g in groups)
        return f"after character {rel} of {self.end - self.start} (document offset {offsets})"

    def pieces(self) -> list[str]:
        """The needle split at each cut."""
        bounds = [0, *(g[0] - self.start for g in self.cut_groups()), len(self.needle)]
        return [self.needle[a:b] for a, b in zip(bounds, bounds[1:])]


@dataclass(frozen=True)
class BluffRow:
    """An out-of-domain query that still gets sources at the cut, with its closest kept chunk."""

    query_id: str
    kind: str
    text: str
    chunk_id: str
    doc_id: str
    section: str
    distance: float
    kept: int


@dataclass(frozen=True)
class Provenance:
    """Corpus, ground truth and model as (label, value) pairs, and the versions the footer names."""

    corpus_root: str
    ragdiag_version: str
    pipeline_version: str
    corpus: tuple[tuple[str, object], ...]
    truth: tuple[tuple[str, object], ...]
    model: tuple[tuple[str, object], ...]  # "generated" is added by Report.provenance_groups


@dataclass(frozen=True)
class RecallRow:
    """One configuration's line of the recall table: R@k for every k of ``KS``, MRR, destroyed, chunks."""

    config: str
    recall: tuple[Interval, ...]  # one per KS
    mrr: float
    destroyed: int
    chunks: int

    def at(self, k: int) -> Interval:
        """R@k (``k`` one of ``KS``)."""
        return self.recall[KS.index(k)]


@dataclass(frozen=True)
class RecallSection:
    """Recall of every configuration at every k, the chosen one highlighted (the appendix's full table)."""

    rows: tuple[RecallRow, ...]
    chosen: str
    n_in: int
    unavailable: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()

    def row(self, label: str) -> RecallRow:
        """The row of configuration ``label``."""
        return next(r for r in self.rows if r.config == label)

    def table(self) -> Table:
        """The recall table: intervals stay :class:`~ragdiag.core.stats.Interval` values for the templates."""
        return Table.of(["configuration", *(f"R@{k} (95% interval)" for k in KS), "MRR", "destroyed", "chunks"],
                        ([r.config, *r.recall, f3(r.mrr), r.destroyed, thousands(r.chunks)] for r in self.rows),
                        numeric=range(1, len(KS) + 4), id="recall-table",
                        row_class=("chosen" if r.config == self.chosen else "" for r in self.rows))


@dataclass(frozen=True)
class NeedleSection:
    """Needles destroyed by each strategy's chunking, with where the cuts fell."""

    needles: tuple[DestroyedNeedle, ...]
    counts: tuple[tuple[str, int], ...]  # strategy -> destroyed needles (zeros included)
    n_questions: int

    def counts_text(self) -> str:
        """``"A: 5 of 8, C: 0 of 8"``."""
        return ", ".join(f"{name}: {n} of {self.n_questions}" for name, n in self.counts)

    def table(self) -> Table:
        """The destroyed needles, each split at its cuts."""
        return Table.of(["strategy", "question", "document", "section", "needle (✂ = cut)", "where the cut fell"],
                        ([d.strategy, d.question_id, d.doc_id, d.section, CutText(tuple(d.pieces())), d.where]
                         for d in self.needles), id="destroyed-table")


@dataclass(frozen=True)
class BluffSection:
    """The out-of-domain queries that still get sources at the cut."""

    rows: tuple[BluffRow, ...]
    n_ood: int

    def table(self) -> Table:
        """One line per bluffing query with its closest kept chunk."""
        return Table.of(["query", "kind", "query text", "closest chunk", "document / section", "distance",
                         "chunks kept"],
                        ([b.query_id, b.kind, b.text, b.chunk_id, f"{b.doc_id} / {b.section}", f"{b.distance:.3f}",
                          b.kept] for b in self.rows), numeric=(5, 6), id="bluffs-table")


@dataclass(frozen=True)
class ChunkingRow:
    """One strategy's chunking costs (from ``chunking_rows``) and its indexing time."""

    strategy: str
    description: str
    chunks: int
    embedded_tokens: int
    header_tokens: int
    header_share: float
    truncated: int
    chars_lost: int
    index_seconds: float | None


@dataclass(frozen=True)
class RankingRow:
    """One configuration's ranking time over all queries."""

    config: str
    seconds: float
    ms_per_query: float


@dataclass(frozen=True)
class CostSection:
    """Chunking costs per strategy and the timings of this run."""

    chunking: tuple[ChunkingRow, ...]
    timings: tuple[tuple[str, float], ...]  # Evaluation.timings
    ranking: tuple[RankingRow, ...]
    n_queries: int

    def chunking_table(self) -> Table:
        """Chunks, tokens, truncation and indexing time per strategy."""
        return Table.of(["strategy", "chunking", "chunks", "embedded tokens", "header tokens", "header share",
                         "truncated chunks", "characters lost", "indexing time"],
                        ([c.strategy, c.description, thousands(c.chunks), thousands(c.embedded_tokens),
                          thousands(c.header_tokens), pct(c.header_share, 1, missing="n/a"), thousands(c.truncated),
                          thousands(c.chars_lost), secs(c.index_seconds)]
                         for c in self.chunking), numeric=range(2, 9), id="costs-table")

    def timing_table(self) -> Table:
        """Every timing but indexing (in the chunking table), then ranking per configuration."""
        rows = [[timing_name(k), secs(v), ""] for k, v in self.timings if not k.startswith("index_")]
        rows += [[f"ranking {x.config} ({self.n_queries} queries)", secs(x.seconds), f"{x.ms_per_query:.2f} ms"]
                 for x in self.ranking]
        return Table.of(["step", "time", "per query"], rows, numeric=(1, 2), id="timings")

