"""The words beside a share's interval name the method that made it: clustered Wilson over questions, exact at few
events (docs/statistics.md), not "questions resampled" (no bootstrap makes them)."""

from __future__ import annotations

import pytest

from apptest import APP, fake_tiny, run, texts  # noqa: F401 - fake_tiny is a module fixture
from ragdiag.analyses.compare.intervals import SHARE_INTERVAL_LABEL, SMALL_COUNT


def test_the_label_names_the_switch_the_code_uses():
    assert f"exact at {SMALL_COUNT} or fewer events" in SHARE_INTERVAL_LABEL
    assert "clustered Wilson" in SHARE_INTERVAL_LABEL and "resampl" not in SHARE_INTERVAL_LABEL


@pytest.fixture(scope="module")
def overview(fake_tiny):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    run(at)
    at.switch_page("app_pages/overview.py")
    run(at)
    return at


@pytest.mark.slow
def test_overview_says_how_its_intervals_are_made(overview):
    shown = texts(overview).replace("\\", "")
    assert "resampl" not in shown
    assert SHARE_INTERVAL_LABEL in shown  # the redundancy caption


def test_the_reports_basis_says_how_its_differences_are_made(tiny_eval):
    from ragdiag.present.report import build_report

    basis = build_report(tiny_eval).headline.basis()
    assert "resampl" not in basis and "95% intervals over questions (sign flips of each question's difference)" in basis
