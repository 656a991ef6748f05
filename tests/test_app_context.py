"""The dashboard's one context (issue 38), headless on the FAKE encoder: the recommendation is the default on every
page, nothing but a visitor's action changes it, a change says so with "Undo", and every in-app link carries it.

The FAKE encoder (``RAGDIAG_ENCODER=fakes:fake_encoder``) keeps these tests at seconds; the oracle is the
library's recommendation of the same evaluation.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from test_app_pages import _frames, app, fake_app, field, lib, param, run, texts  # noqa: F401 - fixtures

PAGES = ("summary", "overview", "threshold", "inspector", "export", "compare", "hubs", "cost", "chunking")


def _rec(lib):
    from ragdiag.analyses.recommend import recommend

    return recommend(lib)


def test_the_recommended_cut_is_the_default_on_every_page_without_a_click(fake_app, lib):
    from ragdiag.core.gate import cut_text

    rec = _rec(lib)
    at = app()
    for page in ("overview", "threshold", "inspector", "export", "summary"):
        at.switch_page(f"app_pages/{page}.py")
        run(at)
        assert param(at, "cut") == cut_text(rec.cut), page
        assert param(at, "config") == rec.config, page
        assert field(at, "cut").value == float(cut_text(rec.cut)), page
        assert "The recommendation at its proposed cut." in [c.value for c in at.sidebar.caption], page
    at.switch_page("app_pages/export.py")
    run(at)
    assert f"at cut {cut_text(rec.cut)}" in texts(at) and "the recommendation." in texts(at)


def test_threshold_counts_at_the_default_are_the_recommendations(fake_app, lib):
    rec = _rec(lib)
    at = app("app_pages/threshold.py")
    shown = {r["outcome"]: r for r in next(f for f in _frames(at) if "outcome" in f.columns).to_dict("records")}
    assert shown["answered"]["queries"] == rec.answered.count
    assert shown["bluffs (off-topic, all)"]["queries"] == rec.bluffs.count


def test_a_stale_url_echo_and_a_change_of_page_never_change_the_context(fake_app, lib):
    from ragdiag.core.gate import cut_text

    rec = _rec(lib)
    at = app("app_pages/threshold.py")
    field(at, "cut").set_value(0.3)
    run(at)
    assert param(at, "cut") == "0.300"
    # a request sent before the browser caught up carries the URL this session wrote before: not a choice
    at.query_params["cut"] = cut_text(rec.cut)
    at.query_params["keep"] = "4"
    run(at)
    assert param(at, "cut") == "0.300" and field(at, "cut").value == pytest.approx(0.3)
    # every field is drawn with the context's value: a page change redraws them from it, never from a minimum
    at.switch_page("app_pages/summary.py")
    run(at)
    assert param(at, "cut") == "0.300" and field(at, "cut").value == pytest.approx(0.3)
    assert field(at, "keep").value == 4


def test_a_change_says_so_and_undo_restores_it(fake_app, lib):
    from ragdiag.core.gate import cut_text

    rec = _rec(lib)
    at = app("app_pages/inspector.py")
    field(at, "cut").set_value(0.31234)  # typed with more decimals: held as printed, rounded down
    run(at)
    assert param(at, "cut") == "0.312"
    notes = [c.value for c in at.sidebar.caption]
    assert f"Changed: Strictness (cut): {cut_text(rec.cut)} → 0.312." in notes
    undo = next(b for b in at.sidebar.button if b.label == "Undo")
    undo.click()
    run(at)
    assert param(at, "cut") == cut_text(rec.cut)
    assert "The recommendation at its proposed cut." in [c.value for c in at.sidebar.caption]


def test_a_link_sets_the_context_in_a_new_session(fake_app):
    at = app("app_pages/inspector.py", config="E/bm25", cut="0.45", keep="3", goal="10")
    assert field(at, "config").value == "E/bm25"
    assert field(at, "cut").value == pytest.approx(0.45) and field(at, "keep").value == 3
    assert param(at, "goal") == "10"
    at = app("app_pages/inspector.py", cut="nonsense")  # a malformed link: said, and the context stays
    assert "The link's cut 'nonsense' is not valid; it was ignored." in [c.value for c in at.sidebar.caption]


def test_the_slider_stops_where_an_outcome_changes_and_each_stop_reproduces_its_rates(fake_app, lib):
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.threshold import sweep
    from ragdiag.core.gate import Gate

    at = app("app_pages/threshold.py", config="E/hybrid")
    slider = field(at, "slider")
    stops = list(slider.options)
    table = gate_table(lib, "E/hybrid", Gate(4))
    at_stops = {(r.answered, r.bluffs, r.no_answer) for r in sweep(table, [float(s) for s in stops]).rows()}
    # every cut a person can type at 3 decimals gives a result some stop gives: the slider misses no outcome
    typed = np.round(np.arange(0, float(stops[-1]) + 0.0005, 0.001), 3)
    assert {(r.answered, r.bluffs, r.no_answer) for r in sweep(table, typed).rows()} <= at_stops
    assert len(stops) < len(typed) / 2  # and it stops only where something changes
    slider.set_value(stops[len(stops) // 2])
    run(at)
    assert param(at, "cut") == stops[len(stops) // 2] or param(at, "cut") == f"{float(stops[len(stops) // 2]):.3f}"


def test_every_in_app_link_carries_the_full_context(fake_app, lib):
    """A crawler over the rendered links (page links and table link columns) of the pages that link."""
    at = app("app_pages/overview.py", config="A/dense", cut="0.999", keep="3", goal="10", lost_at="destroyed")
    ctx = {"cut": "0.999", "keep": "3", "goal": "10"}
    links = []
    for page in ("overview", "threshold", "hubs", "compare", "summary"):
        at.switch_page(f"app_pages/{page}.py")
        run(at)
        for el in at.get("page_link"):
            links.append((page, el.proto.page, el.proto.query_string if hasattr(el.proto, "query_string") else ""))
        for df in _frames(at):
            for col in ("inspect", "link"):
                if col in df.columns:
                    links += [(page, "inspector", urlparse(u).query) for u in df[col].dropna()]
    inspector_links = [x for x in links if "inspector" in x[1]]
    assert {p for p, _, _ in inspector_links} >= {"overview", "threshold"}, links  # the crawl saw links
    assert any("glossary" in t for _, t, _ in links), links
    for page, target, query in links:
        q = {k: v[0] for k, v in parse_qs(query).items()}
        assert {k: q.get(k) for k in ctx} == ctx, (page, target, query)
        assert "config" in q, (page, query)



def test_the_funnel_bars_link_with_the_context(lib):
    """The Overview's funnel bars (a chart: the crawler cannot click them) link with the context given to the frame."""
    from ragdiag.analyses.funnel import funnels
    from ragdiag.core.gate import Gate
    from ui.diag_frames import funnel_frame

    carry = {"cut": "0.524", "keep": "4", "goal": "5"}
    frame = funnel_frame(funnels(lib, gate=Gate(keep=4, cut=0.524, k=4)), carry)
    assert len(frame)
    for config, stage, link in zip(frame["config"], frame["stage"], frame["link"]):
        assert {k: v[0] for k, v in parse_qs(urlparse(link).query).items()} == {**carry, "config": config,
                                                                                "stage": stage}


