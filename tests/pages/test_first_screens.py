"""Plain words on every first screen: the Summary, the Threshold page's first sentence and the report's first screen.

A product owner reads these; the method's words (R@k, "k =", conformal, MaxSim, simultaneous, contrast,
family), an environment variable's name (``RAGDIAG_...``) and any snake_case word live one click away ("How
we know", the appendix, the glossary). The text is read as a person gets it: the Summary and the Threshold
page headless (``streamlit.testing``, the FAKE bag-of-words encoder), the report's HTML up to the story (the
header, the goal strip and the cards; the collapsed "How we know" left out) and its Markdown twin up to the
first section. Configuration ids (``F/rerank-maxsim``) are identifiers that follow their words, not prose:
they are stripped before the check (:func:`apptest.plain_words_problems`).

The run declares a baseline (``RAGDIAG_BASELINE``) and includes the word-level (MaxSim) reranker, so the
comparator is "what you run today" and the reranker's words are on screen to be checked.
"""

from __future__ import annotations

import html
import re

import pytest

from apptest import FAKE_ENCODER, fake_evaluation, first_screen, plain_words_problems, run, tiny_environment

RETRIEVERS = "dense,bm25,hybrid,rerank-maxsim"
BASELINE = "A/hybrid"


@pytest.fixture(scope="module")
def plain_app(tmp_path_factory):
    """The tiny corpus with the reranker and a declared baseline; the app reads the FAKE encoder."""
    with tiny_environment(tmp_path_factory.mktemp("plain"), **FAKE_ENCODER, RAGDIAG_RETRIEVERS=RETRIEVERS,
                          RAGDIAG_BASELINE=BASELINE) as paths:
        yield paths


@pytest.fixture(scope="module")
def plain_lib(plain_app):
    """The library's evaluation of the same inputs with the same FAKE encoder."""
    return fake_evaluation(plain_app, retrievers=RETRIEVERS)


def _app(page: str | None = None):
    from streamlit.testing.v1 import AppTest

    from apptest import APP

    at = AppTest.from_file(APP, default_timeout=90)
    run(at)
    if page:
        at.switch_page(page)
        run(at)
    return at


def test_the_check_finds_what_it_looks_for():
    # each kind of word it must catch, and the identifiers it must not
    bad = "Ship E/hybrid: R@4 at k = 4, conformal cut, MaxSim rerank, simultaneous family of contrasts; max_bluff"
    assert plain_words_problems(bad) == ["R@", "k =", "conformal", "MaxSim", "simultaneous", "contrast", "family",
                                         "max_bluff"]
    assert plain_words_problems("set RAGDIAG_BASELINE") == ["RAGDIAG_"]
    assert plain_words_problems("paragraph cuts, hybrid + word-level rerank (F/rerank-maxsim)") == []


def test_every_configuration_is_named_in_plain_words():
    from ragdiag.analyses.recommend import RETRIEVER_WORDS, STRATEGY_WORDS, describe_config

    for s in STRATEGY_WORDS:
        for r in RETRIEVER_WORDS:
            assert not plain_words_problems(describe_config(f"{s}/{r}")), (s, r, describe_config(f"{s}/{r}"))


def test_summary_first_screen_is_plain_and_judges_the_goal(plain_app, plain_lib):
    from ragdiag.analyses.goals import judge_goals
    from ragdiag.analyses.recommend import recommend

    at = _app()
    first = first_screen(at)
    assert not plain_words_problems(first), plain_words_problems(first)
    rec = recommend(plain_lib)
    n_in = int(plain_lib.in_domain.sum())
    goal, = judge_goals({"answered": rec.answered, "bluffs": rec.bluffs}, n_in=n_in,
                        n_ood=len(plain_lib.queries) - n_in, max_bluff=rec.max_bluff)
    # the library's goal sentence, judged (met / not met) beside its number
    assert f"**Goal** · {goal.goal_words}: " in first and goal.evidence in first
    assert ("met" if goal.met else "not met") in first
    if rec.config != BASELINE:  # the comparator: the declared baseline, named for what it is
        assert "what you run today" in first


def test_threshold_first_sentence_is_plain(plain_app):
    at = _app("app_pages/threshold.py")
    sentence = at.main.markdown[0].value.replace("\\", "")
    assert re.match(r"At cut \d\.\d{3} \([a-z ]+\): of \d+ answerable queries, ", sentence), sentence
    assert not plain_words_problems(sentence), plain_words_problems(sentence)


def test_compare_never_shows_the_environment_variable(plain_app):
    from apptest import texts

    at = _app("app_pages/compare.py")
    assert "RAGDIAG_" not in texts(at)
    at.segmented_control(key="view").set_value("Is the candidate better than what we run?").run()
    assert not at.exception
    shown = texts(at)
    assert "What you run today: **" in shown and f"({BASELINE})" in shown and "RAGDIAG_" not in shown


def _report_first_screens(report) -> tuple[str, str]:
    """The report's first screen as text: the HTML before the story, without the collapsed "How we know", and the
    Markdown before its first section, without its "How we know" block."""
    page = report.to_html()
    head = page.split('<div class="story">', 1)[0].split("<body>", 1)[1]
    head = re.sub(r'<details id="how">.*?</details>', " ", head, flags=re.S)
    md = report.to_markdown().split("\n## ", 1)[0].split("\n", 1)[1]  # the title line is the page's <title>
    md = re.sub(r"<details><summary>How we know.*?</details>", " ", md, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", head)), md.replace("\\", "")


def test_report_first_screen_is_plain_with_the_goal_strip(plain_app, plain_lib):
    from ragdiag.present.report import build_report

    for kwargs in ({}, {"baseline": BASELINE, "baseline_source": "RAGDIAG_BASELINE"}):
        report = build_report(plain_lib, **kwargs)
        for text in _report_first_screens(report):
            assert not plain_words_problems(text), (kwargs, plain_words_problems(text))
            for goal in report.headline.goals():  # the Summary's goal sentence, from the same library function
                assert f"{goal.goal_words}: " in text and goal.status in text and goal.evidence in text
        assert "How we know" in report.to_html() and "R@" in report.to_html()  # the method's words, one click away


def test_report_comparator_is_what_you_run_today_and_grey_when_undetectable(plain_lib):
    from ragdiag.analyses.versus import detectable
    from ragdiag.present.report import build_report

    report = build_report(plain_lib, baseline=BASELINE, baseline_source="RAGDIAG_BASELINE")
    h = report.headline
    if h.config == BASELINE:
        pytest.skip("the baseline is the recommendation here: nothing to compare")
    assert h.against == BASELINE and h.comparator_words().startswith("Compared with what you run today: ")
    page = report.to_html()
    assert "RAGDIAG_" not in page and "RAGDIAG_" not in report.to_markdown()
    for card in h.cards():
        d = card.difference
        if card.name in ("wrong_sources", "no_answer"):  # the two parts of the lost queries: no comparator's delta
            assert d is None
            continue
        assert d is not None
        shown = re.search(rf'<div class="card {card.name}".*?</div></div>', page, re.S).group(0)
        if not detectable(d):  # the interval reaches 0: grey ("d" alone), never good or bad
            assert card.better is None and 'class="d good"' not in shown and 'class="d bad"' not in shown
            assert "no detectable difference" in card.change or card.change.startswith("the same as")
        else:
            assert card.better is not None and "no detectable" not in card.change
