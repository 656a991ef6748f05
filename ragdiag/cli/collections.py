"""``eval --collection`` and ``convert``: collections in the formats people have (BEIR, TREC, ir_datasets, SQuAD).

``eval --collection beir:DIR`` evaluates a collection as ``eval`` does ragdiag's
own corpus. Document-level judgments (BEIR, TREC, ir_datasets) print nDCG@10
(primary), MAP@10, recall@10, hit rate@10 and all found@10 with intervals over
questions, and say in one sentence that the chunk analysis is off; span gold
(SQuAD) prints everything ``eval`` prints, then the same measures.
``convert SPEC --out DIR`` writes a collection as ragdiag's own documents folder
and ground truth.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .common import UsageError

__all__ = ["add_collection_options", "register", "open_for_eval", "cmd_eval_documents", "span_measures", "cmd_convert",
           "open_args", "MEASURE_K"]

#: The cut-off of the field's headline measures (nDCG@10, MAP@10, recall@10).
MEASURE_K = 10


def add_collection_options(p) -> None:
    """``--collection``, ``--split``, ``--ood`` and ``--tag-field`` on the subparser ``p``."""
    p.add_argument("--collection", metavar="FORMAT:WHERE", default=None,
                   help="evaluate a collection instead of --corpus/--truth: beir:DIR, trec:DIR, squad:FILE, "
                        "irds:NAME (already in the ir_datasets cache) or ragdiag:DIR (what convert wrote)")
    p.add_argument("--split", default="test", help="with --collection beir:DIR: the qrels split (default test)")
    p.add_argument("--ood", metavar="FILE", default=None,
                   help="with --collection: a JSON list of off-topic queries {id, kind: near|far, query} to add")
    p.add_argument("--tag-field", action="append", default=None, metavar="NAME",
                   help="with --collection beir:DIR: a query field (or metadata field) whose values become tags "
                        "(default: tags; repeat for several)")


def open_args(args):
    """The collection ``--collection`` names (with ``--split``, ``--ood``, ``--tag-field``); bad input: UsageError."""
    from ..documents.collections import CollectionError, open_collection

    try:
        return open_collection(args.collection, split=args.split, ood=args.ood,
                               tag_fields=tuple(args.tag_field or ("tags",)))
    except CollectionError as exc:
        raise UsageError(str(exc)) from None


def _headline(c) -> str:
    grades = sorted({g for t in c.topics for g in t.judgments.values()}) if c.document_level else [1]
    judged = (f"{c.n_questions} questions with graded judgments (grades {', '.join(map(str, grades))})"
              if c.document_level else f"{c.n_questions} questions with an answer span")
    return (f"collection {c.name}: {len(c.corpus.documents)} documents, {c.corpus.n_chars:,} characters; "
            f"{judged}, {len(c.ood)} off-topic")


def print_measures(runs) -> None:
    """The measures table at :data:`MEASURE_K`, saying which measure carries verdicts and how intervals are made."""
    from ..analyses.measures import INTERVAL_WORDS, MEASURE_NAMES, format_measure_rows, measure_rows, primary_measure
    from ..core.defaults import PRIMARY_K

    if runs.collection.document_level:
        primary = primary_measure(True)
        print(f"\nranked documents (each at its best passage), k = {MEASURE_K}; verdicts use "
              f"{MEASURE_NAMES[primary].format(k=MEASURE_K)}, the others are descriptive")
    else:
        primary = ""
        print(f"\nranked passages, k = {MEASURE_K}, descriptive (a passage is relevant when it holds the answer "
              f"whole); verdicts use found in the top {PRIMARY_K} (R@{PRIMARY_K} above)")
    print(format_measure_rows(measure_rows(runs, k=MEASURE_K), primary))
    print(f"({INTERVAL_WORDS}; nDCG gains = the grade, TREC's default)")
    if primary:
        from ..analyses.measures import compare_with_best

        comparisons = compare_with_best(runs, k=MEASURE_K)
        if comparisons:
            from ..analyses.measures import descriptive_differences

            print(f"\ncompared with the best ({comparisons[0].best}), paired over questions:")
            for c in comparisons:
                print(f"  {c.sentence()}")
                print(f"    descriptive, this pair alone: {descriptive_differences(runs, c.best, c.other, k=MEASURE_K)}")


def write_collection_outputs(runs, out: str) -> list[str]:
    """``measures.json``, ``per_question.csv`` and TREC files (``trec/<config>.run``, ``trec/<config>.qrels``)."""
    import csv
    import io

    from ..analyses.measures import MEASURE_NAMES, measure_rows, primary_measure
    from ..core.defaults import PRIMARY_K
    from ..core.files import OutputError, check_output, write_all
    from ..documents.collections.trec import trec_qrels_text, trec_run_text

    folder = Path(out)
    texts: dict[Path, str] = {}
    doc = {"collection": runs.collection.name, "level": runs.collection.level, "items": runs.items, "k": MEASURE_K,
           "primary": primary_measure(True) if runs.collection.document_level else None,
           "verdicts": (MEASURE_NAMES["ndcg"].format(k=MEASURE_K) if runs.collection.document_level
                        else f"R@{PRIMARY_K} (eval's recall table; these measures are descriptive)"),
           "gain": runs.collection.gain,
           "configs": {r.config: {c.measure: {"estimate": c.interval.estimate, "low": c.interval.low,
                                              "high": c.interval.high} for c in r.cells}
                       for r in measure_rows(runs, k=MEASURE_K)}}
    texts[folder / "measures.json"] = json.dumps(doc, indent=2) + "\n"
    with io.StringIO(newline="") as f:
        w = csv.writer(f)
        w.writerow(["strategy", "retriever", "query_id", "question_id", "tags", *MEASURE_NAMES])
        values = {cfg: {m: runs.values(cfg, m, k=MEASURE_K) for m in MEASURE_NAMES} for cfg in runs.configs}
        for cfg in runs.configs:
            for i, (q, g) in enumerate(zip(runs.questions, runs.groups)):
                tags = "|".join(runs.tags[i]) if runs.tags else ""
                w.writerow([cfg.strategy, cfg.retriever, q, g, tags,
                            *(f"{float(values[cfg][m][i]):.6g}" for m in MEASURE_NAMES)])
        texts[folder / "per_question.csv"] = f.getvalue()
    for cfg in runs.configs:
        run, qrels = runs.trec(cfg)
        try:
            texts[folder / "trec" / f"{cfg.strategy}_{cfg.retriever}.run"] = trec_run_text(
                {q: list(d) for q, d in run.items()})
            texts[folder / "trec" / f"{cfg.strategy}_{cfg.retriever}.qrels"] = trec_qrels_text(qrels)
        except ValueError as exc:
            raise UsageError(f"the TREC files cannot be written: {exc}") from None
    source = Path(runs.collection.corpus.root)
    if source.is_dir() and folder.is_dir() and os.path.samefile(source, folder):
        raise UsageError(f"--out {out!r} is the collection's own folder; name a new folder")
    try:
        for path in texts:  # never over an input (the collection's file), never a folder or a device
            if path.parent.is_dir():
                check_output(path, what="--out", inputs=[source], force=True, example="a new folder")
        (folder / "trec").mkdir(parents=True, exist_ok=True)
        return write_all(texts)  # all or none: a full disk leaves the previous files, never a partial set
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"--out {out!r} cannot be written ({exc.strerror or exc})") from None


def open_for_eval(args, *, headline_to=None):
    """``eval --collection``'s collection, its headline printed (to ``headline_to``, default stdout), notes on stderr."""
    if args.corpus or args.truth:
        raise UsageError("--collection replaces --corpus and --truth: give one or the other")
    collection = open_args(args)
    print(_headline(collection), file=headline_to or sys.stdout)
    for note in collection.notes:
        print(f"note: {note}", file=sys.stderr)
    return collection


