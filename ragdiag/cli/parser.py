"""The argument parser: one registration per command module, and :func:`main`.

Each command module exposes ``register(subparsers)``, which adds its
subcommands with the option groups they read (:mod:`ragdiag.cli.options`);
a new command is a new module and one line in :func:`build_parser`.
"""

from __future__ import annotations

import sys

from .. import __version__
from . import (chunking, ci, collections, dashboard, data, diag, evaluating, external, gate, history, monitor,
               regress, ruler, slices, stores, truth, variants, verdicts)
from .common import UsageError
from .options import GATE_OPTIONS, Parser, gate_of

__all__ = ["build_parser", "main"]

DESCRIPTION = "``python -m ragdiag``: the same results as the dashboard, headless."


def build_parser() -> Parser:
    """The argument parser of every subcommand (plugins' retrievers and strategies included in the help)."""
    parser = Parser(prog="python -m ragdiag", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"ragdiag {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    evaluating.register(sub)  # eval, compare, pairs, report
    gate.register(sub)  # sweep, threshold: the abstention gate
    data.register(sub)  # ingest, index
    external.register(sub)  # eval-run
    stores.register(sub)  # eval-store
    regress.register(sub)  # gate: the regression gate for CI
    truth.register(sub)  # truth check|stats|suggest
    diag.register(sub)  # funnel, hubs, cost
    verdicts.register(sub)  # best, recommend, effects
    variants.register(sub)  # variants
    dashboard.register(sub)  # dashboard: serve the app
    ci.register(sub)  # ci: the GitHub Action's entry point
    history.register(sub)  # history add|list|show|export: the run history
    collections.register(sub)  # convert: BEIR, TREC, SQuAD, ir_datasets as ragdiag's own
    slices.register(sub)  # slices: a measure per tag, document, language or phrasing
    monitor.register(sub)  # monitor: the cut in production, from a query log
    ruler.register(sub)  # ruler: can this ground truth tell the configurations apart?
    chunking.register(sub)  # chunking: the chunking table, the repair ledger
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    0: done; 1: the command ran and found a failure (e.g. ``ingest`` loaded nothing, ``gate`` failed); 2: bad
    input, one line on stderr (the message says what to change); 3: ``gate`` inconclusive; 130: interrupted.
    """
    from ..index.encoder.resolve import offline

    offline()
    from ..retrieval.registry import load_plugins  # plugins register retrievers and strategies before help is built

    try:
        load_plugins()
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    from ..core.files import OutputError
    from ..index.encoder.resolve import ModelUnavailable

    from .ranges import check_ranges

    try:
        if any(name in vars(args) for name in GATE_OPTIONS):
            args.gate = gate_of(args)  # --keep, --cut and --k checked once, by the Gate
        check_ranges(args)
        return args.func(args)
    except (UsageError, ModelUnavailable, OutputError) as exc:  # OutputError: a write refused or failed, one line
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
