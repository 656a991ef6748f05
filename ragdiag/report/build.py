"""Gather a :class:`~ragdiag.report.model.Report` from an evaluation.

The only place the report reads the library's rows (``summary_rows``,
``SweepTable.row``, ``rate_rows``, ``chunking_rows``, the comparison family):
each ``_..._section``/``_..._row`` function below turns them into the typed
sections of :mod:`ragdiag.report.sections` and :mod:`ragdiag.report.gate`.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

from ..compare.comparisons import compare_in_family, family
from ..defaults import DEFAULT_KEEP, DEFAULT_MAX_BLUFF, KS, PREFERRED_CONFIGS, PRIMARY_K
from ..evaluation import Config, Evaluation, parse_key
from ..export import summary_document
from ..retrieval.registry import retriever_spec
from ..summary import chunking_rows, summary_rows
from ..threshold.choice import Goal, cut_choice
from ..threshold.gate import bluffs_at, default_cuts, gate_inputs_for, sweep
from ..threshold.rates import rate_rows
from .diag import diag_sections
from .gate import Curve, GateSection
from .model import Report
from .sections import (BluffRow, BluffSection, ChunkingRow, ComparisonSection, CostSection, DestroyedNeedle,
                       NeedleSection, PairRow, Provenance, RankingRow, RecallRow, RecallSection)
from .words import thousands

__all__ = ["build_report", "default_config"]


def default_config(ev: Evaluation) -> Config:
    """The configuration a report is about when none is named: the first of ``PREFERRED_CONFIGS``
    evaluated, else the first configuration whose retriever fuses rankings (its spec's ``fuses``: hybrid), else the
    first evaluated one (a fixed rule, not the best scorer)."""
    if not ev.results:
        raise ValueError("nothing was evaluated")
    for label in PREFERRED_CONFIGS:
        if Config.parse(label) in ev.results:
            return Config.parse(label)
    return next((c for c in ev.results if not c.external and retriever_spec(c.retriever).fuses), next(iter(ev.results)))


def _recall_rows(ev: Evaluation) -> tuple[RecallRow, ...]:
    return tuple(RecallRow(r.config, tuple(r.recall[k] for k in KS), r.mrr.estimate, r.destroyed, r.chunks)
                 for r in summary_rows(ev))


def _competitor(rows: tuple[RecallRow, ...], chosen: str, k: int) -> str | None:
    """The best other configuration: highest R@k (R@20 when k is not a table column), then MRR, then name."""
    key = k if k in KS else 20
    others = [r for r in rows if r.config != chosen]
    if not others:
        return None

    def score(r: RecallRow):
        est = r.at(key).estimate
        return (-(est if est == est else -1.0), -(r.mrr if r.mrr == r.mrr else -1.0), r.config)

    return min(others, key=score).config


def _provenance(ev: Evaluation) -> Provenance:
    doc = summary_document(ev)
    c, t, m, v = doc["corpus"], doc["truth"], doc["model"], doc["versions"]
    kinds: dict[str, int] = {}
    for o in ev.truth.ood:
        kinds[o.kind] = kinds.get(o.kind, 0) + 1
    failures = c.get("failures") or []
    corpus = (
        ("corpus", c["root"]),
        ("sha256", c["sha256"]),
        ("documents", thousands(c["documents"])),
        ("characters", thousands(c["characters"])),
        ("## sections", thousands(c["sections"])),
        ("failed files", "; ".join(f"{f['path']}: {f['reason']}" for f in failures) if failures else "none"),
    )
    kind_text = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    truth = (
        ("ground truth", t.get("source") or "n/a"),
        ("questions", thousands(t["questions"])),
        ("phrasings", ", ".join(ev.truth.phrasings) or "n/a"),
        ("answerable queries", thousands(t["in_domain_queries"])),
        ("out-of-domain queries", thousands(t["ood_queries"]) + (f" ({kind_text})" if kind_text else "")),
    )
    weights = str(m.get("weights_sha256") or "")
    norm = doc["normalisation_error"] or {}
    model = (
        ("model", m.get("model", "n/a")),
        ("weights sha256", (weights[:12] + "...") if weights else "n/a"),
        ("dimensions", m.get("dim", "n/a")),
        ("max sequence length", m.get("max_seq_length", "n/a")),
        ("precision", m.get("precision", "n/a")),
        ("pooling", f"{m.get('pooling', 'n/a')}, normalised: {m.get('normalize', 'n/a')}"),
        ("max |L2²/2 - cosine|", f"{max(norm.values()):.1e}" if norm else "n/a"),
        ("pipeline version", doc["pipeline_version"]),
        ("ragdiag", doc["ragdiag_version"]),
        ("torch", v.get("torch", "n/a")),
        ("transformers", v.get("transformers", "n/a")),
        ("sentence-transformers", v.get("sentence_transformers", "n/a")),
        ("numpy / python", f"{v.get('numpy', '?')} / {v.get('python', '?')}"),
    )
    return Provenance(c["root"], doc["ragdiag_version"], doc["pipeline_version"], corpus, truth, model)


def _comparison_section(ev: Evaluation, cfg: Config, rows: tuple[RecallRow, ...], k: int, n_in: int
                        ) -> ComparisonSection:
    fam = family(ev, k=k)
    pairs = tuple(PairRow(c.a.label, c.b.label, k, c.test.wins, c.test.losses, c.test.ties, c.test.p, c.p_holm,
                          c.verdict, c.status) for c in fam)
    competitor = _competitor(rows, cfg.label, k)
    if competitor is None:
        headline = f"{cfg.label} is the only configuration evaluated: there is no competitor to compare it with."
        power = ""
    else:  # the same rule and words as the dashboard and the CLI: Holm within the family shown (all pairs)
        ccfg = parse_key(competitor)
        pair = compare_in_family(ev, cfg, ccfg, k=k, comparisons=fam)
        headline, power = pair.verdict, pair.power
    return ComparisonSection(k, cfg.label, pairs, competitor, headline, power, n_in)


def _needle_section(ev: Evaluation) -> NeedleSection:
    needles, counts = [], []
    for name, idx in ev.indexes.items():
        counts.append((name, len(idx.report.destroyed)))
        for d in idx.report.destroyed:
            q = ev.truth.question(d.question_id)
            needles.append(DestroyedNeedle(name, d.question_id, d.doc_id, q.section, d.start, d.end,
                                           tuple(int(c) for c in d.cuts), q.needle))
    return NeedleSection(tuple(needles), tuple(counts), len(ev.truth.questions))


def _gate_section(ev: Evaluation, cfg: Config, cut: float, keep: int) -> GateSection:
    inputs = gate_inputs_for(ev, cfg, keep=keep)  # once: the row, the rates, the choice and the curve read it
    row = sweep(inputs, [cut]).row(cut)
    rates = dict(rate_rows(inputs, [cut])[0].outcomes())
    choice = cut_choice(inputs, Goal(max_bluff=DEFAULT_MAX_BLUFF)).as_json()
    cuts = default_cuts()
    if cut > cuts[-1]:
        cuts = np.round(np.arange(0.0, cut + 0.0025, 0.005), 6)
    t = sweep(inputs, cuts)
    curve = Curve(tuple(float(c) for c in t.cuts), tuple(int(v) for v in t.answered),
                  tuple(int(v) for v in t.kept_wrong), tuple(int(v) for v in t.refused),
                  tuple(int(v) for v in t.bluffs))
    return GateSection(cfg.label, cut, keep, t.n_in, t.n_ood, row, rates, curve, dict(t.n_by_kind), choice)


def _bluff_section(ev: Evaluation, cfg: Config, cut: float, keep: int, n_ood: int) -> BluffSection:
    chunks = ev.indexes[cfg.strategy].chunks
    rows = []
    for b in bluffs_at(ev.result(cfg), ev.queries, cut=cut, keep=keep):
        pos, dist = b.kept[0]
        c = chunks[pos]
        q = ev.queries[ev.query_index(b.query_id)]
        rows.append(BluffRow(b.query_id, b.kind or "", q.text, c.id, c.doc_id, c.section or c.header, float(dist),
                             len(b.kept)))
    return BluffSection(tuple(rows), n_ood)


def _cost_section(ev: Evaluation, n_queries: int) -> CostSection:
    chunking = tuple(ChunkingRow(r.strategy, r.description, r.chunks, r.embedded_tokens,
                                 r.header_tokens, r.header_share, r.truncated, r.chars_lost,
                                 ev.timings.get(f"index_{r.strategy}")) for r in chunking_rows(ev))
    nq = max(len(ev.queries), 1)
    ranking = tuple(RankingRow(c.label, r.seconds, 1000.0 * r.seconds / nq) for c, r in ev.results.items())
    return CostSection(chunking, tuple((key, float(v)) for key, v in ev.timings.items()), ranking, n_queries)


def build_report(ev: Evaluation, *, config: Config | str, cut: float, keep: int = DEFAULT_KEEP,
                 k: int = PRIMARY_K, costs=None, machine: dict | None = None) -> Report:
    """Gather the report of ``ev`` about ``config`` with the abstention gate at ``cut`` (keep ``keep``).

    Paired comparisons are at R@``k`` (default the primary k) over every pair of evaluated
    configurations, Holm-corrected over that family. The funnel, hub and cost
    sections come from :func:`ragdiag.report.diag.diag_sections` (``costs``:
    :func:`ragdiag.cost.costs` rows when measured). Raises ``ValueError`` for a
    configuration that was not evaluated, a cut outside (0, 2] or a bad ``keep``.
    """
    cfg = parse_key(config) if isinstance(config, str) else config
    if cfg not in ev.results:
        reason = ev.unavailable.get(cfg.retriever)
        known = ", ".join(c.label for c in ev.results)
        raise ValueError(f"{cfg.label} was not evaluated" + (f" ({reason})" if reason else f"; evaluated: {known}"))
    cut = float(cut)
    if not 0.0 < cut <= 2.0:
        raise ValueError(f"cut must be a cosine distance in (0, 2], got {cut}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")

    gate = _gate_section(ev, cfg, cut, keep)
    rows = _recall_rows(ev)
    comparison = _comparison_section(ev, cfg, rows, k, gate.n_in)
    competitor = comparison.competitor
    recall = RecallSection(rows, cfg.label, (cfg.label,) + ((competitor,) if competitor else ()),
                           (k if k in KS else 20) if competitor else None, gate.n_in,
                           tuple(ev.unavailable.items()), tuple(getattr(ev, "notes", {}).values()))
    return Report(
        config=cfg, cut=cut, keep=keep, k=k,
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        provenance=_provenance(ev),
        recall=recall,
        comparison=comparison,
        needles=_needle_section(ev),
        gate=gate,
        bluffing=_bluff_section(ev, cfg, cut, keep, gate.n_ood),
        costs=_cost_section(ev, gate.n_in + gate.n_ood),
        diag=diag_sections(ev, cfg, cut=cut, keep=keep, costs=costs, machine=machine),
    )
