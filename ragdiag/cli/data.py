"""Subcommands ``index`` (the store's indexes) and ``ingest`` (a folder's files)."""

from __future__ import annotations

import sys
from pathlib import Path

from .common import UsageError, cli_encoder, open_store
from .options import add_inputs, add_model, add_store

__all__ = ["register", "cmd_index", "cmd_ingest"]


def register(sub) -> None:
    """Add ``ingest`` and ``index`` to the subparsers ``sub``."""
    p = sub.add_parser("ingest", help="load a folder (Markdown, text, HTML, PDF) and report every file's status")
    p.add_argument("folder", metavar="DIR")
    p.add_argument("--max-bytes", type=int, default=None,
                   help="size limit per file (default $RAGDIAG_MAX_FILE_BYTES or 50 MB)")
    p.add_argument("--max-pages", type=int, default=2000, help="page limit per PDF (default 2000)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per document (default 60)")
    p.add_argument("--strip-furniture", action="store_true",
                   help="remove repeated page headers/footers (PDF) before chunking")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("index", help="list or clear stored indexes")
    add_inputs(p, truth=False, corpus_help="with status: the corpus staleness is judged against (default: the "
                                           "bundled one); with clear: remove only this corpus's indexes")
    add_store(p, no_cache=False)
    add_model(p, cross_encoder=False)
    p.add_argument("action", choices=["status", "clear"])
    p.add_argument("--stale", action="store_true", help="with clear: only indexes stale against the current state")
    p.epilog = "index clear --corpus DIR removes only that corpus's indexes; without --corpus or --stale, everything."
    p.set_defaults(func=cmd_index)


def _corpus_only(args):
    """The corpus of ``--corpus`` (staleness is judged on the corpus and the model; the truth plays no part)."""
    from ..documents.corpus import CorpusError, load_corpus

    try:
        return load_corpus(args.corpus)
    except CorpusError as exc:
        raise UsageError(str(exc)) from None


def cmd_index(args) -> int:
    """``index status|clear``: list the stored indexes (stale ones marked), or remove them."""
    from ..index.store.glue import current_stamps
    from ..index.store.keys import DB_NAME, resolve_root
    from ..index.store.staleness import _chunking_label, format_status_table

    root = resolve_root(args.cache)
    if not (root / DB_NAME).is_file():  # status reads and clear removes: neither creates a store
        if root.exists() and not root.is_dir():
            raise UsageError(f"--cache names {str(root)!r}, which is a file, not a store folder")
        print(f"no store at {str(root)!r}: nothing is indexed there" + ("" if args.action == "status" else
                                                                        "; nothing removed"))
        return 0
    store = open_store(args)
    if store is None:
        raise UsageError(f"the store at {str(root)!r} cannot be opened")
    if args.action == "status":
        current = None
        try:
            current = current_stamps(_corpus_only(args), cli_encoder(args))
        except UsageError as exc:
            print(f"warning: cannot judge staleness against the current corpus/model: {exc}", file=sys.stderr)
        print(format_status_table(store.status(current)))
        return 0
    if args.corpus and not args.stale:
        gone = store.indexes_of(args.corpus)
        if not gone:
            print(f"no stored index of corpus {args.corpus!r}; nothing removed")
            return 0
        print(f"removing {len(gone)} index(es) of corpus {args.corpus!r} (the vectors no other index uses); "
              "other corpora's indexes and cached pair scores are kept:")
        for s in gone:
            print(f"  {Path(s.model).name or s.model} {s.precision} {_chunking_label(s.chunking)} ({s.n_chunks} chunks)")
        print(store.clear(corpus_root=args.corpus))
        return 0
    current = current_stamps(_corpus_only(args), cli_encoder(args)) if args.stale else None
    if not args.stale:
        n = len(store.indexes())
        print(f"removing everything in the store {str(store.root)!r}: {n} index(es), their vectors and cached pair "
              "scores (use --corpus DIR to clear one corpus, --stale for stale indexes only)")
    res = store.clear(stale_only=args.stale, current=current)
    print(res)
    return 0


def cmd_ingest(args) -> int:
    """``ingest DIR``: load a folder and print every file's status; exit 1 when nothing loads."""
    from ..documents.walk import CorpusError
    from ..documents.ingest import format_ingest_table, ingest_folder

    try:
        rows, corpus = ingest_folder(args.folder, max_bytes=args.max_bytes, strip_page_furniture=args.strip_furniture,
                                     max_pages=args.max_pages, time_limit_s=args.time_limit)
    except CorpusError as exc:
        raise UsageError(str(exc)) from None
    print(format_ingest_table(rows))
    if corpus is None:
        print("error: nothing could be loaded from this folder", file=sys.stderr)
        return 1
    return 0

