"""Every numeric option outside the gate in its range, checked once after parsing: one line and exit status 2.

The gate's ``--keep``, ``--cut`` and ``--k`` are checked by :class:`~ragdiag.core.gate.Gate`
(:func:`ragdiag.cli.options.gate_of`); the options of one command only (``--folds``,
``--margin``...) by that command, before any work.
"""

from __future__ import annotations

import math

from .common import UsageError

__all__ = ["check_ranges"]

#: Options that count something: at least 1 when the subcommand has them and they were given a value.
_AT_LEAST_1 = ("top", "sample", "repeats", "rescore", "hnsw_ef_search", "hnsw_ef_construction", "n", "ray_actors",
               "family_size", "max_pages", "max_bytes", "history_runs")


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def check_ranges(args) -> None:
    """Raise :class:`UsageError` naming the first option out of its range (NaN and infinities included)."""
    for name in _AT_LEAST_1:
        v = getattr(args, name, None)
        if v is not None and v < 1:
            flag = "-n" if name == "n" else f"--{name.replace('_', '-')}"
            raise UsageError(f"{flag} must be at least 1, got {v}")
    v = getattr(args, "hnsw_m", None)
    if v is not None and v < 2:
        raise UsageError(f"--hnsw-m must be at least 2, got {v}")
    v = getattr(args, "ray_gpus_per_actor", None)
    if v is not None and not (_finite(v) and v >= 0):
        raise UsageError(f"--ray-gpus-per-actor must be a number of GPUs, 0 or more, got {v}")
    v = getattr(args, "time_limit", None)
    if v is not None and not (_finite(v) and v > 0):
        raise UsageError(f"--time-limit must be a positive number of seconds, got {v}")
    for name in ("start", "stop", "step", "max_bluff", "min_answered"):
        v = getattr(args, name, None)
        if v is not None and not _finite(v):
            raise UsageError(f"--{name.replace('_', '-')} must be a finite number, got {v}")
    outcome = getattr(args, "outcome", None)
    if outcome is not None:
        from ..analyses.outcomes import LADDER

        if outcome not in LADDER:
            raise UsageError(f"--outcome must be one of {', '.join(LADDER)}; got {outcome!r}")
