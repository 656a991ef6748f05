"""Subcommands ``sweep`` and ``threshold``: the abstention gate of one configuration."""

from __future__ import annotations

from .common import UsageError, evaluate_args, _known_config
from .options import add_evaluation, add_gate

__all__ = ["register", "cmd_sweep", "cmd_threshold"]


def register(sub) -> None:
    """Add ``sweep`` and ``threshold`` to the subparsers ``sub``."""
    p = sub.add_parser("sweep", help="the abstention threshold table for one configuration")
    add_evaluation(p)
    add_gate(p, cut="also list the bluffing out-of-domain queries at this cut", k=False)
    p.add_argument("config", metavar="CONFIG", help="e.g. E/dense")
    p.add_argument("--start", type=float, default=0.3, help="the first cut of the table (default 0.3)")
    p.add_argument("--stop", type=float, default=0.9, help="the last cut of the table (default 0.9)")
    p.add_argument("--step", type=float, default=0.025, help="between two cuts of the table (default 0.025)")
    p.add_argument("--json", action="store_true",
                   help="print JSON rows: per cut, {count, rate, low, high} of every outcome")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("threshold", help="choose the cut for a goal (max bluff rate or min answered), "
                                         "in sample, cross-validated and conformal")
    add_evaluation(p)
    add_gate(p, k=False)
    p.add_argument("config", metavar="CONFIG", help="e.g. E/hybrid")
    p.add_argument("--max-bluff", type=float, default=None, help="goal: bluff rate at most this (e.g. 0.05)")
    p.add_argument("--min-answered", type=float, default=None, help="goal: answered rate at least this (e.g. 0.5)")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds, grouped by question (default 5)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--export", metavar="FILE", default=None,
                   help="write the chosen cut as YAML for your stack: cosine distance (Chroma, pgvector <=>) and "
                        "similarity = 1 - distance (Qdrant score_threshold, LlamaIndex similarity_cutoff, LangChain "
                        "score_threshold), with the keep, the rates and the model it belongs to; only an earlier "
                        "export is ever overwritten")
    p.set_defaults(func=cmd_threshold)


def _gate_config(args):
    from ..evaluation.records import parse_key

    try:
        cfg = parse_key(args.config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _known_config(cfg, "CONFIG")
    ev = evaluate_args(args, [cfg.strategy], [cfg.retriever])
    if cfg.retriever in ev.unavailable:
        raise UsageError(f"{cfg.label} cannot run: {ev.unavailable[cfg.retriever]}")
    return ev, cfg


def cmd_sweep(args) -> int:
    """``sweep CONFIG``: the abstention table (answered, kept wrong, bluffs...) over a range of cuts."""
    import json

    from ..analyses.compare.intervals import upper_bound_words
    from ..analyses.gate_table import gate_table
    from ..analyses.threshold.gate import sweep_cuts
    from ..core.tables import format_rows
    from ..analyses.threshold.gate import GATE_DISTANCE, bluffs_at, sweep
    from ..analyses.threshold.rates import rate_rows

    from ..core.gate import check_cut

    try:
        for name in ("start", "stop"):  # each end a cut: named, before the table's own checks
            check_cut(getattr(args, name), f"--{name}")
        cuts = sweep_cuts(args.start, args.stop, args.step)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    ev, cfg = _gate_config(args)
    try:
        inputs = gate_table(ev, cfg, args.gate)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps({"config": cfg.label, "keep": args.gate.keep, "distance": GATE_DISTANCE,
                          "answerable": int(inputs.in_domain.sum()), "out_of_domain": int((~inputs.in_domain).sum()),
                          "rows": [r.cells() for r in rate_rows(inputs, cuts)]}, indent=2))
        return 0
    table = sweep(inputs, cuts)
    print(f"{cfg.label}: the gate keeps at most {args.gate.keep} chunks closer than the cut; distance: {GATE_DISTANCE}. "
          f"{table.n_in} answerable queries, {table.n_ood} out-of-domain")
    print(format_rows(table.rows()))
    if args.cut is not None:
        row = sweep(inputs, [args.cut]).row(args.cut).cells()
        print(f"\nat cut {args.cut:g}: " + "; ".join(
            upper_bound_words(row[key], n, what) for key, n, what in (
                ("bluffs", table.n_ood, "out-of-domain queries bluff"),
                *((f"bluffs_{k}", table.n_by_kind[k], f"{k} out-of-domain queries bluff") for k in table.n_by_kind))))
        res = ev.result(cfg)
        chunks = ev.indexes[cfg.strategy].chunks
        bluffs = bluffs_at(res, ev.queries, args.gate)
        print(f"bluffing out-of-domain queries at cut {args.cut:g}: {len(bluffs)}")
        for b in bluffs:
            pos, d = b.kept[0]
            q = ev.queries[ev.query_index(b.query_id)]
            print(f"  {b.query_id} ({b.kind}) {q.text[:70]!r} -> {chunks[pos].id} at {d:.3f}")
    return 0


