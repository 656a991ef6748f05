"""Exact dense search by blocks and threads (issue 51) against a plain stable argsort of the full scores.

The oracle is ``np.argsort(-scores, kind="stable")`` over the whole (queries x chunks) matrix: the top
``depth`` by score, ties to the lower position, and the best target's 1-based rank in that order.
``block_search`` must give exactly that for any block size and any number of worker threads; the dense
retriever must give it for real float32 products, whose bits do not depend on the BLAS threads for two
queries or more.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ragdiag.retrieval.base import QueryBatch
from ragdiag.retrieval.dense import DenseRetriever, search_workers
from ragdiag.retrieval.search import _exactly_in, _row_counts, block_search, block_size, full_scores


def oracle(S: np.ndarray, depth: int, targets) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Top ``depth`` positions and scores, and each query's best target rank, from the full stable sort."""
    order = np.argsort(-S, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(1, S.shape[1] + 1)[None, :].repeat(len(S), 0), axis=1)
    best = [int(rank[i, t].min()) if len(t) else 0 for i, t in enumerate(targets)]
    return order[:, :depth], np.take_along_axis(S, order[:, :depth], axis=1), best


def assert_oracle(found, S, depth, targets):
    order, scores, rank = oracle(S, depth, targets)
    np.testing.assert_array_equal(found.order, order)
    np.testing.assert_array_equal(found.scores, scores)
    np.testing.assert_array_equal(found.target_rank, rank)


# Few distinct values: ties everywhere, across blocks and across the threads' runs of blocks.
tied = hnp.arrays(st.sampled_from([np.float32, np.float64]), st.tuples(st.integers(1, 5), st.integers(1, 80)),
                  elements=st.integers(-3, 3).map(float))


@settings(max_examples=150, deadline=None)
@given(tied, st.integers(1, 25), st.sampled_from([1, 2, 3, 7, 16, 64]), st.integers(1, 4), st.data())
def test_blocks_and_threads_equal_the_stable_sort(S, depth, block, workers, data):
    nq, n = S.shape
    targets = [np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=4))), dtype=np.int64)
               for _ in range(nq)]
    found = block_search(lambda cols: S[:, cols], n, nq, depth, targets, block=block, workers=workers)
    assert_oracle(found, S, min(depth, n), targets)


def test_hand_case_a_tie_across_two_threads_goes_to_the_lower_position():
    # Blocks of 2, two threads: [0, 4) and [4, 6). Positions 1, 4 and 5 tie at 1.0; 2 is best.
    S = np.array([[0.0, 1.0, 2.0, 0.0, 1.0, 1.0]])
    found = block_search(lambda cols: S[:, cols], 6, 1, 3, [np.array([5])], block=2, workers=2)
    assert found.order.tolist() == [[2, 1, 4]]
    assert found.target_rank.tolist() == [4]  # 2, 1, 4 come first


def test_more_than_depth_new_chunks_in_a_block_are_merged_without_a_full_select(monkeypatch):
    # depth 2, blocks of 4: the second block holds 3 chunks above the best two so far (3 <= FEW * 2).
    import ragdiag.retrieval.search as search_module

    selects = []
    real = search_module._select
    monkeypatch.setattr(search_module, "_select", lambda S, d: selects.append(S.shape) or real(S, d))
    S = np.array([[0.1, 0.3, 0.2, 0.0, 0.9, 0.3, 0.8, 0.7]])
    found = block_search(lambda cols: S[:, cols], 8, 1, 2, [np.array([5])], block=4)
    assert found.order.tolist() == [[4, 6]]
    assert found.target_rank.tolist() == [5]  # 0.9, 0.8, 0.7, then 0.3 at position 1 before position 5
    assert selects == [(1, 4)]  # only the first block is selected in full


class CountingOffByOneBit:
    """A FAKE scorer: an index array's scores are one bit above a slice's (as BLAS kernels may round another
    shape); counts the slices it is asked for."""

    def __init__(self, S):
        self.S, self.slices = S, 0

    def __call__(self, cols):
        if isinstance(cols, slice):
            self.slices += 1
            return self.S[:, cols]
        return np.nextafter(self.S[:, cols], np.inf)


def test_targets_in_few_blocks_are_scored_by_their_blocks_no_second_pass():
    S = np.tile(np.array([0.5, 0.5, 0.5, 0.2]), 16)[None, :]  # 64 chunks, 32 blocks of 2
    scorer = CountingOffByOneBit(S)
    found = block_search(scorer, 64, 1, 2, [np.array([2])], block=2)
    assert found.target_rank.tolist() == [3]  # positions 0 and 1 tie with it and come first
    assert scorer.slices == 32 + 1  # one pass, and the target's block once up front


