"""Every bad input is a message naming what to change, never a traceback, a hang or a silent wrong answer:
an ood-less truth, a cross-validation over too few questions, out-of-range CLI numbers, a Ray head that does
not answer, scores that are not distances, and library arguments of the wrong type or range."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tiny import TINY_TRUTH, write_tiny_kb
from ragdiag.cli.parser import main

ROOT = Path(__file__).resolve().parents[2]


def run_main(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _gate(n_in_questions: int, n_ood: int):
    from ragdiag.analyses.gate_table import GateTable

    ids = tuple(f"q{i}:course" for i in range(n_in_questions)) + tuple(f"o{i}" for i in range(n_ood))
    ind = np.array([True] * n_in_questions + [False] * n_ood)
    first = np.linspace(0.2, 0.6, len(ids))
    good = np.where(ind, first, np.inf)
    return GateTable(ids, ind, closest=first, closest_holder=good, window=4)


# ----- a truth without out-of-domain queries; too few questions for cross-validation -------------------------

def test_a_bluff_goal_without_ood_queries_has_nothing_to_measure_and_says_so():
    from ragdiag.analyses.threshold import NO_OOD, Goal, cut_choice

    choice = cut_choice(_gate(6, 0), Goal(max_bluff=0.05))
    assert choice.cut is None and NO_OOD in choice.notes
    assert choice.cross_validated["bluffs"].words() == "0 = no queries"
    json.dumps(choice.as_json())  # a plain document, nothing that cannot be written


def test_cross_validation_over_one_question_says_it_cannot():
    from ragdiag.analyses.threshold import Goal, cross_validate, cut_choice

    with pytest.raises(ValueError, match="needs at least 2 answerable questions; this set has 1"):
        cross_validate(_gate(1, 3), Goal(min_answered=0.5), folds=5)
    choice = cut_choice(_gate(1, 3), Goal(min_answered=0.5), folds=5)
    assert not choice.cross_validated and any("this set has 1" in n for n in choice.notes)
    few = cut_choice(_gate(3, 3), Goal(min_answered=0.5), folds=5)
    assert any("5-fold cross-validation over 3 questions" in n for n in few.notes)


@pytest.mark.model
def test_report_of_an_ood_less_truth(tmp_path, capsys):
    corpus = write_tiny_kb(tmp_path, json.dumps({**TINY_TRUTH, "ood": []}))
    code, out, err = run_main(capsys, "report", "--corpus", corpus, "--no-cache", "--no-cost", "--strategies", "A",
                              "--retrievers", "bm25", "--out", tmp_path / "r.html")
    assert code == 0, err
    assert "no out-of-domain queries" in (tmp_path / "r.md").read_text()


@pytest.mark.model
def test_threshold_and_export_pages_of_an_ood_less_truth(tmp_path, monkeypatch):
    from apptest import ENV, app, texts, write_tiny_corpus

    root, truth = write_tiny_corpus(tmp_path)
    data = json.loads(truth.read_text())
    truth.write_text(json.dumps({**data, "ood": []}))
    for k, v in {**ENV, "RAGDIAG_CORPUS": str(root), "RAGDIAG_TRUTH": str(truth),
                 "RAGDIAG_CACHE": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(k, v)
    for k in ("RAGDIAG_ROOTS", "RAGDIAG_LOCKED"):
        monkeypatch.delenv(k, raising=False)
    at = app("app_pages/threshold.py")  # app() asserts no exception
    assert any("no out-of-domain queries" in i.value for i in at.info)
    app("app_pages/export.py")


# ----- CLI numbers and names -----------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["hubs", "--top", "-1"], "--top must be at least 1, got -1"),
    (["funnel", "--outcome", "nope"], "--outcome must be one of destroyed,"),
    (["variants", "--cut", "nan"], "--cut must be a finite cosine distance in [0, 2], got nan"),
    (["eval", "--engine", "ray", "--ray-actors", "-1"], "--ray-actors must be at least 1, got -1"),
    (["eval", "--engine", "ray", "--ray-gpus-per-actor", "nan"], "--ray-gpus-per-actor must be a number of GPUs"),
    (["truth", "suggest", "--out", "OUT", "-n", "0"], "-n must be at least 1, got 0"),
])
def test_cli_numbers_out_of_range_are_one_line(tiny_folder, tmp_path, capsys, args, message):
    args = [str(tmp_path / "x.json") if a == "OUT" else a for a in args]
    code, out, err = run_main(capsys, *args, "--corpus", tiny_folder,
                              *(() if args[0] == "truth" else ("--cache", tmp_path / "cache")))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "cache").exists()  # refused before any work


@pytest.mark.parametrize("score", [-50, 1e300])
def test_distances_that_are_not_cosine_distances_are_refused(tiny_folder, tmp_path, capsys, score):
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(json.dumps({"query_id": q, "hits": [{"text": "x", "score": score}]})
                             for q in ("q1:course", "o1")) + "\n")
    code, _, err = run_main(capsys, "eval-run", run, "--distances", "--corpus", tiny_folder, "--no-cache")
    assert code == 2 and "is not a cosine distance" in err


def test_a_ray_head_that_does_not_answer_is_a_message_not_a_hang():
    pytest.importorskip("ray")
    code = ("import sys; sys.path.insert(0, 'tests/helpers')\n"
            "from fakes import FakeEncoder\n"
            "from ragdiag.index.ray_engine import RayEncoder, RayUnavailable\n"
            "try:\n    RayEncoder(FakeEncoder(), address='127.0.0.1:1')\n"
            "except RayUnavailable as exc:\n    print('refused:', exc)\n")
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("RayEncoder kept waiting for 127.0.0.1:1 for a minute")
    assert "refused: cannot reach Ray at '127.0.0.1:1'" in done.stdout, done.stdout + done.stderr


# ----- the library's public arguments ---------------------------------------------------------------------

def test_library_arguments_are_checked_with_their_names(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.analyses.threshold import Goal, cut_choice, sweep

    with pytest.raises(ValueError, match="rerank_head must be an integer >= 1, got 0"):
        evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A", retrievers="bm25", rerank_head=0)
    with pytest.raises(TypeError, match="corpus must be a Corpus, got str"):
        evaluate("data/corpus", tiny_truth, encoder=fake_encoder)
    with pytest.raises(TypeError, match="truth must be a GroundTruth, got dict"):
        evaluate(tiny_corpus, TINY_TRUTH, encoder=fake_encoder)
    with pytest.raises(TypeError, match="encoder must be an encoder"):
        evaluate(tiny_corpus, tiny_truth, encoder="minilm")
    with pytest.raises(ValueError, match="cut must be a finite cosine distance in \\[0, 2\\], got nan"):
        sweep(_gate(3, 2), [0.5, float("nan")])
    with pytest.raises(TypeError, match="inputs must be a GateTable, got dict"):
        sweep({}, [0.5])
    with pytest.raises(TypeError, match="goal must be a Goal, got float"):
        cut_choice(_gate(3, 2), 0.05)


def test_more_library_entry_points_name_a_wrong_argument(tiny_corpus, tiny_truth):
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus
    from ragdiag.analyses.hubs import hubs
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.documents.truth import parse_truth

    with pytest.raises(TypeError, match="corpus must be a Corpus, got str"):
        parse_truth(TINY_TRUTH, "data/corpus")
    with pytest.raises(TypeError, match="corpus must be a Corpus, got PosixPath"):
        chunk_corpus(Path("data/corpus"), STRATEGIES["E"])
    with pytest.raises(TypeError, match="strategy must be a Strategy, got str"):
        chunk_corpus(tiny_corpus, "E")
    with pytest.raises(TypeError, match="ev must be an Evaluation, got GroundTruth"):
        hubs(tiny_truth, "E/dense")
    with pytest.raises(TypeError, match="ev must be an Evaluation, got dict"):
        gate_table({}, "E/dense")
