"""Subcommand ``chunking``: the strategies' chunking table, or with ``--ledger`` the repair ledger against a baseline."""

from __future__ import annotations

import sys

from ..core.defaults import PREFERRED_CONFIGS
from .common import UsageError, cli_encoder, evaluate_args, load_inputs, strategy_help
from .options import add_evaluation, add_gate

__all__ = ["register", "cmd_chunking"]

DEFAULT_RETRIEVER = PREFERRED_CONFIGS[0].split("/", 1)[1]


def register(sub) -> None:
    """Add ``chunking`` to the subparsers ``sub``."""
    p = sub.add_parser("chunking", help="what each chunking strategy costs and destroys; with --ledger, which "
                                        "strategy repairs which query a baseline loses, at what cost")
    add_evaluation(p)
    add_gate(p, cut="the gate's cut (cosine distance; default 0.6): a query is lost unless the gate keeps a chunk "
                    "holding its needle")
    p.add_argument("--strategies", default=None,
                   help=f"{strategy_help()}; with --ledger the default is every registered strategy")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--ledger", action="store_true",
                   help="the repair ledger: per strategy, the queries it repairs (lost under the baseline, "
                        "answered with it) and breaks, by id, the paired test over questions with an interval "
                        "simultaneous over the ledger's rows, prompt tokens at the gate, chunks, embedding time")
    p.add_argument("--baseline", default=None,
                   help="the baseline: a strategy (E) or a configuration (E/hybrid); default: the declared baseline "
                        "($RAGDIAG_BASELINE or ragdiag.toml), else the recommendation among strategies A-F")
    p.add_argument("--retriever", default=None,
                   help=f"the retriever every row of the ledger uses (default: the baseline's, else "
                        f"{DEFAULT_RETRIEVER})")
    p.add_argument("--prefixes", default=None, metavar="FILE",
                   help="with --ledger: imported context prefixes, JSON Lines of {doc, start, end, prefix} written "
                        "elsewhere for chunks of the baseline's strategy; they are embedded before those chunks (the "
                        "quote stays the chunk's text) and the result is a row of its own, <baseline>+P")
    p.add_argument("--late", action="store_true",
                   help="with --ledger: a row <baseline>+LATE, the baseline's chunks with late-chunked vectors (each "
                        "chunk pooled from its own wordpieces, read with its neighbours in the encoder's 256-wordpiece "
                        "window; the quote stays the chunk's text)")
    p.add_argument("--expand", default="neighbours,section",
                   help="with --ledger: context added at retrieval time to the baseline's kept chunks, each a row "
                        "(<baseline>+neighbours: the chunks either side; <baseline>+section: the whole section), "
                        "priced in prompt tokens; comma-separated, or none (default: neighbours,section)")
    p.add_argument("--no-cost", action="store_true", help="with --ledger: skip the embedding rate and prompt tokens")
    p.set_defaults(func=cmd_chunking)


def _baseline(args):
    """``(strategy or None, retriever)`` the operator named (``--baseline``, ``--retriever``, the declared baseline)."""
    from ..analyses.compare import declared_baseline
    from ..evaluation.records import Config
    from ..index.chunking import parse_strategies
    from ..retrieval.registry import parse_retrievers

    try:
        found = None if args.baseline else declared_baseline(None)  # a strategy alone is not a declared configuration
        declared = args.baseline or (found.config if found is not None else None)
        strategy, retriever = None, args.retriever
        if declared:
            if "/" in declared:
                cfg = Config.parse(declared)
                strategy = cfg.strategy
                if retriever and retriever != cfg.retriever:
                    raise ValueError(f"--retriever {retriever} and the baseline {cfg.label} name two retrievers: "
                                     "a ledger holds one fixed")
                retriever = cfg.retriever
            else:
                strategy = parse_strategies(declared)[0].name
        retriever = retriever or DEFAULT_RETRIEVER
        parse_retrievers(retriever)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return strategy, retriever


def _register_prefixes(path: str, corpus, base) -> str:
    """Register ``base`` with the prefixes of ``path`` as ``<base>+P``; its name. UsageError when none is a chunk."""
    from ..index.chunking import register_strategy
    from ..index.prefixes import load_prefixes, unmatched, with_prefixes

    try:
        strategy = with_prefixes(base, load_prefixes(path, corpus))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    missing = unmatched(strategy.prefixes, corpus=corpus, strategy=strategy)
    if len(missing) == len(strategy.prefixes):
        raise UsageError(f"none of the {len(missing)} prefixes is at the span of a chunk of strategy {base.name}: "
                         "were they written for another strategy's chunks?")
    if missing:
        d, s, e, _ = missing[0]
        print(f"warning: {len(missing)} of {len(strategy.prefixes)} prefixes are at no chunk of {base.name} "
              f"(e.g. {d} {s}-{e}) and embed nowhere", file=sys.stderr)
    return register_strategy(strategy, replace=True).name


