"""Tests for the shareable report (ragdiag/present/report/, ragdiag/core/svg.py, ``python -m ragdiag report``).

Plumbing tests build an Evaluation of a tiny hand-made corpus with a FAKE
bag-of-words encoder, so they run in a second; the numbers in the report must
be the library's (``summary.json``, ``sweep_table``, ``pairwise``). The CLI run
with the real model is in ``tests/model/test_report_real_model.py``.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path

import pytest

from ragdiag.cli.parser import main
from ragdiag.documents.corpus import Corpus, make_document
from ragdiag.evaluation.records import Config
from ragdiag.evaluation.evaluate import evaluate
from ragdiag.present.report.build import build_report, default_config
from ragdiag.present.report.render import write_report
from ragdiag.core.defaults import PRIMARY_K
from ragdiag.analyses.compare.comparisons import compare
from ragdiag.analyses.threshold.gate import sweep_table
from ragdiag.present.export import write_outputs
from ragdiag.analyses.threshold.gate import bluffs_at
from ragdiag.analyses.gate_table import gate_table
from ragdiag.core.gate import Gate, cut_text
from ragdiag.core.words import interval, rate_text
from ragdiag.analyses.threshold.rates import rate_rows

from fakes import BagOfWords

REPO = Path(__file__).resolve().parents[2]
SCRIPT = "<script>alert(1)</script>"
CUT = 0.55
KEEP = 2


# Eight one-section documents. In the first five the needle starts just before character 512, so blind
# 512-character chunking (A) cuts it in two; boundary chunking (C) keeps its paragraph whole. With
# fewer than 20 chunks per strategy, every whole needle is in the top 20: at R@20, C wins every query
# of the five destroyed questions against A (10 queries, +10/-0, p = 0.002, Holm p over 6 pairs 0.012),
# and dense vs bm25 tie everywhere (p = 1). Document "zebras" puts <script> in a heading, the needle
# and an ood query (which bluffs: it shares "script alert 1 zebras" with that chunk).
TOPICS = [("zebras", "riverbanks", "dry"), ("volcanoes", "magma", "eruptive"), ("glaciers", "moraines", "cold"),
          ("penguins", "krill", "winter"), ("ferns", "spores", "wet"), ("comets", "ice", "perihelion"),
          ("corals", "polyps", "warm"), ("tides", "moon", "spring")]


def _document(i: int, topic: str, key: str, season: str) -> tuple[str, str]:
    title = f"## {SCRIPT} {topic} basics" if i == 0 else f"## {topic.capitalize()} basics"
    head = f"# {topic.capitalize()} notes\n\n{title}\n\n"
    needle = (f"Observers confirmed that {topic} {SCRIPT if i == 0 else ''} depend on {key} "
              f"during the {season} season.").replace("  ", " ")
    target = 495 - len(head) if i < 5 else 150
    words, j = [], 0
    while len(" ".join(words)) < target:
        words.append(f"{topic}{j % 7}field" if j % 3 else f"note{j}")
        j += 1
    filler = " ".join(words)
    text = f"{head}{filler}.\n\n{needle}\n"
    start = text.index(needle)
    if i < 5:
        assert start < 512 < start + len(needle), (topic, start)
    else:
        assert start + len(needle) < 512
    return text, needle


def _fixture():
    docs, questions = [], []
    for i, (topic, key, season) in enumerate(TOPICS):
        text, needle = _document(i, topic, key, season)
        docs.append(make_document(topic, text, path=f"{topic}.md"))
        questions.append({"id": f"q{i + 1}", "needle": needle,
                          "queries": {"course": f"What do {topic} depend on during the {season} season?",
                                      "ticket": f"{topic} {key} problem"}})
    truth = {"questions": questions,
             "ood": [{"id": "o1", "kind": "near", "query": f"{SCRIPT} zebras"},
                     {"id": "o2", "kind": "far", "query": "quantum chromodynamics lattice gauge"}]}
    return Corpus(root="tiny-report", documents=tuple(docs), name="tiny-report"), truth


@pytest.fixture(scope="module")
def ev():
    from ragdiag.documents.truth import parse_truth

    corpus, raw = _fixture()
    truth = parse_truth(raw, corpus, source="tiny-report.truth.json")
    return evaluate(corpus, truth, encoder=BagOfWords(), strategies="A,C", retrievers="dense,bm25")


@pytest.fixture(scope="module")
def report(ev):
    return build_report(ev, config="C/dense", cut=CUT, keep=KEEP)


@pytest.fixture(scope="module")
def html_text(report):
    return report.to_html()


@pytest.fixture(scope="module")
def md_text(report):
    return report.to_markdown()


@pytest.fixture(scope="module")
def summary(ev, tmp_path_factory):
    out = tmp_path_factory.mktemp("summary")
    write_outputs(ev, out)
    return json.loads((out / "summary.json").read_text())


def table_rows(html_text: str, table_id: str) -> list[list[str]]:
    """The body cells of ``<table id=...>`` as text."""
    m = re.search(rf'<table id="{table_id}">.*?<tbody>(.*?)</tbody></table>', html_text, re.S)
    assert m, f"no table {table_id}"
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(1), re.S)]


def md_rows(md: str, first_cell: str) -> list[list[str]]:
    out = []
    for line in md.splitlines():
        if line.startswith("| ") and line.split("|")[1].strip().replace("\\", "") == first_cell:
            out.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return out


def test_fixture_has_what_the_report_must_show(report):
    assert report.destroyed_counts == {"A": 5, "C": 0}
    assert report.bluffs and report.bluffs[0].query_id == "o1"
    assert 0 < report.sweep_row.answered < report.n_in and report.sweep_row.no_answer > 0


def test_html_is_self_contained(html_text):
    assert html_text.startswith("<!DOCTYPE html>")
    assert "http://" not in html_text and "https://" not in html_text
    lowered = html_text.lower()
    for bad in ("<script", "<link", "@import", "url(", "<iframe", "<img", " src=", " href="):
        assert bad not in lowered, bad
    assert lowered.count("<svg") == 3  # the waterfall, the alternatives and the trade-off curve


def test_untrusted_text_is_escaped(html_text, md_text):
    escaped = html.escape(SCRIPT)
    assert SCRIPT not in html_text and escaped in html_text
    assert html_text.count(escaped) >= 3  # in a destroyed needle, its section title, the bluffing ood query
    # every < of corpus or query text is backslash-escaped (the appendix's own <details> tags are ours)
    plain = re.sub(r"</?(details|summary)>", "", md_text)
    assert not re.search(r"(?<!\\)<", plain)
    assert r"\<script\>alert(1)\</script\>" in md_text


def test_recall_numbers_are_those_of_summary_json(summary, html_text, md_text):
    rows = {r[0]: r for r in table_rows(html_text, "recall-table")}
    md = {r[0]: r for r in (md_rows(md_text, c)[0] for c in rows)}
    assert list(rows) == [r["config"] for r in summary["summary"]] == ["A/dense", "A/bm25", "C/dense", "C/bm25"]
    for r in summary["summary"]:
        expected = interval(r['R@20'], r['R@20_low'], r['R@20_high'])  # "38% (7–78)": the one shape of a rate
        assert rows[r["config"]][4] == expected and md[r["config"]][4].replace("\\", "") == expected
        assert int(rows[r["config"]][6]) == r["destroyed"] == int(md[r["config"]][6])
        assert rows[r["config"]][5] == f"{r['MRR']:.3f}"
    # A destroys 5 needles = 10 queries: R@20 of A is 6/16, of C 16/16
    assert rows["A/dense"][4].startswith("38% ") and rows["C/dense"][4].startswith("100% ")  # 37.5% rounds to 38%
    assert summary["destroyed"]["A"] and not summary["destroyed"]["C"]


def test_sweep_row_and_bluffs_are_the_librarys(ev, report, html_text, md_text):
    expected = sweep_table(ev, "C/dense", Gate(KEEP), cuts=[CUT]).row(CUT)
    s = report.sweep_row
    assert (s.cut, s.answered, s.wrong_sources, s.no_answer, s.lost, s.bluffs) == tuple(
        getattr(expected, key) for key in ("cut", "answered", "wrong_sources", "no_answer", "lost", "bluffs"))
    assert dict(s.bluffs_by_kind) == {"near": expected.bluffs_by_kind["near"], "far": expected.bluffs_by_kind["far"]}
    cells = table_rows(html_text, "tradeoff")
    rates = rate_rows(gate_table(ev, "C/dense", Gate(KEEP)), [CUT])[0]

    def cell(key):  # the count with its rate and 95% interval, as the report writes it: "36 = 56% (44–68)"
        c = rates.outcome(key)
        assert c.count == getattr(expected, key)
        return f"{c.count} = {interval(c.rate, c.low, c.high)}"

    want = [cut_text(CUT), cell("answered"), cell("wrong_sources"), cell("no_answer"), str(expected.lost), cell("bluffs")]
    assert cells == [want]
    assert [[c.replace("\\", "") for c in row] for row in md_rows(md_text, cut_text(CUT))] == [want]  # md escapes [ ]
    bluffs = bluffs_at(ev.result("C/dense"), ev.queries, Gate(KEEP, CUT))
    assert len(bluffs) == expected.bluffs == len(table_rows(html_text, "bluffs-table"))
    first = table_rows(html_text, "bluffs-table")[0]
    chunk = ev.indexes["C"].chunks[bluffs[0].kept[0][0]]
    assert first[:4] == ["o1", "near", f"{SCRIPT} zebras", chunk.id]
    assert first[5] == f"{bluffs[0].kept[0][1]:.3f}"
    # the curve holds the same counts at the chosen cut
    i = report.curve.cuts.index(CUT)
    assert report.curve.answered[i] == expected.answered and report.curve.bluffs[i] == expected.bluffs


def test_destroyed_needles_are_listed_with_the_cut(summary, html_text, md_text):
    rows = table_rows(html_text, "destroyed-table")
    listed = {(r[0], r[1], r[2]) for r in rows}
    assert listed == {("A", d["question_id"], d["doc_id"]) for d in summary["destroyed"]["A"]}
    for d, r in zip(summary["destroyed"]["A"], rows):
        assert f"offset {d['cuts'][0]}" in r[5] and f"after character {d['cuts'][0] - d['start']} " in r[5]
        assert "✂" in r[4]
    assert "A: 5 of 8, C: 0 of 8" in html_text and "A: 5 of 8, C: 0 of 8" in md_text.replace("\\", "")


def test_phrasings_are_not_independent_queries(ev):
    # C finds both phrasings of the 5 questions A destroys: per query +10/-0 (sign test p = 0.002), but per
    # question +5/-0 with d = 2 each: 2 of the 32 sign patterns reach |10|, p = 0.0625
    c = compare(ev, "C/dense", "A/dense", k=20)
    assert (c.test.wins, c.test.losses, c.test.ties) == (5, 0, 3)
    assert c.test.p == 2 / 32
    assert not c.primary and c.status == "not shown different"  # the status follows the interval at every k
    assert "sign-flip p = 0.062" in c.verdict and c.verdict.endswith(f"descriptive only: verdicts are at R@{PRIMARY_K}")


def _decision(ev, report):
    """The comparison the recommendation decided on: answered at each configuration's own cut for the goal."""
    from ragdiag.analyses.recommend import recommend

    h = report.headline
    return recommend(ev, Gate(keep=h.keep, k=h.k), max_bluff=h.max_bluff).comparison


