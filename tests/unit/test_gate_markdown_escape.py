"""``gate --by tag --markdown``: a tag from the ground truth cannot change a row's verdict or embed an image.

A tag holding ``|`` used to add table cells, so a failed slice's row displayed
"pass"; one holding a backtick closed the code span and let
``![x](http://...)`` render, an outside fetch from whoever opens the comment.
"""

from __future__ import annotations

import re

import pytest

from ragdiag.present.regression.checks import gate_report
from ragdiag.present.regression.render import gate_markdown
from handmade import hand_run
from ragdiag.present.regression.slices import with_slices


def _run(hits: dict[str, int], source: str):
    queries = [(f"{q}:{p}", q, "answerable", "x", 1 if hit else 0, 0.3, 0.3)
               for q, hit in hits.items() for p in ("course", "ticket")]
    return hand_run(queries, source=source, truth_sha256="sha", questions=len(hits))


def _cells(row: str) -> list[str]:
    """A GFM table row's cells: split on pipes not escaped with a backslash."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]


@pytest.mark.parametrize("tag", ["x | ✅ pass | 1 | 1 | ✅ pass", "a`![x](http://e.example/p.png)`b",
                                 "<img src=http://e.example/p.png>", "[link](http://e.example)", "multi\nline"])
def test_a_hostile_tag_stays_text_in_the_table_and_the_headings(tag):
    multi, single = [f"m{i}" for i in range(10)], [f"s{i}" for i in range(30)]
    base = _run({**{q: 1 for q in multi}, **{q: 0 for q in single}}, "base")
    cand = _run({**{q: 0 for q in multi}, **{q: 1 for q in single}}, "cand")
    report = with_slices(gate_report(base, cand, margin=0.05, alpha=0.05),
                         {**{q: (tag,) for q in multi}, **{q: ("single",) for q in single}})
    md = gate_markdown(report)
    rows = [line for line in md.splitlines() if line.startswith("| ") and "of questions tagged" in line]
    assert len(rows) == 2
    hostile = [r for r in rows if "single" not in r][0]
    cells = _cells(hostile)
    assert len(cells) == 4 and cells[3] == "❌ fail", hostile  # four cells: the verdict is the check's own
    for line in md.splitlines():  # no live image, link, HTML tag or code span opened by the tag anywhere
        assert not re.search(r"(?<!\\)!\[|(?<!\\)\]\(|(?<!\\)<img", line), line
    assert "\nline" not in md
