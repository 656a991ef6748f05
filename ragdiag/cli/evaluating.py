"""Subcommands ``eval``, ``compare``, ``pairs`` and ``report``."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.defaults import ALPHA, DEFAULT_MAX_BLUFF, PRIMARY_K
from .common import (UsageError, _check_out_file, _check_out_folder, _check_report_out, _known_config,
                     _print_unavailable, add_selection, cli_encoder, evaluate_args, load_inputs, retriever_help,
                     strategy_help, write_results)
from .options import add_evaluation, add_gate, evaluating_parser
from ..core.words import cut_as_given

__all__ = ["register", "cmd_eval", "cmd_compare", "cmd_pairs", "cmd_report"]


def register(sub) -> None:
    """Add ``eval``, ``compare``, ``pairs`` and ``report`` to the subparsers ``sub``."""
    p = sub.add_parser("eval", help="evaluate strategies x retrievers; print the table")
    add_evaluation(p)
    p.add_argument("--strategies", default=None, help=strategy_help())
    p.add_argument("--retrievers", default=None, help=retriever_help())
    p.add_argument("--out", help="write summary.json and per_query.csv to this folder")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="where chunks are embedded and searched: in this process, or on Ray (pip install -r "
                        "requirements-ray.txt): encoder actors, then the index in shards (the same results)")
    p.add_argument("--ray-address", default=None, help="with --engine ray: a cluster (e.g. auto, ray://head:10001); "
                                                       "default: start a local instance")
    p.add_argument("--ray-actors", type=int, default=None, help="encoder actors, and search shards (default: one per CPU, or per GPU)")
    p.add_argument("--ray-gpus-per-actor", type=float, default=0.0, help="GPUs per encoder actor (default 0: CPU)")
    from .collections import add_collection_options

    add_collection_options(p)  # --collection beir:DIR ... instead of --corpus/--truth
    from .vectors import add_vector_options

    add_vector_options(p)  # --vectors FILE [--query-vectors FILE]: vectors a team already computed
    p.set_defaults(func=cmd_eval)

    p = evaluating_parser(sub, "compare", "paired exact sign-flip test over questions between two configurations")
    p.add_argument("a", metavar="CONFIG_A", help="e.g. E/hybrid")
    p.add_argument("b", metavar="CONFIG_B", help="e.g. E/dense")
    p.add_argument("--phrasing", default="all", help="all, or one phrasing of the ground truth (e.g. course)")
    p.add_argument("--mrr", action="store_true", help="compare reciprocal ranks (MRR) instead of R@k")
    p.add_argument("--family", choices=["none", "all", "planned"], default="none",
                   help="the interval simultaneous within a family: all pairs of the evaluated configurations "
                        "(exploratory), or the planned family (the declared baseline against each other "
                        "configuration); default: this pair alone")
    p.add_argument("--baseline", default=None, help="with --family planned: the baseline, declared before looking "
                                                    "(also RAGDIAG_BASELINE, or [ragdiag] baseline in ragdiag.toml)")
    add_selection(p, strategies=f"with --family: the family's {strategy_help()}",
                  retrievers=f"with --family: the family's {retriever_help()}")
    p.set_defaults(func=cmd_compare)

    p = evaluating_parser(sub, "pairs", "every paired comparison of a family (all pairs, or --baseline against each "
                                        "other), over questions, simultaneous intervals within it", selection=True)
    p.add_argument("--baseline", default=None, help="planned family: this configuration (declared before looking) "
                                                    "against each other one")
    p.add_argument("--phrasing", default="all", help="all, or one phrasing of the ground truth")
    p.set_defaults(func=cmd_pairs)

    p = sub.add_parser("report", help="one self-contained HTML report (and its Markdown) of a run")
    add_evaluation(p)
    add_gate(p, cut="abstention cut (cosine distance; default: the cut proposed for the goal, conformal)")
    p.add_argument("--config", default=None,
                   help="the configuration the report is about, e.g. E/hybrid (default: the recommendation)")
    p.add_argument("--max-bluff", type=float, default=DEFAULT_MAX_BLUFF,
                   help=f"the goal: a bluff rate of at most this (default {DEFAULT_MAX_BLUFF})")
    p.add_argument("--min-answered", type=float, default=None,
                   help="a second goal, judged and not optimised: answered at least this share of answerable "
                        "queries, a rate in [0, 1] (e.g. 0.5); the first screen says whether it is met, the "
                        "configuration and the cut still follow --max-bluff (default: none)")
    p.add_argument("--baseline", default=None,
                   help="what you run now, declared before looking: the cards compare with it instead of the "
                        "runner-up (default: $RAGDIAG_BASELINE or ragdiag.toml, else none)")
    p.add_argument("--strategies", default=None, help=strategy_help())
    p.add_argument("--retrievers", default=None, help=retriever_help())
    p.add_argument("--out", default="report.html", help="HTML file to write; the Markdown goes beside it (.md)")
    p.add_argument("--no-cost", action="store_true", help="skip measuring build time and per-query latency")
    p.add_argument("--md", default=None, help="Markdown file to write (default: --out with .md; an existing file "
                                              "there that is not a ragdiag report is never overwritten)")
    p.add_argument("--ledger", default=None, metavar="BASELINE",
                   help="add the repair ledger to the appendix: against this baseline (a strategy, E, with the "
                        "retriever hybrid, or a configuration, E/hybrid), every evaluated chunking of its retriever "
                        "and the baseline with its neighbours and its section added at retrieval, at --keep and --cut "
                        "(default 0.6), as chunking --ledger prints it; off by default (it prices every chunking)")
    p.add_argument("--score", choices=("dense", "native"), default="dense",
                   help="the score the gate reads: dense (the dense model's cosine distance, lower keeps; --cut) or "
                        "native (the ranking's own score, higher keeps: BM25, RRF fused, MaxSim, cross-encoder "
                        "logit; the cut proposed for --max-bluff on it, or --native-cut / --cut-from); a native "
                        "report leaves out the funnel, hub and cost sections, which read cosine distances")
    p.add_argument("--native-cut", type=float, default=None, metavar="VALUE",
                   help="with --score native: the cut on the ranking's own score, in its units (kept when score >= "
                        "VALUE; default: the cut proposed for --max-bluff)")
    p.add_argument("--cut-from", default=None, metavar="FILE",
                   help="with --score native: the cut of a ragdiag export of a native cut (threshold --score native "
                        "--export); refused when it is stamped for another score, reranker or model")
    from .history import add_report_options

    add_report_options(p)  # --history FILE --history-runs N: the last runs as one chart
    p.set_defaults(func=cmd_report)


def _ledger_baseline(spec: str):
    """The configuration ``report --ledger`` names (a strategy alone: with ``chunking --ledger``'s retriever)."""
    from ..evaluation.records import Config
    from ..index.chunking import parse_strategies
    from ..retrieval.registry import parse_retrievers
    from .chunking import DEFAULT_RETRIEVER

    try:
        if "/" in spec:
            cfg = Config.parse(spec)
            parse_strategies(cfg.strategy)
        else:
            cfg = Config(parse_strategies(spec)[0].name, DEFAULT_RETRIEVER)
        parse_retrievers(cfg.retriever)
    except ValueError as exc:
        raise UsageError(f"--ledger: {exc}") from None
    if cfg.external:
        raise UsageError(f"--ledger: {cfg.label} is an external run; the ledger compares ragdiag's own chunkings")
    return cfg


def _ledger_section(ev, base, args, encoder):
    """The appendix's repair ledger, as ``chunking --ledger`` computes it (expansions neighbours and section)."""
    from ..analyses.cost import embedding_rate
    from ..analyses.ledger import ledger
    from ..present.report.ledger import LedgerSection

    if base.retriever in ev.unavailable:
        raise UsageError(f"--ledger: {base.retriever} cannot run: {ev.unavailable[base.retriever]}")
    print(f"computing the repair ledger against {base.label}", file=sys.stderr)
    rate = None if args.no_cost else embedding_rate(ev, encoder, list(ev.indexes)).seconds_per_token
    try:
        led = ledger(ev, base, args.gate, encoder=None if args.no_cost else encoder, embed_rate=rate,
                     expansions=("neighbours", "section"))
    except ValueError as exc:
        raise UsageError(f"--ledger: {exc}") from None
    return LedgerSection.of(led)


def cmd_eval(args) -> int:
    """``eval``: every strategy x retriever; the tables on stdout, the files in ``--out``."""
    from ..index.chunking import parse_strategies
    from ..retrieval.registry import parse_retrievers
    from ..analyses.summary import chunking_rows, format_summary
    from ..core.tables import format_rows

    try:
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_out_folder(args.out)
    collection = None
    if getattr(args, "collection", None):  # a collection in another format (BEIR, TREC, SQuAD...)
        from .collections import cmd_eval_documents, open_for_eval

        collection = open_for_eval(args)
        if collection.document_level:
            return cmd_eval_documents(args, collection, strategies, retrievers)
    loaded = (collection.corpus, collection.truth) if collection is not None else None
    ev = evaluate_args(args, strategies, retrievers, loaded, stream=True)
    n_in = int(ev.in_domain.sum())
    print(f"corpus {ev.corpus.name}: {len(ev.corpus.documents)} documents, {ev.corpus.n_chars:,} characters; "
          f"{len(ev.truth.questions)} questions, {n_in} in-domain queries, {len(ev.queries) - n_in} ood")
    print(f"model {ev.encoder_stamp.get('model')} ({ev.encoder_stamp.get('precision')}); "
          f"max |L2^2/2 - cosine distance| = {max(i.normalisation_error for i in ev.indexes.values()):.1e}\n")
    print(format_summary(ev))
    for phrasing in ev.truth.phrasings:
        print(f"\nphrasing: {phrasing}")
        print(format_summary(ev, phrasing=phrasing))
    print("\nchunking")
    print(format_rows(chunking_rows(ev)))
    for name, idx in ev.indexes.items():
        if idx.report.destroyed:
            items = ", ".join(f"{d.question_id} (cut at {','.join(map(str, d.cuts))})" for d in idx.report.destroyed)
            print(f"destroyed by {name}: {items}")
    _print_unavailable(ev)
    write_results(ev, args.out)
    if collection is not None:
        from .collections import span_measures

        span_measures(ev, collection, args.out)
    return 0


def _baseline(args):
    """The declared baseline (``--baseline``, ``RAGDIAG_BASELINE`` or ``ragdiag.toml``), or None."""
    from ..analyses.compare import declared_baseline

    try:
        return declared_baseline(getattr(args, "baseline", None))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _print_comparison(c) -> None:
    print(c.summary())
    print(c.verdict)
    print(c.power)


def cmd_compare(args) -> int:
    """``compare A B``: the paired sign-flip test over questions, the interval simultaneous within ``--family``."""
    import json

    from ..index.chunking import parse_strategies
    from ..evaluation.records import parse_key
    from ..retrieval.registry import parse_retrievers
    from ..analyses.compare.comparisons import check_phrasing, compare, compare_in_family

    declared = _baseline(args) if args.family == "planned" else None
    if args.family == "planned" and declared is None:
        raise UsageError("--family planned needs a baseline declared before looking: --baseline CONFIG, "
                         "RAGDIAG_BASELINE, or baseline = \"CONFIG\" under [ragdiag] in ragdiag.toml")
    try:
        a, b = parse_key(args.a), parse_key(args.b)
        base = parse_key(declared.config) if declared else None
        if base is not None and base not in (a, b):
            raise ValueError(f"the planned family compares the declared baseline {declared.words()} with each "
                             f"other configuration: one of CONFIG_A, CONFIG_B must be {base.label}")
        if args.family == "none":
            strategies, retrievers = sorted({a.strategy, b.strategy}), sorted({a.retriever, b.retriever})
        else:  # the family's members: the configurations asked for (default: all), always with A and B
            strategies = sorted({*(s.name for s in parse_strategies(args.strategies)), a.strategy, b.strategy})
            retrievers = sorted({*parse_retrievers(args.retrievers), a.retriever, b.retriever})
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _known_config(a, "CONFIG_A"), _known_config(b, "CONFIG_B")
    loaded = load_inputs(args)
    known = ("all", *loaded[1].phrasings)
    if args.phrasing not in known:  # before any model is loaded: an unknown phrasing would test 0 queries
        raise UsageError(f"unknown phrasing {args.phrasing!r}; choose one of: {', '.join(known)}")
    ev = evaluate_args(args, strategies, retrievers, loaded)
    for cfg in (a, b):
        if cfg.retriever in ev.unavailable:
            raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    k = None if args.mrr else args.gate.k
    try:
        check_phrasing(ev, args.phrasing)
        if args.family == "none":
            c = compare(ev, a, b, k=k, phrasing=args.phrasing)
        else:
            c = compare_in_family(ev, a, b, k=k, phrasing=args.phrasing, baseline=base)
        mrr = None if args.mrr else compare(ev, a, b, k=None, phrasing=args.phrasing)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        doc = c.as_json()
        if declared is not None:
            doc["baseline"] = {"config": declared.config, "declared_by": declared.source}
        if mrr is not None:
            d = mrr.difference()
            doc["mrr"] = {"difference": d, "p": mrr.test.p, "status": mrr.status, "descriptive": True,
                          "difference_unadjusted": mrr.as_json()["difference_unadjusted"]}
        print(json.dumps(doc, indent=2))
        return 0
    if declared is not None:
        print(f"baseline: {declared.words()}")
    _print_comparison(c)
    if mrr is not None:
        print(f"MRR (descriptive, this pair alone): {mrr.difference_words()}, sign-flip p = {mrr.test.p:.4g}; "
              f"{mrr.test.difference} unadjusted")
    if c.wins:
        print(f"  queries {a.label} finds, {b.label} misses: {', '.join(c.wins)}")
    if c.losses:
        print(f"  queries {b.label} finds, {a.label} misses: {', '.join(c.losses)}")
    return 0


def cmd_pairs(args) -> int:
    """``pairs``: every comparison of a family (all pairs, or the declared baseline against each), simultaneous."""
    import json

    from ..index.chunking import parse_strategies
    from ..analyses.compare.comparisons import check_phrasing, family, pair_json
    from ..evaluation.records import parse_key
    from ..retrieval.registry import parse_retrievers
    from ..core.tables import format_rows

    declared = _baseline(args) if args.baseline else None
    try:
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
        baseline = parse_key(declared.config) if declared else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if baseline is not None:
        strategies = sorted({*strategies, baseline.strategy})
        retrievers = sorted({*retrievers, baseline.retriever})
    loaded = load_inputs(args)
    known = ("all", *loaded[1].phrasings)
    if args.phrasing not in known:
        raise UsageError(f"unknown phrasing {args.phrasing!r}; choose one of: {', '.join(known)}")
    ev = evaluate_args(args, strategies, retrievers, loaded)
    try:
        check_phrasing(ev, args.phrasing)
        fam = family(ev, k=args.gate.k, phrasing=args.phrasing, baseline=baseline)
        mrr = {frozenset((c.a, c.b)): c for c in family(ev, k=None, phrasing=args.phrasing, baseline=baseline)}
    except (ValueError, KeyError) as exc:
        raise UsageError(str(exc)) from None
    rows = []
    for c in fam:
        row = pair_json(c)
        m = mrr[frozenset((c.a, c.b))]
        sign = 1.0 if m.a == c.a else -1.0
        md = m.difference()
        row["mrr"] = {"difference": {"estimate": sign * md["estimate"],
                                     "low": min(sign * md["low"], sign * md["high"]),
                                     "high": max(sign * md["low"], sign * md["high"]), "kind": md["kind"]},
                      "p_adjusted": m.p_adjusted, "descriptive": True}
        rows.append(row)
    name = fam[0].family_name if fam else "no comparisons"
    exploratory = baseline is None
    if args.json:
        print(json.dumps({"unit": "question", "k": args.gate.k, "phrasing": args.phrasing, "family": name,
                          "family_size": len(fam), "exploratory": exploratory,
                          "baseline": None if declared is None else {"config": declared.config,
                                                                     "declared_by": declared.source},
                          "correction": ("studentized max-T over questions (each pair scaled by its own spread, "
                                         "recomputed in every arrangement), simultaneous intervals (hits: widened to "
                                         "the score interval)")
                                        + ("; Benjamini-Hochberg q-values for exploring" if exploratory else ""),
                          "null": fam[0].method if fam else "",
                          "shown_different": sum(c.status == "different" for c in fam), "rows": rows}, indent=2))
        return 0
    if declared is not None:
        print(f"baseline: {declared.words()}")
    print(f"{name} at R@{args.gate.k} ({args.phrasing}), over questions; intervals simultaneous within this family "
          f"(max-T, {fam[0].method if fam else '-'})" + ("; exploratory: q = Benjamini-Hochberg" if exploratory else ""))
    table = []
    for c, r in zip(fam, rows):
        d, md = r["difference"], r["mrr"]["difference"]
        table.append({"a": c.a.label, "b": c.b.label, "wins": c.test.wins, "losses": c.test.losses,
                      "ties": c.test.ties, "p": round(c.test.p, 4), "p adjusted": round(c.p_adjusted, 4),
                      **({"q": round(c.q_value, 4)} if exploratory else {}),
                      "difference": round(d["estimate"], 3), "low": round(d["low"], 3), "high": round(d["high"], 3),
                      "status": c.status, "MRR diff": round(md["estimate"], 3),
                      "MRR low": round(md["low"], 3), "MRR high": round(md["high"], 3)})
    print(format_rows(table))
    below = sum(c.status == "different" for c in fam)
    print(f"\n{below} of {len(fam)} shown different (simultaneous interval excludes 0, adjusted p < {ALPHA})"
          + ("" if args.gate.k == PRIMARY_K else f"; descriptive: verdicts are at R@{PRIMARY_K}"))
    return 0


def _check_native_report(args, native: bool) -> None:
    """``report --score native``'s options, checked before any work (one line, exit 2)."""
    import math

    cut_from, value = getattr(args, "cut_from", None), getattr(args, "native_cut", None)
    if not native:
        if value is not None or cut_from:
            raise UsageError("--native-cut and --cut-from are cuts on the ranking's own score: add --score native")
        return
    if args.cut is not None:
        raise UsageError("--cut is a cosine distance; with --score native give --native-cut VALUE (the score's "
                         "units) or --cut-from FILE")
    if value is not None and cut_from:
        raise UsageError("give the native cut as --native-cut VALUE or --cut-from FILE, not both")
    if value is not None and not math.isfinite(value):
        raise UsageError(f"--native-cut must be a finite number, got {value}")


def _report_native_cut(args, ev, cfg):
    """The native cut ``report --score native`` is at: ``--native-cut``, the cut of ``--cut-from`` (when stamped
    for this configuration's score, reranker and model), or None (the proposed one)."""
    cut_from = getattr(args, "cut_from", None)
    if not cut_from:
        return args.native_cut
    from ..analyses.recommend import recommend
    from ..analyses.threshold.native_current import native_cut_from_file
    from ..analyses.threshold.score import score_stamp, score_table

    label = cfg.label if cfg is not None else recommend(ev, args.gate, max_bluff=args.max_bluff).config
    try:
        table = score_table(ev, label, args.gate)
        return native_cut_from_file(cut_from, score_stamp(ev, table, cross_encoder=getattr(args, "cross_encoder",
                                                                                          None)), flag="--cut-from")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def cmd_report(args) -> int:
    """``report``: one self-contained HTML report and its Markdown twin."""
    from ..index.chunking import STRATEGIES, parse_strategies
    from ..evaluation.records import parse_key
    from ..retrieval.registry import parse_retrievers
    from ..present.report.build import build_report
    from ..present.report.render import write_report
    from .history import check_report_history

    try:
        cfg = parse_key(args.config) if args.config else None
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    from .goal_args import goal_of

    goal = goal_of(args, recommending=True)  # --max-bluff and --min-answered checked once, by the Goal
    native = getattr(args, "score", "dense") == "native"
    _check_native_report(args, native)
    from ..analyses.compare.baseline import declared_baseline

    try:
        baseline = declared_baseline(args.baseline)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    out = Path(args.out)
    if out.suffix.lower() == ".md":
        raise UsageError(f"--out names the HTML file (e.g. report.html); the Markdown is written beside it, got {out}")
    from ..present.report.render import markdown_twin

    try:
        md = markdown_twin(out, args.md)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_report_out(out)
    check_report_history(args)  # report --history: the file is a run history
    _check_out_file(md)
    if cfg is not None:
        _known_config(cfg, "--config")
    if cfg is not None:  # the named configuration is always evaluated, with the others asked for
        strategies = sorted({*strategies, cfg.strategy}, key=list(STRATEGIES).index)
        retrievers = list(dict.fromkeys([*retrievers, cfg.retriever]))
    ledger_base = _ledger_baseline(args.ledger) if args.ledger else None
    if ledger_base is not None:  # the ledger's baseline is evaluated too
        strategies = sorted({*strategies, ledger_base.strategy}, key=list(STRATEGIES).index)
        retrievers = list(dict.fromkeys([*retrievers, ledger_base.retriever]))
    encoder = cli_encoder(args)  # one encoder: the evaluation and the cost measurement share its loaded model
    ev = evaluate_args(args, strategies, retrievers, encoder=encoder)
    if cfg is not None and cfg.retriever in ev.unavailable:
        raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    from ..analyses.cost import costs, machine

    native_cut = _report_native_cut(args, ev, cfg) if native else None
    cost_items = None
    if not args.no_cost and not native:  # measured on this machine: build time, latency, tokens (ragdiag.analyses.cost)
        # timed once here; the report prices what its gate sends at the cut it decides (at_gate)
        from .common import open_store, progress_bar

        cost_items = costs(ev, encoder, args.gate, cross_encoder=args.cross_encoder, store=open_store(args),
                           priced=False, progress=progress_bar())  # priced once, at the report's cut (at_gate)
    machine_info = machine()  # the run's own timings are in the report too: a busy machine is said
    from ..authoring.ruler import report_section

    print("checking the ruler: can these questions tell the configurations apart?", file=sys.stderr)
    ruler_section = report_section(ev, primary_k=args.gate.k)  # the appendix's "Can this set tell?"
    ledger_section = None
    if ledger_base is not None:
        ledger_section = _ledger_section(ev, ledger_base, args, encoder)
    print("writing the report: the comparisons, the gate, the funnel and the hubs", file=sys.stderr)
    try:
        report = build_report(ev, config=cfg, cut=args.cut, keep=args.gate.keep, k=args.gate.k, goal=goal,
                              costs=cost_items, machine=machine_info,
                              baseline=baseline.config if baseline else None,
                              baseline_source=baseline.source if baseline else "the operator", encoder=encoder,
                              history=getattr(args, "history", None), history_runs=getattr(args, "history_runs", 10),
                              ruler=ruler_section, ledger=ledger_section,
                              **({"score": "native", "native_cut": native_cut} if native else {}))
        paths = write_report(report, out, md=md)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    h = report.headline
    at = f"cut {cut_as_given(h.cut, 4)}" if h.native is None else h.native.text
    print(f"{'recommendation' if h.recommended else 'report on'}: {h.config} at {at}", file=sys.stderr)
    for path in paths:
        print(f"wrote {path}")
    return 0

