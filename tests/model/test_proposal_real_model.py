"""The real all-MiniLM-L6-v2's tests of what ``test_proposal.py`` checks on FAKEs (kept apart, so that those run in
the fast loop)."""

from __future__ import annotations

from pathlib import Path
import json

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.mark.model
def test_current_cut_in_similarity_is_the_same_as_its_distance(tmp_path, capsys, monkeypatch):
    """``--current 0.47 --units similarity`` reports what ``--current 0.53`` (a distance) reports; the changes
    against the proposal are exactly the queries whose outcome differs between the two cuts (brute force)."""
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.cli.parser import main
    from ragdiag.core.gate import Gate
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.models import load_encoder

    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    base = ["threshold", "E/hybrid", "--max-bluff", "0.05", "--json"]
    assert main([*base, "--current", "0.47", "--units", "similarity"]) == 0
    sim = json.loads(capsys.readouterr().out)["current"]
    assert main([*base, "--current", "0.53"]) == 0
    dist = json.loads(capsys.readouterr().out)["current"]
    keys = ("answered", "wrong_sources", "no_answer", "bluffs", "bluffs_near", "bluffs_far", "versus_proposed")
    assert sim["cut_distance"] == dist["cut_distance"] == 0.53
    assert {k: sim[k] for k in keys} == {k: dist[k] for k in keys}
    corpus = load_corpus(DATA / "sklearn-user-guide")
    truth = load_truth(DATA / "sklearn-user-guide.truth.json", corpus)
    from ragdiag.index.store import Store

    ev = evaluate(corpus, truth, encoder=load_encoder(), strategies="E", retrievers="dense,bm25,hybrid",
                  store=Store(tmp_path / "cache"))
    t = gate_table(ev, "E/hybrid", Gate(4))
    proposed = sim["versus_proposed"]["proposed_cut"]
    ids = np.array(t.query_ids)
    ind = t.in_domain
    changed_answers = set(ids[ind & ((t.closest_holder < 0.53) != (t.closest_holder < proposed))])
    changed_bluffs = set(ids[~ind & ((t.closest < 0.53) != (t.closest < proposed))])
    v = sim["versus_proposed"]
    assert set(v["gained"]) | set(v["lost"]) == changed_answers
    assert set(v["bluffs_added"]) | set(v["bluffs_removed"]) == changed_bluffs
    assert sim["answered"]["count"] == int((t.closest_holder[ind] < 0.53).sum())
