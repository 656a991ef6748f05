"""The dashboard's decision pages, headless, on the FAKE encoder (fast selection): Summary, Overview, Threshold,
Compare and Inspector show the library's numbers, and the shared context (configuration, cut, keep) moves them.

``RAGDIAG_ENCODER=fakes:fake_encoder`` makes the app embed with the bag-of-words
:class:`fakes.FakeEncoder`, so these tests run in seconds without model weights;
the oracle is the library's own evaluation with the same fake. The real model's
path through every page stays in ``tests/model/test_app.py`` (marker ``model``).
"""

from __future__ import annotations

import pytest

from apptest import first_screen, plain_words_problems, run
from fakeapp import app, fake_app, field, frames as _frames, lib, param, rec_of, texts  # noqa: F401 - fixtures

# ----- Summary -------------------------------------------------------------------------------------

def test_summary_names_the_recommendation_in_words_with_its_rates(fake_app, lib):
    from ragdiag.core.gate import cut_text
    from ui.fmt import rate

    rec = rec_of(lib)
    at = app()
    assert [t.value for t in at.title] == ["Summary"]
    shown = texts(at)
    assert f"Ship **{rec.words}** at strictness {cut_text(rec.cut)}" in shown
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.threshold.rates import rate_rows
    from ragdiag.core.gate import Gate
    from ragdiag.core.words import OUTCOME_WORDS

    row = rate_rows(gate_table(lib, rec.config, Gate(rec.keep)), [rec.cut])[0]
    # the four outcomes, one word each (answered, given wrong passages, refused, bluffs)
    assert [m.label for m in at.metric] == list(OUTCOME_WORDS.values())
    assert [m.value for m in at.metric] == [rate(rec.answered), rate(row.wrong_sources), rate(row.no_answer),
                                            rate(rec.bluffs)]
    assert row.answered.count == rec.answered.count and row.bluffs.count == rec.bluffs.count
    assert not at.warning and not at.error  # no warning on a first screen


def test_summary_deltas_are_against_the_runner_up_grey_unless_detectable(fake_app, lib):
    from ragdiag.analyses.versus import detectable, versus
    from ragdiag.core.gate import Gate
    from ui.fmt import difference_text

    rec = rec_of(lib)
    at = app()
    deltas = [m.proto.delta for m in at.metric]
    assert rec.runner_up_rates  # the tiny corpus has one: the check below is not empty
    vs = versus(lib, rec.config, Gate(rec.keep, rec.cut, rec.k), rec.runner_up, Gate(rec.keep, rec.runner_up_cut))
    expected = [difference_text(d) if detectable(d) else "no difference"
                if all(round(100 * x) == 0 for x in (d.estimate, d.low, d.high))
                else "no detectable difference"
                for d in (vs.differences[k] for k in ("answered", "bluffs"))]
    assert deltas == [expected[0], "", "", expected[1]]  # answered and bluffs against the runner-up
    grey = [m.proto.delta for m in at.metric if m.proto.delta.startswith("no ")]
    assert all(m.proto.color == m.proto.MetricColor.GRAY for m in at.metric if m.proto.delta in grey)
    assert "Compared with the runner-up: " in texts(at)


def test_summary_first_screen_speaks_plain_words(fake_app, lib):
    """No method word on the Summary's first screen (the "How we know" expander holds them)."""
    at = app()
    first = first_screen(at)
    assert "Ship **" in first
    assert not plain_words_problems(first), plain_words_problems(first)


def test_summary_download_report_and_use_button(fake_app, lib):
    from ragdiag.core.gate import cut_text

    rec = rec_of(lib)
    at = app()
    assert f"Download report at cut {cut_text(rec.cut)}" in [b.proto.label for b in at.get("download_button")]
    assert at.button(key="use_recommended").disabled  # the context already is the recommendation
    field(at, "cut").set_value(0.3)
    run(at)
    assert param(at, "cut") == "0.300"
    assert "Your choice" in texts(at)
    at.button(key="use_recommended").click()
    run(at)
    assert float(param(at, "cut")) == float(cut_text(rec.cut)) and param(at, "config") == rec.config
    assert at.button(key="use_recommended").disabled


# ----- Overview ------------------------------------------------------------------------------------

