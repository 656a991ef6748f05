"""The real all-MiniLM-L6-v2's tests of what ``test_store.py`` checks on FAKEs (kept apart, so that those run in
the fast loop)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.index.store import Store


@pytest.mark.model
def test_real_encoder_second_embed_computes_nothing(tmp_path, encoder):
    texts = ["Ridge regression adds an L2 penalty.", "The KV cache stores keys and values.",
             "Cross-validation splits the data into folds."]
    with Store(tmp_path) as store:
        first = store.embed(encoder, texts)
        assert (first.computed, first.reused) == (3, 0)
    with Store(tmp_path) as store:
        second = store.embed(encoder, texts)
        assert (second.computed, second.reused) == (0, 3)
    np.testing.assert_array_equal(second.vectors, first.vectors)
    np.testing.assert_allclose(first.vectors, encoder.encode(texts), atol=1e-6)
    assert second.vectors.shape == (3, encoder.stamp.dim)
