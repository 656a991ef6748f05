"""The dashboard on the ranking's own score (issue 44), headless on the FAKE encoder: the context and the URL carry
the score (``score=native``, default dense) and the cut on it; the Threshold page's switch, slider, sentence and
charts read that score; the Summary names the score in words, and says when no configuration meets both goals.

The oracle is the library on the same evaluation (``ragdiag threshold --score native``'s functions), and the raw
scores cut by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fakeapp import app, fake_app, lib, param, rec_of, run, texts  # noqa: F401 - fixtures

PAGE = "app_pages/threshold.py"


def _switch(at):
    found = [w for w in at.get("button_group") if w.proto.label == "Score the gate reads"]
    return found[0] if found else None


def _native(lib, config, max_bluff=0.05):
    from ragdiag.analyses.threshold.score import score_cut, score_table
    from ragdiag.core.gate import Gate

    table = score_table(lib, config, Gate(4))
    return table, score_cut(table, max_bluff)


def _by_hand(lib, config, cut):
    """(answered, bluffs) at ``cut`` from the raw ranking: the top min(k, keep) scores, kept when >= cut."""
    from ragdiag.core.gate import Gate

    res = lib.result(config)
    w = Gate(4).window(res.top_scores.shape[1])
    answered = bluffs = 0
    for i, q in enumerate(lib.queries):
        kept = [j for j in range(w) if math.isfinite(res.top_scores[i, j]) and res.top_scores[i, j] >= cut
                and not (config.endswith("bm25") and res.top_scores[i, j] <= 0)]
        if q.in_domain:
            answered += any(res.top_holds[i, j] for j in kept)
        else:
            bluffs += bool(kept)
    return answered, bluffs


def test_dense_is_the_default_and_the_url_says_nothing_of_the_score(fake_app, lib):
    at = app(PAGE, config="E/bm25")
    assert param(at, "score") is None and param(at, "native_cut") is None
    assert _switch(at) is not None  # BM25 has a score of its own: the switch is there, on dense
    assert "At cut " in texts(at)


@pytest.mark.parametrize("config", ["E/bm25", "E/hybrid"])
def test_a_native_link_shows_the_proposed_cut_and_counts_the_raw_scores(fake_app, lib, config):
    table, choice = _native(lib, config)
    at = app(PAGE, config=config, score="native")
    assert param(at, "score") == "native"
    page = texts(at)
    answered, bluffs = _by_hand(lib, config, choice.cut)
    assert f"At {table.score} ≥ {choice.cut:g} (the proposed cut): of {int(table.in_domain.sum())} answerable " \
           f"queries, {answered} answered" in page
    assert f"; {bluffs} of {int((~table.in_domain).sum())} off-topic queries get passages" in page
    slider = next(w for w in at.select_slider if w.key == "threshold_native_cut")
    assert slider.value == choice.cut
    charts = [c.proto.spec for c in at.get("vega_lite_chart")]
    assert len(charts) == 2 and all(table.score in spec for spec in charts)  # histogram and curve, on this score


def test_the_native_slider_moves_the_cut_into_the_url_and_the_sentence(fake_app, lib):
    config = "E/bm25"
    table, choice = _native(lib, config)
    at = app(PAGE, config=config, score="native")
    slider = next(w for w in at.select_slider if w.key == "threshold_native_cut")
    other = next(s for s in slider.options if float(s) != choice.cut)
    slider.set_value(float(other))
    run(at)
    value = float(other)
    assert float(param(at, "native_cut")) == value
    answered, bluffs = _by_hand(lib, config, value)
    assert f"At {table.score} ≥ {value:g} (your choice): of {int(table.in_domain.sum())} answerable queries, " \
           f"{answered} answered" in texts(at)
    # a link with the cut opens on it
    again = app(PAGE, config=config, score="native", native_cut=repr(value))
    assert next(w for w in again.select_slider if w.key == "threshold_native_cut").value == value


def test_the_switch_goes_back_to_dense(fake_app, lib):
    at = app(PAGE, config="E/bm25", score="native")
    _switch(at).set_value("dense")
    run(at)
    assert param(at, "score") is None and "At cut " in texts(at)


def test_a_bad_score_in_the_url_is_said_and_ignored(fake_app, lib):
    at = app(PAGE, config="E/bm25", score="sparkly")
    assert "score 'sparkly' is not valid" in texts(at)
    assert "At cut " in texts(at)


def test_the_summary_names_the_score_in_words(fake_app, lib):
    from ragdiag.analyses.threshold.native_cuts import filter_words
    from ragdiag.core.gate import cut_text

    rec = rec_of(lib)
    at = app()
    assert f"filter the dense model's cosine distance at {cut_text(rec.cut)}, lower keeps" in texts(at)
    at = app(score="native")
    table, choice = _native(lib, rec.config)
    if choice.cut is not None:
        assert filter_words(choice.cut, table) in texts(at) and "higher keeps" in texts(at)


def test_the_summary_says_when_no_configuration_meets_both_goals(fake_app, lib, monkeypatch):
    """Plumbing, with a FAKE infeasible recommendation (the tiny corpus meets every answered goal): when
    ``recommend`` with an answered goal says no configuration meets both goals, the Summary's headline is that
    sentence, not a cut; when the goals can be met it names the pick and its cut."""
    from dataclasses import replace

    import ragdiag.analyses.recommend as recommend_module
    from ragdiag.analyses.recommend import recommend

    real = recommend_module.recommend
    sentence = ("No configuration meets both goals (at least 97% answered and at most 5% bluffs): at 5% bluffs the "
                "best, E/dense, answers 50% (9–91) at strictness 0.400; no cut on this score separates the off-topic "
                "questions from enough answerable ones here.")

    def fake_infeasible(ev, gate=None, **kw):  # the FAKE: the real recommendation, marked infeasible
        rec = real(ev, gate, **kw)
        return replace(rec, feasible=False, verdict=sentence) if rec.min_answered is not None else rec

    monkeypatch.setattr(recommend_module, "recommend", fake_infeasible)
    at = app(answered="97")
    head = texts(at).split("Goal")[0]
    assert sentence in head.replace("\n", " ") and "Ship " not in head
    monkeypatch.setattr(recommend_module, "recommend", real)
    met = recommend(lib, __import__("ragdiag.core.gate", fromlist=["Gate"]).Gate(4), max_bluff=0.05,
                    min_answered=0.5)
    assert met.feasible is True
    assert "Ship " in texts(app(answered="50")).split("Goal")[0]


def test_native_stops_are_typable_and_each_changes_nothing_between_them(fake_app, lib):
    from ui.native_view import native_counts, native_stops

    table, choice = _native(lib, "E/hybrid")
    stops = native_stops(table, choice.cut)
    assert all(float(f"{s:.4g}") == s for s in stops)
    finite = np.concatenate([table.top[np.isfinite(table.top)], table.holder[np.isfinite(table.holder)]])
    for a, b in zip(stops, stops[1:]):  # no score strictly between two stops but on them: every result shown
        between = finite[(finite >= a) & (finite < b)]
        assert native_counts(table, a) == native_counts(table, b) or between.size
