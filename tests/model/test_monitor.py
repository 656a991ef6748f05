"""``ragdiag monitor`` and :mod:`ragdiag.analyses.monitor`: a query log against the calibration, per period.

The three-week log of ``tests/helpers/_monitor_log.py`` (the bundled truth's queries
over two weeks, then a week of mostly off-topic queries) must flag the third
week and not the first two: once on the FAKE bag-of-words encoder (plumbing,
fast) and once with the real all-MiniLM-L6-v2 (marker ``model``). The oracles
are brute force: every query's distance to every chunk, counted by hand.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import ks_2samp

from _monitor_log import OFF_TOPIC, calibration_weeks, truth_queries, write_synthetic_log
from fakes import AxisEncoder, LengthEncoder
from ragdiag.analyses.monitor import (BadLine, LogLine, SHOW_BAD, calibration, closest_distances, gate_calibration,
                                      monitor_log, period_key, read_log)
from ragdiag.cli.parser import main
from ragdiag.core.gate import Gate
from ragdiag.core.stats import holm

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
def test_refused_share_and_test_by_hand(tmp_path):
    # one chunk at (1, 0): "a" is at distance 0, "b" at 1 - 0.6 = 0.4, anything else at 1.
    chunks = np.array([[1.0, 0.0]], dtype=np.float32)
    gate = Gate(cut=0.5)
    cal = calibration([0.0, 0.0, 0.4, 1.0], [True, True, True, False], gate)  # 1 of 4 refused: Wilson 5-70%
    lines = [("a", "2026-11-16"), ("b", "2026-11-17"), ("zzz", "2026-11-18"),  # week 47: 1 of 3 refused
             *(("zzz", "2026-11-23") for _ in range(29)), ("a", "2026-11-24")]  # week 48: 29 of 30 refused
    log = tmp_path / "q.jsonl"
    log.write_text("".join(json.dumps({"query": q, "time": t}) + "\n" for q, t in lines), encoding="utf-8")
    mon = monitor_log(log, encoder=AxisEncoder(), chunk_vectors=chunks, calibration=cal, gate=gate, batch=4)
    w47, w48 = mon.periods
    assert (w47.period, w47.queries, w47.refused.count) == ("2026-W47", 3, 1)
    assert (w48.period, w48.queries, w48.refused.count) == ("2026-W48", 30, 29)
    # KS distances by hand: week 47's cdf {0: 1/3, 0.4: 2/3, 1: 1} against {0: 1/2, 0.4: 3/4, 1: 1} -> 1/6;
    # week 48's {0: 1/30, 1: 1} against the calibration's -> 3/4 - 1/30 = 0.7167
    assert w47.ks == pytest.approx(1 / 6) and w48.ks == pytest.approx(0.75 - 1 / 30)
    # the oracle: scipy's KS test on the same samples, Holm over the two periods by hand
    p47 = ks_2samp([0.0, 0.4, 1.0], cal.distances).pvalue
    p48 = ks_2samp([1.0] * 29 + [0.0], cal.distances).pvalue
    assert p48 < p47 == 1.0
    assert w48.drift_p == pytest.approx(min(1.0, 2 * p48)) and w47.drift_p == pytest.approx(1.0)
    assert np.allclose(holm([p47, p48]), [w47.drift_p, w48.drift_p])
    # 29 of 30 refused: 83-100% (exact at few events on either side: scipy binomtest(29, 30) gives 0.828-0.999)
    # lies above the calibration's 1-81%, so the share flags week 48
    assert w48.refused.low > cal.refused.high and w48.flagged and "more refused than calibrated" in w48.sentence
    assert w48.sentence.startswith("week 2026-W48: 97% refused (83–100), calibration expects 1–81%: the questions moved")
    assert not w47.flagged and "as calibrated" in w47.sentence
    assert w48.farthest[0] == ("zzz", 1.0) and w48.nearest[0] == ("a", 0.0)
    assert mon.bad_count == 0 and mon.lines == 33


def test_small_period_does_not_flag(tmp_path):
    # 9 of 10 refused (Wilson 60-98%) overlaps the calibration's 5-70%, and scipy's exact KS p for 10 against 4
    # queries is 0.126 (Holm: 0.25): too few queries to call a move, so nothing is flagged.
    chunks = np.array([[1.0, 0.0]], dtype=np.float32)
    gate = Gate(cut=0.5)
    cal = calibration([0.0, 0.0, 0.4, 1.0], [True, True, True, False], gate)
    lines = [("a", "2026-11-16"), *(("zzz", "2026-11-23") for _ in range(9)), ("a", "2026-11-24")]
    log = tmp_path / "q.jsonl"
    log.write_text("".join(json.dumps({"query": q, "time": t}) + "\n" for q, t in lines), encoding="utf-8")
    mon = monitor_log(log, encoder=AxisEncoder(), chunk_vectors=chunks, calibration=cal, gate=gate)
    w48 = mon.periods[1]
    assert w48.refused.count == 9 and w48.p == pytest.approx(ks_2samp([1.0] * 9 + [0.0], cal.distances).pvalue)
    assert w48.p == pytest.approx(0.12587, abs=1e-4) and not w48.flagged


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
    mon = monitor_log(log, encoder=enc, chunk_vectors=vectors, calibration=cal, gate=gate, batch=32)
    assert [p.period for p in mon.periods] == ["2026-W46", "2026-W47", "2026-W48"]
    assert [p.flagged for p in mon.periods] == [False, False, True]
    # brute force: each week's refused count from every query's distance to every chunk
    answerable, ood = truth_queries(TRUTH)
    weeks = [*calibration_weeks(TRUTH), ood + list(OFF_TOPIC) + answerable[:5]]
    for row, texts in zip(mon.periods, weeks):
        q = enc.encode(texts)
        d = (1.0 - q.astype(np.float64) @ vectors.T.astype(np.float64)).min(axis=1)
        assert row.queries == len(texts) and row.refused.count == int((d >= gate.cut).sum())
    assert mon.bad_count == 10 and [b.line for b in mon.bad_lines] == [6 + 7 * j for j in range(10)]


# --- the CLI --------------------------------------------------------------------------------------------------
@pytest.fixture()
def fake_env(monkeypatch):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")


def test_cli_json_and_words(fake_env, tmp_path, capsys):
    log = write_synthetic_log(tmp_path / "weeks.jsonl", TRUTH, bad_lines=10)
    code = main(["monitor", "E/dense", "--log", str(log), "--cache", str(tmp_path / "c"), "--no-snapshot",
                 "--cut", "0.8", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["cut"] == 0.8 and doc["bad_lines"]["count"] == 10 and "Kolmogorov-Smirnov" in doc["test"]
    assert len(doc["bad_lines"]["first"]) == 10 and doc["bad_lines"]["first"][0] == {"line": 6, "reason": "no query"}
    p = doc["periods"][2]
    assert set(p) >= {"period", "queries", "refused", "expected", "drift_p", "flagged", "sentence"}
    assert set(p["refused"]) == {"count", "rate", "low", "high"} and set(p["expected"]) == {"low", "high"}
    assert [x["flagged"] for x in doc["periods"]] == [False, False, True]
    code = main(["monitor", "E/dense", "--log", str(log), "--cache", str(tmp_path / "c"), "--no-snapshot",
                 "--cut", "0.8"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "! week 2026-W48:" in out and "10 bad lines not counted: 6 (no query)" in out


@pytest.mark.parametrize("argv, message", [
    (["--log", "missing.jsonl"], "--log 'missing.jsonl' is not a file"),
    (["--cut", "3"], "--cut must be a finite cosine distance in [0, 2]"),
    (["--keep", "0"], "--keep must be a whole number from 1 to 20"),
])
def test_cli_bad_arguments_one_line(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.jsonl").write_text("", encoding="utf-8")
    args = ["monitor", "E/dense", "--log", "q.jsonl", *argv]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


# --- bounded memory -------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_large_log_streams_in_bounded_memory(tmp_path):
    # 300,000 lines (about 30 MB). Held as a list of records it would take several hundred MB in Python objects;
    # streamed, the peak is the batch plus 4 bytes a query.
    n = 300_000
    log = tmp_path / "big.jsonl"
    with open(log, "w", encoding="utf-8") as f:
        for i in range(n):
            f.write(json.dumps({"query": f"how do I tune parameter number {i} of the model {'x' * (i % 40)}",
                                "time": f"2026-11-{1 + i % 28:02d}T10:00:00Z"}) + "\n")
    size = log.stat().st_size
    assert size > 25_000_000
    chunks = LengthEncoder().encode(["a", "bb", "ccc"])
    cal = calibration(np.linspace(0, 1, 50), np.ones(50, bool), Gate(cut=0.5))
    tracemalloc.start()
    try:
        mon = monitor_log(log, encoder=LengthEncoder(), chunk_vectors=chunks, calibration=cal, gate=Gate(cut=0.5),
                          period="day")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sum(p.queries for p in mon.periods) == n and len(mon.periods) == 28
    assert peak < 16_000_000, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB log"


# --- the real model -------------------------------------------------------------------------------------------
@pytest.mark.model
def test_third_week_flagged_first_two_not_real_model(tmp_path, capsys):
    log = write_synthetic_log(tmp_path / "weeks.jsonl", TRUTH)
    code = main(["monitor", "E/hybrid", "--log", str(log), "--cache", str(tmp_path / "cache"), "--json"])
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
