"""``slices CONFIG --by tag|doc|language|phrasing``: the primary measure per slice, each slice against the rest."""

from __future__ import annotations

import sys

from .common import UsageError, print_result
from ..core.words import interval

__all__ = ["register", "cmd_slices", "format_slices"]


def format_slices(table) -> str:
    """The slice table as text: the headline sentence, then one row per slice, the method last."""
    from ..analyses.slices import SIMULTANEOUS_WORDS
    from ..core.tables import format_rows

    rows = [{"slice": r.label, "questions": r.questions, "queries": r.queries, table.measure: r.rate_words(),
             "against the rest": r.difference_words() if not r.verdict.startswith("too few") else "-",
             "verdict": r.verdict} for r in table.rows]
    overall = table.overall
    share = table.rows[0].share if table.rows else True
    total = (interval(overall.estimate, overall.low, overall.high) if share
             else f"{overall.estimate:.2f} ({overall.low:.2f}–{overall.high:.2f})")
    return (f"slices of {table.config} by {table.by}, {table.measure}; all: {total}\n{table.headline()}\n\n"
            f"{format_rows(rows)}\n({SIMULTANEOUS_WORDS})")


def _collection_table(args):
    from ..analyses.slices import slice_labels, slice_table
    from ..evaluation.collection import evaluate_collection
    from ..evaluation.records import Config
    from .collections import MEASURE_K, open_for_eval
    from .common import cli_encoder, open_store

    collection = open_for_eval(args, headline_to=sys.stderr if args.json else None)  # --json: stdout is JSON
    cfg = Config.parse(args.config)
    if not collection.document_level:
        return None, collection
    if args.by == "doc":
        raise UsageError("--by doc needs answers located in documents (span gold); this collection judges whole "
                         "documents: slice it by tag or language")
    from ..documents.truth import Query

    queries = [Query(t.id, t.text, "query", question_id=t.id, tags=t.tags) for t in collection.topics]
    labels = slice_labels(queries, args.by)
    if args.by == "tag" and not any(labels):  # before any model is loaded
        raise UsageError("this collection has no tags: map a query field to tags with --tag-field NAME")
    runs = evaluate_collection(collection, encoder=cli_encoder(args), strategies=cfg.strategy,
                               retrievers=cfg.retriever, store=open_store(args))
    if cfg not in runs.ranked:
        raise UsageError(f"{cfg.label} cannot run: {runs.unavailable.get(cfg.retriever, 'unavailable')}")
    values = runs.values(cfg, "ndcg", k=MEASURE_K)
    return slice_table(values, runs.groups, labels, by=args.by, config=cfg.label, measure=f"nDCG@{MEASURE_K}",
                       share=False), collection


def cmd_slices(args) -> int:
    """``slices``: one configuration's measure per slice, with intervals simultaneous over the slices."""
    from ..analyses.slices import evaluation_slices
    from ..evaluation.records import Config
    from .common import _known_config, evaluate_args

    try:
        cfg = Config.parse(args.config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _known_config(cfg, "CONFIG")
    loaded = None
    if getattr(args, "collection", None):
        table, collection = _collection_table(args)
        if table is not None:
            return print_result(table, args.json, lambda: format_slices(table))
        loaded = (collection.corpus, collection.truth)
    ev = evaluate_args(args, [cfg.strategy], [cfg.retriever], loaded)
    if cfg.retriever in ev.unavailable:
        raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    try:
        table = evaluation_slices(ev, cfg, by=args.by, k=args.gate.k)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return print_result(table, args.json, lambda: format_slices(table))


def register(sub) -> None:
    """Add ``slices`` to the subparsers ``sub``."""
    from ..analyses.slices import BY
    from .collections import add_collection_options
    from .options import evaluating_parser

    p = evaluating_parser(sub, "slices", "the primary measure per slice (tag, doc, language, phrasing) and each "
                                         "slice against the rest, simultaneous over the slices")
    p.add_argument("config", metavar="CONFIG", help="e.g. E/hybrid")
    p.add_argument("--by", choices=BY, required=True, help="what a slice is: a tag of the ground truth, the "
                                                           "document holding the answer, the detected language, "
                                                           "or the phrasing")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_collection_options(p)
    p.set_defaults(func=cmd_slices)
