"""Subcommand ``history``: keep every gated run, list them, show one (:mod:`ragdiag.present.history`).

``history add OUT`` keeps an ``eval --out`` folder (by default in
``ragdiag-history.sqlite`` beside it); ``history list`` lists the runs;
``history show N`` shows one run's measures at its stamped cut and the
questions that changed against the previous accepted run; ``history export N
--mlflow URI`` copies a run to MLflow. ``gate --history`` adds the gated
candidate with its verdict.
"""

from __future__ import annotations

import json

from .common import UsageError
from ..core.words import cut_as_given, interval

__all__ = ["register", "cmd_history", "record_gate"]

#: ``history show`` lists at most this many changes each way (``--json``: all).
SHOW_CHANGES = 8
MLFLOW_HINT = "the MLflow export needs mlflow: pip install mlflow (or mlflow-skinny)"


def register(sub) -> None:
    """Add ``history`` (``add``, ``list``, ``show``, ``export``) to the subparsers ``sub``."""
    from ..present.history import HISTORY_FILE

    p = sub.add_parser("history", help="the history of gated runs: add one, list them, show one",
                       description="Keep every run's summary, per-query outcomes and stamps in one SQLite file, "
                                   "and see whether retrieval got better or worse over the last merges.")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def store(q, default: str) -> None:
        q.add_argument("--history", metavar="FILE", default=None, help=f"the history file (default: {default})")

    q = actions.add_parser("add", help="add an `eval --out` folder as a run")
    q.add_argument("out", metavar="OUT", help="an `eval --out` folder")
    q.add_argument("--label", default="", help="a word for the run, e.g. main or the pull request's title")
    q.add_argument("--commit", default="", help="the commit the run was made from (e.g. $GITHUB_SHA)")
    q.add_argument("--config", action="append", default=None,
                   help="keep only this configuration (repeatable; default: every one in OUT)")
    store(q, f"{HISTORY_FILE} beside OUT")
    q = actions.add_parser("list", help="list the runs, oldest first")
    q.add_argument("--json", action="store_true", help="print a JSON list")
    store(q, f"./{HISTORY_FILE}")
    q = actions.add_parser("show", help="one run: its measures and the questions changed since the run before")
    q.add_argument("id", metavar="N", type=int, help="the run's id (history list)")
    q.add_argument("--json", action="store_true", help="print one JSON object")
    store(q, f"./{HISTORY_FILE}")
    q = actions.add_parser("export", help="copy a run to MLflow (metrics, the summary, the per-query outcomes)")
    q.add_argument("id", metavar="N", type=int, help="the run's id (history list)")
    q.add_argument("--mlflow", metavar="URI", required=True,
                   help="the tracking URI, e.g. file:./mlruns or http://127.0.0.1:5000")
    q.add_argument("--experiment", default="ragdiag", help="the MLflow experiment (default ragdiag)")
    store(q, f"./{HISTORY_FILE}")
    p.set_defaults(func=cmd_history)


def _open(path: str, *, create: bool):
    from ..present.history import HistoryError, open_history

    try:
        return open_history(path, create=create)
    except HistoryError as exc:
        raise UsageError(str(exc)) from None


def cmd_history(args) -> int:
    """``history ACTION``: run the action, print its result."""
    from ..present.history import HISTORY_FILE, HistoryError, default_history_path

    if args.action == "add":
        path = args.history or str(default_history_path(args.out))
    else:
        path = args.history or HISTORY_FILE
    try:
        with _open(path, create=args.action == "add") as hist:
            if args.action == "add":
                run_id = hist.add_folder(args.out, configs=args.config, label=args.label, commit=args.commit)
                print(f"added run {run_id} ({', '.join(hist.run(run_id).configs)}) to {path}")
                return 0
            if args.action == "list":
                return _list(hist, args.json)
            if args.action == "show":
                return _show(hist, args.id, args.json)
            return _export(hist, args.id, args.mlflow, args.experiment)
    except HistoryError as exc:
        raise UsageError(str(exc)) from None


def _verdict(v: str | None) -> str:
    return v or "-"


def _list(hist, as_json: bool) -> int:
    from ..core.tables import format_rows

    runs = hist.runs()
    if as_json:
        print(json.dumps([r.as_json() for r in runs], indent=2))
        return 0
    if not runs:
        print(f"no runs in {hist.path}")
        return 0
    rows = [{"id": r.id, "time": r.time.replace("T", " "), "label": r.label or "-", "commit": r.commit[:10] or "-",
             "truth_sha256": r.truth_sha256[:12] + (" (changed)" if r.truth_changed else ""),
             "verdict": _verdict(r.verdict), "configs": ",".join(r.configs)} for r in runs]
    print(format_rows(rows))
    changed = sum(r.truth_changed for r in runs)
    if changed:
        print(f"\n{changed} ground-truth change(s): runs on different ground truths are never in one trend")
    return 0


def _pct(iv) -> str:
    if iv.trials == 0:
        return "n/a (none)"
    return f"{interval(iv.estimate, iv.low, iv.high)}, {iv.successes} of {iv.trials}"


