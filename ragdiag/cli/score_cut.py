"""``threshold CONFIG --score native``: the cut on the ranking's own score, with its direction and stamp."""

from __future__ import annotations

import math
import os

from .common import UsageError
from ..core.words import cut_as_given

__all__ = ["native_threshold", "distance_cut_from", "refuse_other_model"]


def native_threshold(args, goal) -> int:
    """The native cut for the bluff goal: printed, ``--json``, or exported (``--export``)."""
    import json
    import sys

    import yaml

    from ..analyses.threshold.score import native_document, score_cut, score_table
    from ..core.files import atomic_write
    from .gate_args import _check_export, _gate_config

    if goal.max_bluff is None:
        raise UsageError("--score native chooses a cut for a bluff goal: give --max-bluff (e.g. 0.05)")
    if getattr(args, "units", "distance") != "distance":
        raise UsageError("--units reads a dense cut (distance or similarity): with --score native, --current is in "
                         "the native score's own units")
    current, current_from = getattr(args, "current", None), getattr(args, "current_from", None)
    if current is not None and current_from is not None:
        raise UsageError("give the cut you run as --current VALUE or --current-from FILE, not both")
    if current is not None and not math.isfinite(current):
        raise UsageError(f"--current must be a finite number, got {current}")
    if current_from is not None and not os.path.isfile(current_from):  # before any work; its stamp once it is known
        raise UsageError(f"--current-from {current_from}: not a file")
    if getattr(args, "export_rule", "proposed") != "proposed":
        raise UsageError("--export-rule in-sample is for --score dense; --score native exports its proposed cut")
    export = getattr(args, "export", None)
    if getattr(args, "export_slices", False):  # as the distance gate checks it (cli.gate._check_by)
        from ..analyses.slice_cuts import EXPORTABLE

        if not export:
            raise UsageError("--export-slices adds a slices block to the export: give --export FILE too")
        if getattr(args, "by", None) not in EXPORTABLE:
            raise UsageError(f"--export-slices needs --by {' or '.join(EXPORTABLE)} (a service knows a query's tag "
                             "or language before it retrieves, not its document or phrasing)")
    if export:
        _check_export(export, getattr(args, "force", False))
    ev, cfg = _gate_config(args)
    try:
        table = score_table(ev, cfg.label, args.gate, unit=args.ce_units)
        choice = score_cut(table, goal.max_bluff)
        from ..analyses.threshold.separation import separation

        separated = separation(table)
        doc = native_document(ev, table, choice, keep=args.gate.keep,
                              cross_encoder=getattr(args, "cross_encoder", None)) if choice.cut is not None else None
        audited = _current(args, ev, table, choice, current, current_from)
        sliced = None
        if getattr(args, "by", None):
            from ..analyses.native_slice_cuts import native_slices

            sliced = native_slices(ev, table, choice, args.by)
        held_out = _held_out(table, goal, getattr(args, "folds", 5))
        if doc is not None and getattr(args, "export_slices", False):
            from ..analyses.native_slice_cuts import native_export_block

            doc["slices"] = native_export_block(sliced, table)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if export:
        if doc is None:
            raise UsageError(f"no cut on the {table.score} of {cfg.label}: {choice.guarantee}; nothing exported")
        atomic_write(export, "# ragdiag thresholds export: a cut on the ranking's own score (higher keeps).\n"
                     + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100))
        extra = f"; per {doc['slices']['by']}: {len(doc['slices']['cuts'])} slice cut(s)" if "slices" in doc else ""
        print(f"wrote {export}: {table.score} >= {choice.cut} ({choice.method}){extra}", file=sys.stderr)
    if args.json:
        print(json.dumps({"keep": args.gate.keep, **choice.cells(),
                          "stamp": None if doc is None else doc["stamp"],
                          "separation": {k: v.cells() for k, v in separated.items()},
                          **held_out["json"],
                          **({"current": audited.cells()} if audited is not None else {}),
                          **(sliced.as_json() if sliced is not None else {})}, indent=2))
        return 0
    print(f"{cfg.label}, keep {args.gate.keep}; score: {table.score} ({table.unit}), higher keeps (score >= cut)")
    for s in separated.values():
        print(s.sentence())
    if choice.cut is None:
        print(f"no cut: {choice.guarantee}")
    else:
        from ..core.words import count_rate_text

        print(f"proposed ({choice.method}): cut {choice.cut}: {choice.guarantee}")
        print(f"  answered {count_rate_text(choice.answered)}; bluffs {count_rate_text(choice.bluffs)}; lost "
              f"{count_rate_text(choice.lost)}")
    for line in held_out["words"]:
        print(line)
    if audited is not None:
        print(audited.sentence())
        for name, ids in (("gained", audited.gained), ("lost", audited.lost), ("bluffs added", audited.bluffs_added),
                          ("bluffs removed", audited.bluffs_removed)):
            if ids:
                print(f"  {name}: {', '.join(ids)}")
    if sliced is not None:
        from .gate_args import format_slice_cuts

        print()
        print(format_slice_cuts(sliced, fmt=lambda c: f"{c:g}"))
    return 0


