"""Gate retrieval inside a test suite: :func:`assert_no_regression` against a kept baseline run.

>>> # in tests/test_retrieval_quality.py of your project
>>> # from ragdiag.testing import assert_no_regression
>>> # def test_no_retrieval_regression():
>>> #     assert_no_regression("ragdiag-baseline/", "build/ragdiag-run/", config="E/hybrid")

The baseline is an ``eval --out`` folder kept in the repository (or fetched
from the last accepted build); the candidate is another folder, or an
:class:`~ragdiag.evaluation.evaluate.Evaluation` computed in the test. The checks and
their statistics are those of ``python -m ragdiag gate`` (:mod:`ragdiag.present.regression`).
"""

from __future__ import annotations

from pathlib import Path

from .core.defaults import ALPHA, PRACTICAL_MARGIN

__all__ = ["assert_no_regression"]


def assert_no_regression(baseline_dir, candidate, *, config: str, candidate_config: str | None = None,
                         margin: float = PRACTICAL_MARGIN, alpha: float = ALPHA, cut: float | None = None,
                         strict: bool = False):
    """Raise ``AssertionError`` (its message: the gate's Markdown summary) when the candidate regresses.

    Parameters
    ----------
    baseline_dir : str or Path
        The accepted run: an ``eval --out`` folder.
    candidate : str, Path or Evaluation
        The run to gate: an ``eval --out`` folder, or an evaluation holding ``candidate_config``.
    config : str, keyword-only
        The gated configuration in the baseline, e.g. ``"E/hybrid"``.
    candidate_config : str, optional
        The candidate's configuration when it differs (default: ``config``).
    margin, alpha, cut : keyword-only
        As ``gate --margin --alpha --cut``.
    strict : bool, keyword-only
        An inconclusive result fails too (by default it passes, with its summary kept on the report).

    Returns
    -------
    GateReport
        The report, when the gate passes (or is inconclusive without ``strict``).

    Raises
    ------
    AssertionError
        On a failing check (a newly destroyed needle, a rate shown worse), or inconclusive with ``strict``.
    ValueError
        When the runs cannot be compared (:class:`~ragdiag.present.regression.RunError`: different ground truths,
        missing files).
    """
    from .present.regression.checks import gate_report
    from .present.regression.render import gate_markdown
    from .present.regression.runs import load_run, run_from_evaluation

    cand_config = candidate_config or config
    baseline = load_run(baseline_dir, config)
    if isinstance(candidate, (str, Path)):
        cand = load_run(candidate, cand_config)
    else:
        cand = run_from_evaluation(candidate, cand_config, keep=baseline.keep, cut=baseline.cut)
    report = gate_report(baseline, cand, margin=margin, alpha=alpha, cut=cut, strict=strict)
    if report.exit_code == 1:
        raise AssertionError("retrieval regressed against the baseline\n\n" + gate_markdown(report))
    return report
