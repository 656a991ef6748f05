"""The report's funnel, hubs, cost and variants sections: gathered here, rendered by the report's templates.

:func:`diag_sections` computes (from :mod:`ragdiag.analyses.funnel`, :mod:`ragdiag.analyses.hubs`
and, when measured, :mod:`ragdiag.analyses.cost`); :class:`DiagSections` says how its
tables read, once for both formats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...core.gate import Gate, OnGate

from ...analyses.compare.comparisons import family
from ...analyses.compare.paired import Difference
from ...core.defaults import PRIMARY_K
from ...evaluation.records import Config, Evaluation, parse_key
from ...analyses.funnel import funnels
from ...analyses.outcomes import LADDER
from ...core.words import RUNG_WORDS, count_rate_text, difference_text, value_interval
from ...analyses.hubs import hubs
from ...retrieval.registry import variant_baseline
from ...analyses.summary import summary_rows
from ...core.tables import Table

__all__ = ["DiagSections", "FunnelRow", "HubRow", "CostLine", "VariantRow", "diag_sections", "variant_rows",
           "WORST_HUBS"]

#: Hubs listed in the report.
WORST_HUBS = 10

FUNNEL_MEANS = ("Each answerable query gets the first stage of the pipeline that lost its answer: "
                f"{RUNG_WORDS['destroyed']}, {RUNG_WORDS['truncated']} (the encoder window), "
                f"{RUNG_WORDS['not-in-pool']} (not in the top 25 a reranker rescores), {RUNG_WORDS['ranked-low']} "
                f"(below the top k), {RUNG_WORDS['refused']} or {RUNG_WORDS['kept-but-wrong']}, or "
                f"{RUNG_WORDS['answered']} (the outcome ladder of the first screen's waterfall, for every "
                "configuration). Counts are over all phrasings; "
                "intervals are 95% clustered Wilson over questions (a question's phrasings together), exact (Clopper-Pearson) at 4 or fewer events or non-events. "
                "For a reranker, promoted/demoted count the queries it moved into/out of the top k: their "
                "difference is its change in R@k over hybrid.")
HUB_MEANS = ("A hub is in the top k of many more queries than a chunk would be if all were equally likely "
             "(ratio = k-occurrence / expected). Boilerplate-like text (navigation, licence lines, reference lists, "
             "code-only or table-only chunks) is flagged; displaced counts the answerable queries it sat in while "
             "their needle did not.")
COST_MEANS = ("Index build time, query latency one query at a time (median with its 95% distribution-free "
              "interval, and p95, over a seeded sample of queries: the timed queries column says how many; a "
              "reranker is timed on the first of them), wordpieces embedded, and the mean prompt wordpieces the "
              "gate sends at the cut, beside R@k. "
              "Pareto-optimal: no other configuration has at least its recall at no more cost.")
VARIANT_MEANS = ("each evaluated variant of the dense retriever (another embedding model, int8 or binary "
                 "vectors, an approximate HNSW index) against exact full-precision search on the same strategy, "
                 "paired over questions at the primary k, with simultaneous intervals and adjusted p within this "
                 "family (the baseline against each variant). The stamp says what made each variant's numbers.")


@dataclass(frozen=True)
class FunnelRow:
    """One configuration's funnel: queries, then per rung of ``LADDER`` its count with the interval."""

    config: str
    queries: int
    stages: tuple[str, ...]  # "count [low–high]" per LADDER
    moved: str  # "+promoted/-demoted" for a reranker, else "–"


@dataclass(frozen=True)
class HubRow:
    """One hub chunk (``Hub.row()``): how often it is in the top k and what it displaces."""

    chunk: str
    occurrences: int
    questions: int
    ratio: float
    boilerplate: str
    holds_needle_of: str
    displaced: int
    preview: str


@dataclass(frozen=True)
class CostLine:
    """One configuration's measured costs beside its recall (``CostRow.row()``)."""

    config: str
    recall: object  # the Interval of R@k
    build_s: float
    median_ms: float
    p95_ms: float
    embedded_tokens: int
    prompt_tokens: float
    pareto_latency: bool
    pareto_prompt: bool
    median_low_ms: float = float("nan")  # the median's 95% interval (order statistics)
    median_high_ms: float = float("nan")
    timed_queries: int = 0


