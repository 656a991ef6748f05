"""The dashboard, headless: every page renders, widgets change what is shown, numbers equal the library's.

Uses ``streamlit.testing.v1.AppTest`` on a tiny corpus written to a temporary
folder (3 Markdown documents, 4 questions, 2 out-of-domain queries), strategies
A and E, retrievers dense, bm25, hybrid, and the real encoder (loaded once per
process by the app's cached loader). The helpers are in ``tests/helpers/apptest.py``.
"""

from __future__ import annotations

import json
import re

import pytest

from apptest import APP, ROOT, app, frame_with, library, settle, texts, tiny  # noqa: F401 (fixtures)

pytestmark = pytest.mark.model


def test_overview_table_equals_library(tiny, library):
    """The real model's smoke test of the Overview (the fake-encoder tests check the rest)."""
    from ragdiag.analyses.summary import summary_rows
    from ui.fmt import rate

    at = app("app_pages/overview.py")
    assert [t.value for t in at.title] == ["Overview"]
    table = frame_with(at, "R@20 (share of queries)")
    expected = {r.config: r for r in summary_rows(library)}
    assert set(table["configuration"]) == set(expected)
    row = table.set_index("configuration").loc["E/hybrid"]
    assert row["R@20 (share of queries)"] == rate(expected["E/hybrid"].recall[20])
    assert row["MRR"] == f"{expected['E/hybrid'].mrr.estimate:.3f}"
    assert table.set_index("configuration").loc["A/dense", "destroyed (questions)"] == 1  # the tea needle
    assert table.set_index("configuration").loc["E/dense", "destroyed (questions)"] == 0
    assert at.multiselect(key="strategies").value == ["A", "E"]


def test_compare_explore_every_pair_says_what_the_library_says(tiny, library):
    from ragdiag.analyses.compare.comparisons import compare, compare_in_family, pairwise

    at = app("app_pages/compare.py", view="Explore every pair", a="E/dense", b="A/dense", k="1")
    comp = compare_in_family(library, "E/dense", "A/dense", k=1)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["wins of E/dense"] == str(comp.test.wins)  # questions
    assert metrics["losses of E/dense"] == str(comp.test.losses)
    assert metrics["ties"] == str(comp.test.ties)
    assert comp.test.n_questions == 4
    assert metrics["p adjusted"] == f"{comp.p_adjusted:.3g}"
    shown = texts(at)
    assert comp.verdict in shown  # the library's words, simultaneous within the family on screen
    assert "descriptive only" in comp.verdict and "simultaneous over 15 comparisons" in comp.verdict  # k = 1
    assert comp.power in shown
    assert not at.success and comp.verdict not in [e.value for e in at.info]  # exploratory: never coloured
    links = [e for e in at.get("page_link")]
    assert len(links) == len(comp.wins) + len(comp.losses)
    pairs = pairwise(library, k=1)
    assert f"all {len(pairs)} pairs at R@1" in shown and "Descriptive" in shown  # k = 1 is not the primary k
    table = frame_with(at, "beats, after correction")
    assert set(table["code"]) == {c.label for c in library.results}
    shares = [int(v.split("%")[0]) for v in table["R@1 (95% interval)"]]  # a rate as every rate: "73% (61–83)"
    assert all(re.fullmatch(r"\d+% \(\d+–\d+\)", v) for v in table["R@1 (95% interval)"]) and shares == sorted(
        shares, reverse=True)
    assert "simultaneous" in shown and "MRR (descriptive, this pair alone)" in shown
    # the interval the verdict was decided with, as every difference is said: points at R@k, a difference of MRR
    assert f"Simultaneous interval {comp.difference_words()} (" in shown and " pts (" in comp.difference_words()
    mrr = compare(library, "E/dense", "A/dense", k=None)
    assert f"MRR (descriptive, this pair alone): {mrr.difference_words()}, " in shown
    # no declared baseline: the planned question is not offered
    assert "Is the candidate better than what we run?" not in at.segmented_control(key="view").options
    at.selectbox(key="k").set_value(20).run()
    assert str(compare(library, "E/dense", "A/dense", k=20).test.wins) == {m.label: m.value for m in at.metric}[
        "wins of E/dense"]


