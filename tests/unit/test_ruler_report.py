"""The report's appendix carries the ruler ("Can this set tell?"): the ``report`` command computes it
(:func:`ragdiag.authoring.ruler.report_section`) and the report only renders the frozen section it is given.

The runs are the tiny corpus evaluated with the FAKE bag-of-words encoder (``tests/helpers/fakes.py``): plumbing, the
figures are whatever ``ruler --json`` says on the same evaluation, not MiniLM's."""

from __future__ import annotations

import html
import json

import pytest

from ragdiag.cli.parser import main
from ragdiag.core.words import pct

SELECTION = ["--strategies", "C", "--retrievers", "dense,bm25,hybrid"]


@pytest.fixture
def fake_cli(monkeypatch):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")


def _figures(doc: dict) -> list[str]:
    """The figures of ``ruler --json`` as the report words them."""
    share = doc["shortcuts"]["bm25_share"]
    points = doc["discrimination"]["resolvable_points"]
    return [doc["headline"], f"{pct(share)} ({doc['shortcuts']['bm25']})",
            ", ".join(doc["saturated"]) or "none", ", ".join(doc["flagged"]) or "none",
            f"{points:g} points of R@{doc['primary_k']}"]


def test_the_report_appendix_has_the_rulers_figures(fake_cli, tiny_folder, tmp_path, capsys):
    assert main(["ruler", "--corpus", str(tiny_folder), "--no-cache", "--json", *SELECTION]) == 0
    doc = json.loads(capsys.readouterr().out)
    # the tiny set is one the ruler should flag: its questions copy their needle's words
    assert doc["verdict"] == "too easy" and doc["flagged"] and doc["saturated"]
    out = tmp_path / "report.html"
    assert main(["report", "--corpus", str(tiny_folder), "--no-cache", "--no-cost", "--out", str(out),
                 *SELECTION]) == 0
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    page = html.unescape(out.read_text(encoding="utf-8"))
    section_md = md[md.index("## Can this set tell?"):md.index("## What these words mean")]
    section_html = page[page.index('<section id="ruler">'):page.index('<section id="glossary">')]
    for figure in _figures(doc):
        assert figure in section_html, figure
        assert figure.replace(":", "\\:") in section_md or figure in section_md, figure
    for sentence in (doc["shortcuts"]["sentence"], doc["discrimination"]["sentence"], doc["leakage"]["sentence"]):
        assert sentence in section_html
    # the appendix, not the first screen: the section comes after the details' summary
    assert page.index('<section id="ruler">') > page.index("<details")


def test_build_report_renders_only_what_it_is_given(tiny_eval):
    from ragdiag.authoring.ruler import ruler
    from ragdiag.present.report.build import build_report

    without = build_report(tiny_eval)
    section = ruler(tiny_eval).section()
    with_ruler = build_report(tiny_eval, ruler=section)
    assert "Can this set tell?" not in without.to_markdown() and 'id="ruler"' not in without.to_html()
    md = with_ruler.to_markdown()
    assert f"smallest difference resolved: {section.resolvable_points:g} points of R@4" in md
    # everything else is the report without the section (the generation time aside)
    strip = md[:md.index("## Can this set tell?")] + md[md.index("## What these words mean"):]
    assert strip.replace(with_ruler.generated, "T") == without.to_markdown().replace(without.generated, "T")
    with pytest.raises(ValueError, match="RulerSection"):
        build_report(tiny_eval, ruler={"verdict": "can tell"})


def test_the_dashboards_download_carries_the_section(tiny_eval):
    """``ui.report.report_builder`` (the Summary's and Export's download) computes the ruler at the report's k."""
    from ragdiag.authoring.ruler import ruler
    from ui.report import report_builder

    args = {"config": None, "cut": None, "keep": 4, "max_bluff": 0.05, "min_answered": None, "baseline": None,
            "baseline_source": "the operator"}
    md = report_builder(tiny_eval, args, fmt="md")()
    expected = ruler(tiny_eval, primary_k=4)
    assert "## Can this set tell?" in md and f"**{expected.headline()}**" in md