def test_overview_recall_table_is_the_library_sorted_by_the_gates_k(fake_app, lib):
    from ragdiag.core.defaults import PRIMARY_K
    from ragdiag.analyses.summary import summary_rows
    from ui.fmt import rate

    at = app("app_pages/overview.py")
    table = next(d.value for d in at.dataframe if "configuration" in d.value.columns
                 and f"R@{PRIMARY_K} (share of queries)" in d.value.columns)
    table = table.data if hasattr(table, "data") else table
    rows = {r.config: r for r in summary_rows(lib)}
    assert set(table["configuration"]) == set(rows)
    est = [rows[c].recall[PRIMARY_K].estimate for c in table["configuration"]]
    assert est == sorted(est, reverse=True)
    for _, r in table.iterrows():
        assert r[f"R@{PRIMARY_K} (share of queries)"] == rate(rows[r["configuration"]].recall[PRIMARY_K])
    assert table.set_index("configuration").loc["A/dense", "destroyed (questions)"] == 1  # the tea needle
    assert "None" not in table.astype(str).to_numpy().ravel().tolist()


def test_overview_filters_from_the_url(fake_app):
    at = app("app_pages/overview.py", strategies="E", retrievers="bm25")
    table = next(d.value for d in at.dataframe if "configuration" in d.value.columns)
    table = table.data if hasattr(table, "data") else table
    assert list(table["configuration"]) == ["E/bm25"]


def test_overview_funnel_counts_are_the_librarys(fake_app, lib):
    from ragdiag.core.defaults import DEFAULT_KEEP, PRIMARY_K
    from ragdiag.core.gate import Gate
    from ragdiag.analyses.funnel import funnels

    at = app("app_pages/overview.py", config="A/dense")
    cut = float(param(at, "cut"))  # the cut proposed for A/dense (nothing chosen), which the page says it uses
    fs = {f.config.label: f for f in funnels(lib, gate=Gate(keep=DEFAULT_KEEP, cut=cut, k=PRIMARY_K))}
    n = fs["A/dense"].counts().get("answered", 0)
    assert f"A/dense answers {n} of {len(fs['A/dense'].rows)} answerable queries" in texts(at)
    table = next(d.value for d in at.dataframe if "configuration" in d.value.columns
                 and any(c.endswith("(queries)") and not c.startswith("found") for c in d.value.columns))
    table = table.data if hasattr(table, "data") else table
    assert set(table["configuration"]) == set(fs)
    for stage in ("destroyed", "answered", "refused"):
        col = f"{stage} (queries)"
        if col in table.columns:
            assert dict(zip(table["configuration"], table[col])) == {c: f.counts().get(stage, 0) for c, f in fs.items()}


# ----- Threshold -----------------------------------------------------------------------------------

def _rates(at):
    df = next(d.value for d in at.dataframe if "outcome" in d.value.columns)
    return {r["outcome"]: r for r in df.to_dict("records")}


def test_threshold_rates_equal_the_sweep_at_the_context_cut(fake_app, lib):
    from ragdiag.analyses.threshold import sweep
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.core.gate import Gate
    from ui.fmt import rate
    from ragdiag.analyses.threshold import rate_rows

    at = app("app_pages/threshold.py", config="E/hybrid", cut="0.7")
    inputs = gate_table(lib, "E/hybrid", Gate(4))
    row = sweep(inputs, [0.7]).row(0.7)
    shown = _rates(at)
    assert shown["answered"]["queries"] == row.answered
    assert shown["refused (nothing close enough)"]["queries"] == row.no_answer
    assert shown["bluffs (off-topic, all)"]["queries"] == row.bluffs
    assert shown["answered"]["share (95% interval)"] == rate(rate_rows(inputs, [0.7])[0].answered)


def test_threshold_use_this_cut_applies_the_proposal_exactly(fake_app, lib):
    from ragdiag.analyses.threshold import Goal, cut_choice
    from ragdiag.core.gate import cut_text
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.core.gate import Gate

    from ragdiag.core.gate import cut_text

    at = app("app_pages/threshold.py", config="E/hybrid", cut="1")
    choice = cut_choice(gate_table(lib, "E/hybrid", Gate(4)), Goal(max_bluff=0.05))
    assert "misses the goal of at most 5%" in texts(at)  # at cut 1 every off-topic query gets sources
    at.button(key="use_cut").click()
    run(at)
    printed = cut_text(choice.proposal.cut)  # the context holds the printed cut: typed back, the same rates
    assert field(at, "cut").value == float(printed)
    assert param(at, "cut") == printed
    assert f"At strictness **{printed}** (your choice), 0 of 2 off-topic questions still get passages" in texts(at)
    assert "meets the goal" in texts(at)
    # the download carries exactly the cut on screen (here the proposal, after "Use this cut")
    assert f"Download the thresholds at cut {cut_text(choice.proposal.cut)} (YAML)" in [
        b.proto.label for b in at.get("download_button")]


