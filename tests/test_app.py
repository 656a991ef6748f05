"""The dashboard, headless: every page renders, widgets change what is shown, numbers equal the library's.

Uses ``streamlit.testing.v1.AppTest`` on a tiny corpus written to a temporary
folder (3 Markdown documents, 4 questions, 2 out-of-domain queries), strategies
A and E, retrievers dense, bm25, hybrid, and the real encoder (loaded once per
process by the app's cached loader).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")

TEA_INTRO = (
    "Tea is the dried leaf of Camellia sinensis, and how it tastes depends on how it was processed. "
    "White and green teas are barely oxidised, oolongs sit in the middle, and black teas are fully oxidised. "
    "Water quality matters as much as the leaf: soft, fresh water gives the clearest cup. "
    "Loose leaves need room to unfold, so use a pot or a wide basket rather than a small ball. "
    "A warmed pot keeps the water temperature steady while the leaves steep. "
)
TEA_NEEDLE = "Green tea should be brewed with water at about 80 degrees Celsius for two to three minutes."
TEA_REST = (
    " Boiling water scalds the leaves and makes the cup bitter and astringent.\n\n"
    "## Storage\n\n"
    "Keep tea in an opaque, airtight tin away from spices, because the leaves absorb smells. "
    "Most green teas lose their fresh aroma within a year of harvest.\n\n"
    "## Black tea\n\n"
    "Black tea tolerates boiling water and steeps for four to five minutes. Milk softens its tannins.\n"
)
BIKE = (
    "# Bicycle care\n\n"
    "A clean bicycle lasts longer and shifts more precisely. Wash the frame with mild soap, never a jet.\n\n"
    "## Chain\n\n"
    "The chain wears faster than any other part and stretches as its pins wear. "
    "Chain lubricant should be applied to the inner links and the excess wiped off after a minute. "
    "Measure chain stretch every thousand kilometres with a chain checker.\n\n"
    "## Tyres\n\n"
    "Road tyres run at six to eight bar; check the pressure weekly because air seeps through the tube.\n\n"
    "## Web page sample\n\n"
    "A shop page once embedded this raw snippet: <script>alert(1)</script> and nothing else ran.\n"
)
BREAD = (
    "# Sourdough\n\n"
    "Sourdough bread rises with wild yeast and lactic acid bacteria instead of baker's yeast.\n\n"
    "## Starter\n\n"
    "Feed the starter equal weights of flour and water once a day. "
    "A sourdough starter is ready to use when it doubles in volume within six hours of feeding. "
    "If it smells of acetone it is hungry and needs more frequent feeds.\n\n"
    "## Baking\n\n"
    "Bake the loaf in a preheated cast iron pot with the lid on for the first twenty minutes, "
    "then remove the lid so the crust can brown.\n"
)
TRUTH = {
    "questions": [
        {"id": "q1", "needle": TEA_NEEDLE,
         "queries": {"course": "At what temperature and for how long should green tea be brewed?",
                     "ticket": "my green tea always tastes bitter, what water temp do I use??"}},
        {"id": "q2", "needle": "Chain lubricant should be applied to the inner links and the excess wiped off after a minute.",
         "queries": {"course": "How should chain lubricant be applied?",
                     "ticket": "bike chain squeaks, how do I oil it properly"}},
        {"id": "q3", "needle": "A sourdough starter is ready to use when it doubles in volume within six hours of feeding.",
         "queries": {"course": "When is a sourdough starter ready to use?",
                     "ticket": "how do i know my starter is ready for baking bread"}},
        {"id": "q4", "needle": "Road tyres run at six to eight bar; check the pressure weekly because air seeps through the tube.",
         "queries": {"course": "What pressure do road tyres need?",
                     "ticket": "what psi/bar should my road bike tires be at"}},
    ],
    "ood": [
        {"id": "o1", "kind": "far", "query": "How do I renew my passport before travelling abroad?"},
        {"id": "o2", "kind": "near", "query": "What grind size should I use for espresso coffee?"},
    ],
}


def write_tiny_corpus(base: Path) -> tuple[Path, Path]:
    """Write the tiny corpus and its ground truth under ``base``; return (folder, truth file)."""
    root = base / "tiny"
    root.mkdir(parents=True, exist_ok=True)
    head = "# Tea\n\n## Brewing\n\n"
    tea = head + TEA_INTRO + TEA_NEEDLE + TEA_REST
    start = tea.index(TEA_NEEDLE)
    assert start < 512 < start + len(TEA_NEEDLE), "the tea needle must straddle the first 512-character cut"
    (root / "tea.md").write_text(tea, encoding="utf-8")
    (root / "bike.md").write_text(BIKE, encoding="utf-8")
    (root / "bread.md").write_text(BREAD, encoding="utf-8")
    truth = base / "tiny.truth.json"
    truth.write_text(json.dumps(TRUTH, indent=2), encoding="utf-8")
    return root, truth


ENV = {"RAGDIAG_STRATEGIES": "A,E", "RAGDIAG_RETRIEVERS": "dense,bm25,hybrid"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Tiny corpus, truth and cache folder; the app's environment points at them for this module."""
    base = tmp_path_factory.mktemp("app")
    root, truth = write_tiny_corpus(base)
    env = {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth), "RAGDIAG_CACHE": str(base / "cache"),
           # the tests type paths under pytest's temporary folders and the fixture knowledge base
           "RAGDIAG_ROOTS": os.pathsep.join([str(tmp_path_factory.getbasetemp()), str(ROOT / "tests" / "fixtures")])}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield {"root": root, "truth": truth, "cache": base / "cache"}
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def library(tiny):
    """The library's own evaluation of the same inputs (oracle for the numbers the pages show)."""
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.store import Store
    from ragdiag.documents.truth import load_truth
    from ui.cache import encoder as _encoder

    corpus = load_corpus(tiny["root"])
    truth = load_truth(tiny["truth"], corpus)
    with Store(tiny["cache"]) as store:
        return evaluate(corpus, truth, encoder=_encoder(), strategies="A,E", retrievers="dense,bm25,hybrid",
                        store=store)