def test_compare_defaults_to_what_to_ship_and_switches(tiny, library):
    from ragdiag.analyses.compare import effects
    from ragdiag.analyses.recommend import recommend

    at = app("app_pages/compare.py")
    assert at.segmented_control(key="view").value == "What should we ship?"
    assert recommend(library).sentence() in [e.value for e in at.success]
    table = at.dataframe[0].value
    table = table.data if hasattr(table, "data") else table
    # the best's own row carries its lead over the runner-up with its interval, never "best" alone or "0 (0 to 0)"
    lead = [c for c in table["difference to the best (points, simultaneous 95%)"] if c.startswith("best")]
    assert len(lead) == 1 and lead[0].endswith("over the runner-up") and " to " in lead[0]
    assert set(table.get("tier", ["best set"])) <= {"best set", "ruled out as the best"}  # dropped when constant
    at.segmented_control(key="view").set_value("What does each chunking switch do?").run()
    assert not at.exception
    # the tiny run has A and E only: they differ by two switches, so no contrast of the design exists
    with pytest.raises(ValueError, match="no contrast"):
        effects(library)
    assert any("differ by one switch" in e.value for e in at.info)


def test_compare_planned_family_needs_a_declared_baseline(tiny, library, monkeypatch):
    from ragdiag.analyses.compare.comparisons import compare_in_family

    monkeypatch.setenv("RAGDIAG_BASELINE", "E/hybrid")
    at = app("app_pages/compare.py", view="Is the candidate better than what we run?", b="A/dense")
    shown = texts(at)
    # what the baseline is, in words; never the operator's environment variable
    assert "What you run today: **" in shown and "(E/hybrid)" in shown and "RAGDIAG_" not in shown
    planned = compare_in_family(library, "A/dense", "E/hybrid", baseline="E/hybrid")
    assert planned.family == 5 and planned.verdict in shown


def test_chunking_page_and_document_viewer(tiny, library):
    from ragdiag.analyses.summary import chunking_rows

    at = app("app_pages/chunking.py")
    table = at.dataframe[0].value
    table = (table.data if hasattr(table, "data") else table).set_index("strategy")
    rows = {r.strategy: r for r in chunking_rows(library)}
    assert set(table.index) == set(rows)
    for s, r in rows.items():
        assert table.loc[s, "chunks"] == r.chunks
        if "destroyed needles (questions)" in table.columns:
            assert table.loc[s, "destroyed needles (questions)"] == r.destroyed
        if "embedded (wordpieces)" in table.columns:
            assert table.loc[s, "embedded (wordpieces)"] == r.embedded_tokens
    # the document with a destroyed needle is chosen first; A shows the cut inside it
    assert at.selectbox(key="doc").value == "tea"
    at.selectbox(key="strategy").set_value("A").run()
    body = at.html[-1].proto.body
    assert "✂" in body and "destroyed needle q1" in body
    assert any("destroys the needle of q1" in e.value for e in at.error)
    at.selectbox(key="strategy").set_value("E").run()
    assert "✂" not in at.html[-1].proto.body and not at.error


def test_untrusted_text_is_escaped(tiny):
    at = app("app_pages/chunking.py", doc="bike")
    body = at.html[-1].proto.body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>" not in body
    at = app("app_pages/documents.py", doc="bike")
    body = at.html[-1].proto.body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body and "<script>" not in body


