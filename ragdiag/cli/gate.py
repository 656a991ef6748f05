"""Subcommands ``sweep`` and ``threshold``: the abstention gate of one configuration."""

from __future__ import annotations


from ..core.gate import cut_text
from ..core.words import cut_as_given, rate_text
from .common import UsageError
from .gate_args import _check_export, _gate_config, format_slice_cuts
from .options import add_evaluation, add_gate

__all__ = ["register", "cmd_sweep", "cmd_threshold", "format_slice_cuts"]


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
                   help="write the proposed cut (the one printed as 'proposed') as YAML for your stack: cosine "
                        "distance (Chroma, pgvector <=>) and similarity = 1 - distance (Qdrant score_threshold, "
                        "LlamaIndex similarity_cutoff, LangChain score_threshold), with the keep, the rates at that "
                        "cut and the model it belongs to; only an earlier export is ever overwritten")
    p.add_argument("--export-rule", choices=("proposed", "in-sample"), default="proposed",
                   help="which cut --export writes: the proposed one (default; conformal for a bluff goal) or the "
                        "in-sample one, labelled optimistic in the file")
    p.add_argument("--force", action="store_true", help="replace an existing --export file that ragdiag did not write")
    p.add_argument("--bluff-cost", type=float, default=None, metavar="N",
                   help="a cost goal beside the rate goal: a bluff costs as much as N lost answers; prints the cut "
                        "that minimises N x bluffs + lost, cross-validated over questions")
    p.add_argument("--current", type=float, default=None, metavar="VALUE",
                   help="the cut you run today, to audit it against the proposal (see --units; with --score native, "
                        "in the native score's own units, kept when score >= VALUE)")
    p.add_argument("--units", choices=("distance", "similarity"), default="distance",
                   help="units of --current: cosine distance (Chroma, pgvector <=>) or similarity (Qdrant "
                        "score_threshold, LlamaIndex similarity_cutoff, LangChain score_threshold), read as 1 - s")
    p.add_argument("--current-from", default=None, metavar="FILE",
                   help="read the cut you run from a ragdiag export or a YAML/JSON/TOML file with one "
                        "score_threshold, similarity_cutoff or distance_threshold (with --score native: a ragdiag "
                        "export of a native cut, refused when stamped for another score, reranker or model)")
    p.add_argument("--by", choices=("tag", "language", "doc", "phrasing"), default=None,
                   help="per slice (a tag of the ground truth, the detected language, the document holding the "
                        "answer, or the phrasing): answered and bluffs at the proposed cut, the slice's own "
                        "conformal cut, and whether one cut serves every slice (needs --max-bluff)")
    p.add_argument("--export-slices", action="store_true",
                   help="with --export and --by tag or language: add a slices block with each slice's own cut "
                        "that has a guarantee (the other slices use the global cut)")
    p.add_argument("--score", choices=("dense", "native"), default="dense",
                   help="the score the gate reads: the dense model's cosine distance (default), or the ranking's "
                        "own score (BM25, RRF fused, MaxSim, cross-encoder), higher keeps (needs --max-bluff)")
    p.add_argument("--ce-units", choices=("logit", "sigmoid"), default=None,
                   help="with --score native on rerank-ce: the cross-encoder's logit (default) or its sigmoid")
    p.set_defaults(func=cmd_threshold)


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
        print(f"\nat cut {cut_as_given(args.cut)}: " + "; ".join(
            upper_bound_words(row[key], n, what) for key, n, what in (
                ("bluffs", table.n_ood, "out-of-domain queries bluff"),
                *((f"bluffs_{k}", table.n_by_kind[k], f"{k} out-of-domain queries bluff") for k in table.n_by_kind))))
        res = ev.result(cfg)
        chunks = ev.indexes[cfg.strategy].chunks
        bluffs = bluffs_at(res, ev.queries, args.gate)
        print(f"bluffing out-of-domain queries at cut {cut_as_given(args.cut)}: {len(bluffs)}")
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
    from ..analyses.threshold.choice import cut_choice
    from .goal_args import goal_of

    goal = goal_of(args, one=True)  # --max-bluff or --min-answered, and --bluff-cost, checked once, by the Goal
    if not 2 <= args.folds <= 20:
        raise UsageError(f"--folds must be between 2 and 20, got {args.folds}")
    export = getattr(args, "export", None)
    if getattr(args, "score", "dense") == "native":
        from .score_cut import native_threshold

        return native_threshold(args, goal)
    if getattr(args, "ce_units", None) is not None:
        raise UsageError("--ce-units reads a cross-encoder's own score: add --score native")
    _check_by(args)  # before any work
    if export:
        _check_export(export, getattr(args, "force", False))  # before any work
    current = _current_cut(args)  # before any work: a bad value or file is one line
    ev, cfg = _gate_config(args)
    if args.current_from is not None:  # a ragdiag export names its model: another model's cut is refused
        _refuse_other_model(args.current_from, ev, cfg)
    try:
        table = gate_table(ev, cfg, args.gate)
        choice = cut_choice(table, goal, folds=args.folds)
        extra = _proposal_extras(table, choice, goal, args, current)
        sliced = _slice_cuts(ev, table, goal, args.by) if args.by else None
        from ..analyses.threshold.separation import separation

        separated = separation(table)  # can this score separate the two kinds at all (AUROC, near and far)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if export:
        _write_export(export, ev, cfg, table, choice, args.export_rule,
                      slices=sliced.export_block() if args.export_slices else None)
    if args.json:
        print(json.dumps({"config": cfg.label, "keep": args.gate.keep, **choice.as_json(),
                          **{k: v for k, v in extra.items() if not k.endswith("_words")},
                          "separation": {k: v.cells() for k, v in separated.items()},
                          **(sliced.as_json() if sliced is not None else {})}, indent=2))
        return 0
    print(f"{cfg.label}, keep {args.gate.keep}; distance: {GATE_DISTANCE}")
    for s in separated.values():
        print(s.sentence())
    for line in extra["proposal_words"]:
        print(line)
    proposed = choice.proposed
    if proposed is not None:  # a bluff goal: the conformal cut is the one that meets it for new queries
        print("proposed (conformal): " + (f"cut {cut_text(proposed['cut'])}: {choice.conformal}"
                                          if proposed["cut"] is not None else choice.conformal))
        if choice.conformal_rates is not None:
            print(f"  cut {cut_text(proposed['cut'])}: " + _rates_line(choice.conformal_rates.outcomes()))
    print(f"in sample (optimistic), rule: {choice.rule}")
    if choice.cut is None:
        print("no cut reaches this goal on this set")
    else:
        print(f"  cut {choice.cut:.4f} (printed exactly: it sits on an off-topic query's distance): "
              + _rates_line(choice.in_sample.outcomes()))
        if proposed is not None and proposed.get("in_sample"):
            print(f"  {proposed['in_sample']}")
    if choice.cross_validated:
        print(f"cross-validated ({choice.folds} folds grouped by question, seed {choice.seed}): "
              + _rates_line(choice.cross_validated))
    for note in choice.notes:
        print(f"note: {note}")
    if proposed is None:
        print("conformal: " + choice.conformal)
    for line in extra["more_words"]:
        print(line)
    if sliced is not None:
        print()
        print(format_slice_cuts(sliced))
    return 0


