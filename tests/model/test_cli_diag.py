"""The ``funnel``, ``hubs`` and ``cost`` subcommands on the tiny corpus folder: output equals the library's."""

from __future__ import annotations

import json

import pytest

from ragdiag.cli.parser import main

pytestmark = pytest.mark.model


def run_main(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def tiny_library(tiny_folder, encoder):
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.documents.truth import default_truth_path, load_truth

    corpus = load_corpus(tiny_folder)
    truth = load_truth(default_truth_path(tiny_folder), corpus)
    return evaluate(corpus, truth, encoder=encoder, strategies="C", retrievers="dense,bm25,hybrid")


def test_funnel_json_equals_the_library(tiny_folder, tiny_library, tmp_path, capsys):
    from ragdiag.analyses.funnel import funnels
    from ragdiag.analyses.outcomes import LADDER

    code, out, err = run_main(capsys, "funnel", "--corpus", tiny_folder, "--cache", tmp_path / "cache",
                              "--strategies", "C", "--retrievers", "dense,bm25,hybrid", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["k"] == 4 and doc["pool"] == 25 and "questions" in doc["interval"]
    expected = {f.config.label: f for f in funnels(tiny_library)}
    assert [c["config"] for c in doc["configs"]] == list(expected)
    for c in doc["configs"]:
        f = expected[c["config"]]
        assert {s: c["stages"][s]["count"] for s in LADDER} == f.counts()
        assert sum(c["stages"][s]["count"] for s in LADDER) == c["queries"] == 8
        assert [r["stage"] for r in c["per_query"]] == [r.stage for r in f.rows]
        for s in LADDER:
            assert c["stages"][s]["queries"] == f.queries(s)


def test_funnel_table_and_stage_list(tiny_folder, tmp_path, capsys):
    code, out, err = run_main(capsys, "funnel", "--corpus", tiny_folder, "--cache", tmp_path / "cache",
                              "--strategies", "C", "--retrievers", "dense", "--outcome", "destroyed")
    assert code == 0, err
    assert "not retrieved" in out and "not-in-pool" not in out and "C/dense" in out  # each rung under its one name
    assert "C/dense split by the chunking: q3:course, q3:ticket" in out  # q3 straddles two C chunks (conftest.py)


def test_hubs_json_equals_the_library(tiny_folder, tiny_library, tmp_path, capsys):
    from ragdiag.analyses.hubs import hub_rows, hubs

    code, out, err = run_main(capsys, "hubs", "--corpus", tiny_folder, "--cache", tmp_path / "cache",
                              "--config", "C/hybrid", "--top", "5", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["chunks"] == hub_rows(hubs(tiny_library, "C/hybrid", top=5))


def test_cost_table(tiny_folder, tmp_path, capsys):
    code, out, err = run_main(capsys, "cost", "--corpus", tiny_folder, "--cache", tmp_path / "cache",
                              "--strategies", "C", "--retrievers", "dense,bm25", "--sample", "3", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["config"] for r in doc["rows"]] == ["C/dense", "C/bm25"]
    assert all(r["timed queries"] == 3 for r in doc["rows"])
    assert {"platform", "cpus"} <= set(doc["machine"])


def test_bad_cut_is_a_usage_error(tiny_folder, capsys):
    code, out, err = run_main(capsys, "funnel", "--corpus", tiny_folder, "--cut", "5")
    assert code == 2 and "--cut" in err


def test_funnel_of_hybrid_alone_computes_the_dense_stage_it_reads(tiny_folder, tmp_path, capsys, monkeypatch):
    """``--retrievers hybrid`` without dense: the funnel's dense stage is ranked from the registry, as the
    evaluation would rank it (no internal hint about ``encoder=``); equal to the funnel of an evaluation of both."""
    from ragdiag.analyses.funnel import funnels
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import default_truth_path, load_truth
    from ragdiag.evaluation.evaluate import evaluate

    from fakes import fake_encoder

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    code, out, err = run_main(capsys, "funnel", "--corpus", tiny_folder, "--no-cache", "--strategies", "E",
                              "--retrievers", "hybrid", "--json")
    assert code == 0, err
    got = {c["config"]: c for c in json.loads(out)["configs"]}
    corpus = load_corpus(tiny_folder)
    ev = evaluate(corpus, load_truth(default_truth_path(corpus.root), corpus), encoder=fake_encoder(),
                  strategies="E", retrievers="dense,hybrid")
    want = {f.config.label: f for f in funnels(ev)}["E/hybrid"]
    assert list(got) == ["E/hybrid"]
    assert {s: v["count"] for s, v in got["E/hybrid"]["stages"].items()} == {
        s: iv.successes for s, iv in want.intervals().items()}
