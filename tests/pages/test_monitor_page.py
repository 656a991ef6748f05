"""The Monitor page, headless, on the FAKE encoder (fast selection): no log configured says how to set one; a
configured log shows the library's periods, and a departed period's farthest queries.

The oracle is :func:`ragdiag.analyses.monitor.monitor_log` on the same inputs with the same FAKE encoder.
"""

from __future__ import annotations

import json

import pytest

from fakeapp import app, fake_app, texts  # noqa: F401 (fake_app is a fixture)

PAGE = "app_pages/monitor.py"
#: Week 2's traffic: questions the tiny tea, bike and bread corpus does not answer.
MOVED = ("How do I tune the C parameter of a support vector machine?",
         "What is the difference between bagging and boosting?",
         "How does k-means choose its initial centroids?",
         "When should I standardise features before a linear model?",
         "How do I read a precision-recall curve?",
         "What does the learning rate do in gradient boosting?")


def _write_log(path, truth_path) -> None:
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    cal = [q for question in truth["questions"] for q in question["queries"].values()]
    cal += [o["query"] for o in truth["ood"]]
    lines = [{"query": q, "time": f"2026-11-1{6 + i % 3}T10:00:00Z"} for i, q in enumerate(cal * 3)]
    lines += [{"query": q, "time": f"2026-11-2{3 + i % 3}T10:00:00Z"} for i, q in enumerate(MOVED * 5)]
    rows = [json.dumps(r) for r in lines]
    rows.insert(3, json.dumps({"time": "2026-11-16T10:00:00Z"}))  # line 4: no query
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_without_a_log_the_page_says_how_to_configure_one(fake_app, monkeypatch):
    monkeypatch.delenv("RAGDIAG_MONITOR_LOG", raising=False)
    at = app(PAGE)
    shown = texts(at)
    assert [t.value for t in at.title] == ["Monitor"]
    assert "--monitor-log FILE" in shown and "RAGDIAG_MONITOR_LOG" in shown
    assert not any("log" in t.label.lower() for t in at.text_input)  # a visitor never types the log's path


def test_served_locked_the_log_is_the_operators(fake_app, tmp_path, monkeypatch):
    log = tmp_path / "live.jsonl"
    _write_log(log, fake_app["truth"])
    monkeypatch.setenv("RAGDIAG_LOCKED", "1")
    monkeypatch.setenv("RAGDIAG_MONITOR_LOG", str(log))
    at = app(PAGE)
    assert not at.exception and not at.text_input  # locked: no path field anywhere, the log is still read
    assert "the refused share is not judged" in texts(at)  # no premise in the link: shown, not judged


def test_the_page_shows_the_librarys_periods_and_what_moved(fake_app, tmp_path, monkeypatch):
    from fakes import fake_encoder
    from ragdiag.analyses.monitor import gate_calibration, monitor_log
    from ragdiag.core.gate import Gate
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate
    from ui.fmt import rate

    log = tmp_path / "live.jsonl"
    _write_log(log, fake_app["truth"])
    monkeypatch.setenv("RAGDIAG_MONITOR_LOG", str(log))
    at = app(PAGE, config="E/dense", cut="0.65", keep="4", offtopic="40")
    assert not at.exception

    corpus = load_corpus(fake_app["root"])
    truth = load_truth(fake_app["truth"], corpus)
    enc = fake_encoder()
    ev = evaluate(corpus, truth, encoder=enc, strategies="E", retrievers="dense")
    gate = Gate(4, 0.65)  # the FAKE distances sit high: 6 of the 10 calibration queries refused
    cal, vectors, _ = gate_calibration(ev, "E/dense", gate, enc)
    mon = monitor_log(log, encoder=enc, chunk_vectors=vectors, calibration=cal, gate=gate, off_topic_share=0.4)
    # 4 questions and 2 off-topic queries predict anything from 0 to 30 of 30 refused: nothing can be called a
    # move on so small a ground truth (the bundled one, with the real model, flags: test_browser_monitor.py)
    assert mon.periods[1].refused.count == 30 and mon.periods[1].band == (0, 30) and not mon.flagged

    shown = texts(at)
    assert mon.headline in shown and "1 bad lines not counted: 4 (no query)" in shown
    table = next(df.value for df in at.dataframe if "refused" in df.value.columns)
    assert table["week"].tolist() == [p.period for p in mon.periods]
    assert table["refused"].tolist() == [rate(p.refused) for p in mon.periods]
    assert table["verdict"].tolist() == ["as predicted", "as predicted"]
    assert table["predicted (nothing moved)"].tolist() == ["0–30 (0–100%)", "0–30 (0–100%)"]
    assert mon.expected.words()[1:] in shown and "Ville's inequality" in shown

    at.segmented_control(key="monitor_period").set_value("day").run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "refused" in df.value.columns)
    assert table["day"].tolist() == ["2026-11-16", "2026-11-17", "2026-11-18", "2026-11-23", "2026-11-24",
                                     "2026-11-25"]


