"""What ``threshold`` (either score) and ``sweep`` share: the configuration evaluated for one command, and the
``--export`` path checked before any work."""

from __future__ import annotations

from .common import UsageError, evaluate_args, _known_config

__all__ = ["_gate_config", "_check_export"]


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