def test_threshold_rates_equal_the_sweep_and_the_proposal_applies(tiny, library):
    """The real model's smoke test of the Threshold page."""
    from ragdiag.analyses.threshold import Goal, cut_choice, sweep
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.core.gate import Gate

    at = app("app_pages/threshold.py", config="E/hybrid", cut="0.5")
    df = frame_with(at, "outcome")
    shown = {r["outcome"]: r["queries"] for r in df.to_dict("records")}
    inputs = gate_table(library, "E/hybrid", Gate(4))
    row = sweep(inputs, [0.5]).row(0.5)
    assert shown["answered"] == row.answered and shown["refused (nothing close enough)"] == row.no_answer
    assert shown["bluffs (off-topic, all)"] == row.bluffs
    assert "dense model" in texts(at)  # the distance is named
    choice = cut_choice(inputs, Goal(max_bluff=0.05))
    at.button(key="use_cut").click().run()
    settle(at)
    from ragdiag.core.gate import cut_text

    cut_field = next(w for w in at.number_input if w.key == "ctx_cut")
    assert cut_field.value == float(cut_text(choice.conformal_cut if choice.conformal_cut is not None
                                             else choice.cut))  # the proposal, as printed


def test_inspector_query_from_url_and_citations(tiny, library):
    """The real model's smoke test of the Inspector."""
    at = app("app_pages/inspector.py", q="q2:course", config="E/hybrid", cut="1")
    shown = texts(at)
    assert "How should chain lubricant be applied?" in shown
    assert "#char=" in shown and "bike" in shown
    frame = frame_with(at, "outcome")
    assert frame["configuration"].iloc[0] == "E/hybrid"
    assert set(frame["configuration"]) == {c.label for c in library.results}
    # the needle is highlighted (escaped text inside our own <mark>)
    assert any("<mark" in h.proto.body and "Chain lubricant" in h.proto.body for h in at.html)
    # cut 1: everything passes, so there is a prompt with numbered sources
    assert any("[1]" in c.value and "Question: How should chain lubricant be applied?" in c.value for c in at.code)
    at = app("app_pages/inspector.py", q="o1", config="E/dense", cut="0.05")
    assert "NO ANSWER: no source within cosine distance 0.05" in texts(at)


def test_documents_page_status_filter_and_pages(tiny):
    """The fixture knowledge base: failures keep their reason, PDFs show their page boundaries."""
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.ingest import ingest_rows

    kb = ROOT / "tests" / "fixtures" / "kb"
    expected = ingest_rows(load_corpus(kb))
    at = app("app_pages/documents.py")
    at.text_input(key="corpus_path").set_value(str(kb)).run()
    assert not at.exception
    table = at.dataframe[0].value
    order = {"failed": 0, "warning": 1, "ok": 2}  # failures first, then by path
    expected_shown = sorted(expected, key=lambda r: (order[r["status"]], r["path"]))
    assert table["file"].tolist() == [r["path"] for r in expected_shown]
    assert table["status"].tolist() == [r["status"] for r in expected_shown]
    at.multiselect(key="status").set_value(["failed"]).run()
    table = at.dataframe[0].value
    failed = [r for r in expected_shown if r["status"] == "failed"]
    assert table["reason"].tolist() == [r["reason"] for r in failed]
    at.multiselect(key="status").set_value(["ok", "warning"]).run()
    at.selectbox(key="doc").set_value("pdf/comparison").run()
    body = at.html[-1].proto.body
    assert "page 1 · char 0" in body and "page 5 · char" in body


def test_bad_paths_show_errors_not_tracebacks(tiny, tmp_path):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60).run()
    at.text_input(key="corpus_path").set_value(str(tmp_path / "missing")).run()
    assert not at.exception
    assert any("does not exist" in e.value for e in at.error)
    bad = tmp_path / "bad.truth.json"
    bad.write_text(json.dumps({"questions": [{"id": "x", "needle": "too short", "queries": {"course": "?"}}]}))
    at.text_input(key="corpus_path").set_value(str(tiny["root"]))
    at.text_input(key="truth_path").set_value(str(bad)).run()
    assert not at.exception
    assert any("problem" in e.value for e in at.error)
    assert any("needle is 9 characters" in c.value for c in at.code)