def _show(hist, run_id: int, as_json: bool) -> int:
    run = hist.run(run_id)
    details = hist.details(run_id)
    measures = [hist.measures(run_id, c) for c in run.configs]
    changes = {c: hist.changes(run_id, c) for c in run.configs}
    if as_json:
        print(json.dumps({
            "run": run.as_json(), "truth_source": details["truth_source"], "questions": details["questions"],
            "stamps": details["stamps"], "gate": details["gate"],
            "measures": [m.as_json() for m in measures],
            "changes": {c: {"previous": None if prev is None else prev.id,
                            "queries": [{"query_id": x.query_id, "question_id": x.question_id, "text": x.text,
                                         "measure": x.measure, "before": x.before, "after": x.after}
                                        for x in ch]}
                        for c, (prev, ch) in changes.items()}}, indent=2))
        return 0
    print(f"run {run.id}: {run.time.replace('T', ' ')}" + (f", {run.label}" if run.label else "")
          + (f", commit {run.commit[:10]}" if run.commit else "") + f"; gate verdict: {_verdict(run.verdict)}")
    print(f"ground truth {details['truth_source'] or '?'} (sha256 {run.truth_sha256[:12]}, "
          f"{details['questions']} questions)" + ("; changed since the run before" if run.truth_changed else ""))
    for m in measures:
        print(f"\n{m.config} at cut {cut_as_given(m.cut)}, keep {m.keep}:")
        print(f"  found in the top {m.k} (R@{m.k}): {_pct(m.recall)}")
        print(f"  answered: {_pct(m.answered)}")
        print(f"  bluffs (off-topic questions given sources): {_pct(m.bluffs)}")
        print(f"  destroyed needles: {m.destroyed}")
        prev, ch = changes[m.config]
        if prev is None:
            print("  no earlier accepted run on this ground truth to compare with")
            continue
        worse, better = [x for x in ch if not x.better], [x for x in ch if x.better]
        print(f"  against run {prev.id}: {len(worse)} changes for the worse, {len(better)} for the better "
              "(a query found in the top k, answered, or bluffing)")
        for group in (worse, better):
            for x in group[:SHOW_CHANGES]:
                state = {"bluff": ("bluffs now", "no longer bluffs")}.get(x.measure, (f"{x.measure} now",
                                                                                      f"no longer {x.measure}"))
                print(f"    {'+' if x.better else '-'} {x.query_id}: {state[0] if x.after else state[1]}  "
                      f"{x.text[:60]!r}")
            if len(group) > SHOW_CHANGES:
                print(f"    ... and {len(group) - SHOW_CHANGES} more (history show {run_id} --json lists all)")
    return 0


def _export(hist, run_id: int, uri: str, experiment: str) -> int:
    import importlib.util

    if importlib.util.find_spec("mlflow") is None:
        raise UsageError(MLFLOW_HINT)
    from mlflow.exceptions import MlflowException

    from ..present.history import export_mlflow

    try:
        run_uuid = export_mlflow(hist, run_id, uri, experiment=experiment)
    except MlflowException as exc:  # e.g. MLflow 3's file store needs MLFLOW_ALLOW_FILE_STORE=true
        raise UsageError(f"MLflow refused the export to {uri}: {exc}") from None
    print(f"exported run {run_id} to {uri} (experiment {experiment}, MLflow run {run_uuid})")
    return 0


def record_gate(path: str, baseline: str, report, candidate, *, folder: str | None = None) -> tuple[int, str]:
    """Add the gated ``candidate`` (a :class:`GateRun`) with ``report``'s verdict to the history; (id, path).

    ``path`` ``""``: ``ragdiag-history.sqlite`` beside ``baseline``. ``folder``:
    the candidate's ``eval --out`` folder, whose ``summary.json`` is kept too.
    The commit is ``$GITHUB_SHA`` and the label ``$GITHUB_HEAD_REF`` (the pull
    request's branch) when GitHub sets them.
    """
    import os
    from dataclasses import replace

    from ..present.history import HistoryError, default_history_path

    path = path or str(default_history_path(baseline))
    summary = None
    if folder is not None:
        from ..present.history import read_summary

        try:
            summary = read_summary(folder)
        except HistoryError:
            summary = None  # the gate read the folder a moment ago; the run's records are kept regardless
    # kept under the gated configuration (the slot you ship), whatever the candidate's own name: the gate's
    # report (kept with it) says what changed, e.g. "configuration: E/hybrid -> F/hybrid"
    candidate = replace(candidate, config=report.baseline.config)
    try:
        with _open(path, create=True) as hist:
            run_id = hist.add([candidate], label=os.environ.get("GITHUB_HEAD_REF", ""),
                              commit=os.environ.get("GITHUB_SHA", ""), verdict=report.verdict,
                              gate=report.as_json(), summary=summary, source=candidate.source)
    except HistoryError as exc:
        raise UsageError(str(exc)) from None
    return run_id, path


def add_report_options(p) -> None:
    """``report --history FILE --history-runs N``: the report's section "The last runs"."""
    p.add_argument("--history", metavar="FILE", default=None,
                   help="a run history (ragdiag history): add its last runs of the report's configuration as one "
                        "chart")
    p.add_argument("--history-runs", metavar="N", type=int, default=10,
                   help="with --history: how many of the last runs (default 10)")


def check_report_history(args) -> None:
    """``report``'s history options, before any evaluation."""
    path = getattr(args, "history", None)
    if path is None:
        return
    if getattr(args, "history_runs", 10) < 1:
        raise UsageError(f"--history-runs must be at least 1, got {args.history_runs}")
    _open(path, create=False).close()
