"""``gate --margin X`` first asks whether the questions can detect a drop of X (the ruler's gate resolution).

The runs are the bundled corpus evaluated with the FAKE bag-of-words encoder (``tests/helpers/fakes.py``): what is
tested is the number of questions (32, in 2 phrasings), not the model's numbers.
"""

from __future__ import annotations

import json

import pytest

from ragdiag.authoring.ruler import gate_resolution
from ragdiag.cli.parser import main

CONFIG = "E/hybrid"


@pytest.fixture(scope="module")
def bundled_run(tmp_path_factory):
    """An ``eval --out`` folder of the bundled corpus (E/hybrid, FAKE encoder)."""
    out = tmp_path_factory.mktemp("gate-margin") / "run"
    mp = pytest.MonkeyPatch()
    mp.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    mp.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    try:
        assert main(["eval", "--strategies", "E", "--retrievers", "hybrid", "--no-cache", "--out", str(out)]) == 0
    finally:
        mp.undo()
    return out


def _gate(capsys, *argv):
    code = main(["gate", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("margin, detect, resolvable, planned", [
    # one-sided sign test at 0.05 = two-sided at 0.10: 5 one-way questions of 5 reject (p = 1/32);
    # 32 questions reach 80% power at 20.5 points of one phrasing, 10.25 points of recall over 2 phrasings;
    # a 2-point drop is 4% of the questions one way: P(Bin(n, 0.04) >= 5) >= 0.8 first at n = 167
    (0.02, False, 0.1025, 167),
    (0.3, True, 0.1025, None),
])
def test_gate_resolution_table(margin, detect, resolvable, planned):
    from scipy.stats import binom

    r = gate_resolution(32, 2, margin)
    assert (r.can_detect, r.resolvable) == (detect, resolvable)
    if planned is not None:
        assert r.planned == planned
        assert binom.sf(4, planned, 2 * margin) >= 0.8 > binom.sf(4, planned - 1, 2 * margin)


@pytest.mark.slow
def test_gate_margin_002_cannot_decide_on_the_bundled_corpus(bundled_run, tmp_path, capsys):
    md = tmp_path / "gate.md"
    code, out, err = _gate(capsys, bundled_run, bundled_run, "--config", CONFIG, "--margin", "0.02",
                           "--markdown", md)
    sentence = "these 32 questions cannot detect a drop of 2 points; the plan says 167 questions"
    assert code == 2
    assert err.strip().splitlines()[-1] == f"error: {sentence}"
    text = md.read_text(encoding="utf-8")
    assert text.startswith("## ragdiag gate: cannot decide") and sentence in text.lower()
    assert out.strip() == text.strip()
    code, out, _ = _gate(capsys, bundled_run, bundled_run, "--config", CONFIG, "--margin", "0.02", "--json")
    doc = json.loads(out)
    assert code == 2 and doc["verdict"] == "cannot decide" and doc["exit_code"] == 2
    assert doc["resolution"]["planned_questions"] == 167 and doc["resolution"]["can_detect"] is False


@pytest.mark.slow
def test_gate_margin_03_decides_as_today(bundled_run, capsys):
    from ragdiag.present.regression.checks import gate_report
    from ragdiag.present.regression.render import gate_markdown
    from ragdiag.present.regression.runs import load_run

    base = load_run(bundled_run, CONFIG)
    today = gate_report(base, load_run(bundled_run, CONFIG), margin=0.3)
    code, out, _ = _gate(capsys, bundled_run, bundled_run, "--config", CONFIG, "--margin", "0.3")
    assert code == today.exit_code == 0  # the same run against itself passes
    assert out.strip() == gate_markdown(today).strip()
    code, out, _ = _gate(capsys, bundled_run, bundled_run, "--config", CONFIG)  # no --margin: no check, as before
    assert code == 0 and "cannot decide" not in out
