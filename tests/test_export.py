"""Tests for ragdiag.export, and pytrec_eval as the oracle for ragdiag.metrics.

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

from ragdiag.export import trec_id, trec_qrels, trec_run, write_trec
from ragdiag.metrics import KS, MRR_DEPTH, hits_at_k, reciprocal_rank

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


def test_trec_qrels_chunk_level_and_destroyed_needles_absent(tiny_eval):
    lines = trec_qrels(tiny_eval, "C").splitlines()
    # holders: q1 -> chunk 1, q2 -> chunk 2, q3 -> none (destroyed), q4 -> chunk 5; two phrasings each
    assert lines == [
        "q1:course 0 C:animals:0001 1",
        "q1:ticket 0 C:animals:0001 1",
        "q2:course 0 C:animals:0002 1",
        "q2:ticket 0 C:animals:0002 1",
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
    assert names == ["C_dense.run", "C_bm25.run", "C_hybrid.run", "C.qrels"]
    assert Path(paths[0]).read_text() == trec_run(tiny_eval, "C/dense")
    assert Path(paths[-1]).read_text() == trec_qrels(tiny_eval, "C")


def test_pytrec_eval_agrees_on_the_tiny_evaluation(tiny_eval, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    paths = write_trec(tiny_eval, tmp_path)
    with open(tmp_path / "C.qrels") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(tmp_path / "C_dense.run") as f:
        run = pytrec_eval.parse_run(f)
    out = pytrec_eval.RelevanceEvaluator(qrels, {"success.1,4,8", "recip_rank"}).evaluate(run)
    # q3 (destroyed) is skipped by pytrec_eval: no relevant chunk. Ranks of the others: 1, 4, 1, 1, 6, 1
    assert sorted(out) == ["q1:course", "q1:ticket", "q2:course", "q2:ticket", "q4:course", "q4:ticket"]
    assert [out[q]["recip_rank"] for q in sorted(out)] == pytest.approx([1, 1 / 4, 1, 1, 1 / 6, 1])
    assert [out[q]["success_4"] for q in sorted(out)] == [1, 1, 1, 1, 0, 1]
    assert len(paths) == 4


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
    destroyed = np.array([d == "destroyed" for d in res.diagnosis])
    kept = ind & ~destroyed
    ids = [q.id for q in ev.queries]
    # pytrec_eval evaluates exactly the in-domain queries whose needle survived chunking
    assert sorted(oracle) == sorted(ids[i] for i in np.flatnonzero(kept))
    assert destroyed.any(), "the bundled corpus has destroyed needles under C: the split below is not vacuous"
    rr = reciprocal_rank(res.needle_rank, depth=MRR_DEPTH)
    for i in np.flatnonzero(kept):
        o = oracle[ids[i]]
        assert rr[i] == pytest.approx(o["recip_rank"], abs=1e-12), ids[i]
        for k in KS:
            assert bool(hits_at_k(res.needle_rank[i : i + 1], k)[0]) == (o[f"success_{k}"] == 1.0), (ids[i], k)
    # averages over the non-destroyed queries
    order = [ids[i] for i in np.flatnonzero(kept)]
    assert rr[kept].mean() == pytest.approx(np.mean([oracle[q]["recip_rank"] for q in order]), abs=1e-12)
    for k in KS:
        assert hits_at_k(res.needle_rank[kept], k).mean() == pytest.approx(
            np.mean([oracle[q][f"success_{k}"] for q in order]), abs=1e-12)


@pytest.mark.model
def test_ragdiag_counts_destroyed_queries_as_misses(bundled_eval_c, bundled_trec):
    from ragdiag.evaluate import summary_rows

    ev = bundled_eval_c
    rows = {r["retriever"]: r for r in summary_rows(ev)}
    for retriever, oracle in bundled_trec.items():
        res = ev.result(f"C/{retriever}")
        ind = ev.in_domain
        destroyed = np.array([d == "destroyed" for d in res.diagnosis])
        n_in, n_destroyed = int(ind.sum()), int(destroyed.sum())
        assert (res.needle_rank[destroyed] == 0).all() and np.isnan(res.needle_distance[destroyed]).all()
        # ragdiag: hits over ALL in-domain queries (destroyed ones are misses); pytrec_eval: over the others
        for k in KS:
            oracle_hits = sum(v[f"success_{k}"] for v in oracle.values())
            assert len(oracle) == n_in - n_destroyed
            assert rows[retriever][f"R@{k}"].estimate == pytest.approx(oracle_hits / n_in, abs=1e-12)
        oracle_rr = sum(v["recip_rank"] for v in oracle.values())
        assert rows[retriever]["MRR"] == pytest.approx(oracle_rr / n_in, abs=1e-12)


def test_destroyed_queries_have_no_qrels_even_when_ranked(tiny_eval):
    # A destroyed query still has a ranked list in the run; with no qrels, TREC tools skip it.
    run_q = {line.split()[0] for line in trec_run(tiny_eval, "C/dense").splitlines()}
    qrel_q = {line.split()[0] for line in trec_qrels(tiny_eval, "C").splitlines()}
    assert run_q - qrel_q == {"q3:course", "q3:ticket"}
    res = tiny_eval.result("C/dense")
    assert [res.diagnosis[i] for i in (4, 5)] == ["destroyed", "destroyed"]


def test_empty_export_when_no_in_domain_queries(tiny_eval):
    # only ood queries left: nothing to write, and no stray newline
    ev = replace(tiny_eval, queries=tiny_eval.queries[8:])
    res = tiny_eval.result("C/dense")
    ev.results = {res.config: replace(res, top_order=res.top_order[8:])}
    assert trec_run(ev, "C/dense") == ""
    assert trec_qrels(ev, "C") == ""


def test_external_runs_are_not_exported(tiny_eval, tmp_path):
    from ragdiag.evaluate import Config

    ext = Config("ext", "other-system")
    ev = replace(tiny_eval, results=dict(tiny_eval.results))
    ev.results[ext] = replace(tiny_eval.result("C/dense"), config=ext)
    with pytest.raises(ValueError, match="external run"):
        trec_run(ev, ext)
    assert [Path(p).name for p in write_trec(ev, tmp_path)] == ["C_dense.run", "C_bm25.run", "C_hybrid.run", "C.qrels"]
