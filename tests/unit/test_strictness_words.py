"""One word, one meaning (issue 43): the recommendation's cut, the runner-up's and the comparator's are said "at
strictness 0.524" on every surface, as the headline says it (:func:`ragdiag.core.words.ship_headline`), never "at its
cut" on one screen and "at strictness" on the next.

Walks the f-strings of ``ragdiag/``, ``ui/`` and ``app_pages/`` with :mod:`ast`: wherever one prints such a cut
(``cut_text(rec.runner_up_cut)``, ``cut_text(ctx.recommended_cut)``...), the words just before it are
"at strictness ".
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ragdiag.core.words import ship_headline

from code_walk import nodes, source_files

ROOT = Path(__file__).resolve().parents[2]
#: A cut that belongs to the recommendation, its runner-up or the configuration it is compared with.
WHOSE = re.compile(r"runner_up_cut|\brec_cut|recommended_cut|against_cut|\brec\.cut\b")
WORDS = "at strictness "


def said_otherwise(source: str) -> list[str]:
    """``line: words {field}`` for each such cut in ``source`` printed after other words than :data:`WORDS`.

    >>> said_otherwise('a = f"runner-up at its cut {cut_text(rec.runner_up_cut)}"\\nb = f"at strictness {cut_text(rec.cut)}"')
    ["1: 'runner-up at its cut ' {cut_text(rec.runner_up_cut)}"]
    """
    found = []
    for node in nodes(source, ast.JoinedStr):
        for before, part in zip(node.values, node.values[1:]):
            if not isinstance(part, ast.FormattedValue):
                continue
            text = ast.unparse(part.value)
            words = before.value if isinstance(before, ast.Constant) and isinstance(before.value, str) else ""
            if text.startswith("cut_text(") and WHOSE.search(text) and not words.endswith(WORDS):
                found.append(f"{part.value.lineno}: {words[-30:]!r} {{{text}}}")
    return found


def test_the_walk_sees_another_word():
    assert said_otherwise('x = f"Recommended: {c} at cut {cut_text(ctx.recommended_cut)}."') == [
        "1: ' at cut ' {cut_text(ctx.recommended_cut)}"]
    assert said_otherwise('x = f"{who} at strictness {cut_text(self.against_cut)}"') == []


def test_the_recommendations_cut_is_said_as_the_headline_says_it():
    assert ship_headline("X", 0.5245).endswith(WORDS + "0.524")  # the headline's words, which the rest follow
    bad = [f"{p.relative_to(ROOT)}:{hit}" for p in source_files() for hit in said_otherwise(p.read_text(encoding="utf-8"))]
    assert not bad, "say the recommendation's, runner-up's or comparator's cut 'at strictness <cut>':\n" + "\n".join(bad)
