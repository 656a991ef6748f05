"""Every worked number of docs/statistics.md, recomputed from the code: the page cannot drift.

The fast tests compute each number from the function that makes it and look for it, as printed, on the
page; the ``model`` test runs ``recommend`` on the bundled corpus for the two numbers that need the
real rankings. A number added to the page without a line here fails :func:`test_every_number_is_checked`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
TEXT = " ".join(PAGE.split())  # line breaks as spaces


def _pct(x: float, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}%"


def _computed() -> dict[str, str]:
    """Each number as the page prints it, keyed by what it is."""
    from ragdiag.analyses.compare.intervals import SMALL_COUNT, clustered_rate, clustered_wilson, rate_interval
    from ragdiag.analyses.compare.power import resolvable
    from ragdiag.analyses.compare.simultaneous import MAX_T_DRAWS, max_t
    from ragdiag.analyses.recommend import COST_TIE
    from ragdiag.analyses.threshold.choice import exceed_chance
    from ragdiag.analyses.threshold.proposal import cost_bound
    from ragdiag.authoring.sizing import alternative, sign_flip_power, size_for
    from ragdiag.core.defaults import ALPHA, DEFAULT_CUT, DEFAULT_MAX_BLUFF, PRACTICAL_MARGIN

    out = {}
    g = [f"q{i // 2}" for i in range(64)]
    highs = [clustered_rate([1] * k + [0] * (64 - k), g).high for k in range(3)]
    out["upper ends"] = f"upper ends of {_pct(highs[0])}, {_pct(highs[1])} and {_pct(highs[2])}"
    out["few events"] = f"few in question units ({SMALL_COUNT} or fewer)"
    from ragdiag.analyses.compare.intervals import _t_quantile, _wilson_bounds

    spread = np.zeros(20)
    spread[np.arange(9) * 2] = 1  # one hit in each of 9 questions of 10 (two phrasings each)
    held = clustered_rate(spread, [f"q{i // 2}" for i in range(20)]).high
    wilson_alone = float(_wilson_bounds(np.array(9 / 20), 20.0, _t_quantile(0.95, 9))[1])  # deff 1: 20 trials
    out["switch"] = f"keep the upper end of {_pct(held)} where Wilson's alone would fall to {_pct(wilson_alone)}"
    cover = []
    for questions in (32, 64):
        rng = np.random.default_rng(46)
        y = (rng.random((4000, questions)) < 0.03) * 2.0
        _, lo, hi = clustered_wilson(y, np.full(questions, 2.0))
        cover.append(float(((lo <= 0.03) & (0.03 <= hi)).mean()))
    out["coverage"] = (f"covers {_pct(cover[0])} of the time over 32 questions, {_pct(cover[1])} over 64 "
                       f"({4000:,} seeded sets each)")
    (row,), _ = max_t(np.zeros((2, 64)), g, [(0, 1)])
    out["itself"] = f"0 discordant questions of 32 still leave ±{100 * row.high:.1f} points"
    out["shuffles"] = f"each from {MAX_T_DRAWS:,} shuffles"
    out["alpha"] = f"(adjusted p < {ALPHA:g})"
    r = resolvable(32, 2, family_size=435)
    out["resolvable"] = (f"about {100 * r.alone:g} points alone and {100 * r.family:g} within the 435 pairs")
    out["resolvable json"] = f'"resolvable": {{"alone": {r.alone:g}, "family": {{"size": 435, "points": {r.family:g}}}}}'
    s = size_for([1] * 3 + [0] * 29, 2, margin=PRACTICAL_MARGIN)
    lo_psi, hi_psi = s.discordance_interval
    weak = sign_flip_power(s.favourable, alternative(PRACTICAL_MARGIN, hi_psi, (1.0, 0.0), phrasings=2))[0]
    out["plan"] = (f"(95% interval {lo_psi:.0%}–{hi_psi:.0%}), a {100 * PRACTICAL_MARGIN:g}-point difference needs "
                   f"{s.planned} questions at {hi_psi:.0%} ({s.needed} more; the {s.favourable} of the favourable "
                   f"case would have {weak:.0%} power there), {s.favourable} at the {3 / 32:.0%} seen")
    out["zero bluffs"] = f'"0 of 30 bluffs: the rate could still be up to {_pct(rate_interval(0, 30).high)}"'
    out["exceed"] = f"(30 queries, {DEFAULT_MAX_BLUFF:.0%}: {exceed_chance(1, 30, DEFAULT_MAX_BLUFF):.0%})"
    out["in sample"] = f"2/31 = {_pct(2 / 31)} bluff on average"
    out["cost"] = f"0 of 30 in sample gives at most {_pct(cost_bound(0, 30)[0])}"
    out["cost margin"] = "`sqrt(ln(20) / 2n)`" if cost_bound(0, 20)[0] == pytest.approx(np.sqrt(np.log(20) / 40)) \
        else "(the DKW margin changed)"
    out["cut"] = f"(default {DEFAULT_CUT:g})"
    out["cost tie"] = f"median latencies within {COST_TIE:.0%} of each other"
    out["margin"] = f"above −{100 * PRACTICAL_MARGIN:g} points"
    return out


@pytest.mark.parametrize("name", list(_computed()))
def test_the_page_prints_the_number_the_code_gives(name):
    expected = _computed()[name]
    assert expected in TEXT, f"{name}: {expected!r} is not on docs/statistics.md"


#: Numbers on the page that are names, counts of the design or checked elsewhere (and where).
# 30, 400, 0.6, 0.8, 0.95, 93%: the AUROC simulation's design and bar, asserted by tests/slow/test_separation.py;
# 48% and 56%: the bundled answered shares, checked by the model test below
KNOWN = {"1", "4", "8", "20", "2", "3", "5", "10", "24", "32", "64", "435", "0", "95", "6", "1/a", "14", "263",
         "30", "400", "0.6", "0.8", "0.95", "93%", "48%", "56%",
         "C-A", "D-B", "E-C", "F-D", "B-A", "D-C", "F-E"}


def test_every_number_is_checked():
    """Every number on the page is one the tests above print, or a name/count listed in KNOWN (the bundled
    corpus's 14 and 263 are checked by the model test below; the slices' 6% by tests/slow/test_slices.py)."""
    checked = " ".join(_computed().values())
    numbers = set(re.findall(r"(?<![\w.])[−-]?\d[\d,.]*%?", TEXT))
    missing = sorted(n for n in numbers if n.strip("−-").rstrip(".,") not in KNOWN
                     and n.rstrip(".,") not in checked and n.rstrip(".,").strip("−-") not in checked)
    assert not missing, f"numbers on docs/statistics.md no test computes: {missing}"


@pytest.mark.model
@pytest.mark.slow
def test_the_bundled_recommendation_numbers(tmp_path, monkeypatch, capsys):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    assert main(["recommend"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    reach = re.search(r"the narrowest interval to it reaches (\d+) points below its estimate", out)
    needed = re.search(r"about (\d+) questions are needed", out)
    assert reach and needed, out
    assert f"reaches about {reach[1]} points below its estimate" in TEXT
    assert f"about {needed[1]} on the bundled corpus" in TEXT
    # the decision's measure against R@4: the best at R@4 answers fewer at its cut than the one recommended
    import json

    assert main(["recommend", "--json"]) == 0
    rows = {r["config"]: r["answered"] for r in json.loads(capsys.readouterr().out)["comparison"]["rows"]}
    assert (f"(F/rerank-maxsim) answers {rows['F/rerank-maxsim']:.0%} at its cut, while E/rerank-maxsim answers "
            f"{rows['E/rerank-maxsim']:.0%} at the same cut") in TEXT
