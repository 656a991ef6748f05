"""The funnel, hubs, granularity and cost views, headless (AppTest): every number equals the library's.

Same tiny corpus and settings as test_app.py (strategies A and E; dense, bm25, hybrid; the real encoder).
"""

from __future__ import annotations

import pandas as pd
import pytest
from apptest import app as _open, frame_with, library, texts, tiny  # noqa: F401 (fixtures and helpers)

pytestmark = pytest.mark.model


def app(page: str, **params):
    """The page opened at cut 0.6 (a link naming the cut: the numbers below are the library's at 0.6)."""
    return _open(page, **{"cut": "0.6", **params})


def _funnels(library, cut=0.6, keep=4):
    from ragdiag.analyses.funnel import funnels
    from ragdiag.core.gate import Gate

    return funnels(library, gate=Gate(keep=keep, cut=cut, k=4))


def _records(df: pd.DataFrame) -> list[dict]:
    return [{k: (None if pd.isna(v) else v) for k, v in r.items()} for r in df.to_dict("records")]


def test_overview_funnel_equals_library(tiny, library):
    from ui.diag_frames import stage_queries_frame
    from ragdiag.analyses.funnel import funnel_rows
    from ragdiag.analyses.outcomes import LADDER

    from ragdiag.core.words import RUNG_WORDS

    at = app("app_pages/overview.py")
    table = frame_with(at, "configuration")
    table = next(f for f in (d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe)
                 if any(f"{RUNG_WORDS[s]} (queries)" in f.columns for s in LADDER))
    expected = {r["config"]: r for r in funnel_rows(_funnels(library))}
    assert set(table["configuration"]) == set(expected)
    for r in _records(table):  # a column the table drops is the same on every row (its caption says so)
        for s in LADDER:
            if f"{RUNG_WORDS[s]} (queries)" in r:  # each rung under its one name (ragdiag.core.words)
                assert r[f"{RUNG_WORDS[s]} (queries)"] == expected[r["configuration"]][s]
        assert sum(expected[r["configuration"]][s] for s in LADDER) == 8
    assert any(c.proto.spec and "href" in c.proto.spec for c in at.get("vega_lite_chart"))
    at.selectbox(key="lost_at").set_value("destroyed").run()
    shown = frame_with(at, "inspect")
    lib = stage_queries_frame(_funnels(library), library, "destroyed", link={"cut": "0.600", "keep": "4", "goal": "5"})
    assert shown["query"].tolist() == lib["query_id"].tolist()
    assert shown["inspect"].tolist() == lib["inspect"].tolist()
    assert set(shown.loc[shown["configuration"] == "A/dense", "query"]) == {"q1:course", "q1:ticket"}  # straddles 512
    # every link carries the page's context (cut, keep, goal) beside the query and the configuration
    assert "inspector?cut=0.600&keep=4&goal=5&q=q1%3Acourse&config=A%2Fdense" in shown["inspect"].tolist()


def test_overview_funnel_follows_the_filters_and_url(tiny, library):
    at = app("app_pages/overview.py", strategies="E", retrievers="hybrid", lost_at="answered")
    table = frame_with(at, "answered (queries)")
    assert table["configuration"].tolist() == ["E/hybrid"]
    shown = frame_with(at, "inspect")
    f = {x.config.label: x for x in _funnels(library)}["E/hybrid"]
    assert shown["query"].tolist() == f.queries("answered")


def test_overview_granularity_and_redundancy_equal_library(tiny, library):
    from ragdiag.analyses.granular import granular_rows, redundancy_rows

    from ui.fmt import rate

    at = app("app_pages/overview.py")
    table = frame_with(at, "level")
    rows = granular_rows(library)
    assert len(table) == len(rows)
    for shown, r in zip(table.to_dict("records"), rows):
        assert (shown["configuration"], shown["level"]) == (r.config, r.level)
        assert shown["R@4 (share of queries)"] == rate(r.recall[4])
    lib = redundancy_rows(library, k=4)
    want = [rate(r.redundancy) for r in lib]
    cols = {"configuration", "redundant slots", "slots", "redundancy (share of slots)"}
    frames = [d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe]
    red = next(f for f in frames if "configuration" in f.columns and set(f.columns) <= cols)
    assert red["configuration"].tolist() == [r.config for r in lib]
    if "redundancy (share of slots)" in red:
        assert red["redundancy (share of slots)"].tolist() == want
    else:  # the same on every row: said once, in the caption
        assert len(set(want)) == 1 and want[0] in texts(at)