def test_threshold_answered_goal(fake_app, lib):
    from ragdiag.analyses.threshold import Goal, cut_choice
    from ragdiag.core.gate import cut_text
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.core.gate import Gate

    at = app("app_pages/threshold.py", config="E/hybrid", cut="0.05")
    at.segmented_control(key="goal").set_value("answered at least")
    run(at)
    choice = cut_choice(gate_table(lib, "E/hybrid", Gate(4)), Goal(min_answered=0.5))
    assert f"Use this cut: {cut_text(choice.proposal.cut)}" in [b.label for b in at.button]
    assert "0 of 8 answerable questions get a passage holding the answer (0%): it misses the goal of at least 50%" \
        in texts(at)


# ----- Compare -------------------------------------------------------------------------------------

def test_compare_counts_are_the_librarys(fake_app, lib):
    from ragdiag.analyses.compare.comparisons import compare

    at = app("app_pages/compare.py", view="Explore every pair", a="E/dense", b="A/dense")
    c = compare(lib, "E/dense", "A/dense", k=4)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["wins of E/dense"] == str(c.test.wins)
    assert metrics["losses of E/dense"] == str(c.test.losses)


def test_compare_starts_from_the_context(fake_app):
    at = app("app_pages/compare.py", view="Explore every pair", config="E/bm25")
    assert at.selectbox(key="a").value == "E/bm25"


# ----- Inspector -----------------------------------------------------------------------------------

def test_inspector_answers_in_one_sentence(fake_app):
    at = app("app_pages/inspector.py", q="q1:course", config="A/dense")
    verdict = at.error[0].value.replace("\\", "")
    assert verdict.startswith("**blind 512-char cuts, dense retrieval (A/dense)** — Split by the chunking: no "
                              "passage holds the answer whole")
    assert "Answered at this cut by: E/" in verdict


def test_inspector_pins_and_uses_one_vocabulary(fake_app):
    from ui.inspect_words import RUNG_WORDS

    at = app("app_pages/inspector.py", q="q2:course", config="E/bm25")
    frame = next(f for f in _frames(at) if "configuration" in f.columns)
    assert frame["configuration"].iloc[0] == "E/bm25"
    assert set(frame["outcome"]) <= set(RUNG_WORDS.values())
    assert "None" not in frame.astype(str).to_numpy().ravel().tolist()


def test_inspector_next_failure_and_off_topic(fake_app, lib):
    from ragdiag.analyses.funnel import funnels

    at = app("app_pages/inspector.py", q="q1:course", config="A/dense", cut="0.05")
    assert "· split by the chunking ·" in at.selectbox(key="q").format_func("q1:course")
    at.button(key="next_failure").click()
    run(at)
    nxt = at.selectbox(key="q").value
    assert nxt != "q1:course" and at.query_params["q"] in (nxt, [nxt])
    assert at.error  # a failure is said as one (red) sentence
    at = app("app_pages/inspector.py", q="o1", config="E/dense", cut="0.05")
    assert "Correctly refused: the corpus does not answer it and nothing was closer than the cut 0.050" in \
        texts(at)


def test_context_survives_a_change_of_page(fake_app):
    at = app("app_pages/threshold.py", config="E/bm25", cut="0.55")
    at.switch_page("app_pages/inspector.py")
    run(at)
    assert field(at, "config").value == "E/bm25"
    assert field(at, "cut").value == pytest.approx(0.55)
    assert "cut 0.550" in texts(at)


# ----- Every table in the one grammar -------------------------------------------------------------

def _grammar_problems(at, page: str) -> list[str]:
    """Tables showing "None", a snake_case header or a column with one value on every row."""
    import re

    problems = []
    for i, df in enumerate(_frames(at)):
        cells = df.astype(str).to_numpy().ravel().tolist()
        if "None" in cells or "nan" in cells:
            problems.append(f"{page} table {i}: a missing value shown as None/nan")
        problems += [f"{page} table {i}: a count shown as a float in {c!r}" for c in df.columns
                     if df[c].dtype == object and any(re.fullmatch(r"\d+\.0", str(v)) for v in df[c])]
        problems += [f"{page} table {i}: snake_case header {c!r}" for c in df.columns
                     if re.search(r"[a-z]_[a-z]", str(c))]
        if len(df) > 1:
            problems += [f"{page} table {i}: constant column {c!r}" for c in df.columns
                         if c not in ("status",) and df[c].astype(str).nunique() == 1]
    return problems


