"""The compiled BM25 search (numba) against the numpy one: the same score bits, the same top k, the same ranks.

The numpy search (:meth:`BM25Index.search` with ``scorer="numpy"``) is itself checked against the block
scorer and rank_bm25 elsewhere (``test_bm25_index.py``); here the compiled path must reproduce it exactly:
every score's bits, the order (ties by position), the best target's rank and score. The tests that need
numba skip cleanly without it; the choice of scorer and the fallback are tested either way.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.retrieval import bm25
from ragdiag.retrieval.base import QueryBatch
from ragdiag.retrieval.bm25 import _DENSE_MIN_DOCS, NUMBA_ENV, NUMBA_MIN_DOCS, BM25Index, BM25Retriever, scorer_choice

REPO = Path(__file__).resolve().parents[2]


def _same(a, b) -> None:
    """Two searches agree bit for bit."""
    assert np.array_equal(a.order, b.order)
    assert a.scores.tobytes() == b.scores.tobytes()
    assert np.array_equal(a.target_rank, b.target_rank)
    assert a.target_score.tobytes() == b.target_score.tobytes()  # nan where a query has no target, same bits


def _both(index: BM25Index, queries, depth: int, targets):
    want = index.search(queries, depth=depth, targets=targets, scorer="numpy")
    got = index.search(queries, depth=depth, targets=targets, scorer="numba")
    assert index.scorer_used == "numba"
    return want, got


@pytest.fixture(scope="module")
def numba_installed():
    return pytest.importorskip("numba")


@pytest.mark.parametrize("strategy", ["A", "C", "F"])
def test_bundled_corpus_same_bits_and_top_k(numba_installed, corpus, truth, strategy):
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus

    texts = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES[strategy])]
    index = BM25Index(texts)
    queries = [q.text for q in truth.queries]
    rng = np.random.default_rng(0)
    targets = [rng.choice(len(texts), size=int(rng.integers(0, 5)), replace=False) for _ in queries]
    for depth in (1, 20, len(texts) + 3):  # the last: every chunk, the untouched ones (score 0) by position
        want, got = _both(index, queries, depth, targets)
        _same(want, got)
    assert (want.scores[:, 0] > 0).sum() >= len(queries) // 2  # not vacuous: most queries match something


def test_dense_rows_and_repeated_terms_same_bits(numba_installed):
    # Past _DENSE_MIN_DOCS the numpy path adds frequent terms as dense rows; "a a b" multiplies a's weights by 2.
    rng = np.random.default_rng(3)
    words = np.array(["a", "b", "c", "d", "e"] + [f"w{i}" for i in range(400)])
    p = np.r_[[0.2, 0.1, 0.05, 0.05, 0.05], np.full(400, 0.55 / 400)]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(1, 25)), p=p)) for _ in range(_DENSE_MIN_DOCS + 300)]
    index = BM25Index(texts)
    assert index._dense_row
    queries = ["a a b", "a", "c c c w7", "w1 w2 w3 w3", "nothing", "", "e d c b a"]
    targets = [rng.choice(len(texts), size=3, replace=False) for _ in queries]
    _same(*_both(index, queries, 20, targets))


_word = st.sampled_from(["x", "y", "z", "u", "v", "w"])


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.lists(_word, max_size=6).map(" ".join), min_size=1, max_size=40),
       queries=st.lists(st.lists(st.sampled_from(["x", "y", "z", "u", "v", "w", "q"]), max_size=5).map(" ".join),
                        min_size=1, max_size=6),
       depth=st.integers(1, 45), seed=st.integers(0, 2**16), dense=st.booleans())
def test_compiled_equals_numpy(numba_installed, texts, queries, depth, seed, dense):
    # Six words over short texts: many equal scores (ties broken by position) and many empty rows.
    # dense: frequent terms kept as dense rows at any size (both paths add them whole; the compiled one
    # then scans every document).
    with mock.patch.object(bm25, "_DENSE_MIN_DOCS", 0 if dense else bm25._DENSE_MIN_DOCS):
        index = BM25Index(texts)
    rng = np.random.default_rng(seed)
    targets = [rng.choice(len(texts), size=int(rng.integers(0, min(4, len(texts)) + 1)), replace=False)
               for _ in queries]
    _same(*_both(index, queries, depth, targets))


def test_retriever_stamps_the_scorer_that_ran(numba_installed):
    r = BM25Retriever(["apple pie", "apple tart", "cherry tart"], scorer="numba")
    r.bounded_search(QueryBatch(("apple",)), depth=2)
    assert r.stamp() == {"k1": 1.2, "b": 0.75, "idf": "lucene", "scorer": "numba"}
    r.bounded_search(QueryBatch(("apple",)), depth=2, block=2)  # the block search is numpy
    assert r.stamp()["scorer"] == "numpy"


@pytest.mark.parametrize("env, n, want", [("0", 10**7, "numpy"), ("numpy", 10**7, "numpy"), ("auto", 918, "numpy"),
                                          ("", NUMBA_MIN_DOCS - 1, "numpy")])
def test_scorer_choice_numpy(monkeypatch, env, n, want):
    monkeypatch.setenv(NUMBA_ENV, env)
    assert scorer_choice(n) == want


def test_scorer_choice_numba_when_importable(monkeypatch):
    monkeypatch.delenv(NUMBA_ENV, raising=False)
    monkeypatch.setattr(bm25, "_numba_importable", lambda: True)
    assert scorer_choice(NUMBA_MIN_DOCS) == "numba" and scorer_choice(5, "1") == "numba"
    monkeypatch.setattr(bm25, "_numba_importable", lambda: False)  # not installed: numpy, whatever is asked
    assert scorer_choice(NUMBA_MIN_DOCS) == "numpy" and scorer_choice(5, "numba") == "numpy"


@pytest.mark.parametrize("bad", ["yes", "2", "numbaa"])
def test_scorer_choice_rejects_unknown_values(monkeypatch, bad):
    monkeypatch.setenv(NUMBA_ENV, bad)
    with pytest.raises(ValueError, match=NUMBA_ENV):
        scorer_choice(10)
    with pytest.raises(ValueError, match="scorer="):
        BM25Retriever(["a b"], scorer=bad)


def test_numpy_fallback_when_numba_fails_to_import(monkeypatch):
    monkeypatch.setattr(bm25, "_numba_importable", lambda: True)
    monkeypatch.setattr(bm25, "_compiled", lambda: None)  # a broken install: the import fails
    r = BM25Retriever(["apple pie", "apple tart", "cherry tart"], scorer="numba")
    found = r.bounded_search(QueryBatch(("apple", "cherry")), depth=3, targets=[np.array([1]), np.array([0])])
    assert r.stamp()["scorer"] == "numpy"
    # apple: chunks 0 and 1 tie (same length, tf 1), by position; cherry: chunk 2, then the zeros by position
    assert found.order.tolist() == [[0, 1, 2], [2, 0, 1]]
    assert found.target_rank.tolist() == [2, 2]


def test_small_index_search_does_not_import_numba():
    # The bundled corpus is below NUMBA_MIN_DOCS: a search there never pays for importing numba.
    code = ("import sys; from ragdiag.retrieval.bm25 import BM25Retriever; from ragdiag.retrieval.base import "
            "QueryBatch; r = BM25Retriever(['apple pie', 'cherry tart']); r.bounded_search(QueryBatch(('apple',)), "
            "depth=2); print(r.stamp()['scorer'], 'numba' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != NUMBA_ENV}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["numpy", "False"]
