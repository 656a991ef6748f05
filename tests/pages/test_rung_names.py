"""One name per rung: the outcome ladder's rungs read the same on the report (Markdown), the Summary, Overview and
Inspector pages (AppTest, FAKE encoder) and the ``funnel`` command's table, and no rung goes by another name.

The names are :data:`ragdiag.core.words.RUNG_WORDS`; ``OTHER_NAMES`` are the names the surfaces used before
(or would drift back to): each is a second name for a rung, so none may appear anywhere. The machine names
(``kept-but-wrong``) stay in files, URLs and JSON, never in what a person reads.
"""

from __future__ import annotations

import re

import pytest

from apptest import fake_tiny, run, texts  # noqa: F401  (fixture)
from ragdiag.core.words import OUTCOME_WORDS, RUNG_WORDS

#: rung -> patterns of a second name for it (Markdown escapes removed before matching).
OTHER_NAMES = {
    "destroyed": [r"answer split by the chunking", r"destroyed by the chunking", r"the chunking split the answer"],
    "truncated": [r"truncated by the encoder window"],
    "not-in-pool": [r"\bnot-in-pool\b", r"\bnot in the pool\b"],
    "ranked-low": [r"\branked-low\b", r"\branked below k\b"],
    "refused": [r"(?<![Ff]ound, then )refused by the cut", r"\brefused or kept-but-wrong\b"],
    "kept-but-wrong": [r"\bkept-but-wrong\b", r"\bwrong passages given\b"],
    "abstained": [r"\bAbstained\b", r"refused, as it should"],
}


def test_every_rung_has_a_name_of_its_own():
    names = list(RUNG_WORDS.values())
    assert len(set(names)) == len(names)
    # a rung short of an answer is never named as an outcome (the outcome counts it whatever the rung)
    outcome_names = set(OUTCOME_WORDS.values())
    assert not outcome_names & {RUNG_WORDS[r] for r in RUNG_WORDS if r not in ("answered", "bluff")}
    for rung, patterns in OTHER_NAMES.items():  # no second name matches the one name
        assert not any(re.search(p, RUNG_WORDS[rung]) for p in patterns), rung


def _problems(text: str) -> list[str]:
    text = text.replace("\\", "")
    return [f"{rung}: {m.group(0)!r} in …{text[max(0, m.start() - 60):m.end() + 20]}…"
            for rung, patterns in OTHER_NAMES.items() for p in patterns for m in re.finditer(p, text)]


def _page(page: str, **params):
    from apptest import APP
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(params)
    run(at)
    at.switch_page(page)
    return run(at)


def _shown(at) -> str:
    """What a page shows: its text, its tables' headers, the options of its pickers as listed."""
    frames = [d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe]
    heads = [str(c) for f in frames for c in f.columns]
    cells = [str(v) for f in frames for c in f.columns if c in ("outcome", "cause") for v in f[c]]
    options = [o for box in at.selectbox for o in box.options]  # as listed (formatted)
    return "\n".join([texts(at), *heads, *cells, *map(str, options)])


@pytest.fixture(scope="module")
def ev(fake_tiny):
    from fakes import fake_encoder
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate

    corpus = load_corpus(fake_tiny["root"])
    return evaluate(corpus, load_truth(fake_tiny["truth"], corpus), encoder=fake_encoder(), strategies="A,E",
                    retrievers="dense,bm25,hybrid")


def test_the_report_names_each_rung_once(ev):
    from ragdiag.present.report.build import build_report

    md = build_report(ev, config="A/dense", cut=0.5).to_markdown()
    assert _problems(md) == []
    plain = md.replace("\\", "")
    # A/dense at 0.5 (tiny corpus, fake encoder): q1's answer is split by the chunking, the rest found and refused
    assert RUNG_WORDS["destroyed"] in plain and RUNG_WORDS["refused"] in plain and RUNG_WORDS["kept-but-wrong"] in plain


def test_the_funnel_command_names_each_rung_once(fake_tiny, capsys):
    from ragdiag.cli.parser import main

    code = main(["funnel", "--corpus", str(fake_tiny["root"]), "--truth", str(fake_tiny["truth"]),
                 "--cache", str(fake_tiny["cache"]), "--strategies", "A,E", "--retrievers", "dense,bm25,hybrid",
                 "--cut", "0.5", "--outcome", "kept-but-wrong"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert _problems(out) == []
    assert all(RUNG_WORDS[r] in out for r in ("destroyed", "truncated", "not-in-pool", "ranked-low", "refused",
                                              "kept-but-wrong", "answered"))


@pytest.mark.parametrize("page, params", [
    ("app_pages/summary.py", {}),
    ("app_pages/overview.py", {"config": "A/dense", "cut": "0.5"}),
    ("app_pages/inspector.py", {"config": "A/dense", "cut": "0.5", "q": "q1:course"}),  # split by the chunking
    ("app_pages/inspector.py", {"config": "E/dense", "cut": "0.54", "q": "q1:ticket"}),  # found, then refused
    ("app_pages/inspector.py", {"config": "E/dense", "cut": "0.05", "q": "o1"}),  # correctly refused
])
def test_the_pages_name_each_rung_once(fake_tiny, page, params):
    at = _page(page, **params)
    shown = _shown(at)
    assert _problems(shown) == []
    if page.endswith("overview.py"):  # the funnel chart's legend lists the rungs by their one names
        import json

        from ragdiag.analyses.outcomes import LADDER

        specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart") if c.proto.spec]
        colors = [sp["encoding"]["color"] for sp in specs if sp.get("encoding", {}).get("color", {}).get("field")
                  in ("rung", "stage")]
        assert colors and all(c["field"] == "rung" for c in colors)
        assert colors[0]["scale"]["domain"] == [RUNG_WORDS[r] for r in LADDER]
    if page.endswith("inspector.py"):  # the sentence leads with the rung's one name
        verdict = (at.error or at.success)[0].value.replace("\\", "")
        assert any(f"— {w[:1].upper() + w[1:]}: " in verdict for w in RUNG_WORDS.values()), verdict
