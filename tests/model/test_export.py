"""Tests for ragdiag.present.export, and pytrec_eval as the oracle for ragdiag.core.metrics.

The format tests use the tiny corpus evaluated with the FAKE encoder
(conftest.py); the oracle cross-check uses the real-model evaluation of the
bundled corpus (``bundled_eval_c``) through the exported files.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest

from ragdiag.core.defaults import KS, MRR_DEPTH
from ragdiag.present.export import DESTROYED_DOCNO, NOTHING_DOCNO, trec_id, trec_qrels, trec_run, write_trec
from ragdiag.core.metrics import hits_at_k, reciprocal_rank


# ---------------------------------------------------------------------------
# Format, on the tiny evaluation (dense ranks [1, 4, 1, 1, 0, 0, 6, 1] for the 8 in-domain queries)
# ---------------------------------------------------------------------------


def test_trec_run_lines(tiny_eval):
    lines = trec_run(tiny_eval, "C/dense", depth=3).splitlines()
    assert len(lines) == 8 * 3  # in-domain queries only, 3 each
    first = lines[0].split()
    res = tiny_eval.result("C/dense")
    chunks = tiny_eval.indexes["C"].chunks
    assert first == ["q1:course", "Q0", chunks[int(res.top_order[0, 0])].id, "1", "1", "ragdiag-C-dense"]
    for line in lines:
        qid, q0, docno, rank, score, name = line.split()
        assert q0 == "Q0" and name == "ragdiag-C-dense"
        assert float(score) == pytest.approx(1 / int(rank), rel=1e-12)
        assert not qid.startswith("o")
    # ranks restart at 1 for each query and follow the evaluation's order
    q2 = [line.split() for line in lines if line.startswith("q1:ticket ")]
    assert [f[3] for f in q2] == ["1", "2", "3"]
    assert [f[2] for f in q2] == [chunks[int(p)].id for p in res.top_order[1, :3]]


def test_trec_run_scores_strictly_decrease_even_where_the_retriever_ties(tiny_eval):
    # q4:course: dense scores are all 0 (a tie over all 8 chunks); trec_eval re-sorts by score, so the
    # exported score must still be strictly decreasing in rank.
    res = tiny_eval.result("C/dense")
    assert (res.top_scores[6] == 0).all()
    lines = [line.split() for line in trec_run(tiny_eval, "C/dense").splitlines() if line.startswith("q4:course ")]
    scores = [float(f[4]) for f in lines]
    assert len(lines) == 8  # fewer chunks than the depth: the whole index
    assert all(a > b for a, b in zip(scores, scores[1:]))


def test_trec_run_options(tiny_eval):
    text = trec_run(tiny_eval, "C/bm25", depth=1, run_name="my run")
    assert text.endswith("\n")
    assert all(line.endswith(" my%20run") for line in text.splitlines())
    with pytest.raises(ValueError, match="depth"):
        trec_run(tiny_eval, "C/bm25", depth=0)
    with pytest.raises(KeyError):
        trec_run(tiny_eval, "E/bm25")


def test_trec_qrels_chunk_level_and_destroyed_needles_get_the_placeholder(tiny_eval):
    lines = trec_qrels(tiny_eval, "C").splitlines()
    # holders: q1 -> chunk 1, q2 -> chunk 2, q3 -> none (destroyed: the placeholder), q4 -> chunk 5
    assert lines == [
        "q1:course 0 C:animals:0001 1",
        "q1:ticket 0 C:animals:0001 1",
        "q2:course 0 C:animals:0002 1",
        "q2:ticket 0 C:animals:0002 1",
        f"q3:course 0 {DESTROYED_DOCNO} 1",
        f"q3:ticket 0 {DESTROYED_DOCNO} 1",
        "q4:course 0 C:animals:0005 1",
        "q4:ticket 0 C:animals:0005 1",
    ]
    assert trec_qrels(tiny_eval, "c") == trec_qrels(tiny_eval, "C")
    with pytest.raises(ValueError, match="not evaluated"):
        trec_qrels(tiny_eval, "E")


def test_trec_ids_with_whitespace_are_encoded_reversibly():
    for raw in ["C:svm:0001", "C:my notes:0001", "q 1:course", "C:100%\tdone:0002"]:
        enc = trec_id(raw)
        assert not any(ch.isspace() for ch in enc)
        assert unquote(enc) == raw
    assert trec_id("C:svm:0001") == "C:svm:0001"


def test_write_trec(tiny_eval, tmp_path):
    paths = write_trec(tiny_eval, tmp_path / "trec")
    names = [Path(p).name for p in paths]
    assert names == ["C_dense.run", "C_bm25.run", "C_hybrid.run", "C.qrels", "README.txt"]
    assert Path(paths[0]).read_text() == trec_run(tiny_eval, "C/dense")
    assert Path(paths[-2]).read_text() == trec_qrels(tiny_eval, "C")
    readme = Path(paths[-1]).read_text()
    assert "R@k is success@k" in readme and "hit_rate@k" in readme and NOTHING_DOCNO in readme


def test_pytrec_eval_agrees_on_the_tiny_evaluation(tiny_eval, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    paths = write_trec(tiny_eval, tmp_path)
    with open(tmp_path / "C.qrels") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(tmp_path / "C_dense.run") as f:
        run = pytrec_eval.parse_run(f)
    out = pytrec_eval.RelevanceEvaluator(qrels, {"success.1,4,8", "recip_rank"}).evaluate(run)
    # q3 (destroyed) is judged through the placeholder and scores 0. Ranks: 1, 4, 1, 1, 0, 0, 6, 1
    assert sorted(out) == ["q1:course", "q1:ticket", "q2:course", "q2:ticket", "q3:course", "q3:ticket",
                           "q4:course", "q4:ticket"]
    assert [out[q]["recip_rank"] for q in sorted(out)] == pytest.approx([1, 1 / 4, 1, 1, 0, 0, 1 / 6, 1])
    assert [out[q]["success_4"] for q in sorted(out)] == [1, 1, 1, 1, 0, 0, 0, 1]
    assert len(paths) == 5


# ---------------------------------------------------------------------------
# The oracle: pytrec_eval on the exported run and qrels of the bundled corpus (real model)
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bundled_trec(bundled_eval_c, tmp_path_factory):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    out = tmp_path_factory.mktemp("trec")
    write_trec(bundled_eval_c, out, depth=MRR_DEPTH)
    with open(out / "C.qrels") as f:
        qrels = pytrec_eval.parse_qrel(f)
    runs = {}
    for retriever in ("dense", "bm25", "hybrid"):
        with open(out / f"C_{retriever}.run") as f:
            runs[retriever] = pytrec_eval.parse_run(f)
    measures = {"success." + ",".join(map(str, KS)), "recip_rank"}
    return {r: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run) for r, run in runs.items()}


@pytest.mark.model
@pytest.mark.parametrize("retriever", ["dense", "bm25", "hybrid"])
def test_metrics_equal_pytrec_eval_per_query_and_on_average(bundled_eval_c, bundled_trec, retriever):
    ev = bundled_eval_c
    res = ev.result(f"C/{retriever}")
    oracle = bundled_trec[retriever]
    ind = ev.in_domain
    holders = ev.indexes["C"].holders  # a destroyed needle: no chunk holds it whole
    destroyed = np.array([q.in_domain and holders[q.question_id].size == 0 for q in ev.queries])
    ids = [q.id for q in ev.queries]
    # pytrec_eval evaluates every in-domain query, destroyed ones included (through the placeholder)
    assert sorted(oracle) == sorted(ids[i] for i in np.flatnonzero(ind))
    assert destroyed.any(), "the bundled corpus has destroyed needles under C: the check below is not vacuous"
    rr = reciprocal_rank(res.needle_rank, depth=MRR_DEPTH)
    for i in np.flatnonzero(ind):
        o = oracle[ids[i]]
        assert rr[i] == pytest.approx(o["recip_rank"], abs=1e-12), ids[i]
        for k in KS:
            assert bool(hits_at_k(res.needle_rank[i : i + 1], k)[0]) == (o[f"success_{k}"] == 1.0), (ids[i], k)


@pytest.mark.model
def test_pytrec_eval_means_equal_the_summary_table(bundled_eval_c, bundled_trec):
    from ragdiag.analyses.summary import summary_rows

    rows = {r.retriever: r for r in summary_rows(bundled_eval_c)}
    for retriever, oracle in bundled_trec.items():
        for k in KS:
            assert rows[retriever].recall[k].estimate == pytest.approx(
                np.mean([v[f"success_{k}"] for v in oracle.values()]), abs=1e-12)
        assert rows[retriever].mrr.estimate == pytest.approx(np.mean([v["recip_rank"] for v in oracle.values()]), abs=1e-12)


# ---------------------------------------------------------------------------
# Every configuration, strategy A included: ranx and pytrec_eval reproduce the summary table
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_eval_all(tiny_corpus, tiny_truth, fake_encoder):
    """The tiny corpus under all six strategies (FAKE encoder): blind cuts (A, B) destroy needles too."""
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,B,C,D,E,F",
                    retrievers="dense,bm25,hybrid")


@pytest.mark.slow
def test_ranx_and_pytrec_eval_means_equal_the_table_for_every_configuration(tiny_eval_all, tmp_path):
    pytest.importorskip("pytrec_eval")
    pytest.importorskip("ranx")
    from trec_oracle import trec_means_equal_the_table

    ev = tiny_eval_all
    read = trec_means_equal_the_table(ev, tmp_path)
    for qrels_text, _, _, out in read.values():
        assert len(out) == int(ev.in_domain.sum())  # every answerable query is judged
    assert any(DESTROYED_DOCNO in qrels_text for qrels_text, *_ in read.values()), \
        "no strategy destroyed a needle: the placeholder would not be exercised"


def test_destroyed_queries_are_judged_with_a_placeholder_no_run_retrieves(tiny_eval):
    # A destroyed query has a ranked list in the run and a qrels line for the placeholder only.
    run = [line.split() for line in trec_run(tiny_eval, "C/dense").splitlines()]
    qrels = [line.split() for line in trec_qrels(tiny_eval, "C").splitlines()]
    assert {f[0] for f in run} == {f[0] for f in qrels}
    assert {f[0] for f in qrels if f[2] == DESTROYED_DOCNO} == {"q3:course", "q3:ticket"}
    assert DESTROYED_DOCNO not in {f[2] for f in run}
    assert all(DESTROYED_DOCNO != c.id for c in tiny_eval.indexes["C"].chunks)
    q3 = [tiny_eval.queries[i] for i in (4, 5)]  # q3's needle straddles chunks 3 and 4: no chunk holds it whole
    assert [q.question_id for q in q3] == ["q3", "q3"] and tiny_eval.indexes["C"].holders["q3"].size == 0


def test_a_query_with_nothing_retrieved_gets_the_sentinel_line(tiny_eval):
    # pretend BM25 retrieved nothing for the first query: its run still has one line, never relevant
    res = tiny_eval.result("C/bm25")
    retrieved = np.array(res.retrieved if res.retrieved is not None else [res.top_order.shape[1]] * len(res.needle_rank))
    retrieved[0] = 0
    ev = replace(tiny_eval, results={**tiny_eval.results, res.config: replace(res, retrieved=retrieved)})
    lines = [line.split() for line in trec_run(ev, "C/bm25").splitlines()]
    first = [f for f in lines if f[0] == "q1:course"]
    assert first == [["q1:course", "Q0", NOTHING_DOCNO, "1", "1", "ragdiag-C-bm25"]]
    assert {f[0] for f in lines} == {q.id for q in tiny_eval.queries if q.in_domain}


def test_empty_export_when_no_in_domain_queries(tiny_eval):
    # only ood queries left: nothing to write, and no stray newline
    res = tiny_eval.result("C/dense")
    ev = replace(tiny_eval, queries=tiny_eval.queries[8:], results={res.config: replace(res, top_order=res.top_order[8:])})
    assert trec_run(ev, "C/dense") == ""
    assert trec_qrels(ev, "C") == ""


def test_external_runs_are_not_exported(tiny_eval, tmp_path):
    from ragdiag.evaluation.records import ExternalKey

    ext = ExternalKey("other-system")
    ev = replace(tiny_eval, results={**tiny_eval.results, ext: replace(tiny_eval.result("C/dense"), config=ext)})
    with pytest.raises(ValueError, match="external run"):
        trec_run(ev, ext)
    assert [Path(p).name for p in write_trec(ev, tmp_path)] == ["C_dense.run", "C_bm25.run", "C_hybrid.run", "C.qrels",
                                                                   "README.txt"]
