"""``--engine ray``: chunks embedded by Ray actors give exactly the in-process vectors, and an actor that keeps dying
ends the encode. The CLI end to end is ``test_ray_cli.py``, the sharded search ``test_ray_search.py``: three
files, so the suite's workers run them side by side.

Each test starts a local Ray instance (2 CPUs) and shuts it down; marked ``ray``
(left out of the fast selection) and skipped, with the reason, when Ray is not
installed (``pip install -r requirements-ray.txt``).
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np
import pytest

from ray_local import local_ray  # noqa: F401 - fixture

pytestmark = [
    pytest.mark.ray,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="ray is not installed (optional: pip install -r requirements-ray.txt)"),
]


@pytest.mark.model
def test_ray_vectors_are_the_in_process_vectors(corpus, encoder, local_ray, tmp_path):
    """A subset of the bundled corpus (60 chunks of strategy C), the real model, through the store both ways."""
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus
    from ragdiag.index.ray_engine import BATCHES_PER_COMMIT, RayEncoder
    from ragdiag.index.store import Store

    texts = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["C"])[:60]]
    ray_encoder = RayEncoder(encoder, actors=2, runtime_env=local_ray)
    assert ray_encoder.stamp == encoder.stamp  # the store keys both by the same stamp
    assert ray_encoder.texts_per_commit == 2 * encoder.batch_size * BATCHES_PER_COMMIT
    # On Ray in two committed parts (32 + 28 texts), in one part in-process: the parts hold whole batches of
    # the same longest-first order, so the batches, their padding and the vectors are the same both ways
    with Store(tmp_path / "ray") as a, Store(tmp_path / "local") as b:
        on_ray = a.embed(ray_encoder, texts, commit_every=2 * encoder.batch_size)
        in_process = b.embed(encoder, texts)
        assert on_ray.computed == in_process.computed == len(set(texts))
        np.testing.assert_array_equal(on_ray.vectors, in_process.vectors)
        # One pool for both parts: each actor loaded the model once.
        assert ray_encoder.actors_started == 2
        # Resumes from what is stored: nothing is recomputed, no actor starts.
        assert a.embed(ray_encoder, texts).computed == 0
        assert ray_encoder.actors_started == 2
    # The pool ended with the embed: its CPUs are free for the search actors (ray.kill is asynchronous).
    import ray

    while ray.available_resources().get("CPU", 0) < ray.cluster_resources()["CPU"]:
        time.sleep(0.1)


def test_an_encoder_actor_that_dies_on_every_batch_fails_the_encode_instead_of_hanging(local_ray):
    """An actor that dies on every batch (FAKE encoder that exits: plumbing) is started again, and its batch
    retried, ACTOR_RESTARTS times; then the encode raises instead of hanging."""
    from fakes import DyingEncoder

    from ragdiag.index.ray_engine import ACTOR_RESTARTS, RayEncoder

    assert 0 < ACTOR_RESTARTS < 10
    encoder = RayEncoder(DyingEncoder(), actors=1, runtime_env=local_ray)
    with pytest.raises(RuntimeError, match=f"kept dying \\(started again {ACTOR_RESTARTS} times\\)"):
        encoder.encode([f"text {i}" for i in range(8)])
