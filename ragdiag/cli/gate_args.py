"""What ``threshold`` (either score) and ``sweep`` share: the configuration evaluated for one command, the
``--export`` path checked before any work, and the slices as text."""

from __future__ import annotations

from ..core.gate import cut_text
from ..core.words import rate_text
from .common import UsageError, evaluate_args, _known_config

__all__ = ["_gate_config", "_check_export", "format_slice_cuts"]


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


def _check_export(path: str, force: bool = False) -> None:
    """``--export`` must be a writable file that is absent or an earlier ragdiag thresholds export (or ``force``)."""
    from ..analyses.threshold.export import is_thresholds_export
    from ..core.files import check_output, has_signature

    check_output(path, what="--export", force=force, ours=lambda p: has_signature(p, is_thresholds_export),
                 example="thresholds.yaml", force_hint=None, ours_words="an earlier ragdiag thresholds export")


def format_slice_cuts(sliced, fmt=cut_text) -> str:
    """The slices as text: the verdict first, then one row per slice, then how the labels and intervals were had
    (``fmt``: how a cut prints; a native score's cut prints as it is exported)."""
    from ..analyses.slices import SIMULTANEOUS_WORDS
    from ..core.tables import format_rows

    rows = [{"slice": r.label, "questions": r.questions, "answerable": r.answerable, "off-topic": r.out_of_domain,
             f"answered at {fmt(sliced.cut)}": rate_text(r.answered),
             f"bluffs at {fmt(sliced.cut)}": rate_text(r.bluffs) if r.out_of_domain else "-",
             "own cut": fmt(r.own_cut) if r.own_cut is not None else "none",
             "answered at own cut": rate_text(r.answered_at_own_cut) if r.answered_at_own_cut is not None else "-",
             "against the rest": r.difference_words, "verdict": r.verdict} for r in sliced.rows]
    guarantees = [f"  {r.label}: " + (f"own cut {fmt(r.own_cut)}: " if r.own_cut is not None else "")
                  + r.guarantee for r in sliced.rows]
    return "\n".join([
        f"Per {sliced.by}, at the proposed cut {fmt(sliced.cut)} ({sliced.method}):",
        sliced.verdict.sentence, "", format_rows(rows), "own cuts (conformal, from each slice's off-topic queries):",
        *guarantees,
        f"(labels: {sliced.labels_from}; {sliced.ood_rule}; answered at the proposed cut, each slice against the "
        f"rest: {SIMULTANEOUS_WORDS})"])
