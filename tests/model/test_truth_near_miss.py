"""``truth near-miss``: off-topic questions in the corpus's words, none answered by a chunk under the stated checks."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ragdiag.authoring.near_miss import FAR_TERMS, near_misses
from ragdiag.authoring.text import content_words
from ragdiag.documents.corpus import load_corpus
from ragdiag.index.chunking import chunk_corpus, parse_strategies
from ragdiag.retrieval.bm25 import BM25Index

DATA = Path(__file__).resolve().parents[2] / "data"


def _chunk_texts(corpus, strategy="E"):
    return [c.embed_text for c in chunk_corpus(corpus, parse_strategies(strategy)[0])]


def _check_unanswered(corpus, res):
    """Every kept candidate re-checked by brute force: words over every chunk, BM25 against its stated threshold."""
    texts = _chunk_texts(corpus, res.strategy)
    words = [content_words(t) for t in texts]
    vocab = set().union(*(content_words(d.text) for d in corpus.documents))
    scores = BM25Index(texts).scores([c.query for c in res.kept])
    for c, row in zip(res.kept, scores):
        need = content_words(c.swapped_in)
        rest = content_words(c.query) - need
        assert not any(need <= w and len(rest & w) >= math.ceil(len(rest) / 2) for w in words), c.query
        assert row.max() == pytest.approx(c.bm25) and c.bm25 < c.bm25_ref, c.query
        assert c.swapped_in in c.query and c.swapped not in c.query
        if c.kind == "far":
            assert not content_words(c.swapped_in) & vocab and c.swapped_from == "outside the corpus"
        else:
            assert c.swapped_from != c.doc_id and c.swapped_in.strip("`").lower() in corpus.document(c.swapped_from).text.lower()


def test_bm25_only_on_de_haushalt():
    corpus = load_corpus(DATA / "de-haushalt")
    res = near_misses(corpus, 30)
    assert not res.dense_checked and len(res.checks()) == 2
    assert len(res.kept) >= 20 and {c.kind for c in res.kept} == {"near", "far"}
    _check_unanswered(corpus, res)
    assert "the dense check was not run" in res.text()


def test_ood_entries_load_into_the_truth():
    from ragdiag.documents.truth import load_truth, parse_truth

    corpus = load_corpus(DATA / "de-haushalt")
    truth = load_truth(DATA / "de-haushalt.truth.json", corpus)
    data = json.loads((DATA / "de-haushalt.truth.json").read_text(encoding="utf-8"))
    res = near_misses(corpus, 5)
    taken = {q["id"] for q in data["questions"]} | {o["id"] for o in data["ood"]}
    data["ood"] += res.ood_entries(taken=taken)
    grown = parse_truth(data, corpus)
    assert len(grown.ood) == len(truth.ood) + 5
    assert [o.source for o in grown.ood[-5:]] == ["near-miss"] * 5


def test_far_terms_are_written_per_language_and_number():
    assert {lang for lang, _ in FAR_TERMS} == {"en", "de"}
    assert all(t.startswith("`") and t.endswith("`") for t in FAR_TERMS[("en", "code")])


def test_cli_bad_n(capsys):
    from ragdiag.cli.parser import main

    assert main(["truth", "near-miss", "-n", "0", "--no-dense"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: -n must be at least 1")


@pytest.fixture(scope="module")
def seeded_store(tmp_path_factory, corpus, truth, encoder):
    from ragdiag.index.snapshot import seed_from_snapshot
    from ragdiag.index.store import Store

    store = Store(tmp_path_factory.mktemp("store"))
    seed_from_snapshot(store, corpus, truth, encoder, strategies=["E"])
    return store


@pytest.fixture(scope="module")
def bundled_misses(corpus, encoder, seeded_store):
    return near_misses(corpus, 30, encoder=encoder, store=seeded_store)


def _check_dense(res, texts, encoder, vectors):
    cands = encoder.encode([c.query for c in res.kept]) @ vectors.T
    for c, row in zip(res.kept, cands):
        assert row.max() == pytest.approx(c.dense, abs=1e-5) and c.dense < c.dense_ref, c.query


@pytest.mark.model
def test_dense_checked_on_the_bundled_corpus(corpus, encoder, seeded_store, bundled_misses):
    res = bundled_misses
    assert res.dense_checked and len(res.kept) >= 20
    _check_unanswered(corpus, res)
    texts = _chunk_texts(corpus)
    _check_dense(res, texts, encoder, seeded_store.embed(encoder, texts).vectors)
    print(res.text())


@pytest.mark.model
def test_dense_checked_on_de_haushalt(encoder):
    corpus = load_corpus(DATA / "de-haushalt")
    res = near_misses(corpus, 30, encoder=encoder)
    assert res.dense_checked and len(res.kept) >= 20
    _check_unanswered(corpus, res)
    texts = _chunk_texts(corpus)
    _check_dense(res, texts, encoder, np.asarray(encoder.encode(texts)))


@pytest.mark.model
def test_near_misses_move_the_proposed_cut(corpus, truth, encoder, seeded_store, bundled_misses, capsys):
    """The conformal cut for at most 5% bluffs on E/dense, and its guarantee, before and after adding them."""
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.threshold.choice import conformal_cut
    from ragdiag.documents.truth import parse_truth
    from ragdiag.evaluation.evaluate import evaluate

    def cut_for(t):
        ev = evaluate(corpus, t, encoder=encoder, strategies="E", retrievers="dense", store=seeded_store)
        return conformal_cut(gate_table(ev, "E/dense"), 0.05)

    data = json.loads((DATA / "sklearn-user-guide.truth.json").read_text(encoding="utf-8"))
    taken = {q["id"] for q in data["questions"]} | {o["id"] for o in data["ood"]}
    before = cut_for(truth)
    data["ood"] += bundled_misses.ood_entries(taken=taken)
    grown = parse_truth(data, corpus)
    after = cut_for(grown)
    with capsys.disabled():
        print(f"\nbefore ({len(truth.ood)} off-topic): cut {before[0]}: {before[1]}")
        print(f"after ({len(grown.ood)} off-topic, {len(grown.ood) - len(truth.ood)} near misses): "
              f"cut {after[0]}: {after[1]}")
    assert before[0] is not None and after[0] is not None
    # the near misses sit closer to the corpus than the hand-written off-topic queries: a stricter cut
    assert after[0] < before[0]
    assert before[1] != after[1]
