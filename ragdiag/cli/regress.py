"""Subcommand ``gate``: a candidate run against a kept baseline, for CI (exit 0 pass, 1 fail, 3 inconclusive, 2 cannot compare)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.defaults import ALPHA, PRACTICAL_MARGIN
from .common import UsageError
from .options import add_evaluation

__all__ = ["register", "cmd_gate"]

EPILOG = """\
exit codes: 0 pass; 1 fail (a newly destroyed needle, or a rate shown worse than the baseline);
3 inconclusive (neither shown worse nor shown within the margin; --strict makes it 1);
2 could not compare (bad input, a missing file, or runs on different ground truths).
A changed corpus, model or chunking is what is being tested: it is reported, not refused."""


def register(sub) -> None:
    """Add ``gate`` to the subparsers ``sub`` (the corpus/truth/model options evaluate a candidate now)."""
    p = sub.add_parser(
        "gate", help="regression gate for CI: a candidate run against a baseline run, over the same questions",
        description="Compare a candidate with a baseline `eval --out` folder for one configuration: destroyed "
                    "needles, recall at the primary k, and the abstention gate's answered and bluff rates at "
                    "the declared cut, question by question (exact one-sided sign-flip tests).",
        epilog=EPILOG, formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    add_evaluation(p)
    p.add_argument("baseline", metavar="BASELINE", help="the accepted run: an `eval --out` folder")
    p.add_argument("candidate", metavar="CANDIDATE", nargs="?", default=None,
                   help="the run to gate: an `eval --out` folder (default: evaluate --corpus/--truth now)")
    p.add_argument("--config", required=True, help="the gated configuration, e.g. E/hybrid")
    p.add_argument("--candidate-config", default=None,
                   help="the candidate's configuration when it differs (e.g. F/hybrid; default: --config)")
    p.add_argument("--margin", type=float, default=None,
                   help=f"non-inferiority margin in rate units: pass when shown no worse than baseline - M "
                        f"(default {PRACTICAL_MARGIN:g} = {100 * PRACTICAL_MARGIN:g} points); when given, the gate "
                        "first checks that the questions can detect a drop of M (else exit 2, with the questions "
                        "the plan says)")
    p.add_argument("--alpha", type=float, default=ALPHA, help=f"one-sided level of each test (default {ALPHA:g})")
    p.add_argument("--cut", type=float, default=None,
                   help="the gate's cut (cosine distance; default: the one stamped in the baseline)")
    p.add_argument("--cut-from", default=None, metavar="FILE",
                   help="read the gate's cut from a ragdiag export or a YAML/JSON/TOML file with one "
                        "score_threshold, similarity_cutoff or distance_threshold (not with --cut); a `threshold "
                        "--score native` export gates both runs on the ranking's own score (score >= cut, from "
                        "each folder's native_scores.csv), refused when stamped for another score, reranker or model")
    p.add_argument("--strict", action="store_true", help="an inconclusive result fails (exit 1 instead of 3)")
    p.add_argument("--by", choices=["tag"], default=None,
                   help="also gate the recall of every tag of the ground truth (--truth), corrected over the tags")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the Markdown")
    p.add_argument("--junit", metavar="FILE", default=None, help="also write JUnit XML (one test case per check)")
    p.add_argument("--markdown", metavar="FILE", default=None,
                   help="also write the Markdown summary (for a pull-request comment or a CI job summary)")
    p.add_argument("--history", metavar="FILE", nargs="?", const="", default=None,
                   help="add the candidate and the verdict to this run history (ragdiag history; "
                        "without FILE: ragdiag-history.sqlite beside BASELINE)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --junit/--markdown file that ragdiag did not write")
    p.set_defaults(func=cmd_gate)


def _config(text: str, what: str) -> str:
    from ..evaluation.records import parse_key
    from .common import _known_config

    try:
        cfg = parse_key(text)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None
    return _known_config(cfg, what).label


def _check_file(value: str | None, what: str, args) -> None:
    """``--junit``/``--markdown`` checked before the comparison (:func:`ragdiag.core.files.check_output`)."""
    from ..core.files import OutputError, check_output, has_signature
    from ..present.regression.render import is_gate_output
    from ..present.regression.runs import RUN_FILES

    if value is None:
        return
    inputs = [Path(run) / name for run in (args.baseline, args.candidate) if run for name in RUN_FILES]
    try:
        check_output(value, what=what, inputs=inputs, force=args.force,
                     ours=lambda p: has_signature(p, is_gate_output), example="gate.md" if what == "--markdown"
                     else "gate.xml")
    except OutputError as exc:
        raise UsageError(str(exc)) from None


def _by_tag(args, report):
    """``report`` with a recall check per tag of the ground truth (its hash must be the baseline's)."""
    from ..documents.truth import truth_sha256
    from ..present.regression.runs import RunError
    from ..present.regression.slices import with_slices
    from .common import load_inputs

    truth = load_inputs(args)[1]
    if truth_sha256(truth) != report.baseline.truth_sha256:
        raise RunError(f"--by tag reads the tags of {truth.source}, which is not the ground truth of the baseline; "
                       "pass the baseline's ground truth with --truth")
    try:
        return with_slices(report, {q.id: q.tags for q in truth.questions})
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _cannot_detect(report, args, markdown: str) -> int | None:
    """``--margin X`` the questions cannot detect: the Markdown and JSON say so, one line on stderr, exit 2.

    The figure is :func:`ragdiag.authoring.ruler.gate_resolution` (the gate's one-sided sign-flip test, most
    favourable case); None when the questions can detect the drop (the gate decides as without the check).
    """
    import json
    from collections import Counter

    from ..authoring.ruler import gate_resolution
    from ..core.files import OutputError, write_all

    table = report.baseline.table
    per_question = Counter(u for u, i in zip(table.group_ids(), table.in_domain) if i)
    res = gate_resolution(len(per_question), max(per_question.values(), default=1), report.margin,
                          alpha=report.alpha)
    if res.can_detect:
        return None
    lines = markdown.splitlines()
    head = ["## ragdiag gate: cannot decide", "", f"{res.sentence()[0].upper()}{res.sentence()[1:]} (the smallest "
            f"drop they detect with 80% power, even if every disagreement went one way, is about "
            f"{'none' if res.resolvable is None else f'{100 * res.resolvable:.3g} points'}): the checks below "
            "cannot pass or fail at this margin. Exit 2.", ""]
    text = "\n".join(head + ["#" + lines[0].replace("## ragdiag gate:", "## What the checks say (no verdict):", 1)]
                     + lines[1:])
    try:
        written = write_all({args.markdown: text} if args.markdown else {})
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    out = {**report.as_json(), "verdict": "cannot decide", "exit_code": 2, "resolution": res.as_json()}
    print(json.dumps(out, indent=2) if args.json else text)
    print(f"error: {res.sentence()}", file=sys.stderr)
    return 2


def _native_runs(args, baseline, candidate, ev):
    """``baseline`` and ``candidate`` adapted to the native cut of ``--cut-from`` (its stamp checked against the
    baseline's score, unit, reranker and model: one line naming both), the mapped cut, and the report's ``score``."""
    from ..analyses.threshold.native_current import native_cut_from_file
    from ..present.regression.native import load_native_table, native_gate_runs, run_native_table, run_stamp

    import yaml

    doc = yaml.safe_load(Path(args.cut_from).read_text(encoding="utf-8", errors="replace"))
    unit = doc["stamp"].get("unit")
    unit = "sigmoid" if unit == "sigmoid" else None
    b_table, b_reranker = load_native_table(args.baseline, baseline, unit)
    stamp = run_stamp(baseline, b_table, b_reranker)
    try:
        value = native_cut_from_file(args.cut_from, stamp, flag="--cut-from")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    c_table, _ = (load_native_table(args.candidate, candidate, unit) if ev is None
                  else run_native_table(ev, candidate, unit))
    b, c, mapped = native_gate_runs(baseline, candidate, (b_table, c_table), value)
    return b, c, mapped, {"score": b_table.score, "unit": b_table.unit, "value": value,
                          "direction": "higher keeps", "kept_when": f"score >= {value:g}", "stamp": stamp}


def cmd_gate(args) -> int:
    """``gate BASELINE [CANDIDATE] --config CONFIG``: the checks, the verdict, the exit code."""
    import json

    from ..core.files import OutputError, write_all
    from ..core.gate import GateError, check_cut
    from ..present.regression.checks import check_options, gate_report
    from ..present.regression.render import gate_junit, gate_markdown
    from ..present.regression.runs import RunError, load_run, run_from_evaluation
    from ..documents.truth import truth_sha256

    asked = args.margin is not None  # an explicit --margin is a drop the team wants caught: checked below
    if not asked:
        args.margin = PRACTICAL_MARGIN
    config = _config(args.config, "--config")
    cand_config = _config(args.candidate_config, "--candidate-config") if args.candidate_config else config
    cut_from = getattr(args, "cut_from", None)
    native = False
    if cut_from is not None:  # before any work: a cut on another score is one line
        from ..present.regression.native import is_native_export
        from .score_cut import distance_cut_from

        if args.cut is not None:
            raise UsageError("give the gate's cut as --cut C or --cut-from FILE, not both")
        native = is_native_export(cut_from)  # a cut on the ranking's own score: read once the runs' stamps are known
        if native and args.history is not None:
            raise UsageError("--history keeps runs gated on the dense model's cosine distance: a native cut "
                             f"({cut_from}) is not recorded there; gate without --history")
        if not native:
            args.cut = distance_cut_from(cut_from, "--cut-from")
    try:
        check_options(margin=args.margin, alpha=args.alpha)
        if args.cut is not None:
            check_cut(args.cut, "--cut")
    except ValueError as exc:
        raise UsageError(str(exc).replace("margin ", "--margin ", 1).replace("alpha ", "--alpha ", 1)) from None
    _check_file(args.junit, "--junit", args)
    _check_file(args.markdown, "--markdown", args)
    if args.junit and args.markdown and Path(args.junit).absolute() == Path(args.markdown).absolute():
        raise UsageError("--junit and --markdown name the same file; name two files")
    try:
        baseline = load_run(args.baseline, config)
        if cut_from is not None and not native:  # a cut chosen for another embedding model than the baseline's
            from .score_cut import refuse_other_model

            refuse_other_model(cut_from, baseline.model, "--cut-from")
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
            candidate = run_from_evaluation(ev, cand_config, gate=baseline.gate,
                                            source=f"current corpus {ev.corpus.name or ev.corpus.root}")
        score = None
        if native:  # both runs' own scores, one cut, through the rank adapter (exact: score >= cut)
            baseline, candidate, args.cut, score = _native_runs(args, baseline, candidate,
                                                                ev if args.candidate is None else None)
        report = gate_report(baseline, candidate, margin=args.margin, alpha=args.alpha, cut=args.cut,
                             strict=args.strict, score=score)
        if args.by == "tag":
            report = _by_tag(args, report)
    except (RunError, GateError) as exc:
        raise UsageError(f"cannot compare: {exc}") from None
    markdown = gate_markdown(report)
    if asked:
        cannot = _cannot_detect(report, args, markdown)
        if cannot is not None:
            return cannot
    if args.history is not None:
        from .history import record_gate

        run_id, path = record_gate(args.history, args.baseline, report, candidate, folder=args.candidate)
        print(f"added run {run_id} ({report.verdict}) to {path}", file=sys.stderr)
    outputs = {path: text for path, text in ((args.markdown, markdown),
                                             (args.junit, gate_junit(report) if args.junit else "")) if path}
    try:
        written = write_all(outputs)  # both or neither
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    print(json.dumps(report.as_json(), indent=2) if args.json else markdown)
    return report.exit_code
