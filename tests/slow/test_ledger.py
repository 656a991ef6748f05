"""The chunking repair ledger: repaired and broken queries against a brute-force reading of the ladder,
its intervals from Compare's paired machinery, its costs (FAKE encoder: plumbing, not MiniLM's numbers)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from ragdiag.analyses.compare.comparisons import family, planned_family
from ragdiag.analyses.compare.paired import question_differences
from ragdiag.analyses.gate_table import query_outcomes
from ragdiag.analyses.ledger import ledger
from ragdiag.core.gate import Gate
from ragdiag.evaluation.evaluate import evaluate

from fakes import FakeEncoder

pytestmark = pytest.mark.slow  # the bundled corpus, seven strategies, two retrievers: about a minute on two cores

STRATEGIES = "A,C,E,R,M,W,S"


@pytest.fixture(scope="module")
def ev(corpus, truth):
    """The bundled corpus, seven strategies x dense and BM25, with the FAKE bag-of-words encoder."""
    old = os.environ.get("RAGDIAG_ENCODER")
    os.environ["RAGDIAG_ENCODER"] = "fakes:fake_encoder"  # semantic breakpoints (S) from the FAKE encoder too
    try:
        return evaluate(corpus, truth, encoder=FakeEncoder(dim=1024), strategies=STRATEGIES, retrievers="dense,bm25")
    finally:
        if old is None:
            os.environ.pop("RAGDIAG_ENCODER", None)
        else:
            os.environ["RAGDIAG_ENCODER"] = old


@pytest.mark.parametrize("baseline, gate", [("E/dense", Gate()), ("A/bm25", Gate(keep=2, cut=0.9)),
                                            ("W/dense", Gate(keep=8, cut=0.7, k=8))])
def test_repaired_and_broken_are_the_brute_force_comparison_of_outcomes(ev, baseline, gate):
    led = ledger(ev, baseline, gate)
    retriever = baseline.split("/")[1]
    assert sorted(r.config for r in led.rows) == sorted(f"{s}/{retriever}" for s in STRATEGIES.split(",")
                                                        if f"{s}/{retriever}" != baseline)
    base = {o.query_id: o.outcome for o in query_outcomes(ev, baseline, gate)}
    assert set(led.lost) == {q for q, o in base.items() if o not in ("answered", "bluff", "abstained")}
    for row in led.rows:
        mine = {o.query_id: o.outcome for o in query_outcomes(ev, row.config, gate)}
        repaired = {q for q in mine if mine[q] == "answered" and base[q] in
                    ("destroyed", "truncated", "not-in-pool", "ranked-low", "refused", "kept-but-wrong")}
        broken = {q for q in mine if base[q] == "answered" and mine[q] != "answered"}
        assert set(row.repaired) == repaired and len(row.repaired) == len(repaired)
        assert set(row.broken) == broken
        assert dict(row.repaired_from) == {r: sum(base[q] == r for q in repaired) for r in {base[q] for q in repaired}}
        assert len(row.answered) - len(led.baseline.answered) == len(repaired) - len(broken)
        # over questions: a question's phrasings summed, as Compare counts wins and losses
        qids = {q.id: q.question_id for q in ev.queries if q.in_domain}
        net: dict[str, int] = {}
        for q in repaired:
            net[qids[q]] = net.get(qids[q], 0) + 1
        for q in broken:
            net[qids[q]] = net.get(qids[q], 0) - 1
        t = row.comparison.test
        assert (t.wins, t.losses) == (sum(v > 0 for v in net.values()), sum(v < 0 for v in net.values()))
        assert t.n_questions == len(ev.truth.questions)
        assert row.comparison.family == len(led.rows)
    assert [len(r.repaired) for r in led.rows] == sorted((len(r.repaired) for r in led.rows), reverse=True)


def test_the_ledger_family_is_compares_family_on_another_outcome(ev):
    """With hits at k as the outcome, the ledger's machinery gives Compare's planned family exactly."""
    from ragdiag.core.metrics import hits_at_k

    configs = ["A/dense", "C/dense", "R/dense"]
    mine = planned_family(ev, "E/dense", configs, lambda c: hits_at_k(ev.result(c).needle_rank, 4), k=4)
    theirs = family(ev, k=4, baseline="E/dense", configs=[ev.result(c).config for c in ["E/dense", *configs]])
    assert len(mine) == len(theirs) == 3
    for m, t in zip(mine, theirs):  # the same pair read the other way round: config - baseline
        assert (m.a, m.b) == (t.b, t.a)
        assert (m.test.wins, m.test.losses, m.test.p) == (t.test.losses, t.test.wins, t.test.p)
        assert m.p_adjusted == pytest.approx(t.p_adjusted)
        assert (m.interval.low, m.interval.high) == pytest.approx((-t.interval.high, -t.interval.low))


def test_interval_reads_config_minus_baseline(ev):
    led = ledger(ev, "E/dense", Gate())
    e = np.array([q.id in set(led.baseline.answered) for q in ev.queries])
    for row in led.rows:
        mine = np.array([q.id in set(row.answered) for q in ev.queries])
        m = ev.in_domain
        d = question_differences(mine[m], e[m], [q.question_id for q in ev.queries if q.in_domain])
        assert row.comparison.difference()["estimate"] == pytest.approx(d.sum() / m.sum())
        lo, hi = row.comparison.difference()["low"], row.comparison.difference()["high"]
        assert lo <= row.comparison.difference()["estimate"] <= hi


def test_costs_are_the_gate_prompt_and_the_embedded_wordpieces(ev):
    from ragdiag.analyses.cost import prompt_tokens

    enc = FakeEncoder(dim=1024)
    gate = Gate(keep=3, cut=0.8)
    led = ledger(ev, "E/dense", gate, encoder=enc, embed_rate=1e-3)
    for row in (led.baseline, *led.rows):
        assert row.prompt_tokens == pytest.approx(prompt_tokens(ev, row.config, enc, gate).mean())
        idx = ev.indexes[row.config.split("/")[0]]
        assert row.chunks == len(idx.chunks) and row.embedded_tokens == idx.report.audit.total_tokens
        assert row.embed_seconds == pytest.approx(row.embedded_tokens * 1e-3)
    assert math.isnan(ledger(ev, "E/dense", gate).baseline.prompt_tokens)  # no encoder: not priced
    assert led.summary().startswith(f"E/dense loses {len(led.lost)} of {led.n_answerable} answerable queries")


def test_a_ledger_holds_the_retriever_fixed(ev):
    with pytest.raises(ValueError, match="holds the retriever fixed"):
        ledger(ev, "E/dense", configs=["A/bm25"])


def test_cli_ledger_prints_the_librarys_ledger(monkeypatch, capsys, corpus, truth):
    import json

    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    assert main(["chunking", "--ledger", "--baseline", "E", "--retriever", "dense", "--strategies", "A,R",
                 "--no-cache", "--no-cost", "--json", "--expand", "none"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["config"] for r in doc["rows"]][0] == "E/dense" and doc["gate"] == {"keep": 4, "cut": 0.6, "k": 4}
    mine = evaluate(corpus, truth, encoder=FakeEncoder(dim=1024), strategies="E,A,R", retrievers="dense")
    led = ledger(mine, "E/dense", Gate())
    assert doc["lost"] == list(led.lost)
    assert {r["config"]: (r["repaired"], r["broken"]) for r in doc["rows"][1:]} == {
        r.config: (list(r.repaired), list(r.broken)) for r in led.rows}


@pytest.mark.parametrize("argv, message", [
    (["--baseline", "E/dense", "--retriever", "bm25"], "two retrievers"),
    (["--baseline", "Q"], "unknown strategy"),
    (["--retriever", "nope"], "nope"),
    (["--strategies", "R,W"], "include one of them"),
    (["--baseline", "E", "--strategies", "E", "--expand", "parents"], "unknown expansion 'parents'"),
])
def test_cli_ledger_errors_are_one_line(monkeypatch, capsys, argv, message):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.delenv("RAGDIAG_BASELINE", raising=False)
    assert main(["chunking", "--ledger", "--no-cache", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


# --------------------------------------------------------------------------- context at retrieval time


@pytest.mark.parametrize("how", ["neighbours", "section"])
def test_expansion_answers_when_a_widened_passage_holds_the_needle(ev, how):
    from ragdiag.analyses.expansion import expand
    from ragdiag.analyses.threshold.gate import kept_chunks

    gate = Gate(keep=4, cut=0.8)
    got = expand(ev, "C/dense", gate, how)
    chunks = ev.indexes["C"].chunks
    res = ev.result("C/dense")
    for i, q in enumerate(ev.queries):  # brute force: widen every kept chunk on its own, no merging
        spans = []
        for p, _ in kept_chunks(res, i, gate):
            c = chunks[p]
            if how == "section":
                sec = ev.corpus.document(c.doc_id).section_at(c.start)
                spans.append((c.doc_id, sec.start, sec.end))
            else:
                near = [chunks[j] for j in (p - 1, p, p + 1) if 0 <= j < len(chunks) and chunks[j].doc_id == c.doc_id]
                spans.append((c.doc_id, min(n.start for n in near), max(n.end for n in near)))
        want = q.in_domain and any(d == ev.truth.question(q.question_id).doc_id
                                   and s <= ev.truth.question(q.question_id).start
                                   and ev.truth.question(q.question_id).end <= e for d, s, e in spans)
        assert got.answered[i] == want, q.id
        # merged passages cover exactly the widened spans, and never overlap within a document
        covered = {(d, x) for d, s, e in got.passages[i] for x in range(s, e)}
        assert covered == {(d, x) for d, s, e in spans for x in range(s, e)}
        assert sum(e - s for _, s, e in got.passages[i]) == len(covered)


def test_expansion_recovers_a_destroyed_needle_and_keeps_it_destroyed(ev):
    """Blind cuts (A) destroy needles; handing over the neighbours recovers those whose halves sit side by side."""
    led = ledger(ev, "A/dense", Gate(keep=4, cut=0.9), expansions=("neighbours",), encoder=FakeEncoder(dim=1024))
    row = next(r for r in led.rows if r.config == "A+neighbours/dense")
    assert row.destroyed == led.baseline.destroyed == len(ev.indexes["A"].report.destroyed) > 0
    assert dict(row.repaired_from).get("destroyed", 0) >= 1
    assert row.broken == ()  # the same chunks kept, each widened: nothing the baseline answers is lost
    assert row.prompt_tokens > led.baseline.prompt_tokens
    assert row.method == "blind 512 + kept chunks with 1 neighbour either side at retrieval"
