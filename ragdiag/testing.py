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

import os
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
        On a failing check (a newly destroyed needle, a rate shown worse), or inconclusive with ``strict``;
        its ``report`` attribute is the :class:`GateReport`.
    ValueError
        When an argument is not usable (the message names it: ``config``, ``candidate``, ``baseline_dir``,
        ``cut``, ``margin``, ...; a ``cut`` must be a finite cosine distance in [0, 2]), or when the runs cannot
        be compared (:class:`~ragdiag.present.regression.RunError`: different ground truths, a missing file, a
        malformed stamp or column, named with its file and field).
    """
    from .core.gate import Gate
    from .evaluation.evaluate import Evaluation
    from .present.regression.checks import check_options, gate_report
    from .present.regression.render import gate_markdown
    from .present.regression.runs import load_run, run_from_evaluation

    config = _config(config, "config")
    cand_config = config if candidate_config is None else _config(candidate_config, "candidate_config")
    baseline_dir = _folder(baseline_dir, "baseline_dir")
    if not isinstance(candidate, Evaluation):
        try:
            candidate = _folder(candidate, "candidate")
        except ValueError:
            raise ValueError("candidate must be an `eval --out` folder (str or Path) or an Evaluation, got "
                             f"{type(candidate).__name__}") from None
    check_options(margin=margin, alpha=alpha)
    if cut is not None:
        cut = Gate().with_cut(cut).cut  # GateError (a ValueError): "cut must be a finite cosine distance ..."
    if not isinstance(strict, bool):
        raise ValueError(f"strict must be True or False, got {strict!r}")
    baseline = load_run(baseline_dir, config)
    if isinstance(candidate, Evaluation):
        cand = run_from_evaluation(candidate, cand_config, gate=baseline.gate)
    else:
        cand = load_run(candidate, cand_config)
    report = gate_report(baseline, cand, margin=margin, alpha=alpha, cut=cut, strict=strict)
    if report.exit_code == 1:
        error = AssertionError("retrieval regressed against the baseline\n\n" + gate_markdown(report))
        error.report = report  # each check's verdict, for the pytest plugin's one test case per check
        raise error
    return report


def _config(value, name: str) -> str:
    from .evaluation.records import parse_key

    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a configuration like 'E/hybrid', got {value!r}")
    try:
        return parse_key(value).label
    except ValueError as exc:
        raise ValueError(f"{name} {value!r}: {exc}") from None


def _folder(value, name: str) -> Path:
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
        raise ValueError(f"{name} must be an `eval --out` folder (str or Path), got {type(value).__name__} "
                         f"{value!r:.60}")
    return Path(value)
