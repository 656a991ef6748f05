"""The report's appendix carries the repair ledger when asked (``report --ledger E``): the command computes it and
the report only renders the frozen section it is given; without it the report is what it was.

The runs are the tiny corpus evaluated with the FAKE bag-of-words encoder (``tests/fakes.py``): plumbing, the
figures are whatever ``chunking --ledger --json`` says on the same evaluation, not MiniLM's."""

from __future__ import annotations

import html
import json
import re
from types import SimpleNamespace

import pytest

from ragdiag.cli.parser import main
from ragdiag.core.words import difference_text

from apptest import app, fake_tiny  # noqa: F401 (the page test's fixture)

SELECTION = ["--strategies", "A,C,E"]


@pytest.fixture
def fake_cli(monkeypatch):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    monkeypatch.delenv("RAGDIAG_BASELINE", raising=False)


def _expected_rows(doc: dict) -> list[list[str]]:
    """The table rows the report should show, worded from ``chunking --ledger --json``."""
    out = []
    for r in doc["rows"]:
        t = r["test"]
        d = t["difference"] if t else None
        out.append([r["config"], r["method"], str(r["answered"]), str(len(r["repaired"])), str(len(r["broken"])),
                    f"+{t['wins']}/-{t['losses']}" if t else "", f"{t['p']:.4g}" if t else "",
                    f"{t['p_adjusted']:.4g}" if t and t["p_adjusted"] is not None else "",
                    difference_text(SimpleNamespace(**d)) if d else "",  # "+50 pts (−10 to +100)"
                    "", str(r["chunks"]), ""])  # --no-cost: prompt tokens and embedding time not priced
    return out


def _md_rows(section: str) -> list[list[str]]:
    lines = [ln for ln in section.splitlines() if ln.startswith("| ")][1:]  # the header row first
    return [[c.replace("\\", "") for c in re.split(r" \| ", ln[2:-2])] for ln in lines]


def test_the_report_appendix_has_the_ledgers_figures(fake_cli, tiny_folder, tmp_path, capsys):
    assert main(["chunking", "--ledger", "--baseline", "A", "--retriever", "dense", "--corpus", str(tiny_folder),
                 "--no-cache", "--no-cost", "--json", *SELECTION]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["rows"]) == 5  # A, then C, E, A+neighbours, A+section
    assert any(r["repaired"] for r in doc["rows"])  # C and E answer what A's blind cuts lose
    out = tmp_path / "report.html"
    assert main(["report", "--corpus", str(tiny_folder), "--no-cache", "--no-cost", "--out", str(out),
                 "--retrievers", "dense", "--ledger", "A/dense", *SELECTION]) == 0
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    page = html.unescape(out.read_text(encoding="utf-8"))
    section_md = md[md.index("## Which chunking repairs what"):md.index("## What these words mean")]
    section_html = page[page.index('<section id="ledger">'):page.index('<section id="glossary">')]
    assert _md_rows(section_md) == _expected_rows(doc)
    for row in _expected_rows(doc):
        assert f"<td>{row[0]}</td>" in section_html
    assert f"{len(doc['lost'])} of {doc['answerable']} answerable queries: {' '.join(doc['lost']) or 'none'}" \
        in section_md.replace("\\", "")
    for r in doc["rows"][1:]:
        if r["repaired"] or r["broken"]:
            line = f"{r['config']}: repairs {' '.join(r['repaired']) or '-'}"
            assert line in section_html and line in section_md.replace("\\", "")
    assert page.index('<section id="ledger">') > page.index("<details")  # the appendix, not the first screen


def test_build_report_renders_only_what_it_is_given(tiny_eval):
    from ragdiag.analyses.ledger import ledger
    from ragdiag.present.report.build import build_report
    from ragdiag.present.report.ledger import LedgerSection

    without = build_report(tiny_eval)
    section = LedgerSection.of(ledger(tiny_eval, "C/dense", expansions=("neighbours",)))
    with_ledger = build_report(tiny_eval, ledger=section)
    assert "Which chunking repairs what" not in without.to_markdown() and 'id="ledger"' not in without.to_html()
    md = with_ledger.to_markdown()
    # everything else is the report without the section (the generation time aside), in both formats
    strip = md[:md.index("## Which chunking repairs what")] + md[md.index("## What these words mean"):]
    assert strip.replace(with_ledger.generated, "T") == without.to_markdown().replace(without.generated, "T")
    page = with_ledger.to_html()
    strip = page[:page.index('<section id="ledger">')] + page[page.index('<section id="glossary">'):]
    assert strip.replace(with_ledger.generated, "T") == without.to_html().replace(without.generated, "T")
    with pytest.raises(ValueError, match="LedgerSection"):
        build_report(tiny_eval, ledger={"baseline": "C/dense"})


def test_a_section_starts_with_its_baseline(tiny_eval):
    from dataclasses import replace

    from ragdiag.analyses.ledger import ledger
    from ragdiag.present.report.ledger import LedgerSection

    section = LedgerSection.of(ledger(tiny_eval, "C/dense", expansions=("neighbours",)))
    assert section.rows[0].config == "C/dense" and section.family == len(section.rows) - 1
    with pytest.raises(ValueError, match="baseline"):
        replace(section, rows=section.rows[1:])


@pytest.mark.parametrize("argv, message", [
    (["--ledger", "Q"], "--ledger: unknown strategy"),
    (["--ledger", "C/nope"], "--ledger:"),
])
def test_report_ledger_errors_are_one_line(fake_cli, tiny_folder, tmp_path, capsys, argv, message):
    assert main(["report", "--corpus", str(tiny_folder), "--no-cache", "--no-cost", "--out",
                 str(tmp_path / "r.html"), "--retrievers", "dense", *SELECTION, *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


# ----- the dashboard: the report downloads carry the ledger the Chunking page already computed ----------------

def _ctx():
    from types import SimpleNamespace

    return SimpleNamespace(is_recommendation=True, config="C/dense", cut=0.6, keep=4, max_bluff=0.05,
                           min_answered=None)


def test_the_dashboards_download_carries_the_ledger_the_chunking_page_computed(tiny_eval):
    import streamlit as st

    from ragdiag.analyses.ledger import ledger
    from ui.report import LEDGER_KEY, remember_ledger, report_args, report_builder

    led = ledger(tiny_eval, "C/dense", expansions=("neighbours",))
    try:
        assert "ledger" not in report_args(tiny_eval, _ctx(), token="tok")  # not computed: not in the report
        remember_ledger("tok", led)
        args = report_args(tiny_eval, _ctx(), token="tok")
        assert args["ledger"].baseline == "C/dense" and args["ledger"].summary == led.summary()
        assert "ledger" not in report_args(tiny_eval, _ctx(), token="another evaluation")
        assert "ledger" not in report_args(tiny_eval, _ctx())
        hash(tuple(sorted(args.items())))  # the Export page caches the report by its arguments
        md = report_builder(tiny_eval, args, fmt="md")()
        assert "## Which chunking repairs what" in md and led.summary().split(";")[0] in md
    finally:
        st.session_state.pop(LEDGER_KEY, None)


def test_the_chunking_page_leaves_its_ledger_for_the_report(fake_tiny):
    from ui.report import LEDGER_KEY

    at = app("app_pages/chunking.py", config="E/dense")
    token, section = at.session_state[LEDGER_KEY]
    assert section.baseline == "E/dense" and isinstance(token, str)
    assert {r.config for r in section.rows} == {"E/dense", "A/dense", "E+neighbours/dense", "E+section/dense"}
