"""Subcommands ``eval-run`` (another system's results) and the path it shares with ``eval-store``.

Both score another system like a configuration (``ext/NAME``) by one code
path: :func:`external_against` and :func:`external_evaluation` (``--compare``'s configuration evaluated by
:func:`~ragdiag.cli.common.evaluate_args`, else the inputs alone) and
:func:`print_external` (the summary, the rungs the ranks can tell
(:func:`ragdiag.evaluation.external.rank_rungs`), the paired
comparison at the gate's k, the threshold sweep at the gate, the files).
"""

from __future__ import annotations

import sys

from .common import UsageError, _check_out_folder, _known_config, evaluate_args, load_inputs, write_results
from .options import add_evaluation, add_gate

__all__ = ["register", "cmd_eval_run", "STDIN", "add_external_options", "external_against", "external_evaluation",
           "print_external", "SWEEP_CUTS"]

#: Run-file names that mean standard input.
STDIN = ("-", "/dev/stdin")
#: The cuts of the threshold sweep printed for a run with distances.
SWEEP_CUTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def add_external_options(p) -> None:
    """The options ``eval-run`` and ``eval-store`` share: inputs, store, model, the gate, ``--compare``, ``--out``."""
    add_evaluation(p)
    add_gate(p, keep_help="the threshold sweep's gate keeps at most N chunks under the cut (default: 4)")
    p.add_argument("--compare", metavar="CONFIG", help="also evaluate a ragdiag configuration (e.g. E/hybrid) "
                                                        "and run the paired sign test against it at R@k")
    p.add_argument("--out", help="write summary.json and per_query.csv to this folder")


def register(sub) -> None:
    """Add ``eval-run`` to the subparsers ``sub``."""
    p = sub.add_parser("eval-run", help="evaluate another system's results (JSON Lines) against the ground truth")
    add_external_options(p)
    p.add_argument("run", metavar="RUN.jsonl", help="the run file; - or /dev/stdin reads standard input")
    p.add_argument("--name", help="name of the run in tables (default: file name)")
    p.add_argument("--distances", action="store_true",
                   help="hit scores are cosine distances (lower = closer): enables the threshold sweep")
    p.set_defaults(func=cmd_eval_run)


def external_against(args):
    """``--compare``'s configuration (or ``None``), with ``--out``, checked before any work."""
    from ..evaluation.records import parse_key

    against = None
    if args.compare:
        try:
            against = _known_config(parse_key(args.compare), "--compare")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    _check_out_folder(args.out)
    return against


def external_evaluation(args, against, *, encoder=None):
    """The evaluation an external run is attached to.

    With ``--compare CONFIG`` (``against``), that configuration evaluated by
    :func:`evaluate_args` (snapshot, progress and store record as every
    command); without, the corpus and ground truth alone.
    """
    from ..evaluation.records import Evaluation

    if against is None:
        corpus, truth = load_inputs(args)
        return Evaluation(corpus, truth, truth.queries, {}, {})
    ev = evaluate_args(args, [against.strategy], [against.retriever], encoder=encoder)
    if against.retriever in ev.unavailable:
        raise UsageError(f"{against.label} cannot run: {ev.unavailable[against.retriever]}")
    return ev


def print_external(args, ev, run, against) -> int:
    """What ``eval-run`` and ``eval-store`` print and write for the run ``run`` attached to ``ev``."""
    from ..analyses.compare.comparisons import compare
    from ..analyses.summary import format_summary
    from ..analyses.threshold.gate import sweep_table
    from ..core.tables import format_rows
    from ..evaluation.external import RANK_RUNGS, rank_rungs

    gate, cfg = args.gate, run.key
    print(format_summary(ev))
    rungs = rank_rungs(ev, run, gate.k)
    print(f"\n{cfg.label} by the ranks at k = {gate.k} (answerable queries): "
          + ", ".join(f"{rungs.count(name)} {name}" for name in RANK_RUNGS))
    if against is not None:
        c = compare(ev, cfg, against, k=gate.k)
        print("\n" + c.summary())
        print(c.verdict)
    if run.distances:
        print(f"\nthreshold sweep of {cfg.label} (keep {gate.keep})")
        print(format_rows(sweep_table(ev, cfg, gate, cuts=list(SWEEP_CUTS)).rows()))
    write_results(ev, args.out)
    return 0


def _stdin_bytes() -> bytes:
    from ..evaluation.external import RunError
    from ..core.limits import ENV, LimitError, Limits, read_stream_limited

    try:
        return read_stream_limited(sys.stdin.buffer, Limits.from_env().max_run_bytes, what="standard input",
                                   env_var=ENV["max_run_bytes"])
    except (LimitError, ValueError, OSError) as exc:
        raise RunError("stdin", [str(exc)]) from None


def cmd_eval_run(args) -> int:
    """``eval-run RUN.jsonl``: another system's results scored like a configuration (``ext/NAME``)."""
    from ..evaluation.external import RunError, attach_run, decode_run, load_run, parse_run

    against = external_against(args)
    ev = external_evaluation(args, against)
    try:
        if args.run in STDIN:  # a pipeline: standard input, bounded like a file
            run = parse_run(decode_run(_stdin_bytes(), "stdin"), ev.truth, name=args.name or "stdin", source="stdin",
                            distances=args.distances, corpus=ev.corpus)
        else:
            run = load_run(args.run, ev.truth, name=args.name, distances=args.distances, corpus=ev.corpus)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    ev = attach_run(ev, run)
    for note in run.notes:
        print(f"note: {note}", file=sys.stderr)
    if run.missing:
        print(f"warning: {len(run.missing)} ground-truth queries are missing from the run and count as misses: "
              f"{', '.join(run.missing[:10])}{' ...' if len(run.missing) > 10 else ''}", file=sys.stderr)
    return print_external(args, ev, run, against)
