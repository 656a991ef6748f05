"""``monitor --cut-from`` a native cut: live queries judged on the score the stack's ranking gave them.

A native cut (``threshold --score native --export``) keeps a chunk when the
ranking's own score is at least the cut. The monitor cannot recompute a
reranker's or a fused list's score from a query alone, so the log must carry
it: on every line, ``score``, the best score of that kind among the chunks the
stack kept for the query (the score the cut was chosen on, in the same units).
The calibration is the ground truth's best score in the gate's window
(:func:`ragdiag.analyses.threshold.score.score_table`), so a period and the
calibration are measured alike.

The period analysis of :mod:`ragdiag.analyses.monitor` runs unchanged on the
*negated* score (a smaller number is still nearer the corpus, and the KS test
does not care about the sign); :class:`NativeKeep` says "kept" when the score
is at least the cut. The monitor holds a period's numbers as float32, so the
comparison is made at that precision (7 significant digits; a cut has 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["NativeKeep", "log_has_scores", "native_measure", "native_calibration"]


@dataclass(frozen=True)
class NativeKeep:
    """The gate of a native cut as the monitor reads it: ``under(d)`` for ``d`` the negated score.

    >>> NativeKeep(13.58).under(np.array([-13.9, -13.58, -13.2])).tolist()
    [True, True, False]
    """

    cut: float

    def under(self, d) -> np.ndarray:
        return -np.asarray(d, dtype=np.float32) >= np.float32(self.cut)


def log_has_scores(path: str | Path) -> bool:
    """Whether the first usable line of the log holds a numeric ``score``."""
    from .monitor import LogLine, read_log

    for rec in read_log(path):
        if isinstance(rec, LogLine):
            return rec.score is not None
    return False


def native_measure(lines) -> np.ndarray:
    """Each line's negated ``score``; ``ValueError`` in one line for a line without one."""
    out = np.empty(len(lines), dtype=np.float64)
    for i, ln in enumerate(lines):
        if ln.score is None:
            raise ValueError(f"--log line {ln.line} holds no numeric score: a native cut reads the score of every "
                             "line (the best score among the chunks your stack kept for it)")
        out[i] = -ln.score
    return out


def native_calibration(table, keep: NativeKeep):
    """The calibration (:func:`ragdiag.analyses.monitor.calibration`) on the ground truth's negated best scores."""
    from .monitor import calibration

    return calibration(-np.asarray(table.top, dtype=np.float64), table.in_domain, keep)
