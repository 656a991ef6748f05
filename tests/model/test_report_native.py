"""The report on the ranking's own score (issue 44): ``build_report(..., score="native")``.

Every count of the native report (the cards, the flow, the trade-off row) is checked against the raw scores cut
by hand (``score >= cut`` over each query's top ``min(k, keep)`` chunks) and against the Threshold page's native
sentence counts (:func:`ui.native_view.native_counts`). The dense report (the default) stays the report it was.
The tiny corpus with the FAKE bag-of-words encoder keeps these at seconds; one test reads the bundled corpus
with the real MiniLM encoder.
"""

from __future__ import annotations

from html import unescape
from dataclasses import replace

import numpy as np
import pytest

from ragdiag.analyses.threshold.score import score_cut, score_table
from ragdiag.core.gate import Gate
from ragdiag.present.report.build import build_report

from _native_counts import by_hand  # noqa: F401 - the oracle, shared with the pages' tests

CONFIGS = ["E/bm25", "E/hybrid", "E/rerank-maxsim", "E/dense"]


@pytest.fixture(scope="module")
def tiny_native(tiny_corpus, tiny_truth, fake_encoder):
    """The tiny corpus, FAKE encoder, with every retriever that has a score of its own."""
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="E",
                    retrievers="dense,bm25,hybrid,rerank-maxsim")


def report_counts(report) -> dict[str, int]:
    """The four cards' counts of a report."""
    return {c.name: c.cell.count for c in report.headline.cards()}


def page_counts(ev, config: str, keep: int, value: float) -> dict[str, int]:
    """The Threshold page's native sentence counts (ui.native_view.native_counts)."""
    from ui.native_view import native_counts

    c = native_counts(score_table(ev, config, Gate(keep)), value)
    return {k: c[k] for k in ("answered", "wrong_sources", "no_answer", "bluffs")}


