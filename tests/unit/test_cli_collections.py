"""``eval --collection`` and ``convert`` end to end (FAKE encoder through RAGDIAG_ENCODER: plumbing)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiag.cli.parser import main
from ragdiag.documents.collections import DOCUMENT_LEVEL_NOTE, NO_OOD_NOTE
from ragdiag.documents.collections.examples import make_examples


@pytest.fixture(scope="module")
def examples(tmp_path_factory, corpus, truth):
    out = tmp_path_factory.mktemp("cli-collections")
    make_examples(out, corpus, truth)
    return out


@pytest.fixture(autouse=True)
def _fake(monkeypatch):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")


def test_eval_beir_prints_document_level_measures_and_says_the_chunk_analysis_is_off(examples, tmp_path, capsys):
    import pytrec_eval

    out = tmp_path / "out"
    code = main(["eval", "--collection", f"beir:{examples}/beir-sklearn", "--strategies", "E",
                 "--retrievers", "dense,bm25", "--no-cache", "--out", str(out)])
    text, err = capsys.readouterr()
    assert code == 0, err
    assert DOCUMENT_LEVEL_NOTE in text and NO_OOD_NOTE in text
    assert "nDCG@10 (primary)" in text and "MAP@10" in text and "recall@10" in text
    measures = json.loads((out / "measures.json").read_text())
    assert measures["level"] == "document" and measures["primary"] == "ndcg"
    for cfg in ("E_dense", "E_bm25"):  # the files written give pytrec_eval the numbers printed
        run, qrels = {}, {}
        for line in (out / "trec" / f"{cfg}.run").read_text().splitlines():
            q, _, d, _, score, _ = line.split()
            run.setdefault(q, {})[d] = float(score)
        for line in (out / "trec" / f"{cfg}.qrels").read_text().splitlines():
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
        got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        mean = np.mean([got[q]["ndcg_cut_10"] for q in qrels])
        assert measures["configs"][cfg.replace("_", "/")]["ndcg"]["estimate"] == pytest.approx(mean, abs=1e-12)
        ndcg = measures["configs"][cfg.replace("_", "/")]["ndcg"]
        assert f"{ndcg['estimate']:.2f} ({ndcg['low']:.2f}–{ndcg['high']:.2f})" in text


def test_convert_then_eval_gives_the_same_numbers(examples, tmp_path, capsys):
    folder = tmp_path / "converted"
    assert main(["convert", f"trec:{examples}/trec-sklearn", "--out", str(folder)]) == 0
    said = capsys.readouterr().out
    assert f"--collection ragdiag:{folder}" in said and (tmp_path / "converted.truth.json").exists()
    tables = []
    for spec in (f"trec:{examples}/trec-sklearn", f"ragdiag:{folder}"):
        assert main(["eval", "--collection", spec, "--strategies", "C", "--retrievers", "bm25", "--no-cache"]) == 0
        tables.append(capsys.readouterr().out.split("ranked documents", 1)[1])
    assert tables[0] == tables[1]


def test_eval_squad_runs_the_chunk_analysis_too(examples, capsys):
    code = main(["eval", "--collection", f"squad:{examples}/squad-sklearn.json", "--strategies", "A",
                 "--retrievers", "bm25", "--no-cache"])
    text = capsys.readouterr().out
    assert code == 0
    assert "destroyed by A:" in text and DOCUMENT_LEVEL_NOTE not in text
    assert "ranked passages, k = 10, descriptive" in text and "R@4" in text


@pytest.mark.parametrize("argv, message", [
    (["eval", "--collection", "beir"], "bad collection 'beir'"),
    (["eval", "--collection", "beir:/no/such", "--no-cache"], "does not exist"),
    (["eval", "--collection", "beir:{ex}/beir-sklearn", "--corpus", "x"], "replaces --corpus"),
    (["eval", "--collection", "beir:{ex}/beir-sklearn", "--split", "dev"], "no qrels/dev.tsv"),
    (["convert", "beir:{ex}/beir-sklearn", "--out", "{ex}"], "not an empty folder"),
    (["eval", "--collection", "squad:{ex}/beir-sklearn/qrels/test.tsv"], "neither JSON nor JSON Lines"),
])
def test_bad_input_is_one_line_and_exit_2(examples, capsys, argv, message):
    code = main([a.format(ex=examples) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_slices_of_a_collection_by_tag_and_without_tags(examples, capsys):
    assert main(["slices", "E/bm25", "--by", "tag", "--collection", f"beir:{examples}/beir-sklearn",
                 "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "slices of E/bm25 by tag, nDCG@10" in out and {"early", "mid", "late"} <= set(out.split())
    assert main(["slices", "E/bm25", "--by", "tag", "--collection", f"trec:{examples}/trec-sklearn"]) == 2
    assert "has no tags" in capsys.readouterr().err


def test_eval_squad_out_keeps_evals_files_and_adds_the_measures_beside(examples, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["eval", "--collection", f"squad:{examples}/squad-sklearn.json", "--strategies", "E",
                 "--retrievers", "bm25", "--no-cache", "--out", str(out)]) == 0
    capsys.readouterr()
    assert (out / "summary.json").exists() and (out / "trec" / "E.qrels").exists()
    measures = json.loads((out / "measures" / "measures.json").read_text())
    assert measures["level"] == "span" and measures["items"] == "chunk" and measures["primary"] is None
    assert measures["verdicts"].startswith("R@4")


def test_slices_json_of_a_collection_is_json(examples, capsys):
    assert main(["slices", "E/bm25", "--by", "tag", "--json", "--collection", f"beir:{examples}/beir-sklearn",
                 "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["measure"] == "nDCG@10" and {s["label"] for s in doc["slices"]} == {"early", "mid", "late"}
