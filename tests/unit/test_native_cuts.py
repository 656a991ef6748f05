"""The in-sample, cross-validated and cost cuts and the exported slice cuts on a native score (issue 44).

Every count is redone by hand from the raw ranking: each query's first ``min(k, keep)`` scores, a chunk kept when
``score >= value``. The bundled corpus with the FAKE encoder (no model) keeps this at seconds.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml

from ragdiag.analyses.threshold.score import above, score_table
from ragdiag.core.gate import Gate
from ragdiag.core.goal import Goal

CONFIGS = ["E/bm25", "E/hybrid", "E/rerank-maxsim"]


@pytest.fixture(scope="module")
def fake_bundled(corpus, truth):
    """The bundled corpus with the FAKE encoder, strategy E."""
    from fakes import fake_encoder as make_fake_encoder
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(corpus, truth, encoder=make_fake_encoder(), strategies="E", retrievers="bm25,hybrid,rerank-maxsim")


def _raw(ev, config):
    """Per query: (in domain, the kept window's finite scores, whether each holds the needle)."""
    res = ev.result(config)
    w = Gate().window(res.top_scores.shape[1])
    out = []
    for i, q in enumerate(ev.queries):
        s = [float(x) for x in res.top_scores[i, :w]]
        ok = [math.isfinite(x) and not (config.endswith("bm25") and x <= 0) for x in s]
        out.append((bool(q.in_domain), [x for x, o in zip(s, ok) if o],
                    [bool(h) for h, o in zip(res.top_holds[i, :w], ok) if o]))
    return out


def _at(rows, cut):
    """(answered, bluffs) over ``rows`` at ``cut``: kept when score >= cut."""
    answered = sum(q[0] and any(h and s >= cut for s, h in zip(q[1], q[2])) for q in rows)
    bluffs = sum((not q[0]) and any(s >= cut for s in q[1]) for q in rows)
    return answered, bluffs


def _in_sample(rows, a):
    ood = sorted((max(q[1]) if q[1] else -math.inf for q in rows if not q[0]), reverse=True)
    m = math.floor(a * len(ood) + 1e-12)
    if m >= len(ood):
        return -math.inf
    return above(ood[m])


@pytest.mark.parametrize("config", CONFIGS)
def test_cross_validated_counts_are_the_held_out_raw_scores_cut_by_hand(fake_bundled, config):
    from ragdiag.analyses.threshold.choice import _folds
    from ragdiag.analyses.threshold.native_current import as_gate_table
    from ragdiag.analyses.threshold.native_cuts import native_cross_validated

    table = score_table(fake_bundled, config, Gate())
    cv, fold_cuts = native_cross_validated(table, 0.05, folds=5)
    fold = _folds(as_gate_table(table, [])[0], 5, 20261130)  # the distance gate's assignment, its seed
    rows = _raw(fake_bundled, config)
    answered = bluffs = 0
    for f in range(5):
        cut = _in_sample([r for r, k in zip(rows, fold) if k != f], 0.05)
        assert fold_cuts[f] == cut
        a, b = _at([r for r, k in zip(rows, fold) if k == f], cut)
        answered, bluffs = answered + a, bluffs + b
    assert (cv["answered"].count, cv["bluffs"].count) == (answered, bluffs)


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("cost", [0.5, 3.0, 20.0])
def test_the_cost_cut_is_the_cheapest_cut_by_hand(fake_bundled, config, cost):
    from ragdiag.analyses.threshold.native_cuts import native_cost_cut

    table = score_table(fake_bundled, config, Gate())
    cc = native_cost_cut(table, Goal(max_bluff=0.05, bluff_cost=cost), folds=5)
    rows = _raw(fake_bundled, config)
    n_in = sum(r[0] for r in rows)
    answered, bluffs = _at(rows, cc.cut)
    assert (cc.answered.count, cc.bluffs.count) == (answered, bluffs)
    assert cc.cost == cost * bluffs + n_in - answered
    scores = sorted({s for r in rows for s in r[1]})
    grid = [scores[0] - 1] + [s + 1e-9 for s in scores]  # a cut just above each score, and one keeping all
    best = min(cost * _at(rows, c)[1] + n_in - _at(rows, c)[0] for c in grid)
    assert cc.cost == best  # no cut costs less


def test_threshold_native_prints_held_out_cost_and_exports_slices(fake_bundled, tmp_path, monkeypatch, capsys):
    """The command: cross-validated and cost cuts in the JSON, and the exported slice cut reproducing its count."""
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    out = tmp_path / "cut.yaml"
    assert main(["threshold", "E/bm25", "--score", "native", "--max-bluff", "0.05", "--bluff-cost", "3",
                 "--by", "language", "--export", str(out), "--export-slices", "--json", "--no-cache"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["cross_validation"]["grouped_by"] == "question" and len(doc["cross_validation"]["fold_cuts"]) == 5
    assert doc["cost"]["kept_when"] == f"score >= {doc['cost']['cut']:g}"
    assert doc["in_sample_cut"] >= doc["cost"]["cut"] or doc["cost"]["bluffs"]["count"] >= 1
    exported = yaml.safe_load(out.read_text(encoding="utf-8"))
    block = exported["slices"]
    assert block["by"] == "language" and block["direction"] == "higher keeps" and block["score"] == "BM25 score"
    from ragdiag.analyses.slice_cuts import query_labels

    labels = query_labels(fake_bundled.queries, "language", fake_bundled.truth)
    rows = _raw(fake_bundled, "E/bm25")
    assert block["cuts"]
    for label, c in block["cuts"].items():  # the slice's own value, applied by hand to the slice's queries
        assert c["kept_when"] == f"score >= {c['value']:g}"
        member = [r for r, labs in zip(rows, labels) if (labs is None and not r[0]) or (labs and label in labs)]
        assert _at(member, c["value"])[0] == c["answered_at_this_cut"]["count"]
    # --export-slices still needs --export and --by tag or language (one line, before any work)
    assert main(["threshold", "E/bm25", "--score", "native", "--max-bluff", "0.05", "--export-slices"]) == 2
    assert "--export" in capsys.readouterr().err
    assert main(["threshold", "E/bm25", "--score", "native", "--max-bluff", "0.05", "--bluff-cost", "-1"]) == 2
    assert "--bluff-cost" in capsys.readouterr().err
