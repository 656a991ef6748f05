"""A regression gate for CI: a candidate run against a kept baseline, over the same questions.

- :mod:`.runs` -- :func:`load_run` (an ``eval --out`` folder) and :func:`run_from_evaluation`, as :class:`GateRun`.
- :mod:`.stats` -- :func:`paired_gate`: fail when shown worse, pass when shown no worse than a margin.
- :mod:`.checks` -- :func:`gate_report`: destroyed needles, recall, answered and bluffs at the cut.
- :mod:`.render` -- :func:`gate_markdown` and :func:`gate_junit`.
"""

from __future__ import annotations

from .checks import EXIT_CODES, Check, GateReport, Item, check_comparable, gate_report
from .render import gate_junit, gate_markdown
from .runs import GateRun, RunError, load_run, run_from_evaluation
from .stats import PairedGate, paired_gate

__all__ = [
    "EXIT_CODES", "Check", "GateReport", "Item", "check_comparable", "gate_report", "gate_junit", "gate_markdown",
    "GateRun", "RunError", "load_run", "run_from_evaluation", "PairedGate",
    "paired_gate",
]
