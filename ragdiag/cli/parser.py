"""The argument parser of every subcommand, and :func:`main`."""

from __future__ import annotations

import argparse
import sys

from ..core.defaults import DEFAULT_CUT, DEFAULT_KEEP, DEFAULT_MAX_BLUFF, PRIMARY_K
from .common import UsageError, add_selection
from .data import cmd_index, cmd_ingest
from .evaluating import cmd_compare, cmd_eval, cmd_pairs, cmd_report
from .external import cmd_eval_run
from .gate import cmd_sweep, cmd_threshold
from .vectors import add_vector_options

__all__ = ["build_parser", "main"]

DESCRIPTION = "``python -m ragdiag``: the same results as the dashboard, headless."


def _strategy_help() -> str:
    from ..index.chunking import DEFAULT_STRATEGIES, STRATEGIES

    return f"comma-separated from {','.join(STRATEGIES)} (default: {','.join(DEFAULT_STRATEGIES)})"


def _retriever_help() -> str:
    from ..retrieval.registry import retriever_names

    return f"comma-separated from {','.join(retriever_names())} (default: {','.join(retriever_names(default_only=True))})"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (plugins' retrievers and strategies included in the help)."""
    parser = argparse.ArgumentParser(prog="python -m ragdiag", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(p, *, model=True):
        p.add_argument("--corpus", help="folder of documents (default: the bundled scikit-learn user guide)")
        p.add_argument("--truth", help="ground-truth JSON/YAML (default: <corpus folder>.truth.json beside it)")
        p.add_argument("--cache", help="store folder (default: $RAGDIAG_CACHE or ./.ragdiag-cache)")
        p.add_argument("--no-cache", action="store_true", help="compute everything, store nothing")
        p.add_argument("--no-snapshot", action="store_true",
                       help="do not seed the store from the bundled corpus's shipped index "
                            "(also: RAGDIAG_NO_SNAPSHOT=1)")
        if model:
            p.add_argument("--model", help="embedding model folder or cached hub id (default: all-MiniLM-L6-v2)")
            p.add_argument("--cross-encoder", help="cross-encoder for rerank-ce: folder or cached hub id "
                                                   "(default: cross-encoder/ms-marco-MiniLM-L-6-v2)")
            p.add_argument("--k", type=int, default=20, help="rank cut-off for hit/ranked-low diagnoses and compare")

    p = sub.add_parser("eval", help="evaluate strategies x retrievers; print the table")
    common(p)
    p.add_argument("--strategies", default=None, help=_strategy_help())
    p.add_argument("--retrievers", default=None,
                   help=_retriever_help())
    p.add_argument("--out", help="write summary.json and per_query.csv to this folder")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="where chunks are embedded: in this process, or on Ray (pip install -r requirements-ray.txt)")
    p.add_argument("--ray-address", default=None, help="with --engine ray: a cluster (e.g. auto, ray://head:10001); "
                                                       "default: start a local instance")
    p.add_argument("--ray-actors", type=int, default=None, help="encoder actors (default: one per CPU, or per GPU)")
    p.add_argument("--ray-gpus-per-actor", type=float, default=0.0, help="GPUs per encoder actor (default 0: CPU)")
    add_vector_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("compare", help="paired exact sign-flip test over questions between two configurations")
    common(p)
    p.add_argument("a", metavar="CONFIG_A", help="e.g. E/hybrid")
    p.add_argument("b", metavar="CONFIG_B", help="e.g. E/dense")
    p.add_argument("--phrasing", default="all", help="all, or one phrasing of the ground truth (e.g. course)")
    p.add_argument("--mrr", action="store_true", help="compare reciprocal ranks (MRR) instead of R@k")
    p.add_argument("--family", choices=["none", "all", "planned"], default="none",
                   help="the interval simultaneous within a family: all pairs of the evaluated configurations "
                        "(exploratory), or the planned family (the declared baseline against each other "
                        "configuration); default: this pair alone")
    p.add_argument("--baseline", default=None, help="with --family planned: the baseline, declared before looking "
                                                    "(also RAGDIAG_BASELINE, or [ragdiag] baseline in ragdiag.toml)")
    p.add_argument("--strategies", default=None, help="with --family: the family's strategies (default: all six)")
    p.add_argument("--retrievers", default=None, help="with --family: the family's retrievers (default: all)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_compare, k=PRIMARY_K)

    p = sub.add_parser("pairs", help="every paired comparison of a family (all pairs, or --baseline against each "
                                     "other), over questions, simultaneous intervals within it")
    common(p)
    add_selection(p, strategies="comma-separated, e.g. A,C,E (default: all six)")
    p.add_argument("--baseline", default=None, help="planned family: this configuration (declared before looking) "
                                                    "against each other one")
    p.add_argument("--phrasing", default="all", help="all, or one phrasing of the ground truth")
    p.set_defaults(func=cmd_pairs, k=PRIMARY_K)

    p = sub.add_parser("sweep", help="the abstention threshold table for one configuration")
    common(p)
    p.add_argument("config", metavar="CONFIG", help="e.g. E/dense")
    p.add_argument("--keep", type=int, default=DEFAULT_KEEP, help=f"keep at most N chunks under the cut (default {DEFAULT_KEEP})")
    p.add_argument("--start", type=float, default=0.3)
    p.add_argument("--stop", type=float, default=0.9)
    p.add_argument("--step", type=float, default=0.025)
    p.add_argument("--cut", type=float, default=None, help="also list the bluffing ood queries at this cut")
    p.add_argument("--json", action="store_true",
                   help="print JSON rows: per cut, {count, rate, low, high} of every outcome")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("threshold", help="choose the cut for a goal (max bluff rate or min answered), "
                                         "in sample, cross-validated and conformal")
    common(p)
    p.add_argument("config", metavar="CONFIG", help="e.g. E/hybrid")
    p.add_argument("--max-bluff", type=float, default=None, help="goal: bluff rate at most this (e.g. 0.05)")
    p.add_argument("--min-answered", type=float, default=None, help="goal: answered rate at least this (e.g. 0.5)")
    p.add_argument("--keep", type=int, default=DEFAULT_KEEP, help=f"keep at most N chunks (default {DEFAULT_KEEP})")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds, grouped by question (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--export", metavar="FILE", default=None,
                   help="write the chosen cut as YAML for your stack: cosine distance (Chroma, pgvector <=>) and "
                        "similarity = 1 - distance (Qdrant score_threshold, LlamaIndex similarity_cutoff, LangChain "
                        "score_threshold), with the keep, the rates and the model it belongs to; only an earlier "
                        "export is ever overwritten")
    p.set_defaults(func=cmd_threshold)

    p = sub.add_parser("report", help="one self-contained HTML report (and its Markdown) of a run")
    common(p)
    p.add_argument("--config", default=None,
                   help="the configuration the report is about, e.g. E/hybrid (default: the recommendation)")
    p.add_argument("--cut", type=float, default=None,
                   help="abstention cut (cosine distance; default: the cut proposed for the goal, conformal)")
    p.add_argument("--max-bluff", type=float, default=DEFAULT_MAX_BLUFF,
                   help=f"the goal: a bluff rate of at most this (default {DEFAULT_MAX_BLUFF})")
    p.add_argument("--keep", type=int, default=4, help="the gate keeps at most N chunks under the cut (default 4)")
    p.add_argument("--baseline", default=None,
                   help="what you run now, declared before looking: the cards compare with it instead of the "
                        "runner-up (default: $RAGDIAG_BASELINE or ragdiag.toml, else none)")
    p.add_argument("--strategies", default=None, help=_strategy_help())
    p.add_argument("--retrievers", default=None,
                   help=_retriever_help())
    p.add_argument("--out", default="report.html", help="HTML file to write; the Markdown goes beside it (.md)")
    p.add_argument("--no-cost", action="store_true", help="skip measuring build time and per-query latency")
    p.add_argument("--md", default=None, help="Markdown file to write (default: --out with .md; an existing file "
                                              "there that is not a ragdiag report is never overwritten)")
    p.set_defaults(func=cmd_report, k=PRIMARY_K)  # the paired comparisons carry verdicts at the primary k

    p = sub.add_parser("ingest", help="load a folder (Markdown, text, HTML, PDF) and report every file's status")
    p.add_argument("folder", metavar="DIR")
    p.add_argument("--max-bytes", type=int, default=None,
                   help="size limit per file (default $RAGDIAG_MAX_FILE_BYTES or 50 MB)")
    p.add_argument("--max-pages", type=int, default=2000, help="page limit per PDF (default 2000)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds per document (default 60)")
    p.add_argument("--strip-furniture", action="store_true",
                   help="remove repeated page headers/footers (PDF) before chunking")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("eval-run", help="evaluate another system's results (JSON Lines) against the ground truth")
    common(p)
    p.add_argument("run", metavar="RUN.jsonl", help="the run file; - or /dev/stdin reads standard input")
    p.add_argument("--name", help="name of the run in tables (default: file name)")
    p.add_argument("--distances", action="store_true",
                   help="hit scores are cosine distances (lower = closer): enables the threshold sweep")
    p.add_argument("--compare", metavar="CONFIG", help="also evaluate a ragdiag configuration (e.g. E/hybrid) "
                                                        "and run the paired sign test against it")
    p.add_argument("--keep", type=int, default=4)
    p.add_argument("--out", help="write summary.json and per_query.csv to this folder")
    p.set_defaults(func=cmd_eval_run)

    from ..adapters.cli import register_eval_store

    register_eval_store(sub, common)

    from .regress import register as register_gate

    register_gate(sub, common)  # the regression gate for CI

    p = sub.add_parser("index", help="list or clear stored indexes")
    common(p)
    p.add_argument("action", choices=["status", "clear"])
    p.add_argument("--stale", action="store_true", help="with clear: only indexes stale against the current state")
    p.epilog = "index clear --corpus DIR removes only that corpus's indexes; without --corpus or --stale, everything."
    p.set_defaults(func=cmd_index)

    from ..authoring.cli import register as register_truth

    register_truth(sub)

    from .diag import register

    register(sub, common)  # funnel, hubs, cost

    from .verdicts import register as register_verdicts

    register_verdicts(sub, common)  # best, recommend, effects

    from .variants import register as register_variants

    register_variants(sub, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    0: done; 1: the command ran and found a failure (e.g. ``ingest`` loaded nothing, ``gate`` failed); 2: bad
    input (the message says what to change); 3: ``gate`` inconclusive; 130: interrupted.
    """
    from ..index.encoder.resolve import offline

    offline()
    from ..retrieval.registry import load_plugins  # plugins register retrievers and strategies before help is built

    try:
        load_plugins()
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "k", 1) < 1:
        parser.error("--k must be >= 1")
    from ..index.encoder.resolve import ModelUnavailable

    from .ranges import check_ranges

    try:
        check_ranges(args)
        return args.func(args)
    except (UsageError, ModelUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
