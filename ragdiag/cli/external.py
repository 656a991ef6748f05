"""Subcommand ``eval-run``: another system's results against the ground truth."""

from __future__ import annotations

import sys

from .common import UsageError, _check_out_folder, evaluate_args, _keep, _known_config, load_inputs, write_results

__all__ = ["cmd_eval_run", "STDIN"]

#: Run-file names that mean standard input.
STDIN = ("-", "/dev/stdin")


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
    from collections import Counter

    from ..evaluation.records import Evaluation, parse_key
    from ..evaluation.external import RunError, attach_run, decode_run, load_run, parse_run
    from ..analyses.compare.comparisons import compare
    from ..core.tables import format_rows
    from ..analyses.summary import format_summary
    from ..analyses.threshold.gate import sweep_table
    from ..core.gate import Gate

    against = None
    if args.compare:
        try:
            against = _known_config(parse_key(args.compare), "--compare")
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    _keep(args.keep)
    _check_out_folder(args.out)
    if against is not None:
        ev = evaluate_args(args, [against.strategy], [against.retriever])
        if against.retriever in ev.unavailable:
            raise UsageError(f"{against.label} cannot run: {ev.unavailable[against.retriever]}")
    else:
        corpus, truth = load_inputs(args)
        ev = Evaluation(corpus, truth, truth.queries, {}, {}, diagnosis_k=args.k)
    try:
        if args.run in STDIN:  # a pipeline: standard input, bounded like a file
            run = parse_run(decode_run(_stdin_bytes(), "stdin"), ev.truth, name=args.name or "stdin", source="stdin",
                            distances=args.distances, corpus=ev.corpus)
        else:
            run = load_run(args.run, ev.truth, name=args.name, distances=args.distances, corpus=ev.corpus)
    except RunError as exc:
        raise UsageError(str(exc)) from None
    ev = attach_run(ev, run)
    cfg = run.key
    for note in run.notes:
        print(f"note: {note}", file=sys.stderr)
    if run.missing:
        print(f"warning: {len(run.missing)} ground-truth queries are missing from the run and count as misses: "
              f"{', '.join(run.missing[:10])}{' ...' if len(run.missing) > 10 else ''}", file=sys.stderr)
    print(format_summary(ev))
    res = ev.results[cfg]
    counts = Counter(d for d in res.diagnosis if d != "ood")
    print("\ndiagnoses of " + cfg.label + ": " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if against is not None:
        c = compare(ev, cfg, against, k=args.k)
        print("\n" + c.summary())
        print(c.verdict)
    if run.distances:
        keep = min(args.keep, ev.results[cfg].top_distance.shape[1])
        print(f"\nthreshold sweep of {cfg.label} (keep {keep})")
        print(format_rows(sweep_table(ev, cfg, Gate(keep),
                                      cuts=[round(x, 3) for x in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]).rows()))
    write_results(ev, args.out)
    return 0