def test_unavailable_retriever_is_listed_with_reason(tiny, monkeypatch):
    """rerank-ce needs a cross-encoder on this machine; when it cannot load it is listed, not dropped."""
    monkeypatch.setenv("RAGDIAG_STRATEGIES", "E")
    monkeypatch.setenv("RAGDIAG_RETRIEVERS", "dense,rerank-ce")
    at = app("app_pages/overview.py")
    configs = set(frame_with(at, "R@20 (share of queries)")["configuration"])
    assert not at.warning  # an expected absence is not a warning
    said = [c.value for c in at.caption if "rerank-ce" in c.value]
    if "E/rerank-ce" in configs:  # a cross-encoder is installed here: it ran
        assert not said
    else:
        assert configs == {"E/dense"}
        assert len(said) == 1 and "Not in this run" in said[0]  # once, quietly, in "About this run"
        assert "cross" in said[0].lower()  # the reason names the missing cross-encoder
        picker = next(w for w in at.selectbox if str(w.key or "").startswith("ctx_config_"))  # the context's field
        assert "E/rerank-ce" not in picker.options


def test_export_page_offers_report_and_tables(tiny, library):
    from ragdiag.present.report.build import build_report

    at = app("app_pages/export.py", config="E/hybrid", cut="0.6", keep="4")
    assert [t.value for t in at.title] == ["Export"]
    labels = [b.proto.label for b in at.get("download_button")]
    assert any(re.fullmatch(r"Download report at cut \d\.\d{3} \(HTML\)", lab) for lab in labels) and "per_query.parquet" in labels and any("TREC" in l for l in labels)
    html = build_report(library, config="E/hybrid", cut=0.6, keep=4).to_html()
    assert "<svg" in html and "https://" not in html


def test_external_run_page_evaluates_and_compares(tiny, library, tmp_path):
    from dataclasses import replace

    from ragdiag.core.defaults import PRIMARY_K
    from ragdiag.analyses.summary import summary_rows
    from ragdiag.evaluation.external import parse_run, run_result
    from ragdiag.analyses.compare.comparisons import compare

    # A run made of the library's own E/bm25 top 5, as text-only hits.
    res, chunks = library.result("E/bm25"), library.indexes["E"].chunks
    lines = [json.dumps({"query_id": q.id, "hits": [{"text": chunks[int(p)].content} for p in res.top_order[i, :5]]})
             for i, q in enumerate(library.queries)]
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    at = app("app_pages/external.py")
    at.text_input(key="run_path").set_value(str(path)).run()
    assert not at.exception, [e.value for e in at.exception]

    expected = run_result(library, parse_run(lines, library.truth, name="mine"))
    view = replace(library, results={**library.results, expected.config: expected})
    row = {r.config: r for r in summary_rows(view)}["ext/mine"]
    from ui.fmt import rate

    table = frame_with(at, "R@20 (share of queries)").set_index("configuration")
    assert table.loc["ext/mine", "R@1 (share of queries)"] == rate(row.recall[1])
    assert table.loc["ext/mine", "R@4 (share of queries)"] == rate(row.recall[4])
    other = at.selectbox(key="run_vs").value  # the context's configuration (the recommended one)
    comp = compare(view, expected.config, other, k=PRIMARY_K)  # the page opens at the primary k
    test = comp.test
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["ext/mine wins"] == str(test.wins) and metrics["ties"] == str(test.ties)
    assert comp.verdict in texts(at).replace("\\", "")


def test_external_run_page_reports_bad_lines(tiny, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"query_id": "nope", "hits": []}\nnot json\n', encoding="utf-8")
    at = app("app_pages/external.py")
    at.text_input(key="run_path").set_value(str(path)).run()
    assert not at.exception
    assert any("cannot be evaluated" in e.value for e in at.error)
    assert "line 2: not valid JSON" in texts(at) and "unknown query id 'nope'" in texts(at)
