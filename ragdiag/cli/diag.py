"""CLI subcommands ``funnel``, ``hubs`` and ``cost`` (registered by :mod:`ragdiag.cli.parser`)."""

from __future__ import annotations

import json
import sys

from ..core.defaults import DEFAULT_CUT, DEFAULT_KEEP, PRIMARY_K

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
    if not 0 < args.cut <= 2:
        raise UsageError(f"--cut must be a cosine distance in (0, 2], e.g. {DEFAULT_CUT}; got {args.cut}")
    if args.keep < 1:
        raise UsageError(f"--keep must be at least 1, got {args.keep}")
    ev = evaluate_args(args, strategies, retrievers, encoder=encoder)
    for name, reason in ev.unavailable.items():
        print(f"unavailable: {name}: {reason}", file=sys.stderr)
    return ev


def _dump(doc) -> None:
    from ..present.export import _json_default

    print(json.dumps(doc, indent=2, default=_json_default))


def cmd_funnel(args) -> int:
    """``funnel``: the first stage at which each answerable query was lost, per configuration."""
    from .common import UsageError
    from ..analyses.compare.intervals import RECALL_INTERVAL_WORDS
    from ..analyses.funnel import STAGES, format_funnel, funnels, stage_records

    ev = _configs(args)
    try:
        items = funnels(ev, k=args.k, cut=args.cut, keep=args.keep)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        configs = []
        for f in items:
            ivs = f.intervals()
            configs.append({
                "config": f.config.label, "queries": len(f.rows),
                "stages": {s: {"count": ivs[s].successes, "share": ivs[s].estimate, "low": ivs[s].low,
                               "high": ivs[s].high, "queries": f.queries(s)} for s in STAGES},
                "promoted": f.promoted, "demoted": f.demoted,
                "per_query": stage_records(f),
            })
        _dump({"k": args.k, "cut": args.cut, "keep": args.keep, "pool": items[0].pool if items else None,
               "interval": RECALL_INTERVAL_WORDS,
               "configs": configs})
        return 0
    print(format_funnel(items))
    if args.stage:
        for f in items:
            ids = f.queries(args.stage) if args.stage in STAGES else []
            print(f"\n{f.config.label} {args.stage}: {', '.join(ids) or '(none)'}")
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
    items = hubs(ev, cfg, k=args.k, top=args.top, only_hubs=args.only_hubs)
    rows = hub_rows(items)
    if args.json:
        _dump({"config": cfg.label, "k": args.k, "hubness_skew": hubness(ev, cfg, k=args.k), "chunks": rows})
        return 0
    print(f"{cfg.label}: k-occurrence in the top {args.k} of {len(ev.queries)} queries "
          f"(skewness {hubness(ev, cfg, k=args.k):.2f})")
    print(format_rows(rows, ["chunk", "occurrences", "questions", "ratio", "hub", "boilerplate", "holds needle of",
                             "displaced", "preview"]))
    return 0


def cmd_cost(args) -> int:
    """``cost``: build time, per-query latency and tokens, measured on this machine."""
    from .common import UsageError, cli_encoder
    from ..analyses.cost import cost_rows, costs, machine
    from ..core.tables import format_rows

    if args.sample < 1:
        raise UsageError(f"--sample must be at least 1 query, got {args.sample}")
    encoder = cli_encoder(args)  # one encoder: the evaluation and the measurement share its loaded model
    ev = _configs(args, encoder)
    items = costs(ev, encoder, k=args.k, cut=args.cut, keep=args.keep, sample=args.sample,
                  cross_encoder=args.cross_encoder)
    rows = cost_rows(items)
    if args.json:
        _dump({"machine": machine(), "k": args.k, "cut": args.cut, "keep": args.keep,
               "rows": [{**r, f"R@{args.k}": str(r[f"R@{args.k}"])} for r in rows]})
        return 0
    m = machine()
    print(f"measured on {m['processor']}, {m['cpus']} CPUs, {m['platform']} "
          f"(load average {m.get('load_average_1min', '?')}); latency over {args.sample} queries each")
    print(format_rows([{**r, f"R@{args.k}": str(r[f"R@{args.k}"])} for r in rows]))
    return 0


def register(sub, common) -> None:
    """Add ``funnel``, ``hubs`` and ``cost`` to the subparsers ``sub`` (``common`` adds the shared options)."""
    def gate_args(p):
        p.add_argument("--cut", type=float, default=DEFAULT_CUT, help=f"abstention cut (default {DEFAULT_CUT})")
        p.add_argument("--keep", type=int, default=DEFAULT_KEEP, help=f"the gate keeps at most N (default {DEFAULT_KEEP})")
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    def which(p):
        p.add_argument("--strategies", default=None, help="comma-separated, e.g. A,C,E (default: all six)")
        p.add_argument("--retrievers", default=None,
                       help="comma-separated from dense,bm25,hybrid,rerank-maxsim,rerank-ce (default: all)")

    p = sub.add_parser("funnel", help="the first stage at which each answerable query was lost, per configuration")
    common(p)
    which(p)
    gate_args(p)
    p.add_argument("--stage", help="also list the queries of this stage (e.g. ranked-low)")
    p.set_defaults(func=cmd_funnel, k=PRIMARY_K)

    p = sub.add_parser("hubs", help="chunks in the top k of unusually many queries, boilerplate flagged")
    common(p)
    gate_args(p)
    p.add_argument("--config", default="E/hybrid", help="the configuration (default E/hybrid)")
    p.add_argument("--top", type=int, default=20, help="how many chunks to list (default 20)")
    p.add_argument("--only-hubs", action="store_true", help="list only chunks flagged as hubs")
    p.set_defaults(func=cmd_hubs, k=PRIMARY_K)

    p = sub.add_parser("cost", help="build time, per-query latency, embedded and prompt tokens, Pareto front")
    common(p)
    which(p)
    gate_args(p)
    p.add_argument("--sample", type=int, default=16, help="queries timed per configuration (default 16)")
    p.set_defaults(func=cmd_cost, k=PRIMARY_K)
