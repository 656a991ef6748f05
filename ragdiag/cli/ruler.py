"""Subcommand ``ruler``: can this ground truth tell the configurations apart? (headroom, shortcuts, leakage,
discrimination; :func:`ragdiag.authoring.ruler.ruler`)."""

from __future__ import annotations

import json
import sys

from .common import UsageError, add_selection, evaluate_args, load_inputs
from .options import add_evaluation, add_gate

__all__ = ["register", "cmd_ruler"]


def _selection(args):
    """(strategies, retrievers to evaluate, the configurations the verdicts are about)."""
    from ..evaluation.records import parse_key
    from ..index.chunking import parse_strategies
    from ..retrieval.registry import parse_retrievers
    from .common import _known_config

    if args.configs and (args.strategies or args.retrievers):
        raise UsageError("name configurations (CONFIG...) or --strategies/--retrievers, not both")
    try:
        if args.configs:
            named = []
            for text in args.configs:
                named.append(_known_config(parse_key(text), "CONFIG"))
            named = list(dict.fromkeys(named))
            strategies = list(dict.fromkeys(c.strategy for c in named))
            retrievers = list(dict.fromkeys(c.retriever for c in named))
        else:
            named = None
            strategies = [s.name for s in parse_strategies(args.strategies)]
            retrievers = parse_retrievers(args.retrievers)
    except (ValueError, KeyError) as exc:
        raise UsageError(str(exc).strip("'\"")) from None
    if named is None:
        from ..evaluation.records import Config

        named = [Config(s, r) for s in strategies for r in retrievers]
    if "bm25" not in retrievers:  # the shortcut check reads BM25 alone (evaluated beside, not in the family)
        retrievers = [*retrievers, "bm25"]
    return strategies, retrievers, named


def cmd_ruler(args) -> int:
    """``ruler [CONFIG...]``: the ruler check of the ground truth against the configurations (see the module)."""
    from ..authoring.ruler import ruler

    from .common import cli_encoder, open_store

    if args.at_size is not None and not args.pool_curve:
        raise UsageError("--at-size goes with --pool-curve")
    if args.at_size is not None and args.at_size < 1:
        raise UsageError(f"--at-size is a number of chunks (or documents), at least 1; got {args.at_size}")
    strategies, retrievers, named = _selection(args)
    loaded = None
    if getattr(args, "collection", None):  # a collection in another format (BEIR, TREC, SQuAD...)
        from .collections import open_for_eval

        collection = open_for_eval(args, headline_to=sys.stderr)
        if collection.document_level:
            return _document_curve(args, collection, strategies)
        loaded = (collection.corpus, collection.truth)
    if args.pool_curve and "dense" not in retrievers:
        retrievers = [*retrievers, "dense"]
    args.cross_encoder = getattr(args, "cross_encoder", None)
    args._encoder = cli_encoder(args)  # loaded once: the evaluation and the pool curve's queries
    args._store = open_store(args) if args.pool_curve else None
    ev = evaluate_args(args, strategies, retrievers, loaded or load_inputs(args), encoder=args._encoder)
    configs = [c for c in named if c in ev.results]
    missing = [c.label for c in named if c not in ev.results]
    if missing and args.configs:  # named ones must run; of a selection, those that cannot run are left out (noted)
        raise UsageError(f"{', '.join(missing)} could not run: "
                         + "; ".join(f"{r}: {why}" for r, why in ev.unavailable.items()))
    try:
        res = ruler(ev, configs, primary_k=args.gate.k)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    curve = _pool_curve(args, ev, configs) if args.pool_curve else None
    if args.json:
        doc = res.as_json()
        if curve is not None:
            doc["pool_curve"] = curve.as_json()
        print(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        print(res.text())
        if curve is not None:
            print("\n" + curve.text())
    return 0


def _document_curve(args, collection, strategies) -> int:
    """``ruler --collection beir:DIR --pool-curve``: a collection judged by document has no passage-level needles for
    the ruler's checks; its pool curve samples documents (:func:`ragdiag.authoring.pool_curve.document_pool_curve`)."""
    from ..authoring.pool_curve import document_pool_curve

    from .common import cli_encoder, open_store

    if not args.pool_curve:
        raise UsageError(f"{collection.name} is judged by document: the ruler's checks read passage-level needles; "
                         "add --pool-curve for its pool curve (documents as the unit)")
    strategy = strategies[0] if (args.configs or args.strategies) else None
    try:
        curve = document_pool_curve(collection, cli_encoder(args), args.gate, strategy=strategy,
                                    store=open_store(args), at_size=args.at_size)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps({"collection": collection.name, "level": collection.level,
                          "pool_curve": curve.as_json()}, indent=2, ensure_ascii=False))
    else:
        print(curve.text())
    return 0


def _pool_curve(args, ev, configs):
    """The pool curve of the first dense configuration (``E/dense`` evaluated for it when none was named)."""
    from ..authoring.pool_curve import pool_curve

    dense = [c for c in configs if c.retriever == "dense"] or [c for c in ev.results if not c.external
                                                                and c.retriever == "dense"]
    if not dense:
        raise UsageError("the pool curve reads a dense configuration's exact distances: name one (e.g. E/dense)")
    cfg = dense[0]
    store = getattr(args, "_store", None)
    encoder = args._encoder
    texts = [q.text for q in ev.queries]
    vectors = store.embed(encoder, texts).vectors if store is not None else encoder.encode(texts)
    try:
        return pool_curve(ev, cfg, vectors, args.gate, at_size=args.at_size)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def register(sub) -> None:
    """Add ``ruler`` to the subparsers ``sub``."""
    p = sub.add_parser("ruler", help="can this ground truth tell the configurations apart? headroom per k, "
                                     "shortcuts (BM25 alone, copied words), leakage, and what its size resolves")
    p.add_argument("configs", metavar="CONFIG", nargs="*",
                   help="the configurations the verdicts are about, e.g. E/dense E/hybrid (default: --strategies x "
                        "--retrievers; BM25 is evaluated beside them for the shortcut check)")
    add_evaluation(p)
    add_gate(p, cut="with --pool-curve: the cut that counts as answered (default: the gate's default cut)")
    add_selection(p)
    from .collections import add_collection_options

    add_collection_options(p)  # --collection beir:DIR: judged by document, only its pool curve (documents sampled)
    p.add_argument("--pool-curve", action="store_true",
                   help="also evaluate the same questions on nested seeded subsets of the chunks (10/25/50/100%%, "
                        "every needle chunk kept) with a dense configuration, and fit recall and answered against "
                        "corpus size")
    p.add_argument("--at-size", type=int, default=None, metavar="CHUNKS",
                   help="with --pool-curve: extrapolate to this many chunks (documents, for a --collection judged "
                        "by document) with a 95%% prediction interval "
                        "(refused beyond 100x the corpus or when the curve is not log-linear)")
    p.set_defaults(func=cmd_ruler)