def _check_by(args) -> None:
    """``--by`` needs a bluff goal; ``--export-slices`` needs ``--export`` and ``--by tag|language``: one line each."""
    from ..analyses.slice_cuts import EXPORTABLE

    if args.by and args.max_bluff is None:
        raise UsageError("--by needs a bluff goal (--max-bluff A): each slice's own cut is its conformal cut for it")
    if args.export_slices:
        if not args.export:
            raise UsageError("--export-slices adds a slices block to the export: give --export FILE too")
        if args.by not in EXPORTABLE:
            raise UsageError(f"--export-slices needs --by {' or '.join(EXPORTABLE)} (a service knows a query's tag "
                             "or language before it retrieves, not its document or phrasing)")


def _slice_cuts(ev, table, goal, by):
    """The slices of ``table`` by ``by`` at the proposal's cut (:func:`ragdiag.analyses.slice_cuts.cut_slices`)."""
    from ..analyses.slice_cuts import cut_slices, query_labels

    return cut_slices(table, query_labels(ev.queries, by, ev.truth), by=by, goal=goal)


def _refuse_other_model(path: str, ev, cfg) -> None:
    """One line, exit 2, when the ragdiag export at ``path`` was chosen for another embedding model than this run's."""
    from .score_cut import refuse_other_model

    refuse_other_model(path, (ev.retriever_stamps.get(cfg.label) or {}).get("model") or dict(ev.encoder_stamp),
                       "--current-from")