def cmd_chunking(args) -> int:
    """``chunking``: the chunking table, or the repair ledger (``--ledger``)."""
    import json

    from ..analyses.summary import chunking_rows
    from ..core.tables import format_rows
    from ..index.chunking import DEFAULT_STRATEGIES, STRATEGIES, parse_strategies

    strategy, retriever = _baseline(args) if args.ledger else (None, DEFAULT_RETRIEVER)
    try:
        default = list(STRATEGIES) if args.ledger else None
        names = [s.name for s in parse_strategies(args.strategies or default)]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if strategy is not None and strategy not in names:
        names.insert(0, strategy)
    loaded = load_inputs(args)
    if args.prefixes:
        if not args.ledger or strategy is None:
            raise UsageError("--prefixes needs --ledger and a named baseline (--baseline E): the prefixes were "
                             "written for the chunks of one strategy")
        names.append(_register_prefixes(args.prefixes, loaded[0], STRATEGIES[strategy]))
    if args.late:
        if not args.ledger or strategy is None:
            raise UsageError("--late needs --ledger and a named baseline (--baseline E): it late-chunks the "
                             "baseline's chunks")
        from ..index.chunking import register_strategy
        from ..index.late import with_late

        names.append(register_strategy(with_late(STRATEGIES[strategy]), replace=True).name)
    if not args.ledger:
        ev = evaluate_args(args, names, ["bm25"], loaded)  # the table needs chunks, not a retriever
        rows = chunking_rows(ev)
        print(json.dumps(rows, indent=2, default=str) if args.json else format_rows(rows))
        return 0
    if strategy is None and not any(n in DEFAULT_STRATEGIES for n in names):
        raise UsageError("with no baseline named, the ledger's baseline is the recommendation among strategies "
                         f"{','.join(DEFAULT_STRATEGIES)}: include one of them in --strategies, or name --baseline")
    from ..analyses.expansion import EXPANSIONS

    expansions = [] if args.expand.strip().lower() == "none" else [x.strip() for x in args.expand.split(",") if x.strip()]
    if unknown := [x for x in expansions if x not in EXPANSIONS]:
        raise UsageError(f"unknown expansion {unknown[0]!r}; choose from {', '.join(EXPANSIONS)}, or none")
    encoder = cli_encoder(args)
    if args.late:
        from ..index.late import check_late_encoder

        try:
            check_late_encoder(encoder)
        except ValueError as exc:
            raise UsageError(f"--late: {exc}") from None
    ev = evaluate_args(args, names, [retriever], loaded, encoder=encoder)
    if retriever in ev.unavailable:
        raise UsageError(f"{retriever} cannot run: {ev.unavailable[retriever]}")
    gate = args.gate
    if strategy is None:
        from dataclasses import replace

        from ..analyses.recommend import recommend

        pick = recommend(replace(ev, results={k: v for k, v in ev.results.items() if k.strategy in DEFAULT_STRATEGIES}),
                         gate)
        strategy = pick.config.split("/", 1)[0]
        print(f"baseline: {pick.config}, the recommendation among strategies {','.join(DEFAULT_STRATEGIES)}",
              file=sys.stderr)
    from ..analyses.cost import embedding_rate
    from ..analyses.ledger import ledger

    rate = None if args.no_cost else embedding_rate(ev, encoder, list(ev.indexes)).seconds_per_token
    try:
        led = ledger(ev, f"{strategy}/{retriever}", gate, encoder=None if args.no_cost else encoder, embed_rate=rate,
                     expansions=expansions)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(led.as_json(), indent=2))
        return 0
    print(led.summary())
    print(f"lost under {led.baseline.config}: {' '.join(led.lost) or '(none)'}")
    keep = ("config", "method", "answered", "repaired", "broken", "questions +/-", "p", "p adjusted", "difference",
            "low", "high", "status", "prompt tokens/query", "chunks", "destroyed", "embed s")
    rows = [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items() if k in keep} for r in led.table()]
    print(format_rows(rows))
    print(f"intervals: answered at the gate, config - baseline, over questions, simultaneous over the "
          f"{len(led.rows)} rows (max-T); p: the pair's exact sign-flip test")
    for r in led.rows:
        if r.repaired or r.broken:
            where = f" (lost under the baseline at: {', '.join(f'{k} {n}' for k, n in r.repaired_from)})" \
                if r.repaired_from else ""
            print(f"{r.config}: repairs {' '.join(r.repaired) or '-'}{where}; breaks {' '.join(r.broken) or '-'}")
    return 0
