"""The one place for text tables and escaping (ragdiag/core/tables.py) and the report's template environment."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from ragdiag.core.tables import MD_SPECIAL, Table, align, format_rows, md_escape, md_line, md_table

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class _Row:
    config: str
    recall: float

    def cells(self) -> dict:
        return {"config": self.config, "R@4": self.recall}


def test_format_rows_aligns_numbers_right_and_text_left():
    text = format_rows([{"config": "C/dense", "R@4": 0.5, "n": 12}, {"config": "A/bm25", "R@4": None, "n": 3}])
    assert text.splitlines() == ["config   R@4    n ",
                                 "-------  -----  --",
                                 "C/dense  0.500  12",
                                 "A/bm25           3"]


def test_format_rows_takes_typed_rows_with_cells():
    assert format_rows([_Row("C/dense", 0.5)]) == format_rows([{"config": "C/dense", "R@4": 0.5}])
    assert format_rows([]) == "(no rows)"


def test_results_still_exports_format_rows():
    from ragdiag.core.tables import format_rows as again

    assert again is format_rows


def test_align_free_last_column_and_rule():
    assert align([["a", "bb", "why"], ["ccc", "d", "x"]], last_free=True) == ["a    bb  why", "ccc  d   x"]
    assert align([["n"], ["10"]], right=(0,), rule="=") == [" n", "==", "10"]
    assert align([["doc", "n"], ["a", "1"]], right=(1,), min_width=(0, 3)) == ["doc    n", "a      1"]


def test_md_table_escapes_every_cell_and_aligns_numeric_columns():
    assert md_table(["a|b", "n"], [["<x>", 1]], numeric=(1,)).splitlines() == [
        r"| a\|b | n |", "|---|---:|", r"| \<x\> | 1 |"]
    t = Table.of(["h"], [["*x*"]], id="t")
    assert t.markdown() == "| h |\n|---|\n| \\*x\\* |"


def test_md_line_is_one_line():
    assert md_line("a\n\n  b\tc") == "a b c"


@given(st.text())
def test_md_escape_leaves_no_special_character_bare_and_is_reversible(text):
    out = md_escape(text)
    assert re.sub(r"\\(.)", r"\1", out, flags=re.S) == text
    bare = re.sub(r"\\.", "", out, flags=re.S)
    assert not set(bare) & MD_SPECIAL
    assert not re.search(r"(?<!\\):\S", out)  # no bare colon before a name (:icon:, :red[...])
    # no line may start (after spaces) with a bare list or heading marker
    assert not re.search(r"(?:^|(?<=\r))[ \t]*(?:[-+=]|\d+[.)](?=[ \t\r\n]|$))", out, flags=re.M)


@pytest.mark.parametrize("text, want", [
    ("0.812", "0.812"),
    ("out-of-domain (near)", "out-of-domain (near)"),
    ("- item", "\\- item"),
    ("  + item", "  \\+ item"),
    ("a\n===", "a\n\\==="),
    ("12. twelve", "12\\. twelve"),
    ("12.5 twelve", "12.5 twelve"),
    ("3) three", "3\\) three"),
    ("x\r- y", "x\r\\- y"),
    (":red[x] $1", "\\:red\\[x\\] \\$1"),
    ("questions: 32, at 01:34", "questions: 32, at 01\\:34"),
    (":material/home:", "\\:material/home:"),
    ("a & b", "a \\& b"),
])
def test_md_escape_table(text, want):
    assert md_escape(text) == want


def test_the_dashboard_and_the_report_share_one_markdown_escaper():
    from ui.html import md_text

    text = "<b>:red[x]</b> $1.5 (see [a](b))"
    assert md_text(text) == md_escape(text) == md_line(text)


def test_report_templates_ship_in_the_package():
    conf = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    globs = conf["tool"]["setuptools"]["package-data"]["ragdiag.present.report"]
    folder = REPO / "ragdiag" / "present" / "report"
    files = [p.relative_to(folder).as_posix() for p in (folder / "templates").iterdir()]
    assert files and all(any(fnmatch(f, g) for g in globs) for f in files)
    assert any(d.startswith("jinja2") for d in conf["project"]["dependencies"])


def test_report_environment_escapes_html_only_and_rejects_unknown_names():
    from jinja2 import UndefinedError

    from ragdiag.present.report.render import environment

    env = environment()
    assert env.autoescape("report.html.j2") and not env.autoescape("report.md.j2")
    html = env.get_template("macros.html.j2").module
    assert str(html.means("<b>'")) == '<p class="means"><b>What this means.</b> &lt;b&gt;&#x27;</p>'
    with pytest.raises(UndefinedError):
        env.get_template("report.md.j2").render(r=object())
