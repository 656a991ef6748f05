"""The Monitor page on the ranking's own score (issue 44), headless on the FAKE encoder: with the context on the
native score and a log holding ``score`` per line, the page judges the log's scores at the cut on that score (the
switch drawn); without a score in the log it says in one sentence what the log must hold and goes on with the
dense distance.

The oracle is the log's scores cut by hand (a line is refused when its score is under the cut) and the library's
``monitor --cut-from`` path (:mod:`ragdiag.analyses.native_monitor`) on the same inputs.
"""

from __future__ import annotations

import json
import math

from fakeapp import app, fake_app, lib, texts  # noqa: F401 - fixtures

PAGE = "app_pages/monitor.py"
CONFIG = "E/bm25"


def _table(lib):
    from ragdiag.analyses.threshold.score import score_table
    from ragdiag.core.gate import Gate

    return score_table(lib, CONFIG, Gate(4))


def _write_scored_log(path, lib) -> list[tuple[str, float]]:
    """Weeks 46 and 47: the ground truth's queries with their own best BM25 score; week 48: the same queries with
    their scores halved (the traffic drifted away from the corpus). Returns (week, score) per line."""
    table = _table(lib)
    rows, said = [], []
    for week, (day, factor) in enumerate((("2026-11-16", 1.0), ("2026-11-23", 1.0), ("2026-11-30", 0.5))):
        for q, s in zip(lib.queries, table.top):
            score = float(s) * factor if math.isfinite(s) else 0.0
            rows.append(json.dumps({"query": q.text, "time": f"{day}T10:00:00Z", "score": score}))
            said.append((day, score))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return said


def _switch(at):
    found = [w for w in at.get("button_group") if w.proto.label == "Score the gate reads"]
    return found[0] if found else None


def test_a_scored_log_is_judged_on_the_native_score_at_its_cut(fake_app, lib, tmp_path, monkeypatch):
    from ragdiag.analyses.monitor import judge_log, measure_log
    from ragdiag.analyses.native_monitor import NativeKeep, native_calibration, native_measure
    from ragdiag.present.report.native import native_cut
    from ui.fmt import rate

    log = tmp_path / "scored.jsonl"
    said = _write_scored_log(log, lib)
    monkeypatch.setenv("RAGDIAG_MONITOR_LOG", str(log))
    table = _table(lib)
    at_cut = native_cut(table, 0.05)
    at = app(PAGE, config=CONFIG, score="native")
    assert not at.exception
    assert _switch(at) is not None
    page = texts(at)
    assert f"{CONFIG} at the cut on screen, **{at_cut.text}** (higher keeps), keep 4" in page
    frame = next(d.value for d in at.dataframe if "refused" in d.value.columns)
    # by hand: each week's lines refused when the score is under the cut
    weeks = sorted({d for d, _ in said})
    by_hand = [sum(s < at_cut.cut for d, s in said if d == w) for w in weeks]
    assert frame["queries"].tolist() == [sum(d == w for d, _ in said) for w in weeks]
    keep = NativeKeep(at_cut.cut)
    mon = judge_log(measure_log(log, encoder=None, chunk_vectors=None, measure=native_measure),
                    native_calibration(table, keep), keep, period="week")
    assert [p.refused.count for p in mon.periods] == by_hand and by_hand[2] > by_hand[0]  # week 48 drifted
    assert frame["refused"].tolist() == [rate(p.refused) for p in mon.periods]


def test_a_log_without_scores_says_what_it_must_hold(fake_app, lib, tmp_path, monkeypatch):
    from ui.native_monitor_view import needs_score_words

    log = tmp_path / "plain.jsonl"
    log.write_text("\n".join(json.dumps({"query": q.text, "time": "2026-11-16T10:00:00Z"}) for q in lib.queries)
                   + "\n", encoding="utf-8")
    monkeypatch.setenv("RAGDIAG_MONITOR_LOG", str(log))
    at = app(PAGE, config=CONFIG, score="native")
    assert not at.exception
    infos = [i.value for i in at.info]
    assert needs_score_words(_table(lib).score) in infos and "`score`" in infos[0]
    assert "at the cut on screen" in texts(at)  # the page goes on with the dense distance
    assert _switch(at) is None


def test_the_dense_context_reads_the_distance_even_with_scores(fake_app, lib, tmp_path, monkeypatch):
    from ragdiag.core.gate import cut_text

    log = tmp_path / "scored.jsonl"
    _write_scored_log(log, lib)
    monkeypatch.setenv("RAGDIAG_MONITOR_LOG", str(log))
    at = app(PAGE, config=CONFIG, cut="0.6")
    assert not at.exception and _switch(at) is None
    assert f"**{cut_text(0.6)}**" in texts(at) and "higher keeps" not in texts(at)
