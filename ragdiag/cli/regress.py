"""Subcommand ``gate``: a candidate run against a kept baseline, for CI (exit 0 pass, 1 fail, 3 inconclusive, 2 cannot compare)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.defaults import ALPHA
from .common import UsageError

__all__ = ["register", "cmd_gate"]

EPILOG = """\
exit codes: 0 pass; 1 fail (a newly destroyed needle, or a rate shown worse than the baseline);
3 inconclusive (neither shown worse nor shown within the margin; --strict makes it 1);
2 could not compare (bad input, a missing file, or runs on different ground truths).
A changed corpus, model or chunking is what is being tested: it is reported, not refused."""


def register(sub, common) -> None:
    """Add ``gate`` to the subparsers ``sub`` (``common`` adds the corpus/truth/model options)."""
    # The gate's default margin (present.regression.stats.DEFAULT_MARGIN is this constant), read from core: importing
    # the statistics to build the parser costs every command scipy.stats.
    from ..core.defaults import PRACTICAL_MARGIN as DEFAULT_MARGIN

    p = sub.add_parser(
        "gate", help="regression gate for CI: a candidate run against a baseline run, over the same questions",
        description="Compare a candidate with a baseline `eval --out` folder for one configuration: destroyed "
                    "needles, recall at the primary k, and the abstention gate's answered and bluff rates at "
                    "the declared cut, question by question (exact one-sided sign-flip tests).",
        epilog=EPILOG, formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    common(p)
    p.add_argument("baseline", metavar="BASELINE", help="the accepted run: an `eval --out` folder")
    p.add_argument("candidate", metavar="CANDIDATE", nargs="?", default=None,
                   help="the run to gate: an `eval --out` folder (default: evaluate --corpus/--truth now)")
    p.add_argument("--config", required=True, help="the gated configuration, e.g. E/hybrid")
    p.add_argument("--candidate-config", default=None,
                   help="the candidate's configuration when it differs (e.g. F/hybrid; default: --config)")
    p.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                   help=f"non-inferiority margin in rate units: pass when shown no worse than baseline - M "
                        f"(default {DEFAULT_MARGIN:g} = {100 * DEFAULT_MARGIN:g} points)")
    p.add_argument("--alpha", type=float, default=ALPHA, help=f"one-sided level of each test (default {ALPHA:g})")
    p.add_argument("--cut", type=float, default=None,
                   help="the gate's cut (cosine distance; default: the one stamped in the baseline)")
    p.add_argument("--strict", action="store_true", help="an inconclusive result fails (exit 1 instead of 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the Markdown")
    p.add_argument("--junit", metavar="FILE", default=None, help="also write JUnit XML (one test case per check)")
    p.add_argument("--markdown", metavar="FILE", default=None,
                   help="also write the Markdown summary (for a pull-request comment or a CI job summary)")
    p.set_defaults(func=cmd_gate)


def _config(text: str, what: str) -> str:
    from ..evaluation.records import parse_key
    from .common import _known_config

    try:
        cfg = parse_key(text)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None
    return _known_config(cfg, what).label


def _check_file(value: str | None, what: str) -> None:
    from .common import _check_out_file

    if value:
        try:
            _check_out_file(Path(value))
        except UsageError as exc:
            raise UsageError(str(exc).replace("--out", what)) from None


def cmd_gate(args) -> int:
    """``gate BASELINE [CANDIDATE] --config CONFIG``: the checks, the verdict, the exit code."""
    import json
    import math

    from ..present.regression.checks import gate_report
    from ..present.regression.render import gate_junit, gate_markdown
    from ..present.regression.runs import RunError, load_run, run_from_evaluation
    from ..documents.truth import truth_sha256

    config = _config(args.config, "--config")
    cand_config = _config(args.candidate_config, "--candidate-config") if args.candidate_config else config
    if not (math.isfinite(args.margin) and 0 <= args.margin < 1):
        raise UsageError(f"--margin must be a difference of rates in [0, 1), e.g. 0.05 (5 points); got {args.margin}")
    if not (math.isfinite(args.alpha) and 0 < args.alpha < 0.5):
        raise UsageError(f"--alpha must be in (0, 0.5), e.g. 0.05; got {args.alpha}")
    if args.cut is not None and not (math.isfinite(args.cut) and 0 < args.cut <= 2):
        raise UsageError(f"--cut must be a cosine distance in (0, 2], e.g. 0.6; got {args.cut}")
    _check_file(args.junit, "--junit")
    _check_file(args.markdown, "--markdown")
    try:
        baseline = load_run(args.baseline, config)
        if args.candidate is not None:
            candidate = load_run(args.candidate, cand_config)
        else:
            from .common import evaluate_args, load_inputs

            loaded = load_inputs(args)
            sha = truth_sha256(loaded[1])
            if sha != baseline.truth_sha256:  # refused before any model is loaded
                raise RunError(
                    f"the runs use different ground truths: baseline {baseline.source} was built on "
                    f"{baseline.truth_source or 'a ground truth'} (sha256 {baseline.truth_sha256[:12]}, "
                    f"{baseline.questions} questions), the current one is {loaded[1].source} (sha256 {sha[:12]}, "
                    f"{len(loaded[1].questions)} questions); rebuild the baseline on this ground truth")
            strategy, _, retriever = cand_config.partition("/")
            ev = evaluate_args(args, [strategy], [retriever], loaded)
            if retriever in ev.unavailable:
                raise UsageError(f"{cand_config} cannot run: {ev.unavailable[retriever]}")
            candidate = run_from_evaluation(ev, cand_config, keep=baseline.keep, cut=baseline.cut,
                                            source=f"current corpus {ev.corpus.name or ev.corpus.root}")
        report = gate_report(baseline, candidate, margin=args.margin, alpha=args.alpha, cut=args.cut,
                             strict=args.strict)
    except RunError as exc:
        raise UsageError(f"cannot compare: {exc}") from None
    markdown = gate_markdown(report)
    if args.markdown:
        Path(args.markdown).write_text(markdown, encoding="utf-8")
        print(f"wrote {args.markdown}", file=sys.stderr)
    if args.junit:
        Path(args.junit).write_text(gate_junit(report), encoding="utf-8")
        print(f"wrote {args.junit}", file=sys.stderr)
    print(json.dumps(report.as_json(), indent=2) if args.json else markdown)
    return report.exit_code