def cmd_threshold(args) -> int:
    """``threshold CONFIG``: the cut for a goal, in sample, cross-validated and conformal."""
    import json

    from ..analyses.gate_table import gate_table
    from ..analyses.threshold.gate import GATE_DISTANCE
    from ..analyses.threshold.choice import Goal, cut_choice

    try:
        goal = Goal(max_bluff=args.max_bluff, min_answered=args.min_answered)
    except ValueError as exc:
        raise UsageError(str(exc).replace("max_bluff", "--max-bluff").replace("min_answered", "--min-answered")) from None
    if not 2 <= args.folds <= 20:
        raise UsageError(f"--folds must be between 2 and 20, got {args.folds}")
    export = getattr(args, "export", None)
    if export:
        _check_export(export)  # before any work
    ev, cfg = _gate_config(args)
    try:
        choice = cut_choice(gate_table(ev, cfg, args.gate), goal, folds=args.folds)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if export:
        _write_export(export, ev, cfg, choice, args.gate.keep)
    if args.json:
        print(json.dumps({"config": cfg.label, "keep": args.gate.keep, **choice.as_json()}, indent=2))
        return 0
    print(f"{cfg.label}, keep {args.gate.keep}; distance: {GATE_DISTANCE}")
    proposed = choice.proposed
    if proposed is not None:  # a bluff goal: the conformal cut is the one that meets it for new queries
        print("proposed (conformal): " + (f"cut {proposed['cut']:.4f}: {choice.conformal}"
                                          if proposed["cut"] is not None else choice.conformal))
        if choice.conformal_rates is not None:
            print(f"  cut {proposed['cut']:.4f}: " + _rates_line(choice.conformal_rates.outcomes()))
    print(f"in sample (optimistic), rule: {choice.rule}")
    if choice.cut is None:
        print("no cut reaches this goal on this set")
    else:
        print(f"  cut {choice.cut:.4f}: " + _rates_line(choice.in_sample.outcomes()))
        if proposed is not None and proposed.get("in_sample"):
            print(f"  {proposed['in_sample']}")
    if choice.cross_validated:
        print(f"cross-validated ({choice.folds} folds grouped by question, seed {choice.seed}): "
              + _rates_line(choice.cross_validated))
    for note in choice.notes:
        print(f"note: {note}")
    if proposed is None:
        print("conformal: " + choice.conformal)
    return 0


def _check_export(path: str) -> None:
    """``--export`` must be a writable file that is absent or an earlier ragdiag thresholds export."""
    from pathlib import Path

    from ..analyses.threshold.export import is_thresholds_export
    from .common import _check_out_file

    out = Path(path)
    try:
        _check_out_file(out)
    except UsageError as exc:
        raise UsageError(str(exc).replace("--out", "--export")) from None
    if out.exists():
        try:
            ours = is_thresholds_export(out.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            ours = False
        if not ours:
            raise UsageError(f"--export {path!r} exists and is not an earlier ragdiag thresholds export; "
                             "refusing to overwrite it (choose another file name)")


def _write_export(path: str, ev, cfg, choice, keep: int) -> None:
    import sys
    from pathlib import Path

    from ..analyses.threshold.export import thresholds_yaml

    if choice.cut is None:
        raise UsageError("no cut reaches this goal on this set: nothing exported (relax the goal)")
    # The model whose distances the gate read: a dense@MODEL variant's own, else the run's encoder.
    model = (ev.retriever_stamps.get(cfg.label) or {}).get("model") or dict(ev.encoder_stamp)
    from ..analyses.recommend import describe_config

    describe = describe_config(cfg)
    Path(path).write_text(thresholds_yaml(choice, config=cfg.label, keep=keep, model=model, describe=describe),
                          encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


def _rates_line(cells: dict) -> str:
    def one(name):
        c = cells[name]
        rate = "n/a" if c.rate is None else f"{c.rate:.3f}"
        return f"{name} {c.count} = {rate} [{c.low:.3f}, {c.high:.3f}]"

    return "; ".join(one(n) for n in ("answered", "wrong_sources", "bluffs") if n in cells)

