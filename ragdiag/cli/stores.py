"""Subcommand ``eval-store``: evaluate an existing vector database's answers to the ground truth, in place.

The same path as ``eval-run`` (:func:`ragdiag.cli.external.external_evaluation`,
:func:`ragdiag.cli.external.print_external`); only where the hits come from differs.
"""

from __future__ import annotations

import sys

from .common import UsageError, cli_encoder, open_store
from .external import add_external_options, external_against, external_evaluation, print_external

__all__ = ["register", "cmd_eval_store"]


def _adapter(args):
    from ..adapters import ChromaAdapter, QdrantAdapter

    given = [x for x in (args.chroma, args.qdrant_path, args.qdrant_url) if x]
    if len(given) != 1:
        raise ValueError("name one store: --chroma PATH, --qdrant-path PATH or --qdrant-url URL")
    if args.chroma:
        return ChromaAdapter(args.chroma, args.collection, name=args.name)
    return QdrantAdapter(args.collection, path=args.qdrant_path, url=args.qdrant_url, name=args.name)


def cmd_eval_store(args) -> int:
    """``eval-store``: a vector database's answers scored like a ragdiag configuration (``ext/NAME``)."""
    from ..adapters import evaluate_store, query_vectors
    from ..core.defaults import TOP

    against = external_against(args)
    try:
        adapter = _adapter(args)
    except (ImportError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    encoder = cli_encoder(args)  # one encoder: the queries' vectors and --compare's evaluation share it
    ev = external_evaluation(args, against, encoder=encoder)
    try:
        res = evaluate_store(ev, adapter, query_vectors(ev.queries, encoder, open_store(args)), k=TOP)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"{adapter.name}: {res.mapping.summary()}", file=sys.stderr)
    if res.mapping.unmapped:
        print("warning: unmapped hits hold no corpus location; they are listed, and count only if their text "
              "contains the needle", file=sys.stderr)
    return print_external(args, res.evaluation, res.run, against)


def register(sub) -> None:
    """Add ``eval-store`` to the subparsers ``sub``."""
    p = sub.add_parser("eval-store", help="evaluate an existing vector database (Chroma, Qdrant) in place")
    add_external_options(p)
    p.add_argument("--chroma", metavar="PATH", help="a persistent Chroma folder")
    p.add_argument("--qdrant-path", metavar="PATH", help="a Qdrant local-mode folder")
    p.add_argument("--qdrant-url", metavar="URL", help="a Qdrant server, e.g. http://localhost:6333")
    p.add_argument("--collection", default="ragdiag", help="collection name (default: ragdiag)")
    p.add_argument("--name", help="name of the store in tables (default: chroma-COLLECTION / qdrant-COLLECTION)")
    p.set_defaults(func=cmd_eval_store)