def test_threshold_first_sentence_speaks_plain_words(fake_app, lib):
    from test_app_pages import plain_words_problems

    at = app("app_pages/threshold.py")
    first = next(m.value for m in at.main.markdown if m.value.strip())
    assert first.startswith("At strictness ") or first.startswith(":red[**At strictness "), first
    assert "(the recommendation)" in first
    assert not plain_words_problems(first), (first, plain_words_problems(first))


def test_the_tradeoff_table_names_the_queries_that_change_between_two_stops(fake_app, lib):
    """The curve's keyboard-reachable alternative: at each stop, the counts, and who changes before the next."""
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.core.gate import Gate

    at = app("app_pages/threshold.py", config="E/hybrid")
    df = next(f for f in _frames(at) if "answered from the next cut" in f.columns)
    table = gate_table(lib, "E/hybrid", Gate(4))
    holder = dict(zip(table.query_ids, table.closest_holder))
    cuts = [float(c) for c in df["cut"]] + [float("inf")]
    named = 0
    for i, cell in enumerate(df["answered from the next cut"]):
        for qid in ([] if cell == "–" else [x for x in cell.split(", ") if " more" not in x]):
            qid = qid.split(" +")[0]
            assert cuts[i] <= holder[qid] < cuts[i + 1], (qid, holder[qid], cuts[i], cuts[i + 1])
            named += 1
        assert df["answered (queries)"].iloc[i] == int((table.closest_holder < cuts[i]).sum())
    assert named  # the check saw names
