"""``ragdiag monitor`` and :mod:`ragdiag.analyses.monitor`: a query log against the calibration, per period.

The three-week log of ``tests/helpers/_monitor_log.py`` (the bundled truth's queries
over two weeks, then a week of mostly off-topic queries) must flag the third
week and not the first two: once on the FAKE bag-of-words encoder (plumbing,
fast) and once with the real all-MiniLM-L6-v2 (marker ``model``). The oracles
are brute force: every query's distance to every chunk, counted by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _monitor_log import OFF_TOPIC, calibration_weeks, truth_queries, write_synthetic_log
from fakes import AxisEncoder, LengthEncoder
from processes import CHILD_PYTHONPATH
from ragdiag.analyses.monitor import (BadLine, LogLine, SHOW_BAD, calibration, closest_distances, gate_calibration,
                                      monitor_log, period_key, read_log)
from ragdiag.cli.parser import main
from ragdiag.analyses.drift import Expected, judge_periods, period_band
from ragdiag.core.gate import Gate

REPO = Path(__file__).resolve().parents[2]
TRUTH = REPO / "data" / "sklearn-user-guide.truth.json"
CORPUS = REPO / "data" / "sklearn-user-guide"


# --- reading the log ------------------------------------------------------------------------------------------
def test_jsonl_lines_bad_lines_and_blank_lines(tmp_path):
    log = tmp_path / "q.jsonl"
    log.write_text('{"query": "scale features", "time": "2026-11-24T10:00:00+01:00", "tags": ["a"]}\n'
                   "\n"  # blank: not a record
                   '{"time": "2026-11-24T10:00:00Z"}\n'  # line 3: no query
                   '{"query": "x", "time": "24/11/2026"}\n'  # line 4: not ISO 8601
                   "not json\n"  # line 5
                   '{"query": "y", "time": "2026-11-24"}\n', encoding="utf-8")
    recs = list(read_log(log))
    assert [type(r).__name__ for r in recs] == ["LogLine", "BadLine", "BadLine", "BadLine", "LogLine"]
    first = recs[0]
    assert isinstance(first, LogLine) and first.line == 1 and first.tags == ("a",)
    assert first.time.hour == 9  # +01:00 read as UTC
    assert [(r.line, r.reason) for r in recs if isinstance(r, BadLine)] == [
        (3, "no query"), (4, "time '24/11/2026' is not ISO 8601"), (5, "not JSON")]
    assert recs[-1].line == 6 and recs[-1].time.tzinfo is not None  # a date alone: midnight UTC


def test_csv_log_with_tags_and_line_numbers(tmp_path):
    log = tmp_path / "q.csv"
    log.write_text('query,time,tags\n"scale, then fit",2026-11-24T10:00:00Z,a;b\n,2026-11-24T10:00:00Z,\n',
                   encoding="utf-8")
    recs = list(read_log(log))
    assert isinstance(recs[0], LogLine) and recs[0].query == "scale, then fit" and recs[0].tags == ("a", "b")
    assert recs[0].line == 2 and isinstance(recs[1], BadLine) and recs[1].line == 3
    huge = tmp_path / "huge.csv"
    huge.write_text(f'query,time\n"{"x" * 200_000}",2026-11-24\nok,2026-11-24\n', encoding="utf-8")
    recs = list(read_log(huge))  # a field over csv's limit is one bad line, and the next line still reads
    assert isinstance(recs[0], BadLine) and recs[0].reason.startswith("not CSV") and recs[-1].query == "ok"
    bad = tmp_path / "bad.csv"
    bad.write_text("text,when\nx,2026\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs the columns query and time"):
        list(read_log(bad))


@pytest.mark.parametrize("text, day, week", [
    ("2026-11-23T00:30:00+02:00", "2026-11-22", "2026-W47"),  # 22:30 UTC on Sunday: still week 47
    ("2026-11-23T08:00:00Z", "2026-11-23", "2026-W48"),  # Monday opens ISO week 48
    ("2027-01-01T12:00:00", "2027-01-01", "2026-W53"),  # ISO year 2026 has 53 weeks; 1 Jan 2027 is a Friday
])
def test_period_keys(text, day, week):
    from ragdiag.analyses.monitor import _parse_time

    t = _parse_time(text)
    assert period_key(t, "day") == day and period_key(t, "week") == week


def test_closest_distances_against_brute_force():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(37, 8))
    c = rng.normal(size=(11, 8))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    brute = [min(1 - float(a @ b) for b in c) for a in q]
    assert np.allclose(closest_distances(q, c, block=5), brute, atol=1e-6)


# --- a hand-checkable monitor with a toy encoder ----------------------------------------------------------------
def _cp(k, n, level):
    """Clopper-Pearson by scipy's own exact binomial test (the oracle of drift.expected_share's intervals)."""
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return ci.low, ci.high


def _log(tmp_path, lines):
    log = tmp_path / "q.jsonl"
    log.write_text("".join(json.dumps({"query": q, "time": t}) + "\n" for q, t in lines), encoding="utf-8")
    return log


#: 40 answerable queries at distance 0 (never refused at 0.5) and 40 off-topic ones at 1 (always refused).
HAND_CAL = ([0.0] * 40 + [1.0] * 40, [True] * 40 + [False] * 40)
#: week 47: 1 of 3 refused; week 48: 29 of 30 refused.
HAND_LINES = [("a", "2026-11-16"), ("b", "2026-11-17"), ("zzz", "2026-11-18"),
              *(("zzz", "2026-11-23") for _ in range(29)), ("a", "2026-11-24")]


def test_refused_share_judged_under_the_premise_by_hand(tmp_path):
    from scipy.special import betaln
    from scipy.stats import binom

    from ragdiag.analyses.drift import LEVELS

    # one chunk at (1, 0): "a" is at distance 0, "b" at 1 - 0.6 = 0.4, anything else at 1.
    chunks = np.array([[1.0, 0.0]], dtype=np.float32)
    gate = Gate(cut=0.5)
    cal = calibration(*HAND_CAL, gate)
    mon = monitor_log(_log(tmp_path, HAND_LINES), encoder=AxisEncoder(), chunk_vectors=chunks, calibration=cal,
                      gate=gate, batch=4, off_topic_share=0.1)
    w47, w48 = mon.periods
    assert (w47.period, w47.queries, w47.refused.count) == ("2026-W47", 3, 1)
    assert (w48.period, w48.queries, w48.refused.count) == ("2026-W48", 30, 29)
    # the expected share by hand: 0 of 40 answerable and 40 of 40 off-topic, each at 99% (Clopper-Pearson by
    # scipy's binomtest), mixed 90/10
    a, o = _cp(0, 40, 0.99), _cp(40, 40, 0.99)
    assert mon.expected.low == pytest.approx(0.9 * a[0] + 0.1 * o[0]) and mon.expected.low == pytest.approx(0.0876, abs=1e-4)
    assert mon.expected.high == pytest.approx(0.9 * a[1] + 0.1 * o[1]) and mon.expected.high == pytest.approx(0.2117, abs=1e-4)
    # each period's prediction band: binomial quantiles at the two ends, at 1.5% split over the 2 periods
    tail = LEVELS[1] / 2 / 2
    for row in (w47, w48):
        assert row.band == (int(binom.ppf(tail, row.queries, mon.expected.low)),
                            int(binom.isf(tail, row.queries, mon.expected.high)))
    assert w48.band == (0, 13) and w48.flagged and w48.direction == "more"
    assert not w47.flagged and w47.sentence.endswith(": as predicted")
    assert w48.sentence == ("week 2026-W48: 29 of 30 refused (97%, 83–100), predicted 0–13 (0–43%) for 30 queries "
                            "with 10% off-topic: more refused than predicted, the questions moved")
    # the sequential rule by brute force: the first n where the uniform mixture over the likeliest null p of the
    # band (a grid) reaches 1 / 0.015
    refused = np.array([q != "a" and q != "b" for q, _ in HAND_LINES], dtype=float)
    grid = np.linspace(mon.expected.low, mon.expected.high, 20_001)
    first = None
    for n in range(1, refused.size + 1):
        k = refused[:n].sum()
        null = (k * np.log(grid) + (n - k) * np.log1p(-grid)).max()
        if betaln(k + 1, n - k + 1) - null >= np.log(1 / LEVELS[2]):
            first = n
            break
    assert first is not None and mon.alarm.queries == first and mon.alarm.period == "2026-W48"
    assert mon.headline == ("1 of 2 weeks refused more than the calibration predicts with 10% of live queries "
                            f"off-topic at cut 0.500: 2026-W48; the running count alarmed after {first} queries "
                            "(week 2026-W48).")
    assert w48.farthest[0] == ("zzz", 1.0) and w48.nearest[0] == ("a", 0.0)
    assert mon.bad_count == 0 and mon.lines == 33


def test_without_a_premise_nothing_is_judged(tmp_path):
    chunks = np.array([[1.0, 0.0]], dtype=np.float32)
    gate = Gate(cut=0.5)
    mon = monitor_log(_log(tmp_path, HAND_LINES), encoder=AxisEncoder(), chunk_vectors=chunks,
                      calibration=calibration(*HAND_CAL, gate), gate=gate)
    assert not mon.judged and mon.expected is None and mon.alarm is None and not mon.flagged
    assert [p.band for p in mon.periods] == [None, None]
    assert mon.headline == ("33 queries over 2 weeks at cut 0.500; the refused share is not judged: it depends on "
                            "how many live queries are off-topic, and no live off-topic share was stated.")
    assert mon.periods[1].sentence == "week 2026-W48: 29 of 30 refused (97%, 83–100)"
    doc = mon.as_json()
    assert doc["judged"] is False and doc["expected"] is None and doc["periods"][1]["predicted"] is None


def test_a_small_calibration_predicts_a_wide_band(tmp_path):
    # four calibration queries (3 answerable, none refused; 1 off-topic, refused): with 25% off-topic the share
    # lies anywhere in 0-87%, so even 9 of 10 refused is within what a week of 10 shows: nothing is flagged.
    chunks = np.array([[1.0, 0.0]], dtype=np.float32)
    gate = Gate(cut=0.5)
    cal = calibration([0.0, 0.0, 0.4, 1.0], [True, True, True, False], gate)
    lines = [("a", "2026-11-16"), *(("zzz", "2026-11-23") for _ in range(9)), ("a", "2026-11-24")]
    mon = monitor_log(_log(tmp_path, lines), encoder=AxisEncoder(), chunk_vectors=chunks, calibration=cal, gate=gate,
                      off_topic_share=0.25)
    assert mon.expected.high == pytest.approx(0.75 * _cp(0, 3, 0.99)[1] + 0.25, abs=1e-9)
    w48 = mon.periods[1]
    assert w48.refused.count == 9 and w48.band[1] >= 9 and not w48.flagged and mon.alarm is None


def test_questions_count_once_in_the_expected_share():
    # question q1 has two phrasings, one refused: it counts as half a refused question of 2
    gate = Gate(cut=0.5)
    cal = calibration([0.2, 0.7, 0.1, 0.9], [True, True, True, False], gate, questions=["q1", "q1", "q2", None])
    assert cal.answerable_counts() == (0.5, 2)
    with pytest.raises(ValueError, match="share in"):
        cal.expected(1.5)
    with pytest.raises(ValueError, match="one question id"):
        calibration([0.2, 0.7], [True, True], gate, questions=["q1"])


def test_one_reading_serves_every_cut_and_grouping(tmp_path):
    # measure once, judge at two cuts and both groupings: the same as reading the log again each time
    from ragdiag.analyses.monitor import judge_log, measure_log

    chunks = np.array([[1.0, 0.0]], dtype=np.float32)
    log = _log(tmp_path, HAND_LINES[::-1])  # out of time order: the sequential rule reads it sorted
    measured = measure_log(log, encoder=AxisEncoder(), chunk_vectors=chunks, batch=3)
    assert np.all(np.diff(measured.times) >= 0) and measured.distances.size == 33
    for cut in (0.3, 0.5):
        gate = Gate(cut=cut)
        cal = calibration(*HAND_CAL, gate)
        for period in ("day", "week"):
            once = judge_log(measured, cal, gate, period=period, off_topic_share=0.1)
            again = monitor_log(log, encoder=AxisEncoder(), chunk_vectors=chunks, calibration=cal, gate=gate,
                                period=period, off_topic_share=0.1)
            assert once == again
    by_day = judge_log(measured, calibration(*HAND_CAL, Gate(cut=0.3)), Gate(cut=0.3), period="day")
    assert [p.period for p in by_day.periods] == ["2026-11-16", "2026-11-17", "2026-11-18", "2026-11-23",
                                                  "2026-11-24"]
    # "b" (0.4) is refused at 0.3, kept at 0.5
    assert by_day.periods[1].refused.count == 1
    with pytest.raises(ValueError, match="the calibration is at cut"):
        judge_log(measured, calibration(*HAND_CAL, Gate(cut=0.3)), Gate(cut=0.5))


def test_empty_log_says_so(tmp_path):
    log = tmp_path / "empty.jsonl"
    log.write_text("", encoding="utf-8")
    cal = calibration([0.1, 0.9], [True, False], Gate(cut=0.5))
    mon = monitor_log(log, encoder=AxisEncoder(), chunk_vectors=np.array([[1.0, 0.0]]), calibration=cal,
                      gate=Gate(cut=0.5))
    assert mon.periods == () and mon.headline == "The log is empty: no query to watch."
    only_bad = tmp_path / "bad.jsonl"
    only_bad.write_text('{"time": "2026-11-24"}\n', encoding="utf-8")
    mon = monitor_log(only_bad, encoder=AxisEncoder(), chunk_vectors=np.array([[1.0, 0.0]]), calibration=cal,
                      gate=Gate(cut=0.5))
    assert mon.headline == "The log holds no usable query (1 bad lines of 1)."


def test_many_bad_lines_counted_first_20_listed(tmp_path):
    log = tmp_path / "q.jsonl"
    log.write_text("".join('{"query": "a"}\n' for _ in range(25)) + '{"query": "a", "time": "2026-11-24"}\n',
                   encoding="utf-8")
    cal = calibration([0.1, 0.9], [True, False], Gate(cut=0.5))
    mon = monitor_log(log, encoder=AxisEncoder(), chunk_vectors=np.array([[1.0, 0.0]]), calibration=cal,
                      gate=Gate(cut=0.5))
    assert mon.bad_count == 25 and [b.line for b in mon.bad_lines] == list(range(1, SHOW_BAD + 1))
    assert mon.bad_words.startswith("25 bad lines not counted (the first 20 listed): 1 (no time)")
    assert mon.periods[0].queries == 1


# --- the three-week log, FAKE encoder (plumbing) --------------------------------------------------------------
@pytest.fixture(scope="module")
def fake_run():
    from fakes import fake_encoder
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate

    corpus = load_corpus(CORPUS)
    truth = load_truth(TRUTH, corpus)
    enc = fake_encoder()
    return evaluate(corpus, truth, encoder=enc, strategies="E", retrievers="dense"), enc


def test_calibration_is_the_gate_tables_closest(fake_run):
    # for a dense configuration the gate's window holds the nearest chunk, so the two measures agree exactly
    from ragdiag.analyses.gate_table import gate_table

    ev, enc = fake_run
    gate = Gate(cut=0.6)
    cal, vectors, _ = gate_calibration(ev, "E/dense", gate, enc)
    assert np.allclose(cal.distances, gate_table(ev, "E/dense", gate).closest, atol=1e-6)
    assert cal.refused.count == int((gate_table(ev, "E/dense", gate).closest >= 0.6).sum())
    assert cal.mix == "64 answerable and 30 off-topic queries of the ground truth (32% off-topic)"


def test_third_week_flagged_first_two_not_fake(fake_run, tmp_path):
    ev, enc = fake_run
    # the FAKE bag-of-words distances sit high: a cut at their calibration median makes the share informative
    cal0, vectors, _ = gate_calibration(ev, "E/dense", Gate(cut=0.6), enc)
    gate = Gate(cut=float(np.median(cal0.distances)))
    cal, _, _ = gate_calibration(ev, "E/dense", gate, enc)
    log = write_synthetic_log(tmp_path / "weeks.jsonl", TRUTH, bad_lines=10)
    mon = monitor_log(log, encoder=enc, chunk_vectors=vectors, calibration=cal, gate=gate, batch=32,
                      off_topic_share=0.32)  # the premise: the first two weeks hold the truth's own mix
    assert [p.period for p in mon.periods] == ["2026-W46", "2026-W47", "2026-W48"]
    # the FAKE distances of 32 questions leave a wide prediction band (11-89% for a week of 47): the plumbing is
    # what is checked here, the verdict against drift's rule on the brute-force counts (real model: flagged below)
    assert mon.periods[2].refused.rate > max(mon.periods[0].refused.rate, mon.periods[1].refused.rate)
    # brute force: each week's refused count from every query's distance to every chunk
    answerable, ood = truth_queries(TRUTH)
    weeks = [*calibration_weeks(TRUTH), ood + list(OFF_TOPIC) + answerable[:5]]
    for row, texts in zip(mon.periods, weeks):
        q = enc.encode(texts)
        d = (1.0 - q.astype(np.float64) @ vectors.T.astype(np.float64)).min(axis=1)
        assert row.queries == len(texts) and row.refused.count == int((d >= gate.cut).sum())
    assert [p.flagged for p in mon.periods] == judge_periods([(p.refused.count, p.queries) for p in mon.periods],
                                                             cal.expected(0.32))
    assert mon.bad_count == 10 and [b.line for b in mon.bad_lines] == [6 + 7 * j for j in range(10)]


# --- the CLI --------------------------------------------------------------------------------------------------
@pytest.fixture()
def fake_env(monkeypatch):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")


def test_cli_json_and_words(fake_env, tmp_path, capsys):
    log = write_synthetic_log(tmp_path / "weeks.jsonl", TRUTH, bad_lines=10)
    code = main(["monitor", "E/dense", "--log", str(log), "--cache", str(tmp_path / "c"), "--no-snapshot",
                 "--cut", "0.8", "--off-topic-share", "32%", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["cut"] == 0.8 and doc["bad_lines"]["count"] == 10 and "band" in doc["test"]
    assert doc["judged"] and doc["expected"]["off_topic_share"] == 0.32 and "Ville" in doc["sequential"]
    assert len(doc["bad_lines"]["first"]) == 10 and doc["bad_lines"]["first"][0] == {"line": 6, "reason": "no query"}
    p = doc["periods"][2]
    assert set(p) >= {"period", "queries", "refused", "predicted", "flagged", "direction", "sentence"}
    assert set(p["refused"]) == {"count", "rate", "low", "high"}
    assert set(p["predicted"]) == {"low_count", "high_count", "low", "high"}
    for x in doc["periods"]:  # the printed band is drift's, for the period's size, split over the 3 periods
        e = Expected(0.32, doc["expected"]["low"], doc["expected"]["high"])
        assert (x["predicted"]["low_count"], x["predicted"]["high_count"]) == period_band(x["queries"], e, 0.015 / 3)
        lo, hi = x["predicted"]["low_count"], x["predicted"]["high_count"]
        assert x["flagged"] == (not lo <= x["refused"]["count"] <= hi)
    code = main(["monitor", "E/dense", "--log", str(log), "--cache", str(tmp_path / "c"), "--no-snapshot",
                 "--cut", "0.8", "--off-topic-share", "0.32"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "  week 2026-W48:" in out and "10 bad lines not counted: 6 (no query)" in out
    assert "premise: with 32% of live queries off-topic (a premise)" in out and "Ville's inequality" in out
    code = main(["monitor", "E/dense", "--log", str(log), "--cache", str(tmp_path / "c"), "--no-snapshot",
                 "--cut", "0.8"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "the refused share is not judged" in out.splitlines()[0] and "!" not in out
    assert "--off-topic-share P" in out


@pytest.mark.parametrize("argv, message", [
    (["--log", "missing.jsonl"], "--log 'missing.jsonl' is not a file"),
    (["--cut", "3"], "--cut must be a finite cosine distance in [0, 2]"),
    (["--keep", "0"], "--keep must be a whole number from 1 to 20"),
    (["--off-topic-share", "1.5"], "'1.5' is not a share in [0, 1]"),
    (["--off-topic-share", "ten"], "'ten' is not a share: give 0.1 or 10%"),
])
def test_cli_bad_arguments_one_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.jsonl").write_text("", encoding="utf-8")
    args = ["monitor", "E/dense", "--log", "q.jsonl", *argv]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


# --- bounded memory -------------------------------------------------------------------------------------------
#: The monitor of the log named by argv[1] under tracemalloc, in a fresh process: prints [peak bytes, queries, periods].
PEAK = """
import json, sys, tracemalloc
from pathlib import Path
import numpy as np
from fakes import LengthEncoder
from ragdiag.analyses.monitor import calibration, monitor_log
from ragdiag.core.gate import Gate

