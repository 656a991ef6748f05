"""Subcommand ``monitor``: watch the cut in production, with no labels (:mod:`ragdiag.analyses.monitor`).

``monitor CONFIG --log FILE`` streams a query log (JSON Lines or CSV with
``query`` and ``time``), measures every query's closest-chunk distance with the
configuration's model, and says per day or week whether the share the gate
refuses is what the calibration (the ground truth) predicts for live traffic
with ``--off-topic-share P`` of its queries off-topic (a premise: without it
the share is shown and not judged).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.defaults import DEFAULT_CUT, DEFAULT_KEEP, DEFAULT_MAX_BLUFF
from .common import UsageError
from ..core.words import pct

__all__ = ["register", "cmd_monitor"]


def register(sub) -> None:
    """Add ``monitor`` to the subparsers ``sub``."""
    from ..analyses.monitor import PERIODS
    from .options import add_evaluation

    p = sub.add_parser("monitor", help="watch the cut in production: per day or week, the share of live queries "
                                       "refused against what the calibration predicts for the stated live mix "
                                       "(no labels needed)")
    add_evaluation(p)
    p.add_argument("config", metavar="CONFIG", help="the configuration you run, e.g. E/hybrid")
    p.add_argument("--log", required=True, metavar="FILE",
                   help="the query log: JSON Lines (or .csv) with query and time (ISO 8601) per line, optional tags")
    p.add_argument("--period", choices=PERIODS, default="week", help="group the log by day or ISO week (default week)")
    p.add_argument("--cut", type=float, default=None,
                   help="the cut you run (cosine distance; default: the proposed cut for a bluff rate of at most "
                        f"{DEFAULT_MAX_BLUFF}, as threshold proposes it)")
    p.add_argument("--cut-from", default=None, metavar="FILE",
                   help="read the cut you run from a ragdiag export or a YAML/JSON/TOML file with one "
                        "score_threshold, similarity_cutoff or distance_threshold (not with --cut); a `threshold "
                        "--score native` export reads each log line's score (the best score your ranking gave the "
                        "chunks it kept), refused when stamped for another score, reranker or model")
    p.add_argument("--keep", type=int, default=DEFAULT_KEEP, help=f"keep at most N chunks (default {DEFAULT_KEEP})")
    p.add_argument("--off-topic-share", default=None, metavar="P",
                   help="the share of live queries that are off-topic, e.g. 0.1 or 10%%: the premise the refused "
                        "share is judged under (the share refused depends on it); without it the refused share is "
                        "shown and not judged")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_monitor)


def _share(text: str | None) -> float | None:
    """``--off-topic-share``: ``0.1`` or ``10%``, a share in [0, 1]; a bad one is a one-line usage error.

    >>> _share("10%"), _share("0.5"), _share(None)
    (0.1, 0.5, None)
    """
    if text is None:
        return None
    t = str(text).strip()
    try:
        v = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise UsageError(f"--off-topic-share {text!r} is not a share: give 0.1 or 10%") from None
    if not 0 <= v <= 1:  # NaN fails too
        raise UsageError(f"--off-topic-share {text!r} is not a share in [0, 1] (0% to 100%)")
    return v


def _log_bar():
    from tqdm import tqdm

    state = {}

    def update(ev) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = state["bar"] = tqdm(total=ev.bytes_total, desc="reading the log", unit="B", unit_scale=True,
                                      file=sys.stderr, leave=False, mininterval=0.5)
        bar.n = ev.bytes_read
        bar.set_postfix_str(f"{ev.queries:,} queries", refresh=False)
        bar.refresh()

    def close() -> None:
        if "bar" in state:
            state["bar"].close()

    return update, close


def cmd_monitor(args) -> int:
    """``monitor CONFIG --log FILE``: per period, the refused share against what the calibration predicts."""
    from ..analyses.gate_table import gate_table
    from ..analyses.monitor import distance_words, gate_calibration, monitor_log
    from ..analyses.threshold.choice import Goal, propose_cut
    from ..core.gate import Gate, GateError, cut_text
    from ..core.words import rate_text
    from ..evaluation.records import parse_key
    from .common import _known_config, cli_encoder, evaluate_args, load_inputs, open_store

    off_topic_share = _share(getattr(args, "off_topic_share", None))
    log = Path(args.log)
    if not log.is_file():
        raise UsageError(f"--log {args.log!r} is not a file: pass a JSON Lines or CSV log of query and time")
    try:
        cfg = parse_key(args.config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _known_config(cfg, "CONFIG")
    cut_from = getattr(args, "cut_from", None)
    native = False
    if cut_from is not None:  # before any work: a cut on another score is one line
        from ..present.regression.native import is_native_export
        from .score_cut import distance_cut_from, refuse_other_model

        if args.cut is not None:
            raise UsageError("give the cut you run as --cut C or --cut-from FILE, not both")
        native = is_native_export(cut_from)  # the ranking's own score: the log must carry it
        if native:
            _check_log_scores(args.log, cut_from)
        else:
            args.cut = distance_cut_from(cut_from, "--cut-from")
    loaded = load_inputs(args)
    encoder = cli_encoder(args)
    ev = evaluate_args(args, [cfg.strategy], [cfg.retriever], loaded, encoder=encoder)
    if cfg.retriever in ev.unavailable:
        raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    if native:
        return _native_monitor(args, ev, cfg, log, cut_from)
    if cut_from is not None:
        refuse_other_model(cut_from, (ev.retriever_stamps.get(cfg.label) or {}).get("model") or ev.encoder_stamp,
                           "--cut-from")
    try:
        gate = Gate(args.keep)
        if args.cut is None:
            proposal = propose_cut(gate_table(ev, cfg, gate), Goal(max_bluff=DEFAULT_MAX_BLUFF), default=DEFAULT_CUT)
            if proposal.cut is None:
                raise UsageError(f"no cut reaches a bluff rate of {DEFAULT_MAX_BLUFF}: pass the cut you run, --cut C")
            gate = gate.with_cut(proposal.cut)
            origin = f"proposed: {proposal.method}, bluffs at most {pct(DEFAULT_MAX_BLUFF)}"
        else:
            gate = gate.with_cut(args.cut)
            origin = "--cut" if cut_from is None else f"--cut-from {cut_from}"
        store = open_store(args)
        cal, vectors, enc = gate_calibration(ev, cfg, gate, encoder, store=store)
        update, close = _log_bar()
        try:
            mon = monitor_log(log, encoder=enc, chunk_vectors=vectors, calibration=cal, gate=gate,
                              period=args.period, off_topic_share=off_topic_share, store=store,
                              progress=None if args.json else update)
        finally:
            close()
    except (ValueError, GateError) as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps({"config": cfg.label, "keep": args.keep, "cut_from": origin,
                          "distance": distance_words(cfg, args.keep), **mon.as_json()}, indent=2))
        return 0
    print(mon.headline)
    print(f"{cfg.label}, keep {args.keep}, cut {cut_text(gate.cut)} ({origin})")
    print(f"distance: {distance_words(cfg, args.keep)}")
    print(f"calibration: {cal.mix}; refused at the cut: {rate_text(cal.refused)} "
          f"(answerable {rate_text(cal.refused_answerable)}, off-topic {rate_text(cal.refused_ood)})")
    if mon.expected is None:
        print("to judge the refused share, state the live off-topic share: --off-topic-share P (e.g. 0.1 for 10%)")
    else:
        print(f"premise: {mon.expected.words()}")
        print(f"rule: {mon.test}")
        print(f"also: {mon.sequential}")
    _print_periods(mon, args.period, "farthest from the corpus", "nearest to the corpus", lambda d: f"{d:.3f}")
    return 0


def _print_periods(mon, period: str, farthest: str, nearest: str, value) -> None:
    """The monitor's lines after its header: the log's unreadable lines, one sentence per period (flagged ones
    marked ``!``), then each flagged period's queries farthest from and nearest to the corpus, each with
    ``value(d)`` and its first 90 characters."""
    if mon.bad_count:
        print(mon.bad_words)
    for row in mon.periods:
        print(("! " if row.flagged else "  ") + row.sentence)
    for row in mon.flagged:
        print(f"\n{period} {row.period}, {farthest}:")
        for q, d in row.farthest:
            print(f"  {value(d)}  {q[:90]}")
        print(f"{nearest}:")
        for q, d in row.nearest:
            print(f"  {value(d)}  {q[:90]}")


def _check_log_scores(path: str, cut_from: str) -> None:
    """A native cut reads the score each line of the log holds: one line, exit 2, when the log holds none."""
    from ..analyses.native_monitor import log_has_scores

    try:
        has = log_has_scores(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not has:
        raise UsageError(f"--log {path} holds no score: a native cut ({cut_from}) needs, on every line, score = the "
                         "best score your stack's ranking gave the chunks it kept for the query, in the cut's units "
                         '(e.g. {"query": "...", "time": "2026-01-05T10:00:00", "score": 13.9}); or monitor a '
                         "cut on the dense model's cosine distance")


def _native_monitor(args, ev, cfg, log, cut_from) -> int:
    """``monitor --cut-from`` a native cut: the log's scores per period against the ground truth's, at that cut."""
    from dataclasses import replace

    import yaml

    from ..analyses.monitor import monitor_log
    from ..analyses.native_monitor import NativeKeep, native_calibration, native_measure
    from ..analyses.threshold.native_current import native_cut_from_file
    from ..analyses.threshold.score import score_stamp, score_table
    from ..core.gate import Gate
    from ..core.words import rate_text

    doc = yaml.safe_load(Path(cut_from).read_text(encoding="utf-8", errors="replace"))
    unit = "sigmoid" if doc["stamp"].get("unit") == "sigmoid" else None
    try:
        table = score_table(ev, cfg.label, Gate(args.keep), unit=unit)
        value = native_cut_from_file(cut_from, score_stamp(ev, table, cross_encoder=getattr(args, "cross_encoder",
                                                                                             None)), "--cut-from")
        keep = NativeKeep(value)
        cal = native_calibration(table, keep)
        mon = monitor_log(log, encoder=None, chunk_vectors=None, calibration=cal, gate=keep, period=args.period,
                          off_topic_share=_share(getattr(args, "off_topic_share", None)), measure=native_measure)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    said = f"{table.score} >= {value:g}"
    mon = replace(mon, cut_said=said)
    what = (f"each query's best {table.score} ({table.unit}) among the chunks kept: the log's score per line, and "
            f"the ground truth's in {cfg.label}'s top {table.window}")
    if args.json:
        print(json.dumps({"config": cfg.label, "keep": args.keep, "cut_from": f"--cut-from {cut_from}",
                          "score": {"score": table.score, "unit": table.unit, "value": value,
                                    "direction": "higher keeps", "kept_when": f"score >= {value:g}"},
                          "distance": what, **mon.as_json(), "cut": value}, indent=2))
        return 0
    print(mon.headline)
    print(f"{cfg.label}, keep {args.keep}, {said}, higher keeps (--cut-from {cut_from})")
    print(f"score: {what}")
    print(f"calibration: {cal.mix}; refused at the cut: {rate_text(cal.refused)} "
          f"(answerable {rate_text(cal.refused_answerable)}, off-topic {rate_text(cal.refused_ood)})")
    print(f"test: {mon.test} (on the scores)")
    # the periods hold negated scores: printed as the scores they are
    _print_periods(mon, args.period, "lowest scores (farthest from the corpus)",
                   "highest scores (nearest to the corpus)", lambda d: f"{-d:.4g}")
    return 0