def test_chart_is_tall_enough():
    from ui.monitor_charts import CHART_HEIGHT, monitor_frame, refused_chart

    class Row:  # a hand-made period: 3 of 10 refused, 1 to 6 predicted
        period, queries, flagged, sentence, direction, band = "2026-W48", 10, False, "s", "", (1, 6)
        refused = type("C", (), {"rate": 0.3, "low": 0.1, "high": 0.6, "count": 3})()

    frame = monitor_frame(type("M", (), {"periods": (Row(),)})())
    spec = refused_chart(frame, title="t", period="week").to_dict()
    assert spec["height"] == CHART_HEIGHT >= 240 and len(spec["layer"]) == 3  # the band, the rule, the point
    assert frame.loc[0, "state"] == "as predicted" and frame.loc[0, "refused"] == pytest.approx(0.3)
    assert (frame.loc[0, "predicted_low"], frame.loc[0, "predicted_high"]) == pytest.approx((0.1, 0.6))
    Row.band = None  # not judged: no band drawn
    spec = refused_chart(monitor_frame(type("M", (), {"periods": (Row(),)})()), title="t", period="week").to_dict()
    assert len(spec["layer"]) == 2


def test_the_log_is_read_once_for_every_cut_grouping_and_premise(fake_app, tmp_path, monkeypatch):
    # the served cost: a new cut, keep, grouping or premise re-judges the distances read, never the log
    import ragdiag.analyses.monitor as monitor
    from fakeapp import field
    from ui import cache

    log = tmp_path / "live.jsonl"
    _write_log(log, fake_app["truth"])
    monkeypatch.setenv("RAGDIAG_MONITOR_LOG", str(log))
    cache.monitor_reading.clear()
    reads = []
    real = monitor.measure_log
    monkeypatch.setattr(monitor, "measure_log", lambda *a, **k: reads.append(a) or real(*a, **k))
    at = app(PAGE, config="E/dense", cut="0.65", keep="4")
    assert not at.exception and len(reads) == 1
    headlines = {at.markdown[0].value}
    for change in (lambda: field(at, "cut").set_value(0.6), lambda: field(at, "keep").set_value(3),
                   lambda: at.segmented_control(key="monitor_period").set_value("day"),
                   lambda: at.number_input(key="offtopic").set_value(40.0)):
        change().run()
        assert not at.exception
        headlines.add(next(m.value for m in at.markdown if m.value.startswith("####")))
    assert len(reads) == 1, len(reads)
    assert len(headlines) > 1  # the changes reached the page (the cut is in its headline)
    log.write_text(log.read_text(encoding="utf-8") + json.dumps({"query": "tea", "time": "2026-11-30"}) + "\n",
                   encoding="utf-8")
    at.run()  # an edited log is another file: read again
    assert not at.exception and len(reads) == 2


@pytest.mark.parametrize("value", ["abc", "500", "nan"])
def test_a_bad_premise_in_a_link_is_no_premise(fake_app, tmp_path, monkeypatch, value):
    log = tmp_path / "live.jsonl"
    _write_log(log, fake_app["truth"])
    monkeypatch.setenv("RAGDIAG_MONITOR_LOG", str(log))
    at = app(PAGE, config="E/dense", cut="0.65", keep="4", offtopic=value)
    assert not at.exception and at.number_input(key="offtopic").value is None
    assert "the refused share is not judged" in texts(at) and "State the share of live queries" in texts(at)
