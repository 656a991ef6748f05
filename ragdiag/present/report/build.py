"""Gather a :class:`~ragdiag.present.report.model.Report` from an evaluation.

The only place the report reads the library's results (``recommend``, ``best``,
``effects``, ``gate_table``, ``summary_rows``, ``sweep``, ``rate_rows``,
``chunking_rows``): each ``_...`` function below turns them into the typed
sections of :mod:`ragdiag.present.report.story`, :mod:`ragdiag.present.report.sections` and
:mod:`ragdiag.present.report.gate`.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

from ...core.metrics import hits_at_k
from ...analyses.compare.effects import effects
from ...analyses.compare.power import questions_to_resolve, resolvable
from ...analyses.compare.sources import source_effect
from ...core.defaults import (DEFAULT_CUT, DEFAULT_KEEP, DEFAULT_MAX_BLUFF, KS, PRACTICAL_MARGIN,
                              PREFERRED_CONFIGS)
from ...evaluation.records import Config, Evaluation, parse_key
from ..export import summary_document
from ...analyses.outcomes import LADDER, outcome_counts
from ...analyses.recommend import Recommendation, describe_config, recommend
from ...retrieval.registry import retriever_spec
from ...analyses.summary import chunking_rows, summary_rows
from ...analyses.threshold.choice import cut_choice
from ...core.goal import Goal
from ...analyses.cost import at_gate
from ...analyses.gate_table import GateTable, gate_table
from ...analyses.threshold.choice import propose_cut
from ...analyses.threshold.gate import bluffs_at, default_cuts, sweep
from ...core.gate import Gate
from ...analyses.threshold.rates import rate_rows, rates_at
from ...analyses.versus import versus
from .diag import diag_sections
from .history import history_section
from .ruler import RulerSection
from .ledger import LedgerSection
from .native import DENSE, NATIVE, SCORES
from .gate import Curve, GateSection
from .model import Report
from .story import AltRow, AlternativesSection, EffectsSection, FlowSection, Headline
from .sections import (BluffRow, BluffSection, ChunkingRow, CostSection, DestroyedNeedle, NeedleSection,
                       Provenance, RankingRow, RecallRow, RecallSection)
from ...core.words import cut_as_given, thousands

__all__ = ["build_report", "default_config", "ALTERNATIVES_SHOWN"]

#: The alternatives plot shows this many of the best set (best first), the chosen configuration, its runner-up
#: and the first two outside the set.
ALTERNATIVES_SHOWN = 5


def default_config(ev: Evaluation) -> Config:
    """The configuration a page starts from when none is named: the first of ``PREFERRED_CONFIGS``
    evaluated, else the first configuration whose retriever fuses rankings (its spec's ``fuses``: hybrid), else the
    first evaluated one (a fixed rule, not the best scorer; the report itself leads with the recommendation)."""
    if not ev.results:
        raise ValueError("nothing was evaluated")
    for label in PREFERRED_CONFIGS:
        if Config.parse(label) in ev.results:
            return Config.parse(label)
    return next((c for c in ev.results if not c.external and retriever_spec(c.retriever).fuses), next(iter(ev.results)))


def _recall_rows(ev: Evaluation) -> tuple[RecallRow, ...]:
    return tuple(RecallRow(r.config, tuple(r.recall[k] for k in KS), r.mrr.estimate, r.destroyed, r.chunks)
                 for r in summary_rows(ev))


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


def _needle_section(ev: Evaluation) -> NeedleSection:
    needles, counts = [], []
    for name, idx in ev.indexes.items():
        counts.append((name, len(idx.report.destroyed)))
        for d in idx.report.destroyed:
            q = ev.truth.question(d.question_id)
            needles.append(DestroyedNeedle(name, d.question_id, d.doc_id, q.section, d.start, d.end,
                                           tuple(int(c) for c in d.cuts), q.needle))
    return NeedleSection(tuple(needles), tuple(counts), len(ev.truth.questions))


def _gate_section(inputs: GateTable, cfg: Config, gate: Gate, goal: Goal,
                  proposed: float | None) -> GateSection:
    cut = gate.cut
    row = sweep(inputs, [cut]).row(cut)
    rates = dict(rate_rows(inputs, [cut])[0].outcomes())
    choice = cut_choice(inputs, goal).as_json()
    cuts = default_cuts()
    if cut > cuts[-1]:
        cuts = np.round(np.arange(0.0, cut + 0.0025, 0.005), 6)
    t = sweep(inputs, cuts)
    curve = Curve(tuple(float(c) for c in t.cuts), tuple(int(v) for v in t.answered),
                  tuple(int(v) for v in t.wrong_sources), tuple(int(v) for v in t.no_answer),
                  tuple(int(v) for v in t.bluffs))
    return GateSection(cfg.label, gate, t.n_in, t.n_ood, row, rates, curve, dict(t.n_by_kind), choice,
                       goal, proposed)


def _bluff_section(ev: Evaluation, cfg: Config, gate: Gate, n_ood: int) -> BluffSection:
    chunks = ev.indexes[cfg.strategy].chunks
    rows = []
    for b in bluffs_at(ev.result(cfg), ev.queries, gate):
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


def _proposal(table: GateTable, goal: Goal):
    """The cut proposed for a bluff goal (:func:`~ragdiag.analyses.threshold.propose_cut`, as the recommendation)."""
    return propose_cut(table, goal, default=DEFAULT_CUT)


def _headline(ev: Evaluation, rec: Recommendation, cfg: Config | None, cut: float | None, gate: Gate,
              n_questions: int, goal: Goal, baseline: tuple[str, str] | None = None) -> Headline:
    """The recommendation against its runner-up (or the declared baseline), or the named configuration and cut
    against the recommendation."""
    rec_cfg = parse_key(rec.config)
    cfg = rec_cfg if cfg is None else cfg
    keep = gate.keep
    table = gate_table(ev, cfg, gate)
    if cfg == rec_cfg:
        proposed, method = rec.cut, rec.cut_method
    else:
        p = _proposal(table, rec.goal)
        proposed, method = p.cut, p.method
    if cut is None:
        cut = proposed
    elif abs(cut - proposed) >= 1e-12:
        method = "named"
    recommended = cfg == rec_cfg and abs(cut - rec.cut) < 1e-12
    if recommended:  # the recommendation's own figures: one source of numbers with every other surface
        rates = {"answered": rec.answered, "bluffs": rec.bluffs, "lost": rec.lost}
        against, against_rates, against_cut = rec.runner_up, rec.runner_up_rates, rec.runner_up_cut
        kind = "the runner-up"
        if baseline is not None and baseline[0] != cfg.label:  # what the team runs, at its cut for the same goal
            against = baseline[0]  # where it was declared is the operator's business, not the reader's
            base_table = gate_table(ev, against, gate)
            against_cut = _proposal(base_table, rec.goal).cut
            against_rates, kind = rates_at(base_table, against_cut), "what you run today"
    else:
        rates = rates_at(table, cut)
        against, against_cut, kind = rec.config, rec.cut, "the recommendation"
        against_rates = {"answered": rec.answered, "bluffs": rec.bluffs, "lost": rec.lost}
    diffs = None
    if against is not None and against_cut is not None:  # the one comparator's paired differences (analyses.versus)
        diffs = versus(ev, cfg.label, gate.with_cut(float(cut)), against, gate.with_cut(float(against_cut))).differences
    n_in, n_ood = table.n_answerable, table.n_ood
    return Headline(cfg.label, describe_config(cfg), Gate(keep, float(cut), rec.k), method, goal, n_in, n_ood,
                    n_questions, rates["answered"], rates["bluffs"], rates["lost"], rec.why,
                    against, describe_config(against) if against else None, kind, against_rates, against_cut,
                    recommended, rec.config, rec.words, rec.cut, rec.guarantee, proposed, diffs,
                    _not_answered(table, float(cut)))


def _native_report(ev: Evaluation, rec: Recommendation, cfg: Config | None, base: Gate, goal: Goal,
                   value: float | None, needles: NeedleSection, history,
                   history_runs: int, ruler, ledger) -> Report:
    """The report on the ranking's own score (see :func:`build_report`): every section that counts reads the
    adapted gate table (:func:`ragdiag.present.report.native.native_table`)."""
    from ...analyses.threshold.score import score_table
    from .native import native_cut, native_table

    rec_cfg = parse_key(rec.config)
    cfg = rec_cfg if cfg is None else cfg
    scores = score_table(ev, cfg.label, base)  # ValueError: no score of its own
    max_bluff = goal.max_bluff
    at = native_cut(scores, max_bluff, value)
    table, decided, curve = native_table(gate_table(ev, cfg, base), scores, at, base)
    rates = rates_at(table, decided.cut)
    recommended = cfg == rec_cfg and at.method != "named"
    head = Headline(cfg.label, describe_config(cfg), decided, at.method, goal, table.n_answerable,
                    table.n_ood, needles.n_questions, rates["answered"], rates["bluffs"], rates["lost"], rec.why,
                    None, None, "", None, None, recommended, rec.config, rec.words, rec.cut, at.guarantee,
                    None, None, _not_answered(table, decided.cut), native=at)
    t = sweep(table, [decided.cut])
    trade_off = GateSection(cfg.label, decided, t.n_in, t.n_ood, t.row(decided.cut),
                            dict(rate_rows(table, [decided.cut])[0].outcomes()), curve, dict(t.n_by_kind), {},
                            goal, None, native=at)
    counts = outcome_counts(table.outcome)
    flow = FlowSection(cfg.label, describe_config(cfg), decided, trade_off.n_in, {s: counts[s] for s in LADDER},
                       counts["bluff"] + counts["abstained"], counts["bluff"], cut_label=at.text)
    recall = RecallSection(_recall_rows(ev), cfg.label, trade_off.n_in, tuple(ev.unavailable.items()),
                           tuple(getattr(ev, "notes", {}).values()))
    return Report(
        config=cfg, gate=decided,
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        headline=head, flow=flow,
        alternatives=_alternatives(ev, rec.comparison, cfg.label, None),
        effects=_effects(ev, cfg, base.k),
        provenance=_provenance(ev), recall=recall, needles=needles, trade_off=trade_off,
        bluffing=BluffSection((), trade_off.n_ood),  # quoted with their distances on the dense score only
        costs=_cost_section(ev, trade_off.n_in + trade_off.n_ood),
        diag=None,  # the funnel, hubs and costs read cosine distances
        history=None if history is None else history_section(history, cfg.label, last=history_runs),
        ruler=ruler, ledger=ledger,
    )


def _not_answered(table, cut: float) -> dict:
    """Given wrong passages and refused at ``cut`` (the two parts of the lost queries), with their intervals."""
    from ...analyses.threshold.rates import rate_rows

    row = rate_rows(table, [cut])[0]
    return {"wrong_sources": row.wrong_sources, "no_answer": row.no_answer}


def _alternatives(ev: Evaluation, result, chosen: str, runner_up: str | None,
                  shown: int = ALTERNATIVES_SHOWN) -> AlternativesSection:
    """The top of the best set, the chosen configuration and its runner-up, and the first two outside the set,
    sorted by the measure compared (answered at each one's own cut), from the comparison with the best
    (``result``); each with its R@k beside it, the diagnostic of what the retriever found before the gate."""
    rows = sorted(result.rows, key=lambda r: (r.config != result.best, -r.mean, r.config))
    ind = ev.in_domain
    found = {r.config: float(hits_at_k(ev.result(r.config).needle_rank[ind], result.k).mean()) if ind.any()
             else float("nan") for r in rows}
    members = [r for r in rows if r.in_best_set]
    outside = [r.config for r in rows if not r.in_best_set]
    pick = {r.config for r in members[:shown]} | {chosen, runner_up} | set(outside[:2])
    drawn = [r for r in rows if r.config in pick]
    def alt(r):  # the best's own row holds its lead over the runner-up; against itself it is 0
        top = r.config == result.best
        return AltRow(r.config, describe_config(r.config), 0.0 if top else r.estimate, 0.0 if top else r.low,
                      0.0 if top else r.high, r.in_best_set, found[r.config],
                      (r.estimate, r.low, r.high) if top else None, r.mean if result.metric else None)

    # the power of the test the best set is decided with: over questions, every phrasing, all pairs as the family
    m = len(result.rows)
    phrasings = max(1, len(ev.truth.phrasings))
    pairs = m * (m - 1) // 2
    res, needs = None, (None, None)
    if pairs:  # within the family: the critical value the best set was decided with (Hsu's, studentized)
        res = resolvable(result.n_questions, phrasings, k=result.k, family_size=pairs, alpha=result.alpha,
                         critical=result.critical)
        needs = (questions_to_resolve(PRACTICAL_MARGIN, phrasings, alpha=result.alpha),
                 questions_to_resolve(PRACTICAL_MARGIN, phrasings, alpha=result.alpha, critical=result.critical))
    drafted = source_effect(ev, k=result.k, alpha=result.alpha)  # None unless questions came from drafts
    return AlternativesSection(result.k, result.best, chosen, tuple(alt(r) for r in drawn), result.best_set,
                               m, sum(r.config not in pick for r in members),
                               sum(r.config not in pick for r in rows if not r.in_best_set),
                               tuple(alt(r) for r in rows), res, PRACTICAL_MARGIN, needs,
                               "" if drafted is None else drafted.sentence(), result.metric)


def _flow(table: GateTable, cfg: Config) -> FlowSection:
    """The outcome ladder of ``cfg`` at the report's gate: every query of the truth, counted per rung."""
    counts = outcome_counts(table.outcome)
    n_in = sum(counts[s] for s in LADDER)
    return FlowSection(cfg.label, describe_config(cfg), table.gate, n_in, {s: counts[s] for s in LADDER},
                       counts["bluff"] + counts["abstained"], counts["bluff"])


def _effects(ev: Evaluation, cfg: Config, k: int) -> EffectsSection | None:
    """The design's contrasts (None when no two evaluated strategies differ by one switch)."""
    try:
        result = effects(ev, k=k)
    except ValueError:
        return None
    return EffectsSection(k, cfg.retriever, result.rows, result.correction, result.n_questions,
                          describe_config(cfg).partition(", ")[2])


def build_report(ev: Evaluation, *, config: Config | str | None = None, cut: float | None = None,
                 keep: int = DEFAULT_KEEP, k: int | None = None, max_bluff: float = DEFAULT_MAX_BLUFF,
                 min_answered: float | None = None, costs=None,
                 machine: dict | None = None, baseline: str | None = None,
                 baseline_source: str = "the operator", encoder=None, history=None,
                 history_runs: int = 10, ruler=None, ledger=None, score: str = DENSE,
                 native_cut: float | None = None, goal: Goal | None = None) -> Report:
    """Gather the report of ``ev``: the recommendation first, then where the questions go, the alternatives
    and the chunking switches, then the appendix.

    ``score``: the score the gate reads, ``"dense"`` (the dense model's cosine distance, lower keeps: the default,
    at ``cut``) or ``"native"`` (the ranking's own score, higher keeps: BM25, RRF, MaxSim or the cross-encoder's
    logit), at ``native_cut`` in that score's units (default: the cut proposed for ``max_bluff`` on it,
    :func:`~ragdiag.analyses.threshold.score.score_cut`). On the native score every count is the count at
    ``score >= native_cut`` (:mod:`ragdiag.present.report.native`); the headline names the score and its
    direction, the cards compare with nobody (another configuration's cut is on another scale), and the funnel,
    hub and cost sections, which read cosine distances, are left out. ``ValueError`` for a configuration whose
    ranking has no score of its own, a named ``cut`` or ``costs`` with ``score="native"``, or a ``native_cut``
    with the dense score.

    ``config`` and ``cut`` default to the recommendation for a goal of at most ``max_bluff`` bluffs; a
    named ``config`` without a cut gets the cut proposed for it. ``goal`` (a :class:`~ragdiag.core.goal.Goal`) may
    state both goals as one value instead of ``max_bluff`` and ``min_answered``. ``min_answered`` (a share in
    [0, 1], or None) is a second goal, answered at least that share of answerable queries: the first screen judges it beside the bluff
    goal, and nothing is chosen for it (the configuration and the cut are the same with or without it). The gate keeps at most ``keep`` chunks;
    verdicts are at R@``k`` (default ``keep``: the gate's k is its keep). The cards compare the recommendation with its runner-up,
    or with ``baseline`` when one was declared (:func:`ragdiag.analyses.compare.declared_baseline`): the report calls
    it "what you run today" (``baseline_source``, where it was declared, is the operator's and is not printed).
    The funnel, hub and cost sections come from
    :func:`ragdiag.present.report.diag.diag_sections` (``costs``: :func:`ragdiag.analyses.cost.costs` rows when
    measured; their prompt tokens are priced at the report's cut with ``encoder``'s tokenizer when they were
    measured at another, so every section is at one cut).
    Raises ``ValueError`` for a configuration that was not evaluated, a cut that is not a cosine distance in
    [0, 2], a bad ``keep`` or ``k`` (:class:`~ragdiag.core.gate.Gate`), or costs at another cut without an encoder.
    ``history``: a run-history file (``ragdiag history``); its last ``history_runs`` runs of the report's
    configuration become the section "The last runs" (:func:`ragdiag.present.report.history.history_section`).
    ``ruler``: the ruler check of the ground truth, computed by the caller
    (:class:`ragdiag.present.report.ruler.RulerSection`, e.g. ``ragdiag.authoring.ruler.report_section(ev)``),
    becomes the appendix section "Can this set tell?"; it is rendered, never computed here.
    ``ledger``: the repair ledger, computed by the caller (:class:`ragdiag.present.report.ledger.LedgerSection`,
    ``LedgerSection.of(ragdiag.analyses.ledger.ledger(ev, "E/hybrid"))``), becomes the appendix section "Which
    chunking repairs what"; rendered, never computed here (it evaluates and prices every chunking: minutes).
    """
    if not ev.results:
        raise ValueError("nothing was evaluated")
    if score not in SCORES:
        raise ValueError(f"score must be one of {', '.join(SCORES)}, got {score!r}")
    if score == DENSE and native_cut is not None:
        raise ValueError("a cut on the native score needs score='native'")
    if score == NATIVE and (cut is not None or costs):
        raise ValueError("with score='native' the cut is native_cut (in the score's units), and costs, priced at "
                         "a cosine distance, are not read")
    cfg = None if config is None else (parse_key(config) if isinstance(config, str) else config)
    if cfg is not None and cfg not in ev.results:
        reason = ev.unavailable.get(cfg.retriever)
        known = ", ".join(c.label for c in ev.results)
        raise ValueError(f"{cfg.label} was not evaluated" + (f" ({reason})" if reason else f"; evaluated: {known}"))
    base = Gate.from_options(keep=keep, cut=cut, k=k)  # every setting checked once, before any work
    k = base.k
    goal = (Goal.recommending(max_bluff, min_answered) if goal is None  # both goals checked once, before any work
            else Goal.recommending(goal.max_bluff, goal.min_answered, goal.bluff_cost))
    if baseline is not None:
        baseline = parse_key(baseline).label
        if Config.parse(baseline) not in ev.results:
            raise ValueError(f"the declared baseline {baseline} was not evaluated")

    if ruler is not None and not isinstance(ruler, RulerSection):
        raise ValueError(f"ruler must be a RulerSection (Ruler.section()), got {type(ruler).__name__}")
    if ledger is not None and not isinstance(ledger, LedgerSection):
        raise ValueError(f"ledger must be a LedgerSection (LedgerSection.of(ledger)), got {type(ledger).__name__}")
    needles = _needle_section(ev)
    rec = recommend(ev, base, goal=goal.cut_goal, costs=costs)  # the answered goal is judged, never optimised
    compared = rec.comparison  # the alternatives are what the decision compared: answered at each one's own cut
    if score == NATIVE:
        return _native_report(ev, rec, cfg, base, goal, native_cut, needles, history, history_runs, ruler, ledger)
    head = _headline(ev, rec, cfg, cut, base, needles.n_questions, goal,
                     None if baseline is None else (baseline, baseline_source))
    cfg, decided = parse_key(head.config), base.with_cut(head.cut)  # the report's gate: every section reads it
    table = gate_table(ev, cfg, decided)  # once: the gate section, the flow and the cards read it
    if costs and any(c.cut != decided.cut or c.keep != decided.keep for c in costs):
        if encoder is None:
            raise ValueError(f"the costs were measured at cut {cut_as_given(costs[0].cut)}, the report is at "
                             f"{cut_as_given(decided.cut)}: "
                             "pass encoder= to price them there (ragdiag.analyses.cost.at_gate)")
        costs = at_gate(costs, ev, encoder, decided)
    trade_off = _gate_section(table, cfg, decided, goal, head.proposed_cut)
    rows = _recall_rows(ev)
    recall = RecallSection(rows, cfg.label, trade_off.n_in, tuple(ev.unavailable.items()),
                           tuple(getattr(ev, "notes", {}).values()))
    return Report(
        config=cfg, gate=decided,
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        headline=head,
        flow=_flow(table, cfg),
        alternatives=_alternatives(ev, compared, cfg.label, head.against),
        effects=_effects(ev, cfg, k),
        provenance=_provenance(ev),
        recall=recall,
        needles=needles,
        trade_off=trade_off,
        bluffing=_bluff_section(ev, cfg, decided, trade_off.n_ood),
        costs=_cost_section(ev, trade_off.n_in + trade_off.n_ood),
        diag=diag_sections(ev, cfg, decided, costs=costs, machine=machine),
        history=None if history is None else history_section(history, cfg.label, last=history_runs),
        ruler=ruler,
        ledger=ledger,
    )