def _held_out(table, goal, folds: int) -> dict:
    """The in-sample cut, its cross-validated rates and (``--bluff-cost``) the cost cut, on the native score, for
    ``goal`` (a :class:`~ragdiag.core.goal.Goal`): the JSON keys and the lines printed
    (:mod:`ragdiag.analyses.threshold.native_cuts`)."""
    from ..analyses.threshold.choice import SEED
    from ..analyses.threshold.native_cuts import in_sample_cut, native_cost_cut, native_cross_validated
    from ..analyses.threshold.score import rates
    from ..core.words import rate_text

    max_bluff, bluff_cost = goal.max_bluff, goal.bluff_cost
    out: dict = {}
    words = []
    line = lambda r: "; ".join(f"{k.replace('_', ' ')} {r[k].count}: {rate_text(r[k])}"  # noqa: E731
                               for k in ("answered", "wrong_sources", "bluffs") if k in r)
    if (~table.in_domain).any():
        cut = in_sample_cut(table, max_bluff)
        r = rates(table, cut)
        out["in_sample_cut"] = cut
        out["in_sample"] = {k: v.cells() for k, v in r.items()}
        words.append(f"in sample (optimistic): cut {cut_as_given(cut)} (just above the off-topic query whose best "
                     f"score ranks "
                     f"floor({max_bluff:g} x n) + 1 from the top): " + line(r))
    try:
        cv, fold_cuts = native_cross_validated(table, max_bluff, folds=folds)
    except ValueError as exc:
        words.append(f"cross-validated: none ({exc})")
    else:
        out["cross_validated"] = {k: v.cells() for k, v in cv.items()}
        out["cross_validation"] = {"folds": folds, "grouped_by": "question", "seed": SEED,
                                   "rule": "in sample", "fold_cuts": list(fold_cuts)}
        words.append(f"cross-validated ({folds} folds grouped by question, seed {SEED}; each fold's in-sample cut "
                     "chosen on the others): " + line(cv))
    if bluff_cost is not None:
        cc = native_cost_cut(table, goal, folds=folds)
        out["cost"] = {**cc.cells(), "kept_when": f"score >= {cut_as_given(cc.cut)}"}
        words.append(f"cost goal (a bluff costs {bluff_cost:g} lost answers): cut "
                     f"{cut_as_given(cc.cut)} (score >= cut), answered "
                     f"{rate_text(cc.answered)}, bluffs {rate_text(cc.bluffs)}; cross-validated answered "
                     f"{rate_text(cc.cross_validated['answered'])}, bluffs {rate_text(cc.cross_validated['bluffs'])}; "
                     f"{cc.guarantee_words}")
    return {"json": out, "words": words}


def _current(args, ev, table, choice, current, current_from):
    """The cut run today on the native score (``--current`` or a native export's ``--current-from``), audited
    against the proposal; an export stamped for another score, reranker or model is refused (ValueError)."""
    from ..analyses.threshold.native_current import native_audit, native_cut_from_file
    from ..analyses.threshold.score import score_stamp

    if current_from is not None:
        stamp = score_stamp(ev, table, cross_encoder=getattr(args, "cross_encoder", None))
        value, where = native_cut_from_file(current_from, stamp), f"cut.value (ragdiag export {current_from})"
    elif current is not None:
        value, where = float(current), "--current"
    else:
        return None
    return native_audit(table, value, choice.max_bluff, choice.cut, where=where)


def distance_cut_from(path: str, flag: str) -> float:
    """The cosine-distance cut a file holds (a ragdiag export, or one ``score_threshold`` / ``similarity_cutoff`` /
    ``distance_threshold``), checked before any work; a cut stamped for another score is one line, exit 2."""
    from ..analyses.threshold.proposal import cut_from_file, cut_from_units

    try:
        value, units, _ = cut_from_file(path)
        return float(cut_from_units(value, units)[0])
    except ValueError as exc:
        raise UsageError(str(exc).replace("--current-from", flag, 1)) from None


def refuse_other_model(path: str, model, flag: str) -> None:
    """One line, exit 2, when the ragdiag export at ``path`` was chosen for another embedding model than ``model``
    (its stamp: ``model``, ``weights_sha256``)."""
    from pathlib import Path

    import yaml

    from ..analyses.threshold.export import EXPORT_KEY
    from ..analyses.threshold.score import refuse_foreign

    try:
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8", errors="replace"))
    except Exception:  # noqa: BLE001 - not YAML: it was read already, as JSON or TOML, and holds no stamp here
        return
    if isinstance(doc, dict) and EXPORT_KEY in doc:
        try:
            refuse_foreign(doc, f"{flag} {path}", model=dict(model or {}))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