@dataclass(frozen=True)
class VariantRow:
    """A dense variant against exact search on its strategy: recalls, difference [simultaneous 95%], adjusted p."""

    config: str
    recall: str
    baseline: str
    baseline_recall: str
    difference: str
    p_holm: float
    status: str
    bytes: object
    stamp: str


@dataclass(frozen=True)
class DiagSections(OnGate):
    """Where answers were lost, hub chunks, cost beside quality and dense variants, for one report at ``gate``."""

    config: str
    gate: Gate
    funnel: tuple[FunnelRow, ...]
    funnel_skipped: tuple[str, ...]
    hubs: tuple[HubRow, ...]  # worst offenders of the report's configuration
    boilerplate_hubs: tuple[str, ...]  # "config chunk (flags)" over every configuration
    costs: tuple[CostLine, ...] | None  # None when not measured
    machine: dict | None
    variants: tuple[VariantRow, ...] = ()

    @property
    def skipped_text(self) -> str:
        """The configurations left out of the funnel, with why."""
        return ", ".join(self.funnel_skipped)

    @property
    def boilerplate_text(self) -> str:
        """The boilerplate-like hubs of every configuration, or "none"."""
        return ", ".join(self.boilerplate_hubs) or "none"

    def funnel_table(self) -> Table:
        """Counts per stage of every configuration."""
        headers = ["configuration", "queries", *(RUNG_WORDS[s] for s in LADDER), "promoted / demoted"]
        return Table.of(headers, ([r.config, r.queries, *r.stages, r.moved] for r in self.funnel),
                        numeric=range(1, len(headers) - 1), id="funnel-table")

    def hub_table(self) -> Table:
        """The worst hubs of the report's configuration."""
        return Table.of(["chunk", "in top k of", "questions", "ratio", "boilerplate", "holds needle of", "displaced",
                         "text"],
                        ([h.chunk, h.occurrences, h.questions, f"{h.ratio:.1f}", h.boilerplate or "–",
                          h.holds_needle_of or "–", h.displaced, h.preview[:90]] for h in self.hubs),
                        numeric=(1, 2, 3, 6), id="hubs-table")

    def cost_table(self) -> Table:
        """Build time, latency, tokens and Pareto flags beside R@k."""
        key = f"R@{self.k}"
        return Table.of(["configuration", key, "build s", "ms/query median (95% interval)", "ms/query p95", "timed queries",
                         "embedded tokens", "prompt tokens/query", "Pareto (latency)", "Pareto (prompt)"],
                        ([c.config, str(c.recall), f"{c.build_s:.2f}",
                          value_interval(c.median_ms, c.median_low_ms, c.median_high_ms), f"{c.p95_ms:.1f}",
                          str(c.timed_queries), f"{c.embedded_tokens:,}", f"{c.prompt_tokens:.1f}",
                          "yes" if c.pareto_latency else "", "yes" if c.pareto_prompt else ""]
                         for c in self.costs or ()),
                        numeric=range(1, 8), id="cost-table")

    def variant_table(self) -> Table:
        """Each variant against its exact dense baseline."""
        key = f"R@{self.k}"
        return Table.of(["variant", key, "baseline", f"{key} of baseline", "difference [simultaneous 95%]",
                         "adjusted p", "verdict",
                         "bytes/vector", "stamp"],
                        ([v.config, v.recall, v.baseline, v.baseline_recall, v.difference, f"{v.p_holm:.3g}",
                          v.status, v.bytes, v.stamp] for v in self.variants),
                        numeric=(1, 3, 5, 7), id="variants-table")

    def machine_line(self) -> str:
        """Where the costs were measured ("" when unknown)."""
        m = self.machine or {}
        return ("Measured on " + ", ".join(f"{k} {v}" for k, v in m.items()) + ".") if m else ""