def _run_file(lib, path):
    import json

    res, chunks = lib.result("E/bm25"), lib.indexes["E"].chunks
    lines = [json.dumps({"query_id": q.id, "hits": [{"text": chunks[int(p)].content} for p in res.top_order[i, :5]]})
             for i, q in enumerate(lib.queries)]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_no_table_shows_none_snake_case_or_a_constant_column(fake_app, lib, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDIAG_ROOTS", str(tmp_path))
    problems, seen = [], {}
    for page in ("chunking", "documents", "export", "summary", "overview", "threshold", "inspector", "compare",
                 "cost", "hubs", "variants"):
        at = app(f"app_pages/{page}.py", config="A/dense")
        problems += _grammar_problems(at, page)
        seen[page] = len(at.dataframe)
    at = app("app_pages/external.py")
    at.text_input(key="run_path").set_value(str(_run_file(lib, tmp_path / "mine.jsonl"))).run()
    assert not at.exception, [e.value for e in at.exception]
    problems += _grammar_problems(at, "external")
    seen["external"] = len(at.dataframe)
    assert not problems, "\n".join(problems)
    assert seen["chunking"] >= 2 and seen["documents"] == 1 and seen["external"] >= 2  # the check saw the tables


def test_chunking_table_is_the_librarys_fewest_destroyed_first_with_the_context_marked(fake_app, lib):
    from ragdiag.analyses.summary import chunking_rows

    at = app("app_pages/chunking.py", config="E/bm25")
    df = _frames(at)[0]
    rows = {r.strategy: r for r in chunking_rows(lib)}
    assert list(df["strategy"]) == sorted(rows, key=lambda s: (rows[s].destroyed, rows[s].embedded_tokens, s))
    assert df.set_index("strategy").loc["A", "destroyed needles (questions)"] == rows["A"].destroyed == 1
    assert df.set_index("strategy").loc["E", "chunks"] == rows["E"].chunks


def test_external_run_tables_say_rates_with_intervals_and_dashes(fake_app, lib, tmp_path, monkeypatch):
    from ragdiag.core.defaults import PRIMARY_K

    monkeypatch.setenv("RAGDIAG_ROOTS", str(tmp_path))
    at = app("app_pages/external.py")
    at.text_input(key="run_path").set_value(str(_run_file(lib, tmp_path / "mine.jsonl"))).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    recall = next(df for df in _frames(at) if "configuration" in df.columns)
    assert list(recall["configuration"]) == ["ext/mine"]
    assert recall[f"R@{PRIMARY_K} (share of queries)"].iloc[0].endswith(")")  # "55% (42–67)"
    assert recall["destroyed (questions)"].iloc[0] == "–"  # no chunking of ours: a dash, not None
    ranks = next(df for df in _frames(at) if "query" in df.columns)
    if "needle rank (position)" in ranks.columns:
        numeric = [r for r in ranks["needle rank (position)"] if r != "–"]
        assert numeric == sorted(numeric)
    else:  # the same rank on every row is said once, above the table
        assert "Every row: needle rank (position)" in texts(at)


def test_threshold_shows_the_slice_verdict_of_the_library(fake_app, lib):
    """The verdict near the top and the slices' section below are the library's, at the context's bluff goal;
    the slicing is the ground truth's (here one language, no tags: by doc), not a widget."""
    import re

    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.slice_cuts import choose_by, cut_slices, query_labels
    from ragdiag.analyses.threshold import Goal
    from ragdiag.core.gate import Gate

    at = app("app_pages/threshold.py", config="E/hybrid", cut="0.7")
    by = choose_by(lib.queries)
    assert by == "doc"
    try:
        expected = cut_slices(gate_table(lib, "E/hybrid", Gate(4)), query_labels(lib.queries, by, lib.truth),
                              by=by, goal=Goal(max_bluff=0.05)).verdict.sentence
    except ValueError as exc:  # no global cut on this tiny set: the page says why instead
        expected = str(exc)
    page = texts(at)
    expected = re.sub(r"`([^`]*)`", r"“\1”", expected)
    assert expected in page and "One cut for every doc?" in page
    assert page.index(expected) < page.index("One cut for every doc?")  # the verdict comes first
    assert not at.exception
