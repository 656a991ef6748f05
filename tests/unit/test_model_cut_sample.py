"""ragdiag.analyses.model_cut.nearest_chunk_distances with ``sample``: the sampled chunks' distances are exactly the
full computation's at those chunks (the oracle: every chunk against every other), seeded, and refused when
nonsensical."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.analyses.model_cut import nearest_chunk_distances


def _unit(n: int, d: int = 8, seed: int = 1) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, d))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("n,sample,block", [(50, 10, 512), (50, 10, 3), (50, 49, 7), (50, 50, 512), (50, 80, 4)])
def test_a_sample_gives_the_full_distances_of_its_chunks(n, sample, block):
    v = _unit(n)
    full = nearest_chunk_distances(v)
    got = nearest_chunk_distances(v, sample=sample, block=block)
    if sample >= n:  # nothing to sample: every chunk
        np.testing.assert_array_equal(got, full)
        return
    rows = np.sort(np.random.default_rng(0).choice(n, size=sample, replace=False))
    np.testing.assert_allclose(got, full[rows], rtol=0, atol=1e-12)
    assert len(got) == sample


def test_the_sample_is_seeded():
    v = _unit(40)
    a, b = nearest_chunk_distances(v, sample=5), nearest_chunk_distances(v, sample=5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(nearest_chunk_distances(v, sample=5, seed=1), a) or len(set(a)) == 1


def test_a_sample_under_one_is_refused():
    with pytest.raises(ValueError, match="sample"):
        nearest_chunk_distances(_unit(5), sample=0)