def variant_rows(ev: Evaluation, *, k: int = PRIMARY_K) -> list[VariantRow]:
    """Every evaluated variant (a configuration with a retriever stamp) against the retriever its spec makes it a
    variant of (:func:`~ragdiag.retrieval.registry.variant_baseline`: ``S/dense``), simultaneous within that family
    (the interval and adjusted p the status was decided with)."""
    rows: list[VariantRow] = []
    by_strategy: dict[str, list[Config]] = {}
    for label in getattr(ev, "retriever_stamps", {}):
        cfg = Config.parse(label)
        base = variant_baseline(cfg.retriever)
        if base and Config(cfg.strategy, base) in ev.results and cfg in ev.results:
            by_strategy.setdefault((cfg.strategy, base), []).append(cfg)
    if not by_strategy:
        return rows
    recall = {r.config: r.recall.get(k) for r in summary_rows(ev, ks=(k,))}  # the table's own intervals
    for (strategy, name), variants in by_strategy.items():
        base = Config(strategy, name)
        for c in family(ev, k=k, baseline=base, configs=[base, *variants]):
            stamp = ev.retriever_stamps.get(c.b.label, {})
            d = c.interval or c.test.difference  # the simultaneous interval the status was decided with
            p_adj = c.p_adjusted if c.p_adjusted is not None else c.test.p
            rows.append(VariantRow(  # baseline minus variant: the variant's difference is its negation
                c.b.label, str(recall[c.b.label]), base.label, str(recall[base.label]),
                difference_text(Difference(-d.estimate, -d.high, -d.low)), float(p_adj), c.status,
                stamp.get("bytes_per_vector", "–"),
                ", ".join(f"{key}={stamp[key]}" for key in ("precision", "index", "rescore", "M", "ef_search")
                          if stamp.get(key) is not None)))
    return rows


def _funnel_rows(ev: Evaluation, gate: Gate) -> tuple[list[FunnelRow], list[str]]:
    rows, skipped, errors = [], [], {}
    done = {f.config.label: f for f in funnels(ev, gate=gate, errors=errors)}
    for c in ev.results:
        if c.external:
            skipped.append(f"{c.label} (external run)")
            continue
        if c.label in errors:
            skipped.append(f"{c.label} ({errors[c.label]})")
            continue
        f = done[c.label]
        ivs = f.intervals()
        stages = tuple(count_rate_text(iv) if iv.trials else "0"
                       for iv in (ivs[s] for s in LADDER))
        rows.append(FunnelRow(c.label, len(f.rows), stages,
                              f"+{f.promoted}/-{f.demoted}" if f.reranker else "–"))
    return rows, skipped


def _hub_row(h) -> HubRow:
    r = h.row()
    return HubRow(r["chunk"], r["occurrences"], r["questions"], r["ratio"], r["boilerplate"], r["holds needle of"],
                  r["displaced"], r["preview"])


def _cost_line(c) -> CostLine:
    r = c.row()
    return CostLine(r["config"], r[f"R@{c.k}"], r["build s"], r["ms/query median"], r["ms/query p95"],
                    r["embedded tokens"], r["prompt tokens/query"], r["Pareto (latency)"], r["Pareto (prompt)"],
                    r["ms/query median low"], r["ms/query median high"], r["timed queries"])


def diag_sections(ev: Evaluation, config: Config | str, gate: Gate, *, costs: Sequence | None = None,
                  machine: dict | None = None) -> DiagSections:
    """The funnel of every configuration at ``gate``, the worst hubs of ``config`` at its k and (when given) the
    measured costs."""
    cfg = parse_key(config) if isinstance(config, str) else config
    k = gate.k
    rows, skipped = _funnel_rows(ev, gate)
    variants = tuple(variant_rows(ev, k=k))
    found = {c: hubs(ev, c, k=k, top=None, only_hubs=True) for c in ev.results if not c.external}
    worst = tuple(_hub_row(h) for h in found.get(cfg, [])[:WORST_HUBS])  # hubs() cuts its top the same way
    flagged = [f"{c.label} {h.chunk_id} ({', '.join(h.flags)}, {h.occurrences} queries)"
               for c, found_c in found.items() for h in found_c if h.flags]
    return DiagSections(cfg.label, gate, tuple(rows), tuple(skipped), worst, tuple(flagged),
                        tuple(_cost_line(c) for c in costs) if costs else None, machine, variants)
