"""The monitor's log reader: a hostile line is one bad line, the run goes on, and memory stays one line's worth.

A query of megabytes (69 s and 1.9 GB of embedding per 10 MB before), a time
past the last UTC instant (``9999-12-31T23:59:59-01:00`` raised
OverflowError), a line nested thousands of levels deep (RecursionError): each
is a :class:`BadLine` with its reason, and the good lines around it are read.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from ragdiag.analyses.monitor import MAX_LINE, BadLine, LogLine, read_log


def _good(q: str) -> str:
    return json.dumps({"query": q, "time": "2026-11-24T10:00:00Z"}) + "\n"


def test_hostile_lines_are_bad_lines_and_the_rest_is_read(tmp_path):
    log = tmp_path / "q.jsonl"
    log.write_text(_good("first") + json.dumps({"query": "x" * (MAX_LINE + 10), "time": "2026-11-24T10:00:00Z"})
                   + "\n" + json.dumps({"query": "late", "time": "9999-12-31T23:59:59-01:00"}) + "\n"
                   + json.dumps({"query": "early", "time": "0001-01-01T00:00:00+01:00"}) + "\n"
                   + "[" * 30_000 + "]" * 30_000 + "\n" + _good("last") + "x" * (MAX_LINE + 5))
    got = list(read_log(log))
    assert [(type(r).__name__, r.line) for r in got] == [("LogLine", 1), ("BadLine", 2), ("BadLine", 3),
                                                          ("BadLine", 4), ("BadLine", 5), ("LogLine", 6),
                                                          ("BadLine", 7)]
    assert got[1].reason == f"over {MAX_LINE:,} characters" and got[6].reason == got[1].reason
    assert "9999-12-31T23:59:59-01:00" in got[2].reason and "outside years 1-9999 in UTC" in got[2].reason
    assert got[4].reason == "not JSON"
    assert isinstance(got[0], LogLine) and got[5].query == "last"


def test_a_line_at_the_limit_is_read(tmp_path):
    log = tmp_path / "q.jsonl"
    line = _good("y")
    pad = MAX_LINE - len(line)  # the whole line, newline included, is MAX_LINE + 0 characters
    log.write_text(json.dumps({"query": "y" * (1 + pad), "time": "2026-11-24T10:00:00Z"}) + "\n")
    (rec,) = read_log(log)
    assert isinstance(rec, LogLine) and len(rec.query) == 1 + pad


@pytest.mark.slow  # writes and reads a 64 MB line: about 3 s
def test_a_huge_line_is_never_held_whole(tmp_path):
    log = tmp_path / "q.jsonl"
    with open(log, "w") as f:
        f.write('{"query": "')
        for _ in range(64):
            f.write("z" * (1 << 20))
        f.write('", "time": "2026-11-24T10:00:00Z"}\n')
        f.write(_good("after"))
    tracemalloc.start()
    try:
        got = list(read_log(log))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [type(r) for r in got] == [BadLine, LogLine] and got[1].query == "after"
    assert peak < 8 * MAX_LINE * 4  # a few lines' worth, not 64 MB
