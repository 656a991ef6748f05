"""The Summary, the Export page and the report on the ranking's own score (issue 44), headless on the FAKE encoder:
with the context on the native score (``score=native``) the Summary's four cards, its sentence, the Threshold
page's native sentence and the report give the same counts at one cut, and the download buttons say that cut in
its score. With the dense score (the default) the buttons say the cosine distance cut, as before.

The oracle is the library on the same evaluation: the native report (``build_report(..., score="native")``) and
the raw scores cut by hand.
"""

from __future__ import annotations

from fakeapp import app, fake_app, lib, rec_of, texts  # noqa: F401 - fixtures
from _native_counts import by_hand


def _cut(lib, config, native_cut=None):
    from ragdiag.analyses.threshold.score import score_table
    from ragdiag.core.gate import Gate
    from ragdiag.present.report.native import native_cut as cut_of

    return cut_of(score_table(lib, config, Gate(4)), 0.05, native_cut)


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _labels(at) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]


def test_summary_cards_threshold_sentence_and_report_agree_on_the_native_score(fake_app, lib):
    from ragdiag.core.words import OUTCOME_WORDS as W
    from ragdiag.present.report.build import build_report
    from ui.fmt import rate

    rec = rec_of(lib)
    at_cut = _cut(lib, rec.config)
    report = build_report(lib, score="native")
    cards = {c.name: c.cell for c in report.headline.cards()}
    want = by_hand(lib, rec.config, 4, at_cut.cut)
    assert {k: c.count for k, c in cards.items()} == want and report.headline.native.cut == at_cut.cut

    at = app(score="native")
    shown = _metrics(at)
    assert {k: shown[W[k]] for k in want} == {k: rate(cards[k]) for k in want}  # the cards: the report's cells
    page = texts(at)
    assert f"Ship {rec.words}, {at_cut.filter}" in page.replace("**", "")
    assert (f"At {at_cut.text} (higher keeps): of {report.n_in} answerable queries, {want['answered']} "
            f"{W['answered']}, {want['wrong_sources']} {W['wrong_sources']}, {want['no_answer']} {W['no_answer']}; "
            f"{want['bluffs']} of {report.n_ood} off-topic queries") in page
    assert f"Download report at {at_cut.text}" in _labels(at)

    threshold = texts(app("app_pages/threshold.py", config=rec.config, score="native"))
    assert (f"At {at_cut.score} ≥ {at_cut.cut:g} (the proposed cut): of {report.n_in} answerable queries, "
            f"{want['answered']} {W['answered']}, {want['wrong_sources']} {W['wrong_sources']}, "
            f"{want['no_answer']} {W['no_answer']}; {want['bluffs']} of {report.n_ood} off-topic") in threshold


def test_a_native_cut_in_the_url_moves_the_cards_and_the_button(fake_app, lib):
    from ragdiag.analyses.threshold.score import score_table
    from ragdiag.core.gate import Gate
    from ragdiag.core.words import OUTCOME_WORDS as W
    from ui.fmt import rate
    from ui.native_view import native_cells

    rec = rec_of(lib)
    table = score_table(lib, rec.config, Gate(4))
    proposed = _cut(lib, rec.config).cut
    value = next(float(v) for v in sorted(table.holder[table.in_domain], reverse=True) if v != proposed)
    at_cut = _cut(lib, rec.config, value)
    at = app(score="native", native_cut=repr(value))
    want = by_hand(lib, rec.config, 4, value)
    cells = native_cells(table, value)
    assert {k: cells[k].count for k in want} == want
    assert {k: _metrics(at)[W[k]] for k in want} == {k: rate(cells[k]) for k in want}
    assert f"At {at_cut.text} (higher keeps): of " in texts(at)
    assert f"{want['answered']} {W['answered']}, {want['wrong_sources']} {W['wrong_sources']}" in texts(at)
    assert f"Download report at {at_cut.text}" in _labels(at)


def test_the_export_page_offers_the_native_report_at_its_cut(fake_app, lib):
    config = "E/bm25"
    at_cut = _cut(lib, config)
    at = app("app_pages/export.py", config=config, score="native")
    labels = _labels(at)
    assert f"Download report at {at_cut.text} (HTML)" in labels and f"Download report at {at_cut.text} (Markdown)" \
        in labels
    assert f"at {at_cut.text}, keeping at most 4 passages" in texts(at)


def test_the_dense_score_keeps_the_buttons_on_the_distance(fake_app, lib):
    from ragdiag.core.gate import cut_text

    rec = rec_of(lib)
    assert f"Download report at cut {cut_text(rec.cut)}" in _labels(app())
    labels = _labels(app("app_pages/export.py", config="E/hybrid", cut="0.6"))
    assert "Download report at cut 0.600 (HTML)" in labels


def test_report_args_carry_the_native_score_and_build_the_pages_report(fake_app, lib):
    """The arguments both download buttons build the report with: on the native score, its cut and no distance cut;
    the report they build has the cards the Summary shows."""
    from types import SimpleNamespace

    from ragdiag.present.report.build import build_report
    from ui.report import report_args

    rec = rec_of(lib)
    base = dict(config=rec.config, cut=rec.cut, keep=4, max_bluff=0.05, min_answered=None, is_recommendation=True)
    dense = report_args(lib, SimpleNamespace(**base, score="dense", native_cut=None))
    assert "score" not in dense and "native_cut" not in dense  # the dense report's arguments, as before
    args = report_args(lib, SimpleNamespace(**base, score="native", native_cut=None))
    assert args["score"] == "native" and args["cut"] is None and args["native_cut"] is None
    report = build_report(lib, **args)
    at_cut = _cut(lib, rec.config)
    assert report.headline.native.cut == at_cut.cut
    assert {c.name: c.cell.count for c in report.headline.cards()} == by_hand(lib, rec.config, 4, at_cut.cut)


def test_your_choice_on_the_native_score_is_at_its_cut(fake_app, lib):
    from ragdiag.core.words import OUTCOME_WORDS as W
    from ui.fmt import rate

    from ragdiag.analyses.threshold.score import score_table
    from ragdiag.core.gate import Gate
    from ui.native_view import native_cells

    at_cut = _cut(lib, "E/bm25")
    cells = native_cells(score_table(lib, "E/bm25", Gate(4)), at_cut.cut)
    at = app(config="E/bm25", score="native")
    box = next(i.value for i in at.info if "Your choice" in i.value).replace("\\", "")
    assert f"at {at_cut.text} (higher keeps), at most 4 passages: {W['answered']} {rate(cells['answered'])}" in box
    assert f"{W['bluffs']} {rate(cells['bluffs'])}" in box
