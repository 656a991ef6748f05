"""Invariants of :func:`ragdiag.analyses.monitor.judge_log` (Hypothesis): any log, any cut, either grouping.

Every query lands in exactly one period; a period is flagged exactly when its refused count leaves its band;
without a premise nothing is flagged and no band is printed; the refused counts are the gate's own test
(``d < cut`` kept) counted by brute force; a day's period is its UTC calendar date.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import given, settings, strategies as st

from ragdiag.analyses.monitor import MeasuredLog, calibration, judge_log, period_key
from ragdiag.core.gate import Gate

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
START = datetime(2026, 11, 2, tzinfo=timezone.utc)


def measured(distances, offsets_s) -> MeasuredLog:
    """A hand-made reading (no encoder): distances and times in seconds after START, sorted as measure_log does."""
    t = np.array([((START + timedelta(seconds=s)) - EPOCH) // timedelta(microseconds=1) for s in offsets_s],
                 dtype=np.int64)
    order = np.argsort(t, kind="stable")
    return MeasuredLog(np.asarray(distances, dtype=np.float32)[order], t[order], {}, 0, (), len(distances))


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.tuples(st.floats(0, 2, width=32), st.integers(0, 40 * 86_400)), min_size=1, max_size=300),
       cut=st.floats(0.05, 1.95), period=st.sampled_from(["day", "week"]),
       share=st.one_of(st.none(), st.floats(0, 1)))
def test_periods_partition_the_log_and_flags_follow_the_bands(data, cut, period, share):
    distances, offsets = zip(*data)
    m = measured(distances, offsets)
    gate = Gate(cut=cut)
    cal = calibration([0.1, 0.3, 0.6, 0.9, 1.2, 1.5], [True, True, True, False, False, False], gate)
    mon = judge_log(m, cal, gate, period=period, off_topic_share=share)
    assert sum(p.queries for p in mon.periods) == len(data)
    names = [period_key(START + timedelta(seconds=s), period) for s in offsets]
    assert [p.period for p in mon.periods] == sorted(set(names))
    d32 = np.asarray(distances, dtype=np.float32).astype(np.float64)
    for p in mon.periods:
        mine = [i for i, n in enumerate(names) if n == p.period]
        assert p.queries == len(mine)
        assert p.refused.count == int(sum(not d32[i] < cut for i in mine))
        if share is None:
            assert p.band is None and not p.flagged
        else:
            lo, hi = p.band
            assert p.flagged == (not lo <= p.refused.count <= hi)
            assert p.direction == ("" if not p.flagged else "more" if p.refused.count > hi else "fewer")
    if share is None:
        assert mon.alarm is None and not mon.judged
    elif mon.alarm is not None:
        assert 1 <= mon.alarm.queries <= len(data) and mon.alarm.period in {p.period for p in mon.periods}