chunks = LengthEncoder().encode(["a", "bb", "ccc"])
cal = calibration(np.linspace(0, 1, 50), np.arange(50) < 25, Gate(cut=0.5))
run = lambda log: monitor_log(log, encoder=LengthEncoder(), chunk_vectors=chunks, calibration=cal, gate=Gate(cut=0.5),
                              period="day", off_topic_share=0.1)
big = Path(sys.argv[1])
# The log's first 1,000 lines monitored first: the modules the monitor imports on first use are not its memory.
with big.open(encoding="utf-8") as f:
    big.with_name("first.jsonl").write_text("".join(f.readline() for _ in range(1000)), encoding="utf-8")
run(big.with_name("first.jsonl"))
tracemalloc.start()
mon = run(big)
_, peak = tracemalloc.get_traced_memory()
print(json.dumps([peak, sum(p.queries for p in mon.periods), len(mon.periods)]))
"""


@pytest.mark.slow
def test_large_log_streams_in_bounded_memory(tmp_path):
    # 300,000 lines (about 30 MB). Held as a list of records it would take several hundred MB in Python objects;
    # streamed, the peak is the batch plus 12 bytes a query kept (distance and time) and, while judging, the
    # sequential rule's running counts over the queries in time order (a few float64 arrays): about 60 bytes a query.
    n = 300_000
    log = tmp_path / "big.jsonl"
    with open(log, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"query": f"how do I tune parameter number {i} of the model {'x' * (i % 40)}",
                                "time": f"2026-11-{1 + i % 28:02d}T10:00:00Z"}) + "\n")
    size = log.stat().st_size
    assert size > 25_000_000
    # Measured in a process of its own: tracemalloc counts every allocation of the process, whatever made it, and in
    # a worker that had run a Ray test before (Ray's search test, then this one, in one process) the peak was 38.6 MB.
    run = subprocess.run([sys.executable, "-c", PEAK, str(log)], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": CHILD_PYTHONPATH})
    assert run.returncode == 0, run.stderr[-3000:]
    peak, queries, periods = json.loads(run.stdout.splitlines()[-1])
    assert queries == n and periods == 28
    print(f"peak {peak / 1e6:.1f} MB")
    assert peak < 24_000_000, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB log"


# --- the real model -------------------------------------------------------------------------------------------
@pytest.mark.model
def test_third_week_flagged_first_two_not_real_model(tmp_path, capsys):
    log = write_synthetic_log(tmp_path / "weeks.jsonl", TRUTH)
    code = main(["monitor", "E/hybrid", "--log", str(log), "--cache", str(tmp_path / "cache"), "--json",
                 "--off-topic-share", "0.32"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert [p["period"] for p in doc["periods"]] == ["2026-W46", "2026-W47", "2026-W48"]
    assert [p["flagged"] for p in doc["periods"]] == [False, False, True]
    assert "the questions moved" in doc["periods"][2]["sentence"]
    assert doc["bad_lines"]["count"] == 0


def test_dashboard_monitor_log_becomes_the_pages_variable(tmp_path, monkeypatch):
    from ragdiag.cli.dashboard import dashboard_command
    from ragdiag.cli.parser import build_parser

    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["dashboard", "--locked", "--monitor-log", "live.jsonl"])
    _, env = dashboard_command(args, REPO)
    assert env["RAGDIAG_MONITOR_LOG"] == str(tmp_path / "live.jsonl") and env["RAGDIAG_LOCKED"] == "1"
