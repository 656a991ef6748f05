"""``python -m ragdiag truth plan|draft|near-miss``: grow a ground truth (where, drafts to start from, near misses).

:func:`register` adds the three actions to the ``truth`` command's subparsers
(one call where ``truth`` builds them).
"""

from __future__ import annotations

import sys

from .common import UsageError, open_corpus, print_result
from .options import add_inputs, add_model, add_store

__all__ = ["register", "cmd_plan", "cmd_draft", "cmd_near_miss"]


def cmd_plan(args) -> int:
    """``truth plan CONFIG``: how many more questions the decision needs and where to write them."""
    from .common import evaluate_args, load_inputs
    from ..evaluation.records import parse_key
    from ..index.chunking import parse_strategies
    from ..retrieval.registry import parse_retrievers
    from ..authoring.plan import plan

    if args.versus is None and args.decide is None:
        raise UsageError("say which decision to plan for: --versus CONFIG2, or --decide best|gate")
    if not 0 < args.margin < 1:
        raise UsageError(f"--margin is a difference in recall in (0, 1), e.g. 0.05; got {args.margin}")
    k = args.gate.k  # --k checked once by the Gate (default: the gate's keep)
    decide = args.decide or "versus"
    if decide == "gate" and not args.baseline:
        raise UsageError("--decide gate compares CONFIG with what you run today: pass --baseline CONFIG2")
    if decide != "best" and (args.strategies or args.retrievers):
        raise UsageError("--strategies and --retrievers choose the family of --decide best; with --versus or "
                         "--decide gate the configurations named are evaluated")
    if args.baseline and decide != "gate":
        raise UsageError("--baseline goes with --decide gate (with --versus, name the other configuration there)")
    try:
        named = [parse_key(c) for c in (args.config, args.versus, args.baseline) if c]
        if len(named) == 2 and named[0] == named[1]:
            raise UsageError(f"CONFIG and {'--versus' if args.versus else '--baseline'} both name {args.config}; "
                             "name another configuration")
        if decide == "best":
            strategies = [s.name for s in parse_strategies(args.strategies)]
            retrievers = parse_retrievers(args.retrievers)
        else:
            strategies = list(dict.fromkeys(c.strategy for c in named))
            retrievers = list(dict.fromkeys(c.retriever for c in named))
            parse_strategies(",".join(strategies))
            parse_retrievers(",".join(retrievers))
    except (ValueError, KeyError) as exc:
        raise UsageError(str(exc).strip("'\"")) from None
    args.cross_encoder = None
    ev = evaluate_args(args, strategies, retrievers, load_inputs(args))
    try:
        p = plan(ev, args.config, versus=args.versus, decide=decide, baseline=args.baseline, k=k,
                 margin=args.margin)
    except (ValueError, KeyError) as exc:
        raise UsageError(str(exc).strip("'\"")) from None
    return print_result(p, args.json, p.text, ensure_ascii=False)


def cmd_draft(args) -> int:
    """``truth draft``: question drafts from needle suggestions, by rules per language, with their leakage."""
    from ..authoring.drafts import draft_suggestions

    if args.n < 1:
        raise UsageError(f"-n must be at least 1, got {args.n}")
    res = draft_suggestions(open_corpus(args.corpus), args.n)
    return print_result(res, args.json, res.text, ensure_ascii=False)


def cmd_near_miss(args) -> int:
    """``truth near-miss``: off-topic questions in the corpus's own words that no chunk answers."""
    from ..authoring.near_miss import near_misses

    if args.n < 1:
        raise UsageError(f"-n must be at least 1, got {args.n}")
    corpus = open_corpus(args.corpus)
    encoder = store = None
    if not args.no_dense:
        from .common import cli_encoder, open_store
        from ..core.defaults import DEFAULT_STRATEGY

        args.cross_encoder = None
        encoder = cli_encoder(args)
        store = open_store(args)
        if store is not None and not args.no_snapshot:
            from ..documents.truth import TruthError, default_truth_path, load_truth
            from ..index.snapshot import seed_from_snapshot

            try:  # the shipped index holds the bundled corpus's chunk vectors: no need to embed them again
                truth = load_truth(default_truth_path(corpus.root), corpus)
            except (TruthError, OSError):
                truth = None
            if truth is not None:
                seed_from_snapshot(store, corpus, truth, encoder, strategies=[DEFAULT_STRATEGY],
                                   log=lambda msg: print(msg, file=sys.stderr))
    res = near_misses(corpus, args.n, encoder=encoder, store=store)
    return print_result(res, args.json, res.text, ensure_ascii=False)


def register(tsub) -> None:
    """Add ``plan``, ``draft`` and ``near-miss`` to the ``truth`` command's subparsers ``tsub``."""
    from ..core.defaults import PRACTICAL_MARGIN
    from .options import add_k

    p = tsub.add_parser("plan", help="how many more questions a decision needs (from the power of its test) and "
                                     "where to write them")
    p.add_argument("config", metavar="CONFIG", help="e.g. E/hybrid")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--versus", metavar="CONFIG2", help="plan for CONFIG against CONFIG2 (compare's test)")
    how.add_argument("--decide", choices=["best", "gate"],
                     help="plan for the best set over --strategies x --retrievers, or for the regression gate "
                          "of CONFIG against --baseline")
    p.add_argument("--baseline", metavar="CONFIG2", help="with --decide gate: what you run today")
    p.add_argument("--margin", type=float, default=PRACTICAL_MARGIN,
                   help=f"the difference in recall worth detecting (default {PRACTICAL_MARGIN})")
    add_k(p)
    p.add_argument("--strategies", default=None, help="with --decide best: comma-separated (default: all six)")
    p.add_argument("--retrievers", default=None, help="with --decide best: comma-separated (default: all)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_inputs(p)  # what the plan evaluates: --corpus, --truth, the store and --model
    add_store(p)
    add_model(p, cross_encoder=False)
    p.set_defaults(func=cmd_plan)

    d = tsub.add_parser("draft", help="question drafts from needle suggestions (rules per language, no LLM), "
                                      "each with its leakage")
    d.add_argument("--corpus", help="folder of documents (default: the bundled corpus)")
    d.add_argument("-n", type=int, default=40, help="needle suggestions to draft from (default 40)")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=cmd_draft)

    m = tsub.add_parser("near-miss", help="off-topic questions in the corpus's own words that no chunk answers "
                                          "(checked with BM25 and dense scores)")
    m.add_argument("--corpus", help="folder of documents (default: the bundled corpus)")
    m.add_argument("-n", type=int, default=30, help="candidates to keep (default 30)")
    m.add_argument("--model", help="embedding model folder or cached hub id (default: all-MiniLM-L6-v2)")
    m.add_argument("--no-dense", action="store_true", help="check with BM25 only (no model; says so)")
    m.add_argument("--cache", help="store folder for chunk vectors (default: $RAGDIAG_CACHE or ./.ragdiag-cache)")
    m.add_argument("--no-cache", action="store_true", help="compute every vector, store nothing")
    m.add_argument("--no-snapshot", action="store_true", help="do not seed the store from the shipped index")
    m.add_argument("--json", action="store_true", help="print one JSON object")
    m.set_defaults(func=cmd_near_miss)
