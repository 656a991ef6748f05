"""``gate`` on a native cut (issue 44): a baseline and a candidate gated on the ranking's own score.

Each run's per-query best scores are written by ``eval --out`` (``native_scores.csv``); a ``threshold --score
native --export`` file applied to them must count exactly what cutting the raw scores by hand counts (the top
``min(k, keep)`` chunks of each query, kept when ``score >= value``). The tiny corpus with the FAKE encoder keeps
this at seconds.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml

from ragdiag.analyses.threshold.score import native_document, score_cut, score_table
from ragdiag.core.gate import Gate


@pytest.fixture(scope="module")
def tiny_run(tiny_corpus, tiny_truth, fake_encoder, tmp_path_factory):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.present.export import write_outputs

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="E,F",
                  retrievers="dense,bm25,hybrid,rerank-maxsim")
    out = tmp_path_factory.mktemp("run")
    write_outputs(ev, out, trec=False)
    return ev, out


def _by_hand(ev, config, keep, value, unit=None):
    """Answered answerable queries and bluffing off-topic queries at ``value``, from the raw ranking."""
    res = ev.result(config)
    w = Gate(keep).window(res.top_scores.shape[1])
    answered, bluffs = [], []
    for i, q in enumerate(ev.queries):
        s = np.asarray(res.top_scores[i, :w], dtype=float)
        if unit == "sigmoid":
            s = 1 / (1 + np.exp(-s))
        kept = [j for j in range(w) if math.isfinite(s[j]) and s[j] >= value
                and not (config.endswith("bm25") and s[j] <= 0)]
        if q.in_domain:
            answered.append(any(res.top_holds[i, j] for j in kept))
        else:
            bluffs.append(bool(kept))
    return sum(answered), len(answered), sum(bluffs), len(bluffs)


def _export(ev, config, path, max_bluff=0.5, unit=None):
    table = score_table(ev, config, Gate(), unit=unit)
    choice = score_cut(table, max_bluff)
    doc = native_document(ev, table, choice, keep=Gate().keep)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return doc


def test_the_folder_holds_the_evaluations_native_scores_bit_for_bit(tiny_run):
    from ragdiag.present.regression.native import load_native_table
    from ragdiag.present.regression.runs import load_run

    ev, out = tiny_run
    for config in ("E/bm25", "E/hybrid", "F/rerank-maxsim"):
        run = load_run(out, config)
        table, reranker = load_native_table(out, run)
        want = score_table(ev, config, Gate())
        assert table.query_ids == want.query_ids and table.score == want.score and table.window == want.window
        assert np.array_equal(table.top, want.top) and np.array_equal(table.holder, want.holder)
        assert bool(reranker) == config.endswith("rerank-maxsim")
    dense, _ = load_native_table(out, load_run(out, "E/dense"))  # the dense ranking's own score: its similarity
    assert dense.score == "cosine similarity of the dense model"


@pytest.mark.parametrize("base, cand", [("E/rerank-maxsim", "F/rerank-maxsim"), ("E/bm25", "F/bm25"),
                                        ("F/hybrid", "E/hybrid")])
def test_gate_on_a_native_cut_counts_the_raw_scores_cut_by_hand(tiny_run, tmp_path, capsys, base, cand):
    from ragdiag.cli.parser import main

    ev, out = tiny_run
    cut_file = tmp_path / "cut.yaml"
    value = _export(ev, base, cut_file)["cut"]["value"]
    code = main(["gate", str(out), str(out), "--config", base, "--candidate-config", cand, "--cut-from",
                 str(cut_file), "--json"])
    assert code in (0, 1, 3)
    doc = json.loads(capsys.readouterr().out)
    assert doc["cut"] == value and doc["score"]["direction"] == "higher keeps"
    assert doc["score"]["score"] == score_table(ev, base, Gate()).score
    checks = {c["name"]: c for c in doc["checks"]}
    for run, which in ((base, "baseline"), (cand, "candidate")):
        answered, n_in, bluffs, n_ood = _by_hand(ev, run, Gate().keep, value)
        assert checks["answered"][which] == pytest.approx(answered / n_in)
        assert checks["bluffs"][which] == pytest.approx(bluffs / n_ood)
    assert f">= {value:g}" in checks["answered"]["metric"]
    # the Markdown names the cut in the native score, never the adapter's rank distance
    assert main(["gate", str(out), str(out), "--config", base, "--candidate-config", cand, "--cut-from",
                 str(cut_file)]) == code
    md = capsys.readouterr().out
    assert f"{doc['score']['score']} >= {value:g}" in md


def test_gate_refuses_a_native_cut_stamped_for_another_score_reranker_or_model(tiny_run, tmp_path, capsys):
    from ragdiag.cli.parser import main

    ev, out = tiny_run
    cut_file = tmp_path / "cut.yaml"
    doc = _export(ev, "E/rerank-maxsim", cut_file)
    cases = [("E/bm25", {}, "this configuration's is none"),  # a MaxSim cut on a BM25 run: another scale
             ("E/rerank-maxsim", {"reranker": "maxsim:other:0"}, "maxsim:other:0"),
             ("E/rerank-maxsim", {"model": "another-model"}, "another-model")]
    for config, change, named in cases:
        d = {**doc, "stamp": {**doc["stamp"], **change}}
        cut_file.write_text(yaml.safe_dump(d), encoding="utf-8")
        assert main(["gate", str(out), str(out), "--config", config, "--cut-from", str(cut_file)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("error: --cut-from") and named in err, repr(err)
    # a MaxSim baseline and a BM25 candidate: one native cut cannot gate both
    cut_file.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert main(["gate", str(out), str(out), "--config", "E/rerank-maxsim", "--candidate-config", "E/bm25",
                 "--cut-from", str(cut_file)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "MaxSim" in err and "BM25" in err
    # a folder without native scores (written before them): one line saying what to do
    (out / "native_scores.csv").rename(out / "kept.csv")
    try:
        assert main(["gate", str(out), str(out), "--config", "E/rerank-maxsim", "--cut-from", str(cut_file)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "native_scores.csv" in err and "eval --out" in err
    finally:
        (out / "kept.csv").rename(out / "native_scores.csv")
    assert main(["gate", str(out), "--config", "E/rerank-maxsim", "--cut-from", str(cut_file),
                 "--history"]) == 2
    assert "--history" in capsys.readouterr().err


def test_the_dense_folder_files_do_not_move(tiny_run):
    """``native_scores.csv`` is written beside the others, which stay what they were (none names it)."""
    from ragdiag.present.export import gate_inputs_csv, summary_document

    ev, out = tiny_run
    assert (out / "gate_inputs.csv").read_bytes() == gate_inputs_csv(ev).encode("utf-8")
    assert "native_scores" not in json.dumps(summary_document(ev), default=str)


# --------------------------------------------------------------------------- monitor (bundled corpus, FAKE encoder)


def _log(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_monitor_on_a_native_cut_reads_the_logs_scores(tmp_path, monkeypatch, capsys):
    """Per period, refused = the log's score under the cut, counted by hand; the calibration's off-topic refusals
    are the export's off-topic queries less its bluffs; a log without scores, or a cut for another score, is one
    line (exit 2)."""
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    cut_file = tmp_path / "bm25.yaml"
    assert main(["threshold", "E/bm25", "--score", "native", "--max-bluff", "0.05", "--export", str(cut_file),
                 "--no-cache"]) == 0
    capsys.readouterr()
    exported = yaml.safe_load(cut_file.read_text(encoding="utf-8"))
    value = exported["cut"]["value"]
    week1 = [value + 5, value, value - 0.001, value + 1]  # the cut itself keeps (score >= cut)
    week2 = [value - 3, value - 2, value - 1, value + 2, value - 0.5]
    log = _log(tmp_path / "log.jsonl", [{"query": f"q{i}", "time": f"2026-01-0{5 + i % 2}T10:00:00", "score": s}
                                        for i, s in enumerate(week1)]
               + [{"query": f"r{i}", "time": "2026-01-14T10:00:00", "score": s} for i, s in enumerate(week2)])
    assert main(["monitor", "E/bm25", "--log", str(log), "--cut-from", str(cut_file), "--json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cut"] == value and doc["score"]["score"] == "BM25 score"
    periods = {p["period"]: p for p in doc["periods"]}
    assert [p["queries"] for p in doc["periods"]] == [4, 5]
    assert periods["2026-W02"]["refused"]["count"] == sum(s < value for s in week1) == 1
    assert periods["2026-W03"]["refused"]["count"] == sum(s < value for s in week2) == 4
    rates = exported["rates"]
    assert doc["calibration"]["refused_off_topic"]["count"] == (rates["out_of_domain_queries"]
                                                                 - rates["at_this_cut"]["bluffs"]["count"])
    # the words name the score, never a distance
    assert main(["monitor", "E/bm25", "--log", str(log), "--cut-from", str(cut_file), "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert f"BM25 score >= {value:g}" in text and "cut 0." not in text
    # a log without scores: one line saying what each line must hold
    bare = _log(tmp_path / "bare.jsonl", [{"query": "how do I scale features", "time": "2026-01-05T10:00:00"}])
    assert main(["monitor", "E/bm25", "--log", str(bare), "--cut-from", str(cut_file)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds no score" in err and '"score"' in err
    # a later line without one
    gap = _log(tmp_path / "gap.jsonl", [{"query": "a", "time": "2026-01-05T10:00:00", "score": 1.0},
                                        {"query": "b", "time": "2026-01-05T11:00:00"}])
    assert main(["monitor", "E/bm25", "--log", str(gap), "--cut-from", str(cut_file), "--no-cache"]) == 2
    assert "line 2 holds no numeric score" in capsys.readouterr().err.strip().splitlines()[-1]
    # the BM25 cut on a hybrid configuration: another score, named both
    assert main(["monitor", "E/hybrid", "--log", str(log), "--cut-from", str(cut_file), "--no-cache"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: --cut-from") and "BM25 score" in err and "RRF fused score" in err, err


def test_a_cross_encoders_logits_are_read_as_its_sigmoid_when_the_cut_is(tiny_run, tmp_path):
    """Plumbing (the cross-encoder is not installed here): a folder whose configuration holds logits, read in
    sigmoid units, gives the sigmoid of each score, in the same order, and a score without logits has no sigmoid."""
    import shutil

    from ragdiag.present.regression.native import load_native_table
    from ragdiag.present.regression.runs import RunError, load_run

    _, out = tiny_run
    folder = tmp_path / "ce"
    shutil.copytree(out, folder)
    for name in ("per_query.csv", "gate_inputs.csv", "native_scores.csv"):
        text = (folder / name).read_text(encoding="utf-8").replace("rerank-maxsim", "rerank-ce")
        (folder / name).write_text(text.replace("MaxSim score (the reranker's),score",
                                                "cross-encoder logit (the reranker's),logit"), encoding="utf-8")
    logits, _ = load_native_table(folder, load_run(folder, "E/rerank-ce"))
    probs, _ = load_native_table(folder, load_run(folder, "E/rerank-ce"), "sigmoid")
    assert logits.unit == "logit" and probs.unit == "sigmoid"
    ok = np.isfinite(logits.top)
    assert np.array_equal(probs.top[ok], 1 / (1 + np.exp(-logits.top[ok])))
    with pytest.raises(RunError, match="only a cross-encoder's logit has a sigmoid"):
        load_native_table(folder, load_run(folder, "E/bm25"), "sigmoid")


# --------------------------------------------------------------------------- the bundled corpus, the real model


@pytest.mark.model
def test_bundled_gate_on_the_maxsim_cut_counts_the_raw_scores(corpus, truth, encoder, tmp_path, capsys):
    """``eval --out`` of the bundled corpus, a MaxSim cut for 5% bluffs on F/rerank-maxsim, and ``gate`` of
    E/rerank-maxsim against it: each run's answered and bluffs are the raw MaxSim scores cut by hand."""
    from ragdiag.cli.parser import main
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.snapshot import seed_from_snapshot
    from ragdiag.index.store import Store
    from ragdiag.present.export import write_outputs

    store = Store(tmp_path / "store")
    seed_from_snapshot(store, corpus, truth, encoder)
    ev = evaluate(corpus, truth, encoder=encoder, store=store, strategies="E,F", retrievers="rerank-maxsim")
    out = tmp_path / "run"
    write_outputs(ev, out, trec=False)
    cut_file = tmp_path / "maxsim.yaml"
    value = _export(ev, "F/rerank-maxsim", cut_file, max_bluff=0.05)["cut"]["value"]
    code = main(["gate", str(out), str(out), "--config", "F/rerank-maxsim", "--candidate-config", "E/rerank-maxsim",
                 "--cut-from", str(cut_file), "--json"])
    assert code in (0, 1, 3)
    doc = json.loads(capsys.readouterr().out)
    checks = {c["name"]: c for c in doc["checks"]}
    for config, which in (("F/rerank-maxsim", "baseline"), ("E/rerank-maxsim", "candidate")):
        answered, n_in, bluffs, n_ood = _by_hand(ev, config, Gate().keep, value)
        assert checks["answered"][which] == pytest.approx(answered / n_in)
        assert checks["bluffs"][which] == pytest.approx(bluffs / n_ood)
    assert doc["cut"] == value and doc["score"]["score"] == "MaxSim score (the reranker's)"
