"""``python -m ragdiag eval-store``: evaluate an existing vector database's answers to the ground truth."""

from __future__ import annotations

import sys
from collections import Counter

__all__ = ["register_eval_store"]


def _adapter(args):
    from . import ChromaAdapter, QdrantAdapter

    given = [x for x in (args.chroma, args.qdrant_path, args.qdrant_url) if x]
    if len(given) != 1:
        raise ValueError("name one store: --chroma PATH, --qdrant-path PATH or --qdrant-url URL")
    if args.chroma:
        return ChromaAdapter(args.chroma, args.collection, name=args.name)
    return QdrantAdapter(args.collection, path=args.qdrant_path, url=args.qdrant_url, name=args.name)


def cmd_eval_store(args) -> int:
    """``python -m ragdiag eval-store``: a vector database's answers scored like a ragdiag configuration."""
    from ..cli import common as cli
    from ..core.defaults import TOP
    from ..evaluation.records import Config, Evaluation
    from ..evaluation.evaluate import evaluate
    from ..analyses.compare.comparisons import compare
    from ..core.tables import format_rows
    from ..analyses.summary import format_summary
    from ..analyses.threshold.gate import sweep_table
    from ..core.gate import Gate
    from .base import evaluate_store, query_vectors

    from ..cli.common import _check_out_folder

    _check_out_folder(args.out)
    try:
        adapter = _adapter(args)
        against = Config.parse(args.compare) if args.compare else None
    except (ImportError, ValueError) as exc:
        raise cli.UsageError(str(exc)) from None
    corpus, truth = cli.load_inputs(args)
    encoder, store = cli.cli_encoder(args), cli.open_store(args)
    if against is not None:
        ev = evaluate(corpus, truth, encoder=encoder, strategies=[against.strategy], retrievers=[against.retriever],
                      store=store, cross_encoder=args.cross_encoder, diagnosis_k=args.k)
        if against.retriever in ev.unavailable:
            raise cli.UsageError(f"{against.label} cannot run: {ev.unavailable[against.retriever]}")
    else:
        ev = Evaluation(corpus, truth, truth.queries, {}, {}, diagnosis_k=args.k)
    try:
        res = evaluate_store(ev, adapter, query_vectors(ev.queries, encoder, store), k=TOP)
    except ValueError as exc:
        raise cli.UsageError(str(exc)) from None
    ev = res.evaluation
    print(f"{adapter.name}: {res.mapping.summary()}", file=sys.stderr)
    if res.mapping.unmapped:
        print("warning: unmapped hits hold no corpus location; they are listed, and count only if their text "
              "contains the needle", file=sys.stderr)
    print(format_summary(ev))
    out = ev.results[res.config]
    counts = Counter(d for d in out.diagnosis if d != "ood")
    print(f"\ndiagnoses of {res.config.label}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if against is not None:
        c = compare(ev, res.config, against, k=args.k)
        print("\n" + c.summary())
        print(c.verdict)
    if res.run.distances:
        print(f"\nthreshold sweep of {res.config.label} (keep {args.keep})")
        print(format_rows(sweep_table(ev, res.config, Gate(args.keep),
                                      cuts=[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]).rows()))
    cli.write_results(ev, args.out)
    return 0


def register_eval_store(sub, common) -> None:
    """Add the ``eval-store`` subcommand to the CLI's subparsers (``common`` adds the shared options)."""
    p = sub.add_parser("eval-store", help="evaluate an existing vector database (Chroma, Qdrant) in place")
    common(p)
    p.add_argument("--chroma", metavar="PATH", help="a persistent Chroma folder")
    p.add_argument("--qdrant-path", metavar="PATH", help="a Qdrant local-mode folder")
    p.add_argument("--qdrant-url", metavar="URL", help="a Qdrant server, e.g. http://localhost:6333")
    p.add_argument("--collection", default="ragdiag", help="collection name (default: ragdiag)")
    p.add_argument("--name", help="name of the store in tables (default: chroma-COLLECTION / qdrant-COLLECTION)")
    p.add_argument("--compare", metavar="CONFIG", help="also evaluate a ragdiag configuration (e.g. E/dense) "
                                                        "and run the paired sign test against it")
    p.add_argument("--keep", type=int, default=4)
    p.add_argument("--out", help="write summary.json and per_query.csv to this folder")
    p.set_defaults(func=cmd_eval_store)
