"""The refused-share rules of :mod:`ragdiag.analyses.drift`, by simulation: no false alarm from a change of mix
(12 weekly and 90 daily periods at 10% and 50% off-topic), and a tripled off-topic share found in time."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.analyses.drift import LEVELS, Expected, expected_share, judge_periods, period_band, sequential_alarm

R_ANSWERABLE, R_OFF_TOPIC = 0.1, 0.9  # the true refused chances of each kind at the cut


def _calibration(rng, questions=32, off_topic=30):
    """Answerable questions (their two phrasings share the outcome: counted per question) and off-topic queries."""
    return ((int(rng.binomial(questions, R_ANSWERABLE)), questions),
            (int(rng.binomial(off_topic, R_OFF_TOPIC)), off_topic))


def _run(rng, share, periods, per_period, live_share=None, calibration=(32, 30)):
    cal_a, cal_o = _calibration(rng, *calibration)
    expected = expected_share(cal_a, cal_o, share)  # the premise: the share the traffic is said to have
    live = share if live_share is None else live_share
    p = (1 - live) * R_ANSWERABLE + live * R_OFF_TOPIC
    stream = rng.random(periods * per_period) < p
    counts = [(int(c), per_period) for c in stream.reshape(periods, per_period).sum(axis=1)]
    return any(judge_periods(counts, expected)), sequential_alarm(stream, expected)


@pytest.mark.slow  # 4 x 400 seeded runs: ~20 s
@pytest.mark.parametrize("periods, per_period", [(12, 300), (90, 40)])  # weekly, daily
@pytest.mark.parametrize("share", [0.1, 0.5])
def test_no_drift_raises_an_alarm_in_at_most_5_percent_of_runs(periods, per_period, share):
    rng = np.random.default_rng(46)
    runs = 400
    alarms = 0
    for _ in range(runs):
        flagged, seq = _run(rng, share, periods, per_period)
        alarms += flagged or seq is not None
    assert alarms / runs <= 0.05, alarms / runs  # by construction at most 0.02 + 0.015 + 0.015


@pytest.mark.slow
@pytest.mark.parametrize("calibration, within, share_found", [((32, 30), None, 0.0), ((200, 100), 1000, 0.9)])
def test_a_tripled_off_topic_share(calibration, within, share_found):
    """Premise 10% off-topic; a new off-topic topic brings it to 30% (refused share 18% -> 34%), 90 days of 40.

    With the bundled truth's size (32 questions, 30 off-topic) the calibration's own upper end is about 37%:
    34% is within what it allows, and 3,600 queries find it in under a fifth of runs (18.5% measured). With
    200 questions and 100 off-topic the sequential rule finds it within 1,000 live queries in at least 90% of
    runs (measured: median 287, 90% by 826)."""
    rng = np.random.default_rng(46)
    found = []
    for _ in range(200):
        _, seq = _run(rng, 0.1, 90, 40, live_share=0.3, calibration=calibration)
        found.append(np.inf if seq is None else seq)
    found = np.array(found)
    if within is None:
        assert np.isinf(found).mean() >= 0.75
    else:
        assert (found <= within).mean() >= share_found


def test_the_share_is_not_judged_without_a_premise_and_bands_are_prediction_bands():
    assert expected_share((3, 32), (27, 30), None) is None
    e = Expected(0.1, 0.18, 0.18)
    lo, hi = period_band(50, e, 0.05)
    # a period of 50 at 18%: 4 to 15 refused (8-30%), far wider than an interval for the calibration's mean
    assert (lo, hi) == (4, 15)
    assert sum(LEVELS) == pytest.approx(0.05)
    with pytest.raises(ValueError, match="share in"):
        expected_share((3, 32), (27, 30), 1.5)
