"""Every numeric option in its range, checked once after parsing: a bad value is one line and exit status 2."""

from __future__ import annotations

import math

from .common import UsageError

__all__ = ["check_ranges"]

#: option -> (what it must be, test); applied when the subcommand has the option and it was given a value.
_AT_LEAST_1 = ("keep", "top", "sample", "repeats", "rescore", "hnsw_ef_search", "n", "ray_actors")


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def check_ranges(args) -> None:
    """Raise :class:`UsageError` naming the first option out of its range (NaN and infinities included)."""
    for name in _AT_LEAST_1:
        v = getattr(args, name, None)
        if v is not None and v < 1:
            flag = "-n" if name == "n" else f"--{name.replace('_', '-')}"
            raise UsageError(f"{flag} must be at least 1, got {v}")
    for name in ("hnsw_m",):
        v = getattr(args, name, None)
        if v is not None and v < 2:
            raise UsageError(f"--hnsw-m must be at least 2, got {v}")
    v = getattr(args, "hnsw_ef_construction", None)
    if v is not None and v < 1:
        raise UsageError(f"--hnsw-ef-construction must be at least 1, got {v}")
    v = getattr(args, "ray_gpus_per_actor", None)
    if v is not None and not (_finite(v) and v >= 0):
        raise UsageError(f"--ray-gpus-per-actor must be a number of GPUs, 0 or more, got {v}")
    v = getattr(args, "cut", None)  # sweep, report, funnel, hubs and cost check theirs with their own wording
    if getattr(args, "command", None) == "variants" and not (_finite(v) and 0 < v <= 2):
        raise UsageError(f"--cut must be a cosine distance in (0, 2], got {v}")
    for name in ("start", "stop", "step", "max_bluff", "min_answered", "time_limit"):
        v = getattr(args, name, None)
        if v is not None and not _finite(v):
            raise UsageError(f"--{name.replace('_', '-')} must be a finite number, got {v}")
    stage = getattr(args, "stage", None)
    if stage is not None:
        from ..analyses.funnel import STAGES

        if stage not in STAGES:
            raise UsageError(f"--stage must be one of {', '.join(STAGES)}; got {stage!r}")
