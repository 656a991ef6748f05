"""The Threshold page's proposal is one number: the cut its sentence prints is the cut "Use this cut" applies, and
applied, the page counts the answered share it claims (the answered goal's rule sits on a query's distance; the
printed cut is rounded up so it keeps that query answered). The tiny corpus with the FAKE encoder."""

from __future__ import annotations

import re

import pytest

from fakeapp import app, fake_app, field, lib, param, run, texts  # noqa: F401 - fixtures

SENTENCE = re.compile(r"At cut (\d\.\d{3}) \([a-z ]+\): of (\d+) answerable queries, (\d+) answered, ")


@pytest.mark.parametrize("goal", [25, 50, 75, 100])
def test_the_printed_proposal_is_the_button_s_cut_and_meets_the_answered_goal(fake_app, lib, goal):
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.threshold import Goal, cut_choice
    from ragdiag.core.gate import Gate, cut_text

    at = app("app_pages/threshold.py", config="E/hybrid", cut="0.05", answered=str(goal))
    at.segmented_control(key="goal").set_value("answered at least")
    run(at)
    choice = cut_choice(gate_table(lib, "E/hybrid", Gate(4)), Goal(min_answered=goal / 100))
    button = at.button(key="use_cut")
    applied = re.fullmatch(r"Use this cut: (\d\.\d{3})", button.label).group(1)
    assert applied == cut_text(choice.proposal.cut)
    printed = re.search(r"Proposed cut \*\*(\d\.\d{3})\*\*", texts(at)).group(1)
    assert printed == applied  # the number printed is the number the button applies
    button.click()
    run(at)
    assert param(at, "cut") == applied and field(at, "cut").value == float(applied)
    m = SENTENCE.search(texts(at))
    assert m and m.group(1) == applied, texts(at)[:400]
    n_in, answered = int(m.group(2)), int(m.group(3))
    assert answered / n_in >= goal / 100, (applied, answered, n_in)  # it meets the goal it claims, on the page
    assert "Meets the goal." in texts(at)
