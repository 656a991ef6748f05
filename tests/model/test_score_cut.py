"""A cut in the ranking's own score (issue 44): BM25, RRF fused, MaxSim, a cross-encoder's logit or sigmoid.

The exported value, applied by hand to the scores of each query's top ``min(k, keep)`` chunks (kept when
``score >= value``), must give exactly the counts the export reports. The tiny corpus with the FAKE encoder
keeps these at seconds; the command runs on the bundled corpus with the FAKE encoder (no model).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
import yaml
from hypothesis import given, strategies as st

from ragdiag.analyses.threshold.score import above, native_document, score_cut, score_table
from ragdiag.core.gate import Gate


@pytest.fixture(scope="module")
def tiny_native(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="E",
                    retrievers="dense,bm25,hybrid,rerank-maxsim")


@given(st.floats(-1e4, 1e4, allow_nan=False))
def test_above_is_a_short_number_strictly_above(x):
    v = above(x)
    assert v > x and float(f"{v:.4g}") == v


@pytest.mark.parametrize("x, want", [(0.016393, 0.0164), (0.0164, 0.01641), (13.5712, 13.58), (-2.5, -2.499)])
def test_above_table(x, want):
    assert above(x) == want


def _by_hand(ev, config, gate, value, unit=None):
    """The counts at ``value`` from the raw ranking: each query's first min(k, keep) scores, kept when >= value."""
    res = ev.result(config)
    w = gate.window(res.top_scores.shape[1])
    answered = bluffs = 0
    for i, q in enumerate(ev.queries):
        s = np.asarray(res.top_scores[i, :w], dtype=float)
        if unit == "sigmoid":
            s = 1 / (1 + np.exp(-s))
        kept = [j for j in range(w) if math.isfinite(s[j]) and s[j] >= value]
        if q.in_domain:
            answered += any(res.top_holds[i, j] for j in kept)
        else:
            bluffs += bool(kept)
    return answered, bluffs


@pytest.mark.parametrize("config", ["E/dense", "E/bm25", "E/hybrid", "E/rerank-maxsim"])
@pytest.mark.parametrize("gate", [Gate(), Gate(keep=2, k=2)])
def test_the_exported_value_reproduces_its_counts(tiny_native, config, gate):
    table = score_table(tiny_native, config, gate)
    choice = score_cut(table, 0.5)  # 2 off-topic queries: 0.5 is the smallest goal a conformal cut certifies
    doc = yaml.safe_load(yaml.safe_dump(native_document(tiny_native, table, choice, keep=gate.keep)))
    cut = doc["cut"]
    assert cut["direction"] == "higher keeps" and cut["method"] == "conformal" and cut["score"] == table.score
    assert doc["stamp"]["score"] == table.score and doc["stamp"]["model"] == tiny_native.encoder_stamp["model"]
    assert (doc["stamp"]["reranker"] is not None) == config.endswith("rerank-maxsim")
    rates = doc["rates"]["at_this_cut"]
    assert _by_hand(tiny_native, config, gate, cut["value"]) == (rates["answered"]["count"], rates["bluffs"]["count"])
    assert rates["bluffs"]["count"] <= 1  # floor(0.5 * 2)
    consumers = doc["consumers"]
    if config.endswith("rerank-maxsim"):  # LlamaIndex filters after a reranker, on its score: a setting
        assert f"similarity_cutoff={cut['value']}" in consumers["llamaindex"]["postprocessor"]
        assert consumers["chroma"].startswith("cannot")
    elif config.endswith("hybrid"):  # Qdrant's fusion query scores the fused list
        assert consumers["qdrant"]["score_threshold"] == cut["value"] and consumers["llamaindex"].startswith("cannot")
    elif config.endswith("bm25"):
        assert all(v.startswith("cannot") for k, v in consumers.items() if k != "any")


def test_a_cross_encoders_logit_and_sigmoid_cut_the_same_queries(tiny_native):
    """Plumbing of the units, with a FAKE: the MaxSim ranking relabelled as a cross-encoder's (logits)."""
    from ragdiag.evaluation.records import Config

    ce = Config("E", "rerank-ce")
    fake = replace(tiny_native, results={ce: replace(tiny_native.result("E/rerank-maxsim"), config=ce)})
    got = {}
    for unit in ("logit", "sigmoid"):
        table = score_table(fake, "E/rerank-ce", Gate(), unit=unit)
        choice = score_cut(table, 0.5)
        assert choice.unit == unit and ("sigmoid" in choice.score) == (unit == "sigmoid")
        assert _by_hand(fake, "E/rerank-ce", Gate(), choice.cut, unit) == (choice.answered.count, choice.bluffs.count)
        got[unit] = (choice.answered.count, choice.bluffs.count)
        if unit == "sigmoid":
            assert 0 < choice.cut < 1
    assert got["logit"][1] == got["sigmoid"][1]  # the same off-topic query sets the cut in either unit
    with pytest.raises(ValueError, match="only a cross-encoder"):
        score_table(tiny_native, "E/bm25", unit="sigmoid")


def test_no_off_topic_query_no_cut(tiny_native):
    keep = [i for i, q in enumerate(tiny_native.queries) if q.in_domain]
    res = tiny_native.result("E/bm25")
    ev = replace(tiny_native, queries=tuple(tiny_native.queries[i] for i in keep),
                 results={res.config: replace(res, top_scores=res.top_scores[keep], top_holds=res.top_holds[keep])})
    choice = score_cut(score_table(ev, "E/bm25"), 0.05)
    assert choice.cut is None and "no off-topic queries" in choice.guarantee


