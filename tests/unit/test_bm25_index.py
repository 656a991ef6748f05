"""BM25 indexing from tokens and the per-query search: the same scores and ranks as the block scorer.

The block scorer (``BM25Index.scorer``, a sparse product by blocks of chunks) is
the reference the rest of the suite checks against rank_bm25; here the fast path
(posting lists added into one row per query, frequent terms as dense rows, the
top selected among candidates) must give the same bits, the same order and the
same target ranks. bm25s, given the same tokens, is a second oracle.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.retrieval.base import QueryBatch, top_k_desc
from ragdiag.retrieval.bm25 import (BM25Index, BM25Retriever, Tokens, _DENSE_MIN_DOCS, _tokenize_unicode, _top,
                                    tokenize, tokenize_corpus)
from ragdiag.retrieval.search import block_search


def _zipf_texts(n: int, seed: int = 0) -> list[str]:
    """Texts of words drawn from a Zipf law: a few words in most texts (dense rows), many rare ones."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(3000)])
    p = 1.0 / np.arange(1, 3001)
    p /= p.sum()
    lengths = rng.integers(3, 30, size=n)
    flat = words[rng.choice(3000, size=int(lengths.sum()), p=p)]
    return [" ".join(flat[a:b]) for a, b in zip(np.r_[0, np.cumsum(lengths)[:-1]], np.cumsum(lengths))]


def _queries(texts: list[str], n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    qs = [" ".join(rng.choice(texts[int(rng.integers(len(texts)))].split(), size=3)) for _ in range(n)]
    # a repeated token (counts twice), a token no chunk has, no token at all, and the most common word alone
    return qs + ["w5 w5 w77", "unknownword", "", "w0"]


@pytest.mark.parametrize("n", [50, _DENSE_MIN_DOCS + 500])
def test_query_scores_equal_the_block_scorer_bit_for_bit(n):
    texts = _zipf_texts(n)
    index = BM25Index(texts)
    queries = _queries(texts, 30)
    if n >= _DENSE_MIN_DOCS:
        assert index._dense_row  # the dense-row path is exercised (w0 is in most texts)
    reference = index.scorer(queries)(slice(0, n))
    assert np.array_equal(index.scores(queries), reference)
    assert (reference > 0).any(axis=1).sum() >= 30  # not vacuous


@pytest.mark.parametrize("n", [50, _DENSE_MIN_DOCS + 500])
def test_search_equals_block_search(n):
    # Repeated texts tie on score: the order among them is by position, as the stable sort puts them.
    texts = _zipf_texts(n // 2) * 2
    retriever = BM25Retriever(texts)
    batch = QueryBatch(tuple(_queries(texts, 25)))
    rng = np.random.default_rng(2)
    targets = [rng.choice(len(texts), size=int(rng.integers(0, 4)), replace=False) for _ in batch.texts]
    for depth in (1, 20, len(texts) + 5):
        fast = retriever.bounded_search(batch, depth=depth, targets=targets)
        blocks = block_search(retriever.scorer(batch), len(texts), len(batch), depth, targets, block=97)
        assert np.array_equal(fast.order, blocks.order)
        assert np.array_equal(fast.scores, blocks.scores)
        assert np.array_equal(fast.target_rank, blocks.target_rank)
        np.testing.assert_array_equal(fast.target_score, blocks.target_score)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.0, 3.5]), min_size=1, max_size=60), st.integers(1, 70))
def test_top_is_the_head_of_the_stable_sort(values, depth):
    scores = np.array(values)
    assert _top(scores, depth).tolist() == top_k_desc(scores[None, :], depth)[0].tolist()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_shortcut_equals_the_unicode_tokeniser(text):
    assert tokenize(text) == _tokenize_unicode(text)


def test_tokens_index_like_texts_and_stay_untouched():
    texts = ["Cat dog cat.", "cat, CAT fish", "", "bird Ünïcode 机器学习"]
    tokens = tokenize_corpus(texts)
    # "cat dog cat" -> ids 0 1 0; "cat cat fish" -> 0 0 2; "" -> nothing; then bird, ünïcode, 3 CJK bigrams
    assert tokens.ids.tolist() == [0, 1, 0, 0, 0, 2, 3, 4, 5, 6, 7]
    assert tokens.indptr.tolist() == [0, 3, 6, 6, 11]
    ids, indptr = tokens.ids.copy(), tokens.indptr.copy()
    a, b = BM25Index(tokens), BM25Index(tokens)  # indexing twice from the same tokens
    assert np.array_equal(tokens.ids, ids) and np.array_equal(tokens.indptr, indptr)
    assert np.array_equal(a.scores(["cat fish", "机器"]), BM25Index(texts).scores(["cat fish", "机器"]))
    assert np.array_equal(a.scores(["cat"]), b.scores(["cat"]))
    assert isinstance(tokens, Tokens) and len(tokens) == 4


def test_equals_bm25s_with_the_same_tokens():
    bm25s = pytest.importorskip("bm25s")
    texts = _zipf_texts(600)
    tokens = tokenize_corpus(texts)
    ours = BM25Index(tokens)
    ids = [a.tolist() for a in np.split(tokens.ids, tokens.indptr[1:-1])]
    theirs = bm25s.BM25(k1=1.2, b=0.75, method="lucene", dtype="float64")
    theirs.index((ids, dict(tokens.vocab)), show_progress=False)
    queries = _queries(texts, 20)[:20]
    checked = 0
    for q in queries:
        q_ids = [tokens.vocab[t] for t in tokenize(q) if t in tokens.vocab]
        if not q_ids:
            continue
        # bm25s's "lucene" drops Lucene's constant factor k1 + 1 = 2.2 from every score
        np.testing.assert_allclose(ours.query_scores(q), theirs.get_scores_from_ids(q_ids) * 2.2, rtol=1e-12, atol=0)
        checked += 1
    assert checked == 20
