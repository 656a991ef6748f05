"""The last cost measurement, kept in the cache folder: it reads back as the same rows (FAKE encoder timings)."""

from __future__ import annotations

import math

import pytest

from ragdiag.analyses.cost import costs, machine
from ragdiag.analyses.cost_log import (CostMeasurement, last_measurement, measurement_path, save_measurement)
from ragdiag.core.gate import Gate


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN (an unmeasured latency interval is NaN on both sides)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def test_a_measurement_reads_back_as_the_same_rows(tiny_eval, fake_encoder, tmp_path):
    gate = Gate(2, 0.6)
    rows = tuple(costs(tiny_eval, fake_encoder, gate, sample=3))
    m = CostMeasurement(rows, machine(), "2026-12-06T07:30:00+00:00", 12.5, 3, gate)
    assert last_measurement(tmp_path, "inputs") is None  # none yet
    path = save_measurement(tmp_path, "inputs", m)
    assert path == measurement_path(tmp_path, "inputs") and path.parent.name == "measurements"
    back = last_measurement(tmp_path, "inputs")
    assert (back.measured_at, back.seconds, back.sample, back.gate, back.machine) == \
        (m.measured_at, 12.5, 3, gate, m.machine)
    assert len(back.rows) == len(rows)
    for a, b in zip(rows, back.rows):
        for name in a.__dataclass_fields__:
            x, y = getattr(a, name), getattr(b, name)
            if name == "recall":
                assert all(_same(getattr(x, f), getattr(y, f)) for f in x.__dataclass_fields__), name
            else:
                assert _same(x, y), (name, x, y)
    assert last_measurement(tmp_path, "other inputs") is None  # one file per input set


@pytest.mark.parametrize("text", ["", "{", '{"version": 1}', '{"version": 99, "rows": []}', "[]"])
def test_a_file_that_does_not_read_back_is_no_measurement(tmp_path, text):
    path = measurement_path(tmp_path, "inputs")
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    assert last_measurement(tmp_path, "inputs") is None