# --------------------------------------------------------------------------- the command (FAKE encoder, bundled)


def _cut_for_another_model(tmp_path, config: str, capsys):
    """A distance cut exported for ``config`` (``threshold --export``), then its stamp's model changed to another."""
    from ragdiag.cli.parser import main

    dense = tmp_path / "dense.yaml"
    assert main(["threshold", config, "--max-bluff", "0.05", "--export", str(dense), "--no-cache"]) == 0
    capsys.readouterr()
    doc = yaml.safe_load(dense.read_text(encoding="utf-8"))
    doc["model"]["model"] = "another-model"
    dense.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return dense


def test_threshold_native_exports_and_the_distance_commands_refuse_it(tmp_path, monkeypatch, capsys):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    out = tmp_path / "hybrid.yaml"
    assert main(["threshold", "E/hybrid", "--score", "native", "--max-bluff", "0.05", "--export", str(out),
                 "--json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    exported = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert doc["cut"] == exported["cut"]["value"] and doc["direction"] == "higher keeps"
    assert exported["stamp"]["score"] == "RRF fused score" and doc["answered"] == exported["rates"]["at_this_cut"][
        "answered"]
    # the distance commands refuse a cut on another score, in one line naming both
    assert main(["threshold", "E/hybrid", "--max-bluff", "0.05", "--current-from", str(out), "--no-cache"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "RRF fused score" in err and "dense model's cosine distance" in err
    # a distance cut exported for another model: refused once the run's model is known
    dense = _cut_for_another_model(tmp_path, "E/hybrid", capsys)
    assert main(["threshold", "E/hybrid", "--max-bluff", "0.05", "--current-from", str(dense), "--no-cache"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the evaluation's progress lines: one line
    assert err.startswith("error: --current-from") and "another-model" in err and "this run's model is" in err
    # --export-slices without --export, and a goal --score native does not choose for: one line, before any work
    for extra in (["--export-slices"], ["--min-answered", "0.5"]):
        argv = ["threshold", "E/hybrid", "--score", "native", *extra]
        if extra[0] != "--min-answered":
            argv += ["--max-bluff", "0.05"]
        assert main(argv) == 2
        assert capsys.readouterr().err.count("\n") == 1
    assert main(["threshold", "E/hybrid", "--max-bluff", "0.05", "--ce-units", "sigmoid"]) == 2
    assert "--score native" in capsys.readouterr().err


# --------------------------------------------------------------------------- the bundled corpus, the real model


@pytest.fixture(scope="module")
def bundled_native(corpus, truth, encoder, tmp_path_factory):
    from seeded import seeded_evaluation

    return seeded_evaluation(corpus, truth, encoder, tmp_path_factory.mktemp("store-native"), strategies="E,F",
                             retrievers="bm25,hybrid,rerank-maxsim,rerank-ce")


@pytest.mark.model
@pytest.mark.parametrize("config, unit", [("F/rerank-maxsim", None), ("E/bm25", None), ("E/hybrid", None),
                                          ("F/rerank-ce", "logit"), ("F/rerank-ce", "sigmoid")])
def test_bundled_native_cuts_reproduce_their_counts(bundled_native, config, unit):
    if config.endswith("rerank-ce") and "rerank-ce" in bundled_native.unavailable:
        pytest.skip(f"the cross-encoder is not available offline: {bundled_native.unavailable['rerank-ce']}")
    table = score_table(bundled_native, config, Gate(), unit=unit)
    choice = score_cut(table, 0.05)
    assert choice.method == "conformal" and choice.bluffs.count <= 1  # 30 off-topic queries: j = 1
    doc = yaml.safe_load(yaml.safe_dump(native_document(bundled_native, table, choice, keep=4)))
    rates = doc["rates"]["at_this_cut"]
    assert _by_hand(bundled_native, config, Gate(), doc["cut"]["value"], unit) == (rates["answered"]["count"],
                                                                                    rates["bluffs"]["count"])
    assert doc["cut"]["direction"] == "higher keeps" and doc["stamp"]["score"] == table.score


def test_gate_and_monitor_refuse_a_cut_for_another_score_or_model(tmp_path, monkeypatch, capsys):
    """``gate --cut-from`` and ``monitor --cut-from`` on a cut for another score: ``gate`` refuses it once the run's
    stamp is known (tests/test_native_gate.py), ``monitor`` first wants the log's scores; monitor refuses a distance
    cut chosen for another model once the run's is known."""
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    native = tmp_path / "maxsim.yaml"
    native.write_text(yaml.safe_dump({"ragdiag_thresholds": 1, "config": "F/rerank-maxsim",
                                      "stamp": {"score": "MaxSim score (the reranker's)", "unit": "score",
                                                "reranker": "maxsim:m:ab"},
                                      "cut": {"value": 13.58, "direction": "higher keeps"}}), encoding="utf-8")
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"query": "how do I scale features", "time": "2026-01-05T10:00:00"}) + "\n",
                   encoding="utf-8")
    assert main(["monitor", "F/rerank-maxsim", "--log", str(log), "--cut-from", str(native)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "holds no score" in err and "dense model's cosine distance" in err, err
    dense = _cut_for_another_model(tmp_path, "E/dense", capsys)
    assert main(["monitor", "E/dense", "--log", str(log), "--cut-from", str(dense), "--no-cache"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: --cut-from") and "another-model" in err and "this run's model is" in err
    assert main(["monitor", "E/dense", "--log", str(log), "--cut", "0.5", "--cut-from", str(dense)]) == 2
    assert "not both" in capsys.readouterr().err