def span_measures(ev, collection, out: str | None) -> None:
    """After ``eval``'s tables for a span collection: the measures, and their files in ``out``."""
    from ..evaluation.collection import span_runs

    runs = span_runs(ev, collection)
    print_measures(runs)
    if out:  # beside eval's own files (its trec/ holds the chunk runs at depth 20): in a folder of their own
        for path in write_collection_outputs(runs, str(Path(out) / "measures")):
            print(f"wrote {path}")


def cmd_eval_documents(args, collection, strategies, retrievers) -> int:
    """``eval --collection`` with document-level judgments: the measures with their intervals, the files."""
    import time

    from ..documents.collections import DOCUMENT_LEVEL_NOTE, NO_OOD_NOTE
    from ..evaluation.collection import evaluate_collection
    from .common import cli_encoder, open_store, progress_bar

    print(DOCUMENT_LEVEL_NOTE)
    if not collection.ood:
        print(NO_OOD_NOTE)
    encoder = cli_encoder(args)
    t = time.perf_counter()
    runs = evaluate_collection(collection, encoder=encoder, strategies=strategies, retrievers=retrievers,
                               store=open_store(args), cross_encoder=args.cross_encoder, progress=progress_bar())
    print(f"evaluation took {time.perf_counter() - t:.1f} s", file=sys.stderr)
    print(f"model {runs.encoder_stamp.get('model')} ({runs.encoder_stamp.get('precision')})")
    print_measures(runs)
    for name, reason in runs.unavailable.items():
        print(f"\nunavailable: {name}: {reason}")
    if args.out:
        for path in write_collection_outputs(runs, args.out):
            print(f"wrote {path}")
    return 0


def cmd_convert(args) -> int:
    """``convert SPEC --out DIR``: the documents folder and its ground truth beside it."""
    from ..documents.collections import CollectionError, write_collection

    collection = open_args(args)
    try:
        folder, truth = write_collection(collection, args.out)
    except CollectionError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"--out {args.out!r} cannot be written ({exc.strerror or exc})") from None
    for note in collection.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {folder} ({len(collection.corpus.documents)} documents)")
    level = "document-level judgments" if collection.document_level else "needles at their offsets"
    print(f"wrote {truth} ({collection.n_questions} questions, {level}; {len(collection.ood)} off-topic)")
    if collection.document_level:
        print(f"evaluate it with: python -m ragdiag eval --collection ragdiag:{folder}")
    else:
        print(f"evaluate it with: python -m ragdiag eval --corpus {folder} (the Ground truth page edits it too)")
    return 0


def register(sub) -> None:
    """Add ``convert`` to the subcommands ``sub``."""
    p = sub.add_parser("convert", help="write a collection (BEIR, TREC, SQuAD, ir_datasets) as ragdiag's own "
                                       "documents folder and ground truth")
    p.add_argument("collection", metavar="FORMAT:WHERE",
                   help="beir:DIR, trec:DIR, squad:FILE, irds:NAME or ragdiag:DIR")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="a new folder for the documents; the ground truth goes beside it (DIR.truth.json)")
    p.add_argument("--split", default="test", help="with beir:DIR: the qrels split (default test)")
    p.add_argument("--ood", metavar="FILE", default=None, help="a JSON list of off-topic queries to add")
    p.add_argument("--tag-field", action="append", default=None, metavar="NAME",
                   help="with beir:DIR: a query field (or metadata field) whose values become tags (default: tags)")
    p.set_defaults(func=cmd_convert)
