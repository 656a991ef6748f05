"""The report's data: one frozen dataclass per section, built by :func:`ragdiag.report.build_report`.

Sections hold the library's numbers (never its row dicts) and say how they read:
each table once as a :class:`ragdiag.tables.Table`, each sentence once, for both
the HTML and the Markdown template. Nothing here computes a metric.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..defaults import ALPHA, KS
from ..stats import Interval
from ..svg import IntervalSeries, interval_chart
from ..tables import Table
from .words import f3, p_text, pct, secs, thousands, timing_name

__all__ = ["PairRow", "DestroyedNeedle", "CutText", "BluffRow", "Provenance", "RecallRow", "RecallSection",
           "ComparisonSection", "NeedleSection", "BluffSection", "ChunkingRow", "RankingRow", "CostSection",
           "LIST_ALL_UP_TO"]

LIST_ALL_UP_TO = 6  # at most this many indistinguishable pairs get a sentence each; more are counted


@dataclass(frozen=True)
class PairRow:
    """One paired comparison of the family: ``a`` against ``b`` at R@k, raw and Holm-adjusted p."""

    a: str
    b: str
    k: int
    wins: int
    losses: int
    ties: int
    p: float
    p_holm: float
    verdict: str = ""  # Comparison.verdict: the one rule and words (ragdiag.compare.verdict)
    status: str = ""  # "different", "not shown different" or "descriptive"

    @property
    def survives(self) -> bool:
        """Shown different after Holm correction within the family (adjusted p < ``ALPHA``, primary k)."""
        return self.status == "different" if self.status else self.p_holm < ALPHA

    @property
    def n(self) -> int:
        """Questions compared (wins + losses + ties)."""
        return self.wins + self.losses + self.ties

    @property
    def better(self) -> str:
        """The configuration with more wins (``a`` on a tie)."""
        return self.a if self.wins >= self.losses else self.b

    @property
    def worse(self) -> str:
        """The other configuration."""
        return self.b if self.wins >= self.losses else self.a

    def sentence(self) -> str:
        """The library's verdict with the wins, losses and raw p."""
        return f"{self.verdict} (+{self.wins}/-{self.losses} questions, raw p = {p_text(self.p)})."


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
    """Recall of every configuration, the chosen one highlighted, charted beside its best competitor."""

    rows: tuple[RecallRow, ...]
    chosen: str
    chart_configs: tuple[str, ...]
    competitor_k: int | None  # the k the competitor was chosen by; None without a competitor
    n_in: int
    unavailable: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def caption(self) -> str:
        """The charted configurations, ``"C/dense and A/bm25"``."""
        return " and ".join(self.chart_configs)

    def row(self, label: str) -> RecallRow:
        """The row of configuration ``label``."""
        return next(r for r in self.rows if r.config == label)

    def table(self) -> Table:
        """The recall table: intervals stay :class:`~ragdiag.stats.Interval` values for the templates."""
        return Table.of(["configuration", *(f"R@{k} [95% CI]" for k in KS), "MRR", "destroyed", "chunks"],
                        ([r.config, *r.recall, f3(r.mrr), r.destroyed, thousands(r.chunks)] for r in self.rows),
                        numeric=range(1, len(KS) + 4), id="recall-table",
                        row_class=("chosen" if r.config == self.chosen else "" for r in self.rows))

    def svg(self) -> str:
        """The recall chart (inline SVG)."""
        series = [IntervalSeries(label, [i.estimate for i in r.recall], [i.low for i in r.recall],
                                 [i.high for i in r.recall])
                  for label in self.chart_configs for r in (self.row(label),)]
        return interval_chart([f"R@{k}" for k in KS], series,
                              label=f"Recall at k with 95% intervals over questions: {', '.join(self.chart_configs)}",
                              y_label="recall", width=960, height=300)


@dataclass(frozen=True)
class ComparisonSection:
    """The whole family of paired comparisons at R@k (Holm over all of it) and the headline verdict."""

    k: int
    chosen: str
    pairs: tuple[PairRow, ...]
    competitor: str | None
    headline: str  # Comparison.verdict of the chosen config against its best competitor
    headline_power: str  # the questions needed to detect the headline difference
    n_in: int

    @property
    def survivors(self) -> tuple[PairRow, ...]:
        """Pairs shown different after Holm correction, smallest adjusted p first."""
        return tuple(sorted((p for p in self.pairs if p.survives), key=lambda p: (p.p_holm, p.better, p.worse)))

    @property
    def indistinguishable(self) -> tuple[PairRow, ...]:
        """Pairs not shown different."""
        return tuple(p for p in self.pairs if not p.survives)

    @property
    def listed(self) -> tuple[PairRow, ...]:
        """The pairs not shown different, when few enough to get a sentence each."""
        rest = self.indistinguishable
        return rest if len(rest) <= LIST_ALL_UP_TO else ()

    def family_sentence(self) -> str:
        """How many pairs were tested, how, and how many survive the correction."""
        m, s = len(self.pairs), len(self.survivors)
        if m == 0:
            return "Only one configuration was evaluated: there is nothing to compare."
        rest = m - s
        nq = self.pairs[0].n
        head = (f"{m} pair{'s' if m != 1 else ''} of configurations were tested at R@{self.k} on the same "
                f"{nq} questions ({self.n_in} queries; exact two-sided sign-flip test over questions, Holm "
                f"correction over all {m}).")
        if s == 0:
            return head + f" None survives the correction: all {m} are not shown different on these {nq} questions."
        return head + (f" {s} survive{'s' if s == 1 else ''}; the other {rest} "
                       f"{'is' if rest == 1 else 'are'} not shown different on these {nq} questions."
                       if rest else f" All {m} survive.")

    def headline_note(self) -> str:
        """Whether the headline pair survives Holm within the whole family ("" without a competitor)."""
        pair = {self.chosen, self.competitor}
        p = next((p for p in self.pairs if {p.a, p.b} == pair), None) if self.competitor else None
        if p is None:
            return ""
        verdict = "survives" if p.survives else "does not survive"
        return (f"Counted as one of the {len(self.pairs)} pairs of the family, this comparison {verdict} Holm "
                f"correction (Holm p = {p_text(p.p_holm)}).")

    def survivor_table(self) -> Table:
        """The pairs that survive, better first."""
        return Table.of(["better", "worse", "wins", "losses", "ties", "p", "Holm p"],
                        ([p.better, p.worse, max(p.wins, p.losses), min(p.wins, p.losses), p.ties, p_text(p.p),
                          p_text(p.p_holm)] for p in self.survivors), numeric=range(2, 7), id="survivors")


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
                          thousands(c.header_tokens), pct(c.header_share), thousands(c.truncated),
                          thousands(c.chars_lost), secs(c.index_seconds)]
                         for c in self.chunking), numeric=range(2, 9), id="costs-table")

    def timing_table(self) -> Table:
        """Every timing but indexing (in the chunking table), then ranking per configuration."""
        rows = [[timing_name(k), secs(v), ""] for k, v in self.timings if not k.startswith("index_")]
        rows += [[f"ranking {x.config} ({self.n_queries} queries)", secs(x.seconds), f"{x.ms_per_query:.2f} ms"]
                 for x in self.ranking]
        return Table.of(["step", "time", "per query"], rows, numeric=(1, 2), id="timings")

