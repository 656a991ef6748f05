"""The regression gate (``gate``): end to end on a held-out corpus, exit codes, Markdown, JUnit and JSON.

The corpus is made by :func:`heldout.make_heldout`: six short documents, none from the
bundled corpus; in three of them the needle paragraph straddles character 512,
so blind 512-character cuts (strategy A) destroy those answers while paragraph
cuts (C) keep them whole. The FAKE bag-of-words encoder (``tests/helpers/fakes.py``,
through ``RAGDIAG_ENCODER``) keeps it fast; test_regression_gate_real_model.py runs the real model.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from heldout import heldout_run, make_heldout, run


@pytest.fixture
def fake_env(monkeypatch):
    """The CLI with the FAKE encoder (plumbing only: its numbers are not MiniLM's)."""
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")


@pytest.fixture
def runs(tmp_path, fake_env, capsys):
    """Baseline (C) and candidate (A and C) `eval --out` folders of the held-out corpus."""
    return heldout_run(tmp_path, capsys, "dense,bm25")


def _failures(xml_text: str) -> list[str]:
    root = ET.fromstring(xml_text)
    return [case.get("name") for case in root.iter("testcase") if case.find("failure") is not None]


def test_eval_out_stamps_the_truth_and_the_gate(runs):
    summary = json.loads((runs["out"] / "summary.json").read_text())
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth, truth_sha256

    truth = load_truth(runs["truth"], load_corpus(runs["folder"]))
    assert summary["truth"]["sha256"] == truth_sha256(truth)
    assert summary["gate"]["cut"] == 0.6 and summary["gate"]["keep"] == 4 and summary["gate"]["primary_k"] == 4
    assert (runs["out"] / "gate_inputs.csv").is_file()
    # the needles the test relies on: A cuts the three that straddle 512, C none
    assert sorted(d["question_id"] for d in summary["destroyed"]["A"]) == ["q1", "q2", "q3"]
    assert summary["destroyed"]["C"] == []


def test_unchanged_candidate_passes_with_no_failing_case(runs, capsys):
    junit = runs["tmp"] / "same.xml"
    code, out, err = run(capsys, "gate", runs["out"], runs["out"], "--config", "C/dense", "--junit", junit,
                         "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["verdict"] == "pass"
    assert [c["name"] for c in doc["checks"]] == ["destroyed needles", "recall", "answered", "bluffs"]
    assert all(c["verdict"] == "pass" and not c["lost"] for c in doc["checks"])
    assert _failures(junit.read_text()) == []
    assert len(list(ET.fromstring(junit.read_text()).iter("testcase"))) == 4


def test_unchanged_corpus_evaluated_now_passes(runs, capsys):
    """No CANDIDATE: the current corpus is evaluated and compared with the folder it was written to."""
    code, out, err = run(capsys, "gate", runs["out"], "--config", "C/bm25", "--corpus", runs["folder"],
                         "--truth", runs["truth"], "--no-cache")
    assert code == 0, out + err
    assert "ragdiag gate: ✅ pass" in out


def test_chunking_that_destroys_answers_fails_and_lists_them(runs, capsys):
    junit, md = runs["tmp"] / "a.xml", runs["tmp"] / "a.md"
    code, out, err = run(capsys, "gate", runs["out"], runs["out"], "--config", "C/dense", "--candidate-config",
                         "A/dense", "--junit", junit, "--markdown", md, "--json")
    assert code == 1, out + err
    doc = json.loads(out)
    assert doc["verdict"] == "fail"
    destroyed = doc["checks"][0]
    assert destroyed["verdict"] == "fail"
    assert [i["id"] for i in destroyed["lost"]] == ["q1", "q2", "q3"]
    assert all("chunk boundary at 512" in i["where"] for i in destroyed["lost"])
    assert "configuration: C/dense -> A/dense" in doc["changes"]
    assert "destroyed needles" in _failures(junit.read_text())
    text = md.read_text()
    assert "❌ fail" in text and "how many eggs does a queen bee lay" in text
    recall = doc["checks"][1]
    assert {i["question_id"] for i in recall["lost"]} <= {"q1", "q2", "q3"}


def test_baseline_on_another_ground_truth_is_refused(runs, capsys, tmp_path):
    other = tmp_path / "other"
    folder, truth = make_heldout(other, questions=lambda qs: qs[:5])
    out2 = tmp_path / "run2"
    code, _, err = run(capsys, "eval", "--corpus", folder, "--truth", truth, "--no-cache", "--strategies", "C",
                       "--retrievers", "dense", "--out", out2)
    assert code == 0, err
    code, out, err = run(capsys, "gate", runs["out"], out2, "--config", "C/dense")
    assert code == 2
    assert "different ground truths" in err and "heldout.truth.json" in err and "6 questions" in err
    assert "5 questions" in err
    # the same refusal without CANDIDATE, before any evaluation
    code, out, err = run(capsys, "gate", runs["out"], "--config", "C/dense", "--corpus", folder, "--truth", truth,
                         "--no-cache")
    assert code == 2 and "different ground truths" in err


@pytest.mark.parametrize("argv, message", [
    (["--config", "Z/dense"], "bad configuration"),
    (["--config", "C/dense", "--margin", "1.5"], "--margin"),
    (["--config", "C/dense", "--alpha", "0.7"], "--alpha"),
    (["--config", "C/hybrid"], "no results for C/hybrid"),
])
def test_bad_input_exits_2(runs, capsys, argv, message):
    code, out, err = run(capsys, "gate", runs["out"], runs["out"], *argv)
    assert code == 2 and message in err


def test_a_folder_that_is_not_a_run_exits_2(tmp_path, capsys):
    code, out, err = run(capsys, "gate", tmp_path, tmp_path, "--config", "C/dense")
    assert code == 2 and "summary.json" in err


def test_pytest_helper_passes_unchanged_and_raises_with_the_summary(runs, tiny_eval):
    from ragdiag.present.regression import RunError
    from ragdiag.testing import assert_no_regression

    report = assert_no_regression(runs["out"], runs["out"], config="C/dense")
    assert report.verdict == "pass"
    with pytest.raises(AssertionError, match="(?s)retrieval regressed.*Newly destroyed.*queen bee"):
        assert_no_regression(runs["out"], runs["out"], config="C/dense", candidate_config="A/dense")
    with pytest.raises(RunError, match="different ground truths"):  # an evaluation of another truth
        assert_no_regression(runs["out"], tiny_eval, config="C/dense")


def test_pytest_helper_takes_an_evaluation(runs):
    """The candidate computed in the test (the same corpus, FAKE encoder): unchanged, so it passes."""
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.testing import assert_no_regression
    from ragdiag.documents.truth import load_truth

    from fakes import fake_encoder

    corpus = load_corpus(runs["folder"])
    ev = evaluate(corpus, load_truth(runs["truth"], corpus), encoder=fake_encoder(), strategies="C",
                  retrievers="dense")
    report = assert_no_regression(runs["out"], ev, config="C/dense")
    assert report.verdict == "pass" and all(c.test is None or c.test.changed == 0 for c in report.checks)


def test_threshold_export_states_both_forms_and_the_model(runs, capsys):
    import yaml

    path = runs["tmp"] / "thresholds.yaml"
    code, out, err = run(capsys, "threshold", "C/dense", "--max-bluff", "0.4", "--corpus", runs["folder"], "--truth",
                         runs["truth"], "--no-cache", "--export", path)
    assert code == 0, err
    doc = yaml.safe_load(path.read_text())
    cut = doc["cut"]["cosine_distance"]
    assert doc["ragdiag_thresholds"] == 1 and doc["config"] == "C/dense" and doc["keep"] == 4
    assert doc["model"]["model"] == "FAKE-bag-of-words" and doc["model"]["weights_sha256"] == "0" * 64
    assert "invalid" in doc["valid_only_for_this_model"]
    assert doc["cut"]["cosine_similarity"] == pytest.approx(1 - cut)
    consumers = doc["consumers"]
    assert consumers["qdrant"]["score_threshold"] == pytest.approx(1 - cut)
    assert consumers["langchain"]["search_kwargs"] == {"k": 4, "score_threshold": pytest.approx(1 - cut)}
    assert f"similarity_cutoff={doc['cut']['cosine_similarity']}" in consumers["llamaindex"]["postprocessor"]
    assert consumers["pgvector"]["keep_if"] == f"embedding <=> :query < {cut}"
    assert doc["rates"]["in_sample"]["bluffs"]["rate"] <= 0.4
    # an earlier export is overwritten; any other file is not
    assert run(capsys, "threshold", "C/dense", "--max-bluff", "0.4", "--corpus", runs["folder"], "--truth",
               runs["truth"], "--no-cache", "--export", path)[0] == 0
    other = runs["tmp"] / "notes.yaml"
    other.write_text("my: settings\n")
    code, out, err = run(capsys, "threshold", "C/dense", "--max-bluff", "0.4", "--corpus", runs["folder"],
                         "--truth", runs["truth"], "--no-cache", "--export", other)
    assert code == 2 and "refusing to overwrite" in err and other.read_text() == "my: settings\n"