def test_alternatives_are_the_comparison_with_the_best(ev, report, html_text, md_text):
    from ragdiag.core.metrics import hits_at_k

    result = _decision(ev, report)
    a = report.alternatives
    assert a.measure == result.metric and a.measure.startswith("answered at its own cut")
    assert report.k == KEEP and a.best == result.best and a.best_set == result.best_set
    by = {r.config: r for r in result.rows}
    for row in a.all_rows:  # the library's simultaneous differences, the best at 0 against itself
        want = (0.0, 0.0, 0.0) if row.config == result.best else (by[row.config].estimate, by[row.config].low,
                                                                    by[row.config].high)
        assert (row.estimate, row.low, row.high) == want and row.in_best_set == by[row.config].in_best_set
        assert row.answered == by[row.config].mean  # the decision's measure, R@k beside it as the diagnostic
        assert row.recall == hits_at_k(ev.result(row.config).needle_rank[ev.in_domain], report.k).mean()
    assert len(table_rows(html_text, "alternatives-table")) == len(result.rows)
    assert html.escape(a.sentence()) in html_text and a.sentence() in md_text.replace("\\", "")
    assert "Holm over" not in html_text  # no all-pairs family in the report


def test_power_sentence_is_the_tests_own_alone_and_within_the_pairs(ev, report, html_text, md_text):
    from ragdiag.analyses.compare.power import questions_to_resolve, resolvable, sign_test_power

    a = report.alternatives
    pairs = a.m * (a.m - 1) // 2
    phrasings = len(ev.truth.phrasings)
    result = _decision(ev, report)
    # the family's own critical value: the one the best set was decided with
    want = resolvable(report.n_questions, phrasings, k=report.k, family_size=pairs, critical=result.critical)
    assert a.resolution == want and pairs > 1 and phrasings == 2
    alone, fam = a.margin_needs
    # the most favourable case of the sign test: 2 * 5 points = 10% of the questions flip one way;
    # alone six such questions reach p = 2/64, so 80% power needs P(Bin(n, 0.1) >= 6) >= 0.8: first at n = 78
    assert alone == questions_to_resolve(0.05, 2) == 78
    assert sign_test_power(alone, 0.1, 0.0) >= 0.8 > sign_test_power(alone - 1, 0.1, 0.0)
    # within the family: sqrt(m) > c one-way questions (Hsu's one-sided c can ask for fewer than alone)
    assert fam == questions_to_resolve(0.05, 2, critical=result.critical)
    s = a.power_sentence()
    assert (f"alone: about {100 * want.alone:g} points; within the comparison with the best over {a.m} "
            f"configurations, critical value {result.critical:.2f}: about {100 * want.family:g} points.") in s
    assert f"alone: {alone} questions; within the comparison with the best: {fam:,}." in s
    assert html.escape(s) in html_text and s in md_text.replace("\\", "")


