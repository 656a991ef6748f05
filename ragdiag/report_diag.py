"""The report's funnel, hubs and cost sections: gathered here, rendered with the report's own helpers.

:func:`diag_sections` computes (from :mod:`ragdiag.funnel`, :mod:`ragdiag.hubs`
and, when measured, :mod:`ragdiag.cost`); :meth:`DiagSections.to_html` and
:meth:`DiagSections.to_markdown` only format, escaping every piece of corpus
text as the rest of the report does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .defaults import PRIMARY_K, SEED
from .evaluate import Config, Evaluation
from .funnel import STAGES, funnels

__all__ = ["DiagSections", "diag_sections", "WORST_HUBS"]

#: Hubs listed in the report.
WORST_HUBS = 10

_FUNNEL_MEANS = ("Each answerable query gets the first stage of the pipeline that lost its answer: destroyed by the "
                 "chunking, truncated by the encoder window, not in the pool (the top 25 a reranker rescores), "
                 "ranked below k, refused or kept-but-wrong by the gate at the cut, or answered. Counts are over all "
                 "phrasings; intervals are 95% percentile bootstraps that resample questions (a question's phrasings "
                 "together, seed {seed}). For a reranker, promoted/demoted count the queries it moved into/out of "
                 "the top k: their difference is its change in R@k over hybrid.")
_HUB_MEANS = ("A hub is in the top k of many more queries than a chunk would be if all were equally likely "
              "(ratio = k-occurrence / expected). Boilerplate-like text (navigation, licence lines, reference lists, "
              "code-only or table-only chunks) is flagged; displaced counts the answerable queries it sat in while "
              "their needle did not.")
_COST_MEANS = ("Index build time, query latency one query at a time (median and p95 over a seeded sample), "
               "wordpieces embedded, and the mean prompt wordpieces the gate sends at the cut, beside R@k. "
               "Pareto-optimal: no other configuration has at least its recall at no more cost.")


@dataclass(frozen=True)
class DiagSections:
    config: str
    k: int
    cut: float
    keep: int
    funnel: tuple[dict, ...]  # per configuration: counts, interval text, promoted/demoted
    funnel_skipped: tuple[str, ...]
    hubs: tuple[dict, ...]  # worst offenders of the report's configuration (Hub.row())
    boilerplate_hubs: tuple[str, ...]  # "config chunk (flags)" over every configuration
    costs: tuple[dict, ...] | None  # CostRow.row() when measured
    machine: dict | None
    variants: tuple[dict, ...] = ()  # variant_rows(): each evaluated variant against its exact dense baseline

    # ----- formats ----------------------------------------------------------------------------------
    def _funnel_table(self) -> tuple[list[str], list[list]]:
        headers = ["configuration", "queries", *STAGES, "promoted/demoted"]
        rows = [[r["config"], r["queries"], *(r[s] for s in STAGES), r["moved"]] for r in self.funnel]
        return headers, rows

    def _hub_table(self) -> tuple[list[str], list[list]]:
        headers = ["chunk", "in top k of", "questions", "ratio", "boilerplate", "holds needle of", "displaced",
                   "text"]
        rows = [[h["chunk"], h["occurrences"], h["questions"], f"{h['ratio']:.1f}", h["boilerplate"] or "–",
                 h["holds needle of"] or "–", h["displaced"], h["preview"][:90]] for h in self.hubs]
        return headers, rows

    def _cost_table(self) -> tuple[list[str], list[list]]:
        key = f"R@{self.k}"
        headers = ["configuration", key, "build s", "ms/query median", "ms/query p95", "embedded tokens",
                   "prompt tokens/query", "Pareto (latency)", "Pareto (prompt)"]
        rows = [[c["config"], str(c[key]), f"{c['build s']:.2f}", f"{c['ms/query median']:.1f}",
                 f"{c['ms/query p95']:.1f}", f"{c['embedded tokens']:,}", f"{c['prompt tokens/query']:.1f}",
                 "yes" if c["Pareto (latency)"] else "", "yes" if c["Pareto (prompt)"] else ""]
                for c in self.costs or ()]
        return headers, rows

    def _variant_table(self) -> tuple[list[str], list[list]]:
        key = f"R@{self.k}"
        headers = ["variant", key, "baseline", f"{key} of baseline", "difference [95%]", "Holm p", "verdict",
                   "bytes/vector", "stamp"]
        rows = [[v["config"], v["recall"], v["baseline"], v["baseline recall"], v["difference"], f"{v['p_holm']:.3g}",
                 v["status"], v["bytes"], v["stamp"]] for v in self.variants]
        return headers, rows

    def _machine_line(self) -> str:
        m = self.machine or {}
        return ("Measured on " + ", ".join(f"{k} {v}" for k, v in m.items()) + ".") if m else ""

    def to_html(self) -> str:
        from .report import _h, _html_table, _means

        out = ['<section id="funnel"><h2>Where answers were lost</h2>',
               _means(_FUNNEL_MEANS.format(seed=SEED)),
               f"<p>At k = {_h(self.k)}, gate cut {_h(f'{self.cut:g}')}, keep {_h(self.keep)}.</p>"]
        h, rows = self._funnel_table()
        out.append(_html_table(h, rows, numeric=range(1, len(h) - 1), table_id="funnel-table"))
        if self.funnel_skipped:
            out.append(f'<p class="note">Not in the funnel: {_h(", ".join(self.funnel_skipped))}.</p>')
        out.append("</section>")
        out.append(f'<section id="hubs"><h2>Hub chunks of {_h(self.config)}</h2>')
        out.append(_means(_HUB_MEANS))
        if self.hubs:
            h, rows = self._hub_table()
            out.append(_html_table(h, rows, numeric=(1, 2, 3, 6), table_id="hubs-table"))
        else:
            out.append(f"<p>No chunk of {_h(self.config)} is a hub at k = {_h(self.k)}.</p>")
        out.append("<p>Boilerplate-like hubs in any configuration: "
                   f"{_h(', '.join(self.boilerplate_hubs) or 'none')}.</p></section>")
        out.append('<section id="cost"><h2>Cost beside quality</h2>')
        out.append(_means(_COST_MEANS))
        if self.costs:
            h, rows = self._cost_table()
            out.append(_html_table(h, rows, numeric=range(1, 7), table_id="cost-table"))
            out.append(f'<p class="note">{_h(self._machine_line())}</p>')
        else:
            out.append("<p>Not measured for this report: run <code>python -m ragdiag cost</code>, or "
                       "<code>report</code> without <code>--no-cost</code>.</p>")
        out.append("</section>")
        if self.variants:
            out.append('<section id="variants"><h2>Variants against exact search</h2>')
            out.append(_means(_VARIANT_MEANS))
            h, rows = self._variant_table()
            out.append(_html_table(h, rows, numeric=(1, 3, 5, 7), table_id="variants-table"))
            out.append("</section>")
        return "\n".join(out)

    def to_markdown(self) -> str:
        from .report import _m, _md_table

        out = ["## Where answers were lost", "", f"_What this means:_ {_FUNNEL_MEANS.format(seed=SEED)}", "",
               f"At k = {self.k}, gate cut {self.cut:g}, keep {self.keep}.", ""]
        h, rows = self._funnel_table()
        out += [_md_table(h, rows, numeric=range(1, len(h) - 1)), ""]
        if self.funnel_skipped:
            out += [f"Not in the funnel: {_m(', '.join(self.funnel_skipped))}.", ""]
        out += [f"## Hub chunks of {_m(self.config)}", "", f"_What this means:_ {_HUB_MEANS}", ""]
        if self.hubs:
            h, rows = self._hub_table()
            out += [_md_table(h, rows, numeric=(1, 2, 3, 6)), ""]
        else:
            out += [f"No chunk of {_m(self.config)} is a hub at k = {self.k}.", ""]
        out += [f"Boilerplate-like hubs in any configuration: {_m(', '.join(self.boilerplate_hubs) or 'none')}.", ""]
        out += ["## Cost beside quality", "", f"_What this means:_ {_COST_MEANS}", ""]
        if self.costs:
            h, rows = self._cost_table()
            out += [_md_table(h, rows, numeric=range(1, 7)), "", _m(self._machine_line()), ""]
        else:
            out += ["Not measured for this report: run `python -m ragdiag cost`, or `report` without `--no-cost`.", ""]
        if self.variants:
            h, rows = self._variant_table()
            out += ["## Variants against exact search", "", f"_What this means:_ {_VARIANT_MEANS}", "",
                    _md_table(h, rows, numeric=(1, 3, 5, 7)), ""]
        return "\n".join(out)


_VARIANT_MEANS = ("each evaluated variant of the dense retriever (another embedding model, int8 or binary "
                  "vectors, an approximate HNSW index) against exact full-precision search on the same strategy, "
                  "paired over questions at the primary k, Holm-corrected within this family (the baseline "
                  "against each variant). The stamp says what made each variant's numbers.")


def variant_rows(ev: Evaluation, *, k: int = PRIMARY_K) -> list[dict]:
    """Every evaluated dense variant (a configuration with a retriever stamp) against ``S/dense``, Holm within."""
    from .compare import Difference
    from .evaluate import summary_rows
    from .results import family

    rows = []
    by_strategy: dict[str, list[Config]] = {}
    for label in getattr(ev, "retriever_stamps", {}):
        cfg = Config.parse(label)
        if cfg.retriever != "dense" and Config(cfg.strategy, "dense") in ev.results and cfg in ev.results:
            by_strategy.setdefault(cfg.strategy, []).append(cfg)
    if not by_strategy:
        return rows
    recall = {r.config: r.recall.get(k) for r in summary_rows(ev, ks=(k,))}  # the table's own intervals
    for strategy, variants in by_strategy.items():
        base = Config(strategy, "dense")
        for c in family(ev, k=k, baseline=base, configs=[base, *variants]):
            stamp = ev.retriever_stamps.get(c.b.label, {})
            d = c.test.difference  # baseline minus variant: the variant's difference is its negation
            rows.append({
                "config": c.b.label, "recall": str(recall[c.b.label]),
                "baseline": base.label, "baseline recall": str(recall[base.label]),
                "difference": str(Difference(-d.estimate, -d.high, -d.low)), "p_holm": float(c.p_holm),
                "status": c.status,
                "bytes": stamp.get("bytes_per_vector", "–"),
                "stamp": ", ".join(f"{key}={stamp[key]}" for key in ("precision", "index", "rescore", "M",
                                                                     "ef_search") if stamp.get(key) is not None),
            })
    return rows


def diag_sections(ev: Evaluation, config: Config | str, *, cut: float, keep: int, k: int = PRIMARY_K,
                  costs: Sequence | None = None, machine: dict | None = None) -> DiagSections:
    """The funnel of every configuration, the worst hubs of ``config`` and (when given) the measured costs."""
    from .hubs import hubs

    cfg = Config.parse(config) if isinstance(config, str) else config
    rows, skipped = [], []
    for c in ev.results:
        if c.external:
            skipped.append(f"{c.label} (external run)")
            continue
        try:
            (f,) = funnels(ev, [c], k=k, cut=cut, keep=keep)
        except ValueError as exc:
            skipped.append(f"{c.label} ({exc})")
            continue
        ivs = f.intervals()
        row = {"config": c.label, "queries": len(f.rows),
               "moved": f"+{f.promoted}/-{f.demoted}" if c.retriever.startswith("rerank-") else "–"}
        for s in STAGES:
            iv = ivs[s]
            row[s] = f"{iv.successes} [{iv.low * iv.trials:.0f}–{iv.high * iv.trials:.0f}]" if iv.trials else "0"
        rows.append(row)
    variants = tuple(variant_rows(ev, k=k))
    worst = () if cfg.external else tuple(h.row() for h in hubs(ev, cfg, k=k, top=WORST_HUBS, only_hubs=True))
    flagged = []
    for c in ev.results:
        if c.external:
            continue
        for h in hubs(ev, c, k=k, top=None, only_hubs=True):
            if h.flags:
                flagged.append(f"{c.label} {h.chunk_id} ({', '.join(h.flags)}, {h.occurrences} queries)")
    return DiagSections(cfg.label, k, float(cut), keep, tuple(rows), tuple(skipped), worst, tuple(flagged),
                        tuple(r.row() for r in costs) if costs else None, machine, variants)