def _current_cut(args):
    """``--current VALUE --units U`` or ``--current-from FILE``: (value, units, where) or None; checked before work."""
    from ..analyses.threshold.proposal import cut_from_file, cut_from_units

    if args.current is not None and args.current_from is not None:
        raise UsageError("give the cut you run as --current VALUE or --current-from FILE, not both")
    try:
        if args.current_from is not None:
            value, units, where = cut_from_file(args.current_from)
        elif args.current is not None:
            value, units, where = args.current, args.units, "--current"
        else:
            return None
        cut_from_units(value, units)
    except ValueError as exc:
        msg = str(exc)
        raise UsageError(msg if msg.startswith("--") else f"--current: {msg}") from None
    return value, units, where


def _proposal_extras(table, choice, goal, args, current) -> dict:
    """What the proposal costs (the next cuts), who decides it, the cost goal and the current cut: JSON and words."""
    from ..analyses.threshold.proposal import audit, candidates, cost_cut, sensitivity

    p = choice.proposal
    cands = candidates(table, goal, p.cut)
    movers = sensitivity(table, goal, p.cut)
    out = {"candidates": [c.cells() for c in cands],
           "sensitivity": [{"query_id": m.query_id, "distance": m.distance, "cut_without": m.cut_without,
                            "answered_without": m.answered_without.cells(), "sentence": m.words(p.cut)}
                           for m in movers]}
    words = []
    if p.cut is None:
        words.append(f"No cut meets this goal on this set ({p.guarantee or 'unreachable'}); the closest cuts:")
    else:
        r = cands[0]
        words.append(f"Proposed: cut {cut_text(p.cut)} ({p.method}): answered {rate_text(r.answered)}, lost "
                     f"{rate_text(r.lost)}, bluffs {rate_text(r.bluffs)}.")
        words.append("The next cuts where an outcome changes:")
    for c in cands:
        words.append(("  * " if c.proposed else "    ") + c.words())
    words += [m.words(p.cut) for m in movers]
    more = []
    if goal.bluff_cost is not None:
        cc = cost_cut(table, goal, folds=args.folds)
        out["cost"] = cc.cells()
        more.append(f"cost goal (a bluff costs {goal.bluff_cost:g} lost answers): cut {cut_text(cc.cut)}, answered "
                    f"{rate_text(cc.answered)}, bluffs {rate_text(cc.bluffs)}; cross-validated answered "
                    f"{rate_text(cc.cross_validated['answered'])}, bluffs {rate_text(cc.cross_validated['bluffs'])}; "
                    f"{cc.guarantee_words}")
    if current is not None:
        value, units, where = current
        cur = audit(table, value, units, goal, p.cut)
        out["current"] = {**cur.cells(), "from": where}
        more.append(cur.sentence())
        for name, ids in (("gained", cur.gained), ("lost", cur.lost), ("bluffs added", cur.bluffs_added),
                          ("bluffs removed", cur.bluffs_removed)):
            if ids:
                more.append(f"  {name}: {', '.join(ids)}")
    out["proposal_words"], out["more_words"] = words, more
    return out


def _write_export(path: str, ev, cfg, table, choice, rule: str, slices=None) -> None:
    import sys

    from ..analyses.recommend import describe_config
    from ..analyses.threshold.export import export_cut, thresholds_yaml
    from ..core.files import atomic_write

    try:
        cut, method = export_cut(choice, rule)
    except ValueError as exc:
        raise UsageError(f"{exc}: nothing exported (relax the goal)") from None
    # The model whose distances the gate read: a dense@MODEL variant's own, else the run's encoder.
    model = (ev.retriever_stamps.get(cfg.label) or {}).get("model") or dict(ev.encoder_stamp)
    atomic_write(path, thresholds_yaml(table, choice, config=cfg.label, model=model, describe=describe_config(cfg),
                                       rule=rule, slices=slices))
    extra = f"; per {slices['by']}: {len(slices['cuts'])} slice cut(s)" if slices is not None else ""
    print(f"wrote {path}: cut {cut_text(cut)} ({method}){extra}", file=sys.stderr)


def _rates_line(cells: dict) -> str:
    def one(name):  # the one format of a rate (ragdiag.core.words), its count first
        c = cells[name]
        return f"{name.replace('_', ' ')} {c.count}: {rate_text(c)}"

    return "; ".join(one(n) for n in ("answered", "wrong_sources", "bluffs") if n in cells)

