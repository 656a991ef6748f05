"""``ragdiag monitor`` itself on generated logs (real model): a change of mix is not drift, a new topic is.

Each log is 12 ISO weeks of queries drawn from the bundled ground truth's own
distributions (``tests/_monitor_log.py``: a query is off-topic with the
stated chance, one of the truth's off-topic queries, else a phrasing of one of
its questions), so nothing moved whatever the mix. The command, given the
live off-topic share as its premise, must flag no week and never alarm, at 10%
and at 50% off-topic (the old rule read 10% as "the questions moved" in 87% of
runs). A new off-topic topic (cooking, travel, repairs) arriving in week 5 and
tripling the off-topic share (10% -> 30%) must be flagged, and the test states
after how many queries.

What the bundled truth (32 questions, 30 off-topic queries) can tell: at the
proposed cut (0.524) it refuses 25% of answerable questions and all off-topic
queries, and its 99% intervals allow any live share from 16% to 54% with 10%
off-topic; a tripled share refuses about 48%, inside that, so no rule can call
it a move (the last case below, kept as a stated limit). At cut 0.7 the truth
refuses no answerable question and 57% of the off-topic queries: the band is
3-22%, the tripled share refuses about 26%, and weeks of 2,000 queries show it.
The sequential rule weighs the share since the log's first query, so 8,000
ordinary queries before the shift hold it back: the weekly bands find it first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _monitor_log import write_mix_log
from ragdiag.cli.parser import main

pytestmark = pytest.mark.model

TRUTH = Path(__file__).resolve().parents[2] / "data" / "sklearn-user-guide.truth.json"
WEEKS = 12


def monitor(tmp_path, capsys, log, share, *cut):
    code = main(["monitor", "E/dense", "--log", str(log), "--cache", str(tmp_path.parent / "cache"),
                 "--off-topic-share", str(share), "--json", *cut])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("share", [0.1, 0.5])
@pytest.mark.parametrize("cut", [(), ("--cut", "0.7")])
def test_a_change_of_mix_is_not_drift(tmp_path, capsys, share, cut):
    log = write_mix_log(tmp_path / "live.jsonl", TRUTH, off_topic_share=share, weeks=WEEKS, per_week=1000)
    doc = monitor(tmp_path, capsys, log, share, *cut)
    assert len(doc["periods"]) == WEEKS and sum(p["queries"] for p in doc["periods"]) == WEEKS * 1000
    assert [p["period"] for p in doc["periods"] if p["flagged"]] == [] and doc["alarm"] is None
    assert doc["headline"].startswith(f"The calibration holds with {share:.0%} of live queries off-topic")


def test_a_new_topic_tripling_the_off_topic_share_is_flagged(tmp_path, capsys):
    per_week, shift = 2000, 4
    log = write_mix_log(tmp_path / "live.jsonl", TRUTH, off_topic_share=0.1, weeks=WEEKS, per_week=per_week,
                        shift_from_week=shift)
    doc = monitor(tmp_path, capsys, log, 0.1, "--cut", "0.7")
    flags = [p["flagged"] for p in doc["periods"]]
    assert not any(flags[:shift])  # the ordinary weeks before it stay quiet
    assert all(p["direction"] == "more" for p in doc["periods"] if p["flagged"])
    first = flags.index(True)
    detected_after = sum(p["queries"] for p in doc["periods"][:first + 1])
    # measured: flagged in the first week of the new topic, after 10,000 queries (2,000 after it arrived); 7 of
    # the 8 weeks with the topic refuse 25-28% against a band of 2-25%
    assert first == shift and detected_after - shift * per_week == per_week, (first, detected_after)
    assert sum(flags[shift:]) >= 4, flags
    assert doc["headline"].startswith(f"{sum(flags)} of {WEEKS} weeks refused more than the calibration predicts")


def test_at_the_proposed_cut_the_bundled_truth_cannot_tell_a_tripled_share(tmp_path, capsys):
    log = write_mix_log(tmp_path / "live.jsonl", TRUTH, off_topic_share=0.1, weeks=WEEKS, per_week=1000,
                        shift_from_week=4)
    doc = monitor(tmp_path, capsys, log, 0.1)
    assert doc["cut"] == pytest.approx(0.524, abs=5e-4)
    shifted = [p["refused"]["rate"] for p in doc["periods"][4:]]
    assert min(shifted) > max(p["refused"]["rate"] for p in doc["periods"][:4])  # it did move...
    assert doc["expected"]["high"] > max(shifted) and not any(p["flagged"] for p in doc["periods"])  # ...within it
