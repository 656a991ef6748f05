"""Subcommands ``eval``, ``compare``, ``pairs`` and ``report``."""

from __future__ import annotations

import sys
from pathlib import Path

from ..defaults import ALPHA, DEFAULT_CUT, PRIMARY_K
from .common import (UsageError, _check_out_file, _check_out_folder, _check_report_out, _known_config,
                     _print_unavailable, cli_encoder, evaluate_args, load_inputs, write_results)

__all__ = ["cmd_eval", "cmd_compare", "cmd_pairs", "cmd_report"]


def cmd_eval(args) -> int:
    """``eval``: every strategy x retriever; the tables on stdout, the files in ``--out``."""
    from ..chunking import parse_strategies
    from ..retrieval.registry import parse_retrievers
    from ..summary import chunking_rows, format_summary
    from ..tables import format_rows

    try:
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_out_folder(args.out)
    ev = evaluate_args(args, strategies, retrievers, stream=True)
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
    return 0


def cmd_compare(args) -> int:
    """``compare A B``: the paired sign-flip test over questions (Holm within ``--family``)."""
    import json

    from ..chunking import parse_strategies
    from ..evaluation import parse_key
    from ..retrieval.registry import parse_retrievers
    from ..compare.comparisons import check_phrasing, compare, compare_in_family

    try:
        a, b = parse_key(args.a), parse_key(args.b)
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
    k = None if args.mrr else args.k
    try:
        check_phrasing(ev, args.phrasing)
        if args.family == "none":
            c = compare(ev, a, b, k=k, phrasing=args.phrasing)
        else:
            c = compare_in_family(ev, a, b, k=k, phrasing=args.phrasing, planned=args.family == "planned")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(c.as_json(), indent=2))
        return 0
    print(c.summary())
    print(c.verdict)
    print(c.power)
    if c.wins:
        print(f"  queries {a.label} finds, {b.label} misses: {', '.join(c.wins)}")
    if c.losses:
        print(f"  queries {b.label} finds, {a.label} misses: {', '.join(c.losses)}")
    return 0


def cmd_pairs(args) -> int:
    """``pairs``: every comparison of a family (all pairs, or ``--baseline`` against each), Holm within."""
    import json

    from ..chunking import parse_strategies
    from ..evaluation import parse_key
    from ..retrieval.registry import parse_retrievers
    from ..compare.comparisons import check_phrasing, family, family_rows
    from ..tables import format_rows

    try:
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
        baseline = parse_key(args.baseline) if args.baseline else None
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
        fam = family(ev, k=args.k, phrasing=args.phrasing, baseline=baseline)
    except (ValueError, KeyError) as exc:
        raise UsageError(str(exc)) from None
    rows = [r.cells() for r in family_rows(fam)]
    if args.json:
        print(json.dumps({"unit": "question", "k": args.k, "phrasing": args.phrasing,
                          "family": fam[0].family_name if fam else "", "family_size": len(fam),
                          "shown_different": sum(c.status == "different" for c in fam), "rows": rows}, indent=2))
        return 0
    name = fam[0].family_name if fam else "no comparisons"
    print(f"{name} at R@{args.k} ({args.phrasing}), over questions; Holm within this family")
    print(format_rows([{k: r[k] for k in ("a", "b", "wins", "losses", "ties", "p", "p_holm", "difference", "low",
                                          "high", "status")} for r in rows]))
    below = sum(c.p_holm < ALPHA for c in fam)
    print(f"\n{below} of {len(fam)} with Holm p < {ALPHA}" + (" (shown different)" if fam and fam[0].primary
                                                           else f" (descriptive: verdicts are at R@{PRIMARY_K})"))
    return 0



def cmd_report(args) -> int:
    """``report``: one self-contained HTML report and its Markdown twin."""
    from ..chunking import STRATEGIES, parse_strategies
    from ..evaluation import parse_key
    from ..retrieval.registry import parse_retrievers
    from ..report.build import build_report, default_config
    from ..report.render import write_report

    try:
        cfg = parse_key(args.config) if args.config else None
        strategies = [s.name for s in parse_strategies(args.strategies)]
        retrievers = parse_retrievers(args.retrievers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    import math

    if not (math.isfinite(args.cut) and 0 < args.cut <= 2):
        raise UsageError(f"--cut must be a cosine distance in (0, 2], e.g. {DEFAULT_CUT}; got {args.cut}")
    if args.keep < 1:
        raise UsageError(f"--keep must be at least 1, got {args.keep}")
    out = Path(args.out)
    if out.suffix.lower() == ".md":
        raise UsageError(f"--out names the HTML file (e.g. report.html); the Markdown is written beside it, got {out}")
    from ..report.render import markdown_twin

    try:
        md = markdown_twin(out, args.md)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_report_out(out)
    _check_out_file(md)
    if cfg is not None:
        _known_config(cfg, "--config")
    if cfg is not None:  # the named configuration is always evaluated, with the others asked for
        strategies = sorted({*strategies, cfg.strategy}, key=list(STRATEGIES).index)
        retrievers = list(dict.fromkeys([*retrievers, cfg.retriever]))
    encoder = cli_encoder(args)  # one encoder: the evaluation and the cost measurement share its loaded model
    ev = evaluate_args(args, strategies, retrievers, encoder=encoder)
    if cfg is None:
        cfg = default_config(ev)
        print(f"no --config: reporting {cfg.label}", file=sys.stderr)
    if cfg.retriever in ev.unavailable:
        raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    cost_items = machine_info = None
    if not args.no_cost:  # measured on this machine: build time, latency, tokens (ragdiag.cost)
        from ..cost import costs, machine

        cost_items = costs(ev, encoder, cut=args.cut, keep=args.keep, cross_encoder=args.cross_encoder)
        machine_info = machine()
    try:
        report = build_report(ev, config=cfg, cut=args.cut, keep=args.keep, k=args.k, costs=cost_items,
                              machine=machine_info)
        paths = write_report(report, out, md=md)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for path in paths:
        print(f"wrote {path}")
    return 0

