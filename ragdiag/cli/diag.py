"""CLI subcommands ``funnel``, ``hubs`` and ``cost`` (registered by :mod:`ragdiag.cli.parser`)."""

from __future__ import annotations

import json
import sys

from ..core.defaults import DEFAULT_CUT
from .common import add_selection
from .options import add_evaluation, add_gate, evaluating_parser

__all__ = ["register"]


def _configs(args, encoder=None):
    from ..index.chunking import parse_strategies
    from .common import UsageError, evaluate_args
    from ..retrieval.registry import parse_retrievers

    try:
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    ev = evaluate_args(args, strategies, retrievers, encoder=encoder)
    for name, reason in ev.unavailable.items():
        print(f"unavailable: {name}: {reason}", file=sys.stderr)
    return ev


def _dump(doc) -> None:
    from ..present.export import _json_default

    print(json.dumps(doc, indent=2, default=_json_default))


def cmd_funnel(args) -> int:
    """``funnel``: the outcome of each answerable query on the ladder (the first rung it stops at), per configuration."""
    from .common import UsageError, cli_encoder
    from ..analyses.compare.intervals import RECALL_INTERVAL_WORDS
    from ..analyses.funnel import format_funnel, funnels, stage_records
    from ..analyses.outcomes import LADDER

    gate = args.gate
    encoder = cli_encoder(args)  # one encoder: a stage another retriever ranks (E/hybrid's dense) is computed too
    ev = _configs(args, encoder)
    try:
        items = funnels(ev, gate=gate, encoder=encoder)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        configs = []
        for f in items:
            ivs = f.intervals()
            configs.append({
                "config": f.config.label, "queries": len(f.rows),
                "stages": {s: {"count": ivs[s].successes, "share": ivs[s].estimate, "low": ivs[s].low,
                               "high": ivs[s].high, "queries": f.queries(s)} for s in LADDER},
                "promoted": f.promoted, "demoted": f.demoted,
                "per_query": stage_records(f),
            })
        _dump({"k": gate.k, "cut": gate.cut, "keep": gate.keep, "pool": items[0].pool if items else None,
               "interval": RECALL_INTERVAL_WORDS,
               "configs": configs})
        return 0
    print(format_funnel(items))
    if args.outcome:
        from ..core.words import RUNG_WORDS

        for f in items:
            ids = f.queries(args.outcome)
            print(f"\n{f.config.label} {RUNG_WORDS[args.outcome]}: {', '.join(ids) or '(none)'}")
    return 0


def cmd_hubs(args) -> int:
    """``hubs``: chunks in the top k of unusually many queries, boilerplate flagged."""
    from .common import UsageError
    from ..evaluation.records import parse_key
    from ..analyses.hubs import hub_rows, hubness, hubs
    from ..core.tables import format_rows

    try:
        cfg = parse_key(args.config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    args.strategies, args.retrievers = cfg.strategy, cfg.retriever
    ev = _configs(args)
    if cfg.retriever in ev.unavailable:
        raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    k = args.gate.k
    items = hubs(ev, cfg, k=k, top=args.top, only_hubs=args.only_hubs)
    rows = hub_rows(items)
    if args.json:
        _dump({"config": cfg.label, "k": k, "hubness_skew": hubness(ev, cfg, k=k), "chunks": rows})
        return 0
    print(f"{cfg.label}: k-occurrence in the top {k} of {len(ev.queries)} queries "
          f"(skewness {hubness(ev, cfg, k=k):.2f})")
    print(format_rows(rows, ["chunk", "occurrences", "questions", "ratio", "hub", "boilerplate", "holds needle of",
                             "displaced", "preview"]))
    return 0


def cmd_cost(args) -> int:
    """``cost``: build time, per-query latency and tokens, measured on this machine."""
    from .common import cli_encoder, open_store, progress_bar
    from ..analyses.cost import RERANK_SAMPLE, cost_rows, costs, machine
    from ..core.tables import format_rows

    gate = args.gate
    encoder = cli_encoder(args)  # one encoder: the evaluation and the measurement share its loaded model
    ev = _configs(args, encoder)
    items = costs(ev, encoder, args.gate, sample=args.sample, cross_encoder=args.cross_encoder,
                  store=open_store(args), progress=progress_bar())
    rows = cost_rows(items)
    if args.json:
        _dump({"machine": machine(), "k": gate.k, "cut": gate.cut, "keep": gate.keep,
               "rows": [{**r, f"R@{gate.k}": str(r[f"R@{gate.k}"])} for r in rows]})
        return 0
    m = machine()
    print(f"measured on {m['processor']}, {m['cpus']} CPUs, {m['platform']} "
          f"(load average {m.get('load_average_1min', '?')}); latency over {args.sample} queries each "
          f"({min(args.sample, RERANK_SAMPLE)} for a reranker; the median's 95% interval beside it)")
    print(format_rows([{**r, f"R@{gate.k}": str(r[f"R@{gate.k}"])} for r in rows]))
    return 0


def register(sub) -> None:
    """Add ``funnel``, ``hubs`` and ``cost`` to the subparsers ``sub``."""
    cut_help = f"abstention cut (cosine distance; default {DEFAULT_CUT})"

    p = sub.add_parser("funnel", help="the outcome of each answerable query on the ladder, per configuration")
    add_evaluation(p)
    add_gate(p, cut=cut_help)
    add_selection(p, json=False)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--outcome", help="also list the queries of this outcome (e.g. ranked-low)")
    p.set_defaults(func=cmd_funnel)

    p = evaluating_parser(sub, "hubs", "chunks in the top k of unusually many queries, boilerplate flagged")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--config", default="E/hybrid", help="the configuration (default E/hybrid)")
    p.add_argument("--top", type=int, default=20, help="how many chunks to list (default 20)")
    p.add_argument("--only-hubs", action="store_true", help="list only chunks flagged as hubs")
    p.set_defaults(func=cmd_hubs)

    p = sub.add_parser("cost", help="build time, per-query latency, embedded and prompt tokens, Pareto front")
    add_evaluation(p)
    add_gate(p, cut=cut_help)
    add_selection(p, json=False)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--sample", type=int, default=16, help="queries timed per configuration (default 16)")
    p.set_defaults(func=cmd_cost)