@pytest.mark.parametrize("config", CONFIGS)
def test_the_native_report_counts_what_cutting_the_raw_scores_counts(tiny_native, config):
    table = score_table(tiny_native, config, Gate(4))
    proposed = score_cut(table, 0.05).cut
    values = sorted({float(v) for v in np.concatenate([table.top, table.holder]) if np.isfinite(v)})
    for value in ([proposed] if proposed is not None else []) + values[:: max(1, len(values) // 4)]:
        r = build_report(tiny_native, config=config, score="native", native_cut=value)
        want = by_hand(tiny_native, config, 4, value)
        assert report_counts(r) == want == page_counts(tiny_native, config, 4, value), (config, value)
        flow = r.flow.counts
        assert flow["answered"] == want["answered"] and r.flow.bluffs == want["bluffs"]
        row = r.trade_off.row
        assert (row.answered, row.wrong_sources, row.no_answer, row.bluffs) == tuple(want.values())
        assert r.headline.native.cut == value


@pytest.mark.parametrize("config", ["E/bm25", "E/rerank-maxsim"])
def test_the_native_report_names_the_score_and_its_direction(tiny_native, config):
    from ragdiag.analyses.threshold.native_cuts import filter_words

    table = score_table(tiny_native, config, Gate(4))
    choice = score_cut(table, 0.05)
    r = build_report(tiny_native, config=config, score="native")
    words = filter_words(choice.cut, table)
    assert r.headline.native.cut == choice.cut and r.headline.native.method == choice.method
    assert words in r.headline.sentence() and "higher keeps" in words
    md, html = r.to_markdown().replace("\\", ""), unescape(r.to_html())
    short = table.score.split(" (")[0]
    for text in (md, html):
        assert words in text and f"{short} ≥ {choice.cut:g}" in text
        assert "strictness 0." not in text  # no cosine distance (nor a mapped rank) printed as the cut
    assert f"cut ({short}, {table.unit}; higher keeps)" in html  # the curve's axis is in the score's units
    assert r.curve.cuts == tuple(sorted(r.curve.cuts)) and choice.cut in r.curve.cuts
    i = r.curve.cuts.index(choice.cut)
    assert r.curve.answered[i] == r.sweep_row.answered and r.curve.bluffs[i] == r.sweep_row.bluffs


def test_a_named_native_cut_is_said_so(tiny_native):
    table = score_table(tiny_native, "E/bm25", Gate(4))
    proposed = score_cut(table, 0.05).cut
    other = float(np.nanmax(table.top[np.isfinite(table.top)]))
    r = build_report(tiny_native, config="E/bm25", score="native", native_cut=other)
    assert r.headline.native.method == "named" and not r.headline.recommended
    assert f"The cut {other:g} on the {table.score} was named for this report" in r.headline.cut_words()
    assert f"{proposed:g}" in r.headline.cut_words()


def test_the_dense_report_is_the_default_and_unchanged(tiny_native):
    """``score="dense"`` is today's report: byte for byte the default's (the generated time set apart), and no
    word of the native score in it."""
    for kw in ({}, {"config": "E/bm25"}, {"config": "E/hybrid", "cut": 0.4}):
        a = replace(build_report(tiny_native, **kw), generated="T")
        b = replace(build_report(tiny_native, score="dense", **kw), generated="T")
        assert a.to_markdown() == b.to_markdown()
        assert a.headline.native is None and a.trade_off.native is None
        assert "higher keeps" not in a.to_markdown() and "strictness" in a.headline.sentence()


@pytest.mark.parametrize("kw, message", [
    ({"score": "sparkly"}, "score must be one of dense, native"),
    ({"native_cut": 3.0}, "needs score='native'"),
    ({"score": "native", "cut": 0.5}, "the cut is native_cut"),
    ({"score": "native", "native_cut": float("nan")}, "finite number"),
])
def test_bad_score_settings_are_refused(tiny_native, kw, message):
    with pytest.raises(ValueError, match=message):
        build_report(tiny_native, config="E/bm25", **kw)


@pytest.mark.model
@pytest.mark.parametrize("config", ["C/bm25", "C/hybrid"])
def test_bundled_native_report_counts_the_raw_scores(bundled_eval_c, config):
    """The bundled corpus, REAL MiniLM: the native report at the proposed cut counts what the raw scores and the
    Threshold page count."""
    table = score_table(bundled_eval_c, config, Gate(4))
    choice = score_cut(table, 0.05)
    r = build_report(bundled_eval_c, config=config, score="native")
    want = by_hand(bundled_eval_c, config, 4, choice.cut)
    assert report_counts(r) == want == page_counts(bundled_eval_c, config, 4, choice.cut)
    assert r.headline.answered.count == choice.answered.count and r.headline.bluffs.count == choice.bluffs.count


# -- the command: report --score native ------------------------------------------------------------------------------

def _report_cli(tiny_folder, tmp_path, monkeypatch, *extra):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")  # the FAKE encoder, for the plumbing
    out = tmp_path / "r.html"
    code = main(["report", "--corpus", str(tiny_folder), "--no-cache", "--strategies", "E", "--retrievers",
                 "dense,bm25", "--no-cost", "--out", str(out), *extra])
    return code, out


def test_report_score_native_writes_the_report_at_the_native_cut(tiny_folder, tmp_path, monkeypatch, capsys):
    code, out = _report_cli(tiny_folder, tmp_path, monkeypatch, "--config", "E/bm25", "--score", "native")
    _, err = capsys.readouterr()
    assert code == 0, err
    md = out.with_suffix(".md").read_text(encoding="utf-8").replace("\\", "")
    assert "filter the BM25 score at " in md and "higher keeps" in md
    assert "report on: E/bm25 at BM25 score ≥ " in err


def test_report_native_cut_is_read_in_the_score_units(tiny_folder, tmp_path, monkeypatch, capsys):
    code, out = _report_cli(tiny_folder, tmp_path, monkeypatch, "--config", "E/bm25", "--score", "native",
                            "--native-cut", "2.5")
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "The cut 2.5 on the BM25 score was named for this report" in out.with_suffix(".md").read_text("utf-8")


@pytest.mark.parametrize("extra, message", [
    (("--native-cut", "2.5"), "add --score native"),
    (("--score", "native", "--cut", "0.5"), "--cut is a cosine distance"),
    (("--score", "native", "--native-cut", "2", "--cut-from", "x.yaml"), "not both"),
    (("--score", "native", "--native-cut", "nan"), "finite number"),
])
def test_report_native_options_are_checked_in_one_line(tiny_folder, tmp_path, monkeypatch, capsys, extra, message):
    code, out = _report_cli(tiny_folder, tmp_path, monkeypatch, *extra)
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_report_cut_from_reads_a_native_export_and_refuses_another_score(tiny_folder, tmp_path, monkeypatch,
                                                                          capsys):
    import yaml

    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    common = ["--corpus", str(tiny_folder), "--no-cache"]
    exported = tmp_path / "bm25.yaml"
    assert main(["threshold", "E/bm25", "--score", "native", "--max-bluff", "0.05", "--export", str(exported),
                 *common]) == 0
    value = yaml.safe_load(exported.read_text(encoding="utf-8"))["cut"]["value"]
    capsys.readouterr()
    code, out = _report_cli(tiny_folder, tmp_path, monkeypatch, "--config", "E/bm25", "--score", "native",
                            "--cut-from", str(exported))
    _, err = capsys.readouterr()
    assert code == 0, err
    assert f"BM25 score ≥ {value:g}" in err
    code, _ = _report_cli(tiny_folder, tmp_path, monkeypatch, "--config", "E/dense", "--score", "native",
                          "--cut-from", str(exported))
    _, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if line.startswith("error: ")]  # after the progress bars
    assert code == 2 and len(errors) == 1 and "--cut-from" in errors[0] and "another scale" in errors[0]
