"""The dashboard's one context (issue 38), headless on the FAKE encoder: the recommendation is the default on every
page, nothing but a visitor's action changes it, a change says so with "Undo", and every in-app link carries it.

The FAKE encoder (``RAGDIAG_ENCODER=fakes:fake_encoder``) keeps these tests at seconds; the oracle is the
library's recommendation of the same evaluation.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest

from fakeapp import frames as _frames, app, fake_app, field, lib, param, run, texts  # noqa: F401 - fixtures

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
    at = app("app_pages/overview.py", config="A/dense", cut="0.999", keep="3", goal="10", answered="40",
             lost_at="destroyed")
    ctx = {"cut": "0.999", "keep": "3", "goal": "10", "answered": "40"}
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
    from apptest import plain_words_problems

    at = app("app_pages/threshold.py")
    first = next(m.value for m in at.main.markdown if m.value.strip())
    assert re.match(r"At cut \d\.\d{3} \(the recommendation\): of \d+ answerable queries, ", first), first
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


# ----- the answered goal: judged beside the bluff goal, carried by the URL, never optimised -----------------------

def _goal_lines(at) -> list[str]:
    return [m.value.replace("\\", "") for m in at.main.markdown if m.value.startswith("**Goal** · ")]


def test_a_link_with_both_goals_judges_both_on_the_summary(fake_app, lib):
    from ragdiag.analyses.goals import judge_goals
    from ragdiag.core.gate import cut_text

    rec = _rec(lib)
    n_in = int(lib.in_domain.sum())
    n_ood = len(lib.queries) - n_in
    at = app("app_pages/summary.py", goal="5", answered="50")
    assert param(at, "answered") == "50" and field(at, "answered").value == 50.0
    bluff, answered = judge_goals({"answered": rec.answered, "bluffs": rec.bluffs}, n_in=n_in, n_ood=n_ood,
                                  max_bluff=0.05, min_answered=0.5)  # the oracle: the library's verdicts
    lines = _goal_lines(at)
    assert len(lines) == 2, lines
    for line, v in zip(lines, (bluff, answered)):
        mark = {True: ":green[**met**]", False: ":red[**not met**]"}[v.met]
        assert line == f"**Goal** · {v.goal_words}: {mark}, {v.evidence}.", line
        assert "(" in v.evidence  # the interval (or the upper bound at 0) beside the number
    assert lines[1].startswith("**Goal** · answered at least 50%: ")
    # judged, not optimised: the recommendation on screen is the one without the answered goal
    assert param(at, "config") == rec.config and param(at, "cut") == cut_text(rec.cut)
    # a choice that answers nothing (cut 0.05: 0 of 8, see test_threshold_answered_goal) misses it, said in words
    at = app("app_pages/summary.py", config=rec.config, cut="0.05", goal="5", answered="50")
    choice = next(i.value for i in at.info if i.value.startswith("**Your choice**"))
    assert "Goal answered at least 50%: **not met**" in choice.replace("\\", ""), choice


def test_without_an_answered_goal_the_summary_judges_the_bluff_goal_alone_and_the_url_has_none(fake_app):
    at = app("app_pages/summary.py")
    assert len(_goal_lines(at)) == 1 and param(at, "answered") is None
    assert field(at, "answered").value is None


def test_a_bad_answered_goal_in_a_link_is_said_and_ignored(fake_app):
    for bad in ("150", "-1", "nan", "half"):
        at = app("app_pages/summary.py", answered=bad)
        assert f"The link's answered {bad!r} is not valid; it was ignored." in [c.value for c in at.sidebar.caption]
        assert len(_goal_lines(at)) == 1 and field(at, "answered").value is None


def test_the_sidebar_sets_the_answered_goal_and_back_to_the_recommendation_keeps_it(fake_app, lib):
    at = app("app_pages/summary.py")
    field(at, "answered").set_value(40.0)
    run(at)
    assert param(at, "answered") == "40" and len(_goal_lines(at)) == 2
    assert "Changed: Goal (answered at least): 40%." in [c.value for c in at.sidebar.caption]
    # "Back to the recommendation" keeps the goals (they are not a choice of cut)
    field(at, "cut").set_value(0.3)
    run(at)
    next(b for b in at.sidebar.button if b.label == "Back to the recommendation").click()
    run(at)
    assert param(at, "answered") == "40" and len(_goal_lines(at)) == 2
    at.switch_page("app_pages/overview.py")  # a change of page keeps it (every in-app link: the crawler above)
    run(at)
    assert param(at, "answered") == "40" and field(at, "answered").value == 40.0


def test_the_threshold_pages_answered_goal_is_the_contexts(fake_app, lib):
    at = app("app_pages/threshold.py", answered="70")
    at.segmented_control(key="goal").set_value("answered at least")
    run(at)
    goal_field = next(w for w in at.number_input if str(w.key or "").startswith("goal_answered_"))
    assert goal_field.value == 70.0 and "the goal of at least 70%" in texts(at)
    goal_field.set_value(60.0)
    run(at)
    assert param(at, "answered") == "60" and field(at, "answered").value == 60.0
    at.switch_page("app_pages/summary.py")
    run(at)
    assert _goal_lines(at)[1].startswith("**Goal** · answered at least 60%: ")
    # picked with none set: the goal the field shows (50%) becomes the context's
    at = app("app_pages/threshold.py")
    at.segmented_control(key="goal").set_value("answered at least")
    run(at)
    assert param(at, "answered") == "50"


def test_the_sidebars_bluff_goal_is_the_context_and_moves_the_recommendation(fake_app, lib):
    from ragdiag.analyses.recommend import recommend
    from ragdiag.core.gate import cut_text

    at = app("app_pages/summary.py")
    field(at, "goal").set_value(20.0)
    run(at)
    rec = recommend(lib, max_bluff=0.2)  # the oracle: the library's recommendation for that goal
    assert param(at, "goal") == "20" and param(at, "cut") == cut_text(rec.cut)
    assert _goal_lines(at)[0].startswith("**Goal** · bluffs at most 20%: ")
