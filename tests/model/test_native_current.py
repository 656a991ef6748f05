"""``threshold --score native --current`` (issue 44): the cut run today, read in the native score's units.

The rates are computed by the distance gate's score-agnostic code through one adapter (scores mapped by rank to
distances in (0, 1), the cut half a step above its own); each count here is reproduced by applying ``score >= value`` to the raw scores of each
query's top ``min(k, keep)`` chunks by hand. The tiny corpus with the FAKE encoder keeps these at seconds.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml
from hypothesis import given, strategies as st

from ragdiag.analyses.threshold.native_current import as_gate_table, native_audit, native_cut_from_file
from ragdiag.analyses.threshold.score import ScoreTable, score_cut, score_table
from ragdiag.core.gate import Gate


@pytest.fixture(scope="module")
def tiny_native(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="E",
                    retrievers="dense,bm25,hybrid,rerank-maxsim")


scores = st.floats(-1e6, 1e6, allow_nan=False) | st.just(-np.inf)


@given(st.lists(scores, min_size=1, max_size=12), st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1,
                                                          max_size=4))
def test_the_adapter_keeps_exactly_what_the_native_rule_keeps(top, cuts):
    """``d < mapped cut`` exactly when ``score >= cut``, for every score and cut, and every distance in the gate's
    range (a cut in [0, 2], a missing score never kept)."""
    n = len(top)
    t = ScoreTable("E/bm25", "BM25 score", "score", tuple(map(str, range(n))), np.ones(n, bool), tuple(map(str, range(n))),
                   top=np.array(top), holder=np.array(top), window=4)
    g, mapped = as_gate_table(t, cuts)
    for c, m in zip(cuts, mapped):
        assert 0 <= m <= 2 and ((g.closest < m) == (np.array(top) >= c)).all()
        assert (g.answered(m) == (np.array(top) >= c)).all()  # through the gate's own checks too


def _by_hand(ev, config, gate, value):
    """answered, wrong sources, no answer (answerable) and bluffs (off-topic) at ``value``, from the raw scores."""
    res = ev.result(config)
    w = gate.window(res.top_scores.shape[1])
    answered = wrong = none = bluffs = 0
    for i, q in enumerate(ev.queries):
        s = np.asarray(res.top_scores[i, :w], dtype=float)
        kept = [j for j in range(w) if math.isfinite(s[j]) and s[j] >= value
                and not (config.endswith("bm25") and s[j] <= 0)]  # a BM25 score of 0: not retrieved
        if q.in_domain:
            hit = any(res.top_holds[i, j] for j in kept)
            answered += hit
            wrong += bool(kept) and not hit
            none += not kept
        else:
            bluffs += bool(kept)
    return answered, wrong, none, bluffs


@pytest.mark.parametrize("config", ["E/dense", "E/bm25", "E/hybrid", "E/rerank-maxsim"])
@pytest.mark.parametrize("gate", [Gate(), Gate(keep=2, k=2)])
def test_the_current_cut_counts_are_the_raw_scores_cut_by_hand(tiny_native, config, gate):
    table = score_table(tiny_native, config, gate)
    choice = score_cut(table, 0.5)
    finite_tops = np.sort(table.top[np.isfinite(table.top)])
    # the proposal, a value on a query's own best score (kept: >=), just above it, and the extremes
    values = [choice.cut, float(finite_tops[len(finite_tops) // 2]),
              float(np.nextafter(finite_tops[len(finite_tops) // 2], np.inf)), float(finite_tops[0]) - 1,
              float(finite_tops[-1]) + 1]
    for v in values:
        cur = native_audit(table, v, 0.5, choice.cut)
        r = cur.rates
        got = (r["answered"].count, r["wrong_sources"].count, r["no_answer"].count, r["bluffs"].count)
        assert got == _by_hand(tiny_native, config, gate, v), (config, v)
        assert cur.meets_goal == (r["bluffs"].count <= 0.5 * int((~table.in_domain).sum()))
    at_proposal = native_audit(table, choice.cut, 0.5, choice.cut)
    assert (at_proposal.rates["answered"].count, at_proposal.rates["bluffs"].count) == (choice.answered.count,
                                                                                       choice.bluffs.count)
    assert "It is the proposed cut" in at_proposal.sentence()
    low = native_audit(table, float(finite_tops[0]) - 1, 0.5, choice.cut)  # keeps everything scored
    assert low.gained == () and low.bluffs_added == ()  # the proposal answers nothing this cut does not
    assert len(low.lost) == low.rates["answered"].count - choice.answered.count
    assert len(low.bluffs_removed) == low.rates["bluffs"].count - choice.bluffs.count


_STAMP = {"score": "cross-encoder logit (the reranker's)", "unit": "logit", "retriever": "rerank-ce",
          "model": "m", "weights_sha256": "ab", "reranker": "ce:cross-encoder/ms-marco-MiniLM-L-6-v2"}


@pytest.mark.parametrize("change, named", [
    ({"reranker": "ce:BAAI/bge-reranker-base"}, ("ce:BAAI/bge-reranker-base", "ce:cross-encoder/ms-marco")),
    ({"reranker": "maxsim:m:ab", "score": "MaxSim score (the reranker's)", "unit": "score"},
     ("maxsim:m:ab", "ce:cross-encoder/ms-marco")),
    ({"unit": "sigmoid", "score": "cross-encoder probability (sigmoid of its logit)"}, ("cross-encoder probability",
                                                                                      "cross-encoder logit")),
    ({"model": "another-model"}, ("another-model", "this configuration's is m")),
    ({"weights_sha256": "cd"}, ("cd", "ab")),
])
def test_a_cut_for_another_reranker_score_unit_or_model_is_refused_naming_both(tmp_path, change, named):
    path = tmp_path / "cut.yaml"
    path.write_text(yaml.safe_dump({"ragdiag_thresholds": 1, "config": "F/rerank-ce", "stamp": {**_STAMP, **change},
                                    "cut": {"value": 1.5, "direction": "higher keeps"}}), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        native_cut_from_file(path, _STAMP)
    msg = str(err.value)
    assert "\n" not in msg and all(n in msg for n in named), msg
    assert native_cut_from_file(path, {**_STAMP, **change}) == 1.5  # its own configuration reads it


def test_a_dense_export_or_a_plain_file_is_refused_for_a_native_cut(tmp_path):
    dense = tmp_path / "dense.yaml"
    dense.write_text(yaml.safe_dump({"ragdiag_thresholds": 1, "config": "E/dense", "model": {"model": "m"},
                                     "cut": {"cosine_distance": 0.5}}), encoding="utf-8")
    with pytest.raises(ValueError, match="dense model's cosine distance.*--score native"):
        native_cut_from_file(dense, _STAMP)
    plain = tmp_path / "plain.yaml"
    plain.write_text("similarity_cutoff: 0.3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="ragdiag export of a native cut"):
        native_cut_from_file(plain, _STAMP)


# --------------------------------------------------------------------------- the command (FAKE encoder, bundled)


def test_threshold_native_current_and_current_from(tmp_path, monkeypatch, capsys):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    out = tmp_path / "hybrid.yaml"
    base = ["threshold", "E/hybrid", "--score", "native", "--max-bluff", "0.05"]
    assert main([*base, "--export", str(out), "--json"]) == 0
    proposal = json.loads(capsys.readouterr().out)
    # the exported cut read back as the cut run today: the proposal's own counts
    assert main([*base, "--current-from", str(out), "--json"]) == 0
    cur = json.loads(capsys.readouterr().out)["current"]
    assert cur["value"] == proposal["cut"] and cur["answered"]["count"] == proposal["answered"]["count"]
    assert cur["bluffs"]["count"] == proposal["bluffs"]["count"] and cur["meets_goal"]
    assert cur["kept_when"] == f"score >= {proposal['cut']}" and cur["versus_proposed"]["gained"] == []
    # a lower cut, in the fused score's units: more answered and more bluffs than the proposal, by the query ids
    low = round(proposal["cut"] * 0.9, 6)
    assert main([*base, "--current", str(low), "--json"]) == 0
    cur = json.loads(capsys.readouterr().out)["current"]
    vs = cur["versus_proposed"]
    assert cur["answered"]["count"] == proposal["answered"]["count"] + len(vs["lost"]) - len(vs["gained"])
    assert cur["bluffs"]["count"] == proposal["bluffs"]["count"] + len(vs["bluffs_removed"]) - len(vs["bluffs_added"])
    assert main([*base, "--current", str(low)]) == 0
    assert f"The cut you run today (RRF fused score >= {low:g}, score)" in capsys.readouterr().out
    # the export applied to another configuration (another score, another reranker): one line naming both
    assert main(["threshold", "E/rerank-maxsim", "--score", "native", "--max-bluff", "0.05", "--current-from",
                 str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: --current-from") and "reranker none (of E/hybrid)" in err and "maxsim:" in err
    # before any work: both, a dense unit, a value that is not finite
    for extra in (["--current", "0.1", "--current-from", str(out)], ["--current", "0.1", "--units", "similarity"],
                  ["--current", "nan"], ["--current-from", str(tmp_path / "absent.yaml")]):
        assert main([*base, *extra]) == 2
        assert capsys.readouterr().err.count("\n") == 1


# --------------------------------------------------------------------------- --by on a native score


@pytest.mark.parametrize("config", ["E/bm25", "E/rerank-maxsim"])
@pytest.mark.parametrize("by", ["language", "phrasing"])
def test_native_slices_reproduce_their_counts_by_hand(tiny_native, config, by):
    from ragdiag.analyses.native_slice_cuts import native_slices
    from ragdiag.analyses.slice_cuts import query_labels

    table = score_table(tiny_native, config, Gate())
    choice = score_cut(table, 0.5)
    sliced = native_slices(tiny_native, table, choice, by, draws=200)
    assert sliced.cut == choice.cut and sliced.method == choice.method
    labels = query_labels(tiny_native.queries, by, tiny_native.truth)
    res = tiny_native.result(config)
    w = Gate().window(res.top_scores.shape[1])

    def counts(member, value):  # answered, bluffs of the member queries at value, from the raw scores
        a = b = 0
        for i, q in enumerate(tiny_native.queries):
            if not member[i]:
                continue
            s = np.asarray(res.top_scores[i, :w], dtype=float)
            kept = [j for j in range(w) if math.isfinite(s[j]) and s[j] >= value
                    and not (config.endswith("bm25") and s[j] <= 0)]
            if q.in_domain:
                a += any(res.top_holds[i, j] for j in kept)
            else:
                b += bool(kept)
        return a, b

    assert sliced.rows
    for r in sliced.rows:
        member = [(labs is None and not q.in_domain) or (labs is not None and r.label in labs)
                  for labs, q in zip(labels, tiny_native.queries)]
        assert counts(member, choice.cut) == (r.answered.count, r.bluffs.count), r.label
        if r.own_cut is not None:
            assert counts(member, r.own_cut)[0] == r.answered_at_own_cut.count
    assert f">= {choice.cut:g}" in sliced.verdict.sentence or sliced.verdict.one_cut_serves_all is None


def test_threshold_native_by_phrasing_on_the_bundled_corpus(monkeypatch, capsys):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    base = ["threshold", "E/hybrid", "--score", "native", "--max-bluff", "0.05", "--by", "phrasing", "--no-cache"]
    assert main([*base, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["by"] == "phrasing" and doc["cut_method"] == "conformal" and doc["slices"]
    # each answerable query has one phrasing: the slices' answered add up to the proposal's
    assert sum(s["answered"]["count"] for s in doc["slices"]) == doc["answered"]["count"]
    assert sum(s["answerable"] for s in doc["slices"]) == doc["answerable"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert f"Per phrasing, at the proposed cut {doc['cut']:g} (conformal):" in out
    assert main([*base, "--export-slices", "--export", "x.yaml"]) == 2  # a slices block is a distance export
    assert capsys.readouterr().err.count("\n") == 1


def test_a_maxsim_cut_stamped_for_another_reranker_is_refused_by_the_command(tmp_path, monkeypatch, capsys):
    """The reranker check on its own: the same configuration and score, a MaxSim cut stamped for another reranker
    (another late-interaction model) applied to this run's reranker: exit 2, one line naming both rerankers."""
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    out = tmp_path / "maxsim.yaml"
    base = ["threshold", "E/rerank-maxsim", "--score", "native", "--max-bluff", "0.05"]
    assert main([*base, "--export", str(out)]) == 0
    capsys.readouterr()
    assert main([*base, "--current-from", str(out), "--json"]) == 0  # its own reranker: read
    ours = yaml.safe_load(out.read_text(encoding="utf-8"))["stamp"]["reranker"]
    assert json.loads(capsys.readouterr().out)["current"]["meets_goal"]
    doc = yaml.safe_load(out.read_text(encoding="utf-8"))
    doc["stamp"]["reranker"] = "maxsim:colbert-ir/colbertv2.0:0123456789abcdef"
    out.write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert main([*base, "--current-from", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: --current-from") and "reranker maxsim:colbert-ir/colbertv2.0" in err
    assert f"this configuration's is {ours}" in err


# --------------------------------------------------------------------------- the bundled corpus, the real model


@pytest.fixture(scope="module")
def bundled_native(corpus, truth, encoder, tmp_path_factory):
    from seeded import seeded_evaluation

    return seeded_evaluation(corpus, truth, encoder, tmp_path_factory.mktemp("store-native-current"), strategies="E,F",
                             retrievers="bm25,hybrid,rerank-maxsim")


@pytest.mark.model
@pytest.mark.parametrize("config", ["F/rerank-maxsim", "E/bm25", "E/hybrid"])
def test_bundled_current_and_slices_reproduce_their_counts(bundled_native, config):
    from ragdiag.analyses.native_slice_cuts import native_slices

    table = score_table(bundled_native, config, Gate())
    choice = score_cut(table, 0.05)
    for v in (choice.cut, round(choice.cut * 0.9, 4), round(choice.cut * 0.8, 4)):
        r = native_audit(table, v, 0.05, choice.cut).rates
        got = (r["answered"].count, r["wrong_sources"].count, r["no_answer"].count, r["bluffs"].count)
        assert got == _by_hand(bundled_native, config, Gate(), v), (config, v)
    sliced = native_slices(bundled_native, table, choice, "phrasing", draws=500)
    assert sum(s.answered.count for s in sliced.rows) == choice.answered.count  # one phrasing per query
    assert all(s.bluffs.count == choice.bluffs.count for s in sliced.rows)  # every off-topic query in every slice