def test_inspector_shows_the_stage_per_configuration(tiny, library):
    at = app("app_pages/inspector.py", q="q1:course", config="A/dense")
    shown = frame_with(at, "configuration").set_index("configuration")["outcome"].to_dict()  # not the failures table
    from ui.inspect_words import RUNG_WORDS

    expected = {f.config.label: RUNG_WORDS.get(s, s) for f in _funnels(library)
                for s in [next(r.stage for r in f.rows if r.query_id == "q1:course")]}
    assert shown == expected  # one vocabulary: the ladder's rungs, in the words a person reads
    assert shown["A/dense"] == RUNG_WORDS["destroyed"]


def test_inspector_stage_filter_from_url(tiny, library):
    fs = {f.config.label: f for f in _funnels(library)}
    at = app("app_pages/inspector.py", config="A/dense", stage="destroyed")
    shown = [o.split(" · ")[0] for o in at.selectbox(key="q").options]  # "id · outcome · text"
    assert shown == fs["A/dense"].queries("destroyed")
    checked = 0  # at keep 1 the tiny corpus has queries whose answer ranks below the one place given
    from ragdiag.analyses.funnel import funnels
    from ragdiag.core.gate import Gate

    for label, f in {f.config.label: f for f in funnels(library, gate=Gate(keep=1, cut=0.6, k=1))}.items():
        for r in [r for r in f.rows if r.stage in ("ranked-low", "not-in-pool")][:1]:
            # a query lost at ranking: the passages given in its place, and the answer's own passage quoted
            from ragdiag.analyses.hubs import crowding

            at = app("app_pages/inspector.py", q=r.query_id, config=label, keep="1")
            expected = crowding(library, label, library.query_index(r.query_id), keep=1)
            shown = frame_with(at, "closer than the answer by")
            assert shown["passage"].tolist() == [c.chunk for c in expected.crowders]
            assert shown["rank"].tolist() == list(range(1, len(expected.crowders) + 1))
            assert shown["in the top 1 of (queries)"].tolist() == [c.k_occurrence for c in expected.crowders]
            top = frame_with(at, "score")  # the whole list, in its expander: the crowding is not a copy of it
            assert len(top) > len(shown)
            holder = library.indexes[label.split("/")[0]].chunks[expected.answer_position]
            from ragdiag.index.citations import CharLocator

            assert any(c.value.endswith(CharLocator(holder.start, holder.end).fragment) for c in at.code)  # its locator
            assert any(holder.content[:40] in h.proto.body for h in at.html)  # and its text, though not given
            checked += 1
    assert checked, "the tiny corpus has a query lost at ranking"


def test_hubs_page_equals_library(tiny, library):
    from ragdiag.analyses.hubs import hub_rows, hubs

    at = app("app_pages/hubs.py", config="E/hybrid")
    assert [t.value for t in at.title] == ["Hubs"]
    table = frame_with(at, "occurrences (queries)")
    expected = hub_rows(hubs(library, "E/hybrid", k=4, top=20))
    assert table["chunk"].tolist() == [r["chunk"] for r in expected]
    assert table["occurrences (queries)"].tolist() == [r["occurrences"] for r in expected]
    assert "config" not in table.columns and "None" not in table.astype(str).to_numpy().ravel().tolist()
    assert table["ratio"].tolist() == pytest.approx([r["ratio"] for r in expected])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["hubs"] == str(sum(h.hub for h in hubs(library, "E/hybrid", k=4, top=None)))
    at.selectbox(key="k").set_value(1).run()
    table = frame_with(at, "occurrences (queries)")
    assert table["occurrences (queries)"].tolist() == [r["occurrences"] for r in hub_rows(hubs(library, "E/hybrid", k=1))]


def test_cost_page_measures_on_request_and_equals_library(tiny, library):
    from ragdiag.analyses.cost import pareto, prompt_tokens
    from ragdiag.core.gate import Gate
    from ui.cache import encoder as _encoder

    at = app("app_pages/cost.py", sample="3")
    assert any(i.value.startswith("No measurement of these documents and questions yet.") for i in at.info)
    at.toggle(key="measure").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    table = frame_with(at, "ms/query median").set_index("configuration")
    assert set(table.index) == {c.label for c in library.results}
    from ragdiag.analyses.summary import summary_rows
    from ui.fmt import rate

    rows = {r.config: r for r in summary_rows(library)}
    assert table["R@4 (share of queries)"].to_dict() == {c: rate(rows[c].recall[4]) for c in table.index}
    est = [rows[c].recall[4].estimate for c in table.index]
    assert est == sorted(est, reverse=True)  # sorted by the primary measure
    assert table["prompt tokens/query"].tolist() == pytest.approx(
        [prompt_tokens(library, c, _encoder(), Gate(4, 0.6)).mean() for c in table.index])
    assert "timed queries" not in table.columns and "timed queries 3" in texts(at)  # constant: said once
    assert [v == "yes" for v in table["Pareto (latency)"]] == pareto(est, table["ms/query median"]).tolist()
    assert "Measured now:" in texts(at) and "Machine: platform" in texts(at)