def test_zero_bluffs_shows_the_upper_bound(ev):
    r = build_report(ev, config="C/dense", cut=0.01, keep=KEEP)
    assert r.sweep_row.bluffs == 0
    md = r.to_markdown().replace("\\", "")
    assert "0 of 2 off-topic queries bluff: the rate could still be up to 84.2% (95% upper bound)" in md
    assert "No out-of-domain query gets a source" not in md
    assert "dense model" in md  # the distance the gate uses is named


def test_the_cut_chooser_is_in_the_report(ev, report, md_text):
    from ragdiag.core.defaults import DEFAULT_MAX_BLUFF
    from ragdiag.analyses.threshold import Goal, cut_choice

    choice = cut_choice(gate_table(ev, "C/dense", Gate(KEEP)), Goal(max_bluff=DEFAULT_MAX_BLUFF))
    assert report.choice == choice.as_json()
    md = md_text.replace("\\", "")
    assert f"Suggested cut for a bluff rate of at most {100 * DEFAULT_MAX_BLUFF:.0f}%" in md
    assert "cross-validation grouped by question" in md
    # 2 ood queries cannot certify 5%: the report says so
    assert "cannot certify a bluff rate of 5.0% with 2 out-of-domain queries" in md


def test_provenance_stamps(report, summary, html_text, md_text):
    for text in (html_text, md_text.replace("\\", "")):
        assert summary["corpus"]["sha256"] in text
        assert "FAKE-bag-of-words" in text and "000000000000..." in text
        assert summary["versions"]["torch"] in text and summary["versions"]["transformers"] in text
        assert report.generated in text
    assert "tiny-report.truth.json" in html_text