def app(page: str | None = None, **params):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({k: v for k, v in params.items()})  # the URL a link opens
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page:  # the entry point (the Summary), then the page, the URL's parameters still there
        settle(at)
        at.switch_page(page)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return settle(at)


def settle(at, seconds: float = 120.0):
    """Rerun until the shared background job has every strategy (the page then says nothing is computing)."""
    import time

    deadline = time.monotonic() + seconds
    while "still computing" in texts(at) and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def frame_with(at, column: str):
    """The first dataframe shown that has ``column`` (a styled one as its data)."""
    frames = [d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe]
    return next(f for f in frames if column in f.columns)


def texts(at) -> str:
    """All text a page shows in markdown, captions, html, code, text, metrics and alerts."""
    parts = [e.value for e in at.markdown] + [e.value for e in at.caption] + [e.value for e in at.text]
    parts += [e.proto.body for e in at.html] + [e.value for e in at.code]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    parts += [e.value for kind in ("error", "warning", "info", "success") for e in getattr(at, kind)]
    parts += [e.value for e in at.title] + [e.value for e in at.subheader]
    return "\n".join(str(p) for p in parts)


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
    assert "simultaneous" in shown and "MRR (descriptive, this pair alone)" in shown
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
    assert "declared by `RAGDIAG_BASELINE`" in shown or "declared by RAGDIAG_BASELINE" in shown
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
    assert shown["answered"] == row.answered and shown["refused by the cut (nothing close enough)"] == row.no_answer
    assert shown["bluffs (off-topic, all)"] == row.bluffs
    assert "dense model" in texts(at)  # the distance is named
    choice = cut_choice(inputs, Goal(max_bluff=0.05))
    at.button(key="use_cut").click().run()
    settle(at)
    from ragdiag.core.gate import cut_text

    cut_field = next(w for w in at.number_input if str(w.key or "").startswith("ctx_cut_"))
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
    assert "Download report (HTML)" in labels and "per_query.parquet" in labels and any("TREC" in l for l in labels)
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
