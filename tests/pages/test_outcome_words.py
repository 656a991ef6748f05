"""One meaning per word: the four outcomes of a gate (answered, given wrong passages, refused, bluffs) carry the
same words and the same counts on the Summary, the Threshold page's sentence, the thresholds file and the report,
for the same context (the recommendation at its cut). The tiny corpus with the FAKE encoder."""

from __future__ import annotations

import re

import yaml

from fakeapp import app, fake_app, lib, param, rec_of, texts  # noqa: F401 - fixtures

#: The sentence every surface writes (ragdiag.core.words.outcome_sentence), read back.
SENTENCE = re.compile(r"At cut (\d\.\d{3})(?: \([a-z ]+\))?: of (\d+) answerable queries, (\d+) answered, (\d+) given "
                      r"wrong passages, (\d+) refused; (\d+) of (\d+) off-topic queries get passages \(bluffs\)")


def _counts(text: str) -> tuple[str, dict[str, int]]:
    m = SENTENCE.search(text.replace("\\", ""))
    assert m, text[:600]
    cut, n_in, answered, wrong, refused, bluffs, n_ood = m.groups()
    return cut, {"answered": int(answered), "given wrong passages": int(wrong), "refused": int(refused),
                 "bluffs": int(bluffs), "answerable": int(n_in), "off-topic": int(n_ood)}


def test_the_four_outcomes_read_the_same_on_the_summary_the_threshold_page_the_file_and_the_report(fake_app, lib):
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.threshold import Goal, cut_choice
    from ragdiag.analyses.threshold.export import thresholds_yaml
    from ragdiag.core.gate import Gate
    from ragdiag.core.words import OUTCOME_WORDS
    from ragdiag.present.report import build_report

    rec = rec_of(lib)
    summary = app()  # the recommendation at its cut: nothing chosen
    cut, on_summary = _counts(texts(summary))
    assert [m.label for m in summary.metric] == list(OUTCOME_WORDS.values())  # the cards, one word each
    threshold = app("app_pages/threshold.py", **{k: param(summary, k) for k in ("config", "cut", "keep", "goal")})
    t_cut, on_threshold = _counts(texts(threshold))
    table = gate_table(lib, rec.config, Gate(rec.keep))
    text = thresholds_yaml(table, cut_choice(table, Goal(max_bluff=rec.max_bluff)), config=rec.config,
                           model={"model": "fake"}, cut=float(cut))  # what the page's download writes at its cut
    doc = yaml.safe_load(text)
    f_cut, in_file = _counts(doc["rates"]["at_this_cut_in_words"])
    cells = doc["rates"]["at_this_cut"]
    assert {w: cells[k]["count"] for k, w in OUTCOME_WORDS.items()} == {
        w: in_file[w] for w in OUTCOME_WORDS.values()}
    report = build_report(lib, config=rec.config, cut=float(cut), keep=rec.keep)
    cards = {c.title: c for c in report.headline.cards()}
    assert list(cards) == list(OUTCOME_WORDS.values())
    in_report = {w: cards[w].cell.count for w in OUTCOME_WORDS.values()}
    html = report.to_html()
    for w, c in cards.items():
        assert f'<div class="l">{w}</div>' in html and f"{c.cell.count} of {c.of} " in html
    assert cut == t_cut == f_cut and float(cut) == rec.cut
    four = list(OUTCOME_WORDS.values())
    assert ({w: on_summary[w] for w in four} == {w: on_threshold[w] for w in four} == {w: in_file[w] for w in four}
            == in_report)
    assert sum(on_summary[w] for w in four[:3]) == on_summary["answerable"]  # each answerable query once