def test_only_one_configuration_has_no_runner_up(ev):
    ev1 = dataclasses.replace(ev, results={Config("C", "dense"): ev.results[Config("C", "dense")]})
    r = build_report(ev1)
    assert r.headline.recommended and r.headline.against is None and r.alternatives.m == 1
    assert r.alternatives.power_sentence() == ""  # no pair, nothing to resolve
    assert all(not c.change for c in r.headline.cards())
    assert r.to_html().count("<svg") == 3 and "against" not in r.to_markdown().split("## Where")[0]


@pytest.mark.parametrize("kwargs, message", [
    ({"config": "E/hybrid", "cut": 0.6}, "E/hybrid was not evaluated"),
    ({"config": "C/dense", "cut": -0.1}, "cut must be"),
    ({"config": "C/dense", "cut": 0.6, "keep": 0}, "keep must be"),
    ({"max_bluff": 1.5}, "max_bluff must be"),
    ({"config": "C-dense", "cut": 0.6}, "STRATEGY/RETRIEVER"),
])
def test_build_report_rejects_bad_input(ev, kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_report(ev, **kwargs)


def test_default_config_is_a_fixed_rule(ev):
    assert default_config(ev) == Config("A", "dense")  # no E/hybrid, no hybrid: the first evaluated


def test_write_report_writes_html_and_markdown_beside(report, tmp_path):
    paths = write_report(report, tmp_path / "sub" / "r.html")
    assert paths == [str(tmp_path / "sub" / "r.html"), str(tmp_path / "sub" / "r.md")]
    assert Path(paths[1]).read_text(encoding="utf-8") == report.to_markdown()
    with pytest.raises(ValueError, match="HTML file"):
        write_report(report, tmp_path / "r.md")


def test_report_bad_config_exits_2_before_loading_anything(tiny_folder, tmp_path, capsys):
    code = main(["report", "--config", "E-hybrid", "--corpus", str(tiny_folder), "--no-cache",
                 "--out", str(tmp_path / "r.html")])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: ") and "'E-hybrid'" in err and "STRATEGY/RETRIEVER" in err
    assert not (tmp_path / "r.html").exists()


# -- the first screen, the story and the appendix ------------------------------------------------------------------

def _first_screen(html_text: str) -> str:
    """The header, the goal strip and the cards: everything before the story, as text, without the collapsed
    "How we know" (the method's words, one click away)."""
    head = html_text.split('<div class="story">', 1)[0].split("<body>", 1)[1]
    head = re.sub(r'<details id="how">.*?</details>', " ", head, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", head))


def _how_we_know(html_text: str) -> str:
    """The collapsed "How we know" under the cards, as text."""
    part = re.search(r'<details id="how">(.*?)</details>', html_text, re.S).group(1)
    return html.unescape(re.sub(r"<[^>]+>", " ", part))


def test_headline_figures_are_the_recommendations(tiny_eval):
    # one source of numbers: the dashboard's Summary reads ragdiag.analyses.recommend.recommend; the report must show
    # the same configuration, cut and rates for the same evaluation (FAKE encoder)
    from ragdiag.analyses.recommend import recommend
    from ragdiag.core.words import rate_text

    rec = recommend(tiny_eval)
    r = build_report(tiny_eval)
    html_text, md = r.to_html(), r.to_markdown().replace("\\", "")
    h = r.headline
    assert (h.config, h.cut, h.answered, h.bluffs, h.lost) == (rec.config, rec.cut, rec.answered, rec.bluffs,
                                                               rec.lost)
    assert h.recommended and h.against == rec.runner_up and dict(h.against_rates or {}) == (rec.runner_up_rates or {})
    screen = _first_screen(html_text)
    assert f"Ship {rec.words} at strictness {cut_text(rec.cut)}" in screen
    parts = h.outcomes  # the lost queries, in their two parts: given wrong passages and refused
    assert parts["wrong_sources"].count + parts["no_answer"].count == rec.lost.count
    cells = {"answered": rec.answered, "bluffs": rec.bluffs, **parts}
    for name, cell in cells.items():  # each card: the percentage and its interval, in both formats
        pct, lo_hi = rate_text(cell).split(" ", 1)
        card = re.search(rf'<div class="card {name}".*?</div></div>', html_text, re.S).group(0)
        assert f">{pct}<" in card and f"{100 * cell.low:.0f}–{100 * cell.high:.0f}%" in card
        assert rate_text(cell) in md.split("## Where")[0]  # "50% (7–93)", as every rate is said
        assert f"{cell.count} of " in card


@pytest.mark.parametrize("reached", [True, False])
def test_the_answered_goal_is_judged_beside_the_bluff_goal_and_changes_nothing_else(tiny_eval, reached):
    # report --min-answered: a second goal, judged on the first screen (HTML and Markdown) and never optimised
    import math

    plain = build_report(tiny_eval).headline
    a = plain.answered.rate
    # a whole percentage at or below the measured rate is met; one at least a point above it is not
    bound = math.floor(100 * a) / 100 if reached else min(1.0, math.floor(100 * a + 1) / 100)
    assert reached or bound > a  # the fixture answers fewer than all its answerable queries
    r = build_report(tiny_eval, min_answered=bound)
    h = r.headline
    assert (h.config, h.cut, h.answered, h.bluffs, h.lost) == (plain.config, plain.cut, plain.answered,
                                                               plain.bluffs, plain.lost)
    bluff, answered = h.goals()
    assert (bluff.measure, answered.measure) == ("bluffs", "answered")
    assert answered.met is reached and answered.status == ("met" if reached else "not met")
    assert answered.goal_words == f"answered at least {100 * bound:g}%" and answered.total == plain.n_in
    page = html.unescape(r.to_html())
    md = r.to_markdown().replace("\\", "")
    screen_md = md.split("## Where")[0]
    for v in (bluff, answered):
        assert f"{v.goal_words}: <b>{v.status}</b>, {v.evidence}.</p>" in page.split('<div class="story">')[0]
        assert f"- Goal: {v.goal_words}: **{v.status}**, {v.evidence}." in screen_md
    assert [g.measure for g in plain.goals()] == ["bluffs"]  # without it: the bluff goal alone
    with pytest.raises(ValueError, match="min_answered"):
        build_report(tiny_eval, min_answered=1.5)


def test_first_screen_has_no_stamps_and_no_other_k(ev, report, html_text, summary):
    screen = _first_screen(html_text)
    assert report.headline.words.lower() in screen.lower() and "%" in screen  # may open the sentence
    for stamp in (summary["corpus"]["sha256"][:12], "FAKE-bag-of-words", "ragdiag 0.", "pipeline", "torch",
                  "platform", "load", "R@20", "R@1 ", "R@8", "MRR"):
        assert stamp not in screen, stamp
    assert f"k = {KEEP}" not in screen and f"k = {KEEP}" in _how_we_know(html_text)  # the gate's k, one click away


def test_named_configuration_is_compared_with_the_recommendation(ev):
    from ragdiag.analyses.recommend import recommend

    rec = recommend(ev, Gate(KEEP))
    other = next(c.label for c in ev.results if c.label != rec.config)
    r = build_report(ev, config=other, cut=CUT, keep=KEEP)
    h = r.headline
    assert not h.recommended and h.against == rec.config and h.against_kind == "the recommendation"
    assert h.sentence().startswith(h.words[:1].upper() + h.words[1:]) and "as chosen for this report" in h.sentence()
    assert f"The recommendation is {rec.words} ({rec.config})" in h.basis()
    answered = h.cards()[0]
    assert answered.against_cell == rec.answered and answered.delta == pytest.approx(
        100 * (h.answered.rate - rec.answered.rate))
    # every change carries its paired interval, the Summary's own (analyses.versus), and says whether it is shown
    from ragdiag.analyses.versus import detectable, versus
    from ragdiag.core.words import difference_text

    vs = versus(ev, other, Gate(KEEP, CUT), rec.config, Gate(KEEP, rec.cut))
    assert any(card.change for card in h.cards())
    for card in h.cards():
        if card.name not in vs.differences:  # given wrong passages and refused: no comparator, no change
            assert not card.change
            continue
        d = vs.differences[card.name]
        if card.change:
            assert difference_text(d) in card.change, (card.change, d)
            shown = detectable(d)
            assert ("no detectable difference" in card.change) != shown
            assert card.better is None or shown  # grey (None) whenever the interval reaches 0


def test_story_then_collapsed_appendix_in_both_formats(report, html_text, md_text):
    story, appendix = html_text.split('<details id="appendix">', 1)
    assert "<details id=\"appendix\" open" not in html_text  # collapsed on screen
    assert story.count("<svg") >= 3 and "<svg" not in appendix.split("</details>", 1)[0].split("<table")[0]
    for section in ("provenance", "recall", "destroyed", "costs", "funnel", "hubs", "cut", "bluffs"):
        assert f'<section id="{section}"' in appendix, section
    for section in ("flow", "alternatives", "tradeoff"):
        assert f'<section id="{section}"' in story, section
    # the Markdown says the same in the same order: its headings are the HTML's h2, in order
    h2 = [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in re.findall(r"<h2>(.*?)</h2>", html_text)]
    md_h2 = [line[3:].replace("\\", "") for line in md_text.splitlines() if line.startswith("## ")]
    assert h2 == md_h2
    assert md_text.index("<details><summary>Appendix") > md_text.index("## Where to set the cut")


def test_busy_machine_is_said(ev):
    quiet = build_report(ev, config="C/dense", cut=CUT, machine={"cpus": 2, "load_average_1min": 0.3})
    busy = build_report(ev, config="C/dense", cut=CUT, machine={"cpus": 2, "load_average_1min": 6.75})
    assert quiet.busy == "" and "busy machine (load 6.75 on 2 CPUs)" in busy.busy
    assert busy.busy in busy.to_html() and busy.busy in busy.to_markdown()


def test_print_stylesheet_opens_the_appendix(html_text):
    css = html_text.split("<style>", 1)[1].split("</style>", 1)[0]
    print_css = css.split("@media print{", 1)[1]
    assert "details#appendix::details-content{content-visibility:visible" in print_css
    assert "break-inside:avoid-page" in print_css and "break-before:page" in print_css
    assert "@page{" in css


NOT_SHOWN = "not shown different"
# an interval as the report writes it: "(-3 to +12)", ", -3 to +12", "[-0.25, +0.05]"
INTERVAL = re.compile(r"([+-]?\d+(?:\.\d+)?)%?\s*(?:to|,)\s*([+-]?\d+(?:\.\d+)?)")


def _excludes_zero(text: str) -> bool:
    text = text.replace("\u2212", "-")  # the words' true minus, "−33 to +33"
    return any(not float(lo) <= 0 <= float(hi) for lo, hi in INTERVAL.findall(text))


def _tables(text: str) -> list[list[list[str]]]:
    """Every table of an HTML page or a Markdown text as rows of cell texts (the header row first)."""
    out = []
    for t in re.findall(r"<table[^>]*>(.*?)</table>", text, re.S):
        out.append([[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row,
                                                                                  re.S)]
                    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", t, re.S)])
    block: list[list[str]] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip().replace("\\", "") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if not all(set(c) <= set("-:") for c in cells):
                block.append(cells)
        elif block:
            out.append(block)
            block = []
    return out


def contradictions(text: str) -> list[str]:
    """Sentences and table rows that say "not shown different" beside an interval that excludes zero.

    A sentence: the intervals written after the words. A table row: its "difference" cells.
    """
    bad = []
    for table in _tables(text):
        head = [h.lower() for h in table[0]]
        cols = [i for i, h in enumerate(head) if "difference" in h]
        for row in table[1:]:
            if any(c.lower() == NOT_SHOWN for c in row) and any(_excludes_zero(row[i]) for i in cols if i < len(row)):
                bad.append(" | ".join(row))
    prose = re.sub(r"<table.*?</table>", "", text, flags=re.S)
    prose = "\n".join(line for line in prose.splitlines() if not line.startswith("|"))
    prose = html.unescape(re.sub(r"<[^>]+>", "\n", prose)).replace("\\", "")
    for sentence in re.split(r"\n|(?<=[.;])\s", prose):
        low = sentence.lower()
        if NOT_SHOWN in low and _excludes_zero(low.split(NOT_SHOWN, 1)[1]):
            bad.append(sentence.strip())
    return bad


def test_the_contradiction_check_can_fail():
    assert contradictions("<li>Overlap (D vs C, dense): not shown different, -12 points, -20 to -3 within 9.</li>")
    assert contradictions("| a | difference [95%] | verdict |\n|---|---|---|\n| x | -0.25 [-0.50, -0.01] | "
                          "not shown different |\n")
    assert not contradictions("| a | R@4 | difference | verdict |\n|---|---|---|---|\n| x | 0.5 [0.1, 0.9] | "
                              "-0.25 [-0.50, +0.01] | not shown different |\n")
    assert contradictions("<p>E/hybrid vs F/rerank: not shown different (p = 1.000): -0.14 [-0.25, -0.03]</p>")
    assert not contradictions("<li>Header: not shown different, +3 points, -4 to +9 within the 9 contrasts.</li>")
    assert not contradictions("| a | difference (95% interval) | verdict |\n|---|---|---|\n| x | 0 pts (\u221233 to +33) | "
                              "not shown different |\n")
    assert contradictions("| a | difference (95% interval) | verdict |\n|---|---|---|\n| x | \u22125 pts (\u22129 to "
                          "\u22121) | not shown different |\n")


def test_no_verdict_contradicts_its_interval(report, html_text, md_text, tiny_corpus, tiny_truth, fake_encoder):
    assert contradictions(html_text) == [] and contradictions(md_text) == []
    variants = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C",
                        retrievers="dense,bm25,dense-int8,dense-binary")
    r = build_report(variants, config="C/dense", cut=0.6, k=2)
    assert "not shown different" in r.to_html()  # the check has verdicts to read
    assert contradictions(r.to_html()) == [] and contradictions(r.to_markdown()) == []


def test_cards_compare_with_a_declared_baseline(ev):
    from ragdiag.analyses.recommend import recommend

    rec = recommend(ev, Gate(KEEP))
    base = next(c.label for c in ev.results if c.label not in (rec.config, rec.runner_up))
    r = build_report(ev, keep=KEEP, baseline=base, baseline_source="RAGDIAG_BASELINE")
    h = r.headline
    # named in words as what you run today; where it was declared (an environment variable) is the operator's
    assert h.recommended and h.against == base and h.against_kind == "what you run today"
    rates = build_report(ev, config=base, keep=KEEP).headline  # the baseline at its own cut for the same goal
    assert h.against_cut == rates.cut and dict(h.against_rates) == {"answered": rates.answered,
                                                                     "bluffs": rates.bluffs, "lost": rates.lost}
    assert "against what you run today" in r.to_html() and "Compared with what you run today: " in r.to_html()
    assert "RAGDIAG_BASELINE" not in r.to_html() and "RAGDIAG_BASELINE" not in r.to_markdown()
    with pytest.raises(ValueError, match="was not evaluated"):
        build_report(ev, keep=KEEP, baseline="E/hybrid")


def test_a_truth_without_off_topic_queries_still_reports():
    from ragdiag.documents.truth import parse_truth

    corpus, raw = _fixture()
    raw["ood"] = []
    ev0 = evaluate(corpus, parse_truth(raw, corpus, source="no-ood.json"), encoder=BagOfWords(), strategies="C",
                   retrievers="dense,bm25")
    r = build_report(ev0)
    assert "no off-topic queries were asked, so bluffing is not measured" in r.headline.sentence()
    assert r.headline.cards()[-1].value == "n/a" and r.effects is None  # one strategy: no contrast of the design
    assert "bluffing cannot be measured" in r.to_html() and "bluffing cannot be measured" in r.to_markdown()