def test_targets_in_many_blocks_are_recounted_with_the_blocks_scores():
    S = np.tile(np.array([0.5, 0.5, 0.5, 0.2]), 4)[None, :]  # 16 chunks, 8 blocks of 2
    scorer = CountingOffByOneBit(S)
    targets = [np.array([2, 6, 10, 14])]  # in 4 blocks of 8: one product over them, one bit too high
    found = block_search(scorer, 16, 1, 2, targets, block=2, workers=2)
    assert found.target_rank.tolist() == [3]  # not 1: the pass saw other scores and counted again
    assert scorer.slices == 2 * 8


def _unit_rows(rng, n, dim, dtype=np.float32):
    v = rng.standard_normal((n, dim)).astype(dtype)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("nq", [1, 2, 5, 40])
@pytest.mark.parametrize("block", [None, 64, 1000])
def test_dense_search_threads_give_the_full_products_ranks(nq, block):
    """Real float32 products (no exact values): the ranks of the scores of the blocks, whatever the threads.

    (Not of one product over all chunks: OpenBLAS rounds a small product, such as 2 x 48 x 64, with other
    kernels than a large one.)
    """
    rng = np.random.default_rng(nq)
    n, dim = 3000, 48
    V = _unit_rows(rng, n, dim)
    V[rng.integers(0, n, 200)] = V[7]  # duplicates: exact ties at every scale
    q = _unit_rows(rng, nq, dim)
    q[0] = V[7]
    targets = [rng.choice(n, size=rng.integers(0, 4), replace=False) for _ in range(nq)]
    targets[0] = np.array([7, n - 1])
    batch = QueryBatch(tuple(map(str, range(nq))), q)
    dense = DenseRetriever(V)
    # The oracle's scores: the blocks' own products assembled (one query's matrix-vector product may round
    # a column differently in a product of another width).
    S = full_scores(dense.scorer(batch), n, nq, block=block or block_size(nq, n))
    found = dense.bounded_search(batch, depth=20, targets=targets, block=block)  # search_workers' choice
    assert_oracle(found, S, 20, targets)
    if nq == 1:
        return
    for workers in (1, 2, 3):  # a matrix product: the same bits on any number of threads, each on one BLAS thread
        assert_oracle(dense.bounded_search(batch, depth=20, targets=targets, block=block, workers=workers),
                      S, 20, targets)


def test_search_workers():
    assert search_workers(1, 100) == 1  # one query: the matrix-vector product keeps the BLAS's threads
    assert search_workers(100, 1) == 1  # one block: nothing to split
    assert 1 <= search_workers(100, 2) <= 2


@pytest.mark.parametrize("values, dtype, kept", [
    ([0.5, -2.0, np.inf, np.nan], np.float32, np.float32),  # exact in float32: compared as float32
    ([0.1], np.float32, np.float64),  # not exact: kept, so no comparison changes
    ([1e300], np.float32, np.float64),  # overflows float32
    ([0.5], np.float64, np.float64),
    ([3.0], np.int64, np.float64),  # integer scores: left alone
])
def test_thresholds_change_dtype_only_when_exact(values, dtype, kept):
    got = _exactly_in(np.array(values), dtype)
    assert got.dtype == kept
    np.testing.assert_array_equal(got.astype(np.float64), np.array(values))


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.bool_, st.tuples(st.integers(0, 4), st.integers(1, 300))))
def test_row_counts_are_sums(B):
    np.testing.assert_array_equal(_row_counts(B), B.sum(axis=1))
    assert _row_counts(B).dtype == np.int64


def test_dense_search_threads_at_a_size_openblas_splits():
    """Blocks large enough for OpenBLAS to split a product over its threads (8 x 384 x 32,768): the threads'
    one-BLAS-thread products give the main thread's bits, so the same ranks and scores."""
    rng = np.random.default_rng(5)
    n, dim, nq = 40_000, 384, 8
    V = _unit_rows(rng, n, dim)
    q = _unit_rows(rng, nq, dim)
    targets = [rng.choice(n, size=2, replace=False) for _ in range(nq)]
    batch = QueryBatch(tuple(map(str, range(nq))), q)
    dense = DenseRetriever(V)
    S = full_scores(dense.scorer(batch), n, nq)
    for workers in (None, 1, 2):
        assert_oracle(dense.bounded_search(batch, depth=20, targets=targets, workers=workers), S, 20, targets)
