"""The shipped index of the bundled corpus: stamps, the re-embedded sample, and when it is (not) used.

Plumbing tests use a FAKE hash encoder (``tests/helpers/_store_writer.py``) and a
snapshot written to a temporary file; the ``model`` tests check the real
shipped file against the real model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragdiag.index import snapshot as snap_mod
from ragdiag.index.snapshot import (
    MIN_COSINE,
    SNAPSHOT_ENV,
    SNAPSHOT_PATH,
    load_snapshot,
    same_runtime,
    seed_from_snapshot,
    snapshot_problems,
    verify_sample,
    write_snapshot,
)
from ragdiag.index.store import Store
from ragdiag.index.store.keys import text_sha256

from fakes import FakeSnapEncoder


@pytest.fixture(autouse=True)
def _snapshot_enabled(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


@pytest.fixture(scope="module")
def fake_snapshot(tmp_path_factory, corpus, truth):
    """A snapshot of the bundled corpus made with the FAKE encoder (all six strategies, no scores)."""
    tmp = tmp_path_factory.mktemp("snap")
    path = tmp / "fake.index.npz"
    with Store(tmp / "maker") as store:
        meta = write_snapshot(path, store, corpus, truth, FakeSnapEncoder(), scores=False)
    return path, meta


def _all_texts(corpus, truth):
    from ragdiag.index.chunking import chunk_corpus, parse_strategies

    return [c.embed_text for s in parse_strategies(None) for c in chunk_corpus(corpus, s)] + [q.text for q in truth.queries]


def test_seeds_an_empty_store_and_then_stays_out_of_the_way(fake_snapshot, corpus, truth, tmp_path):
    path, meta = fake_snapshot
    enc = FakeSnapEncoder()
    lines: list[str] = []
    with Store(tmp_path / "s") as store:
        res = seed_from_snapshot(store, corpus, truth, enc, path=path, rng=np.random.default_rng(0), log=lines.append)
        assert res.seeded and res.vectors == len(load_snapshot(path).shas) and res.min_cosine >= MIN_COSINE
        assert enc.encoded == 8  # only the sample was embedded
        assert "seeded the store" in lines[-1]
        texts = _all_texts(corpus, truth)
        assert store.stored_vectors(enc.stamp, [text_sha256(t) for t in texts]) == {text_sha256(t) for t in texts}
        got = store.embed(enc, texts[:50])
        assert got.computed == 0
        np.testing.assert_allclose(got.vectors, enc.encode(texts[:50]), atol=1e-7)
        again = seed_from_snapshot(store, corpus, truth, enc, path=path)
        assert not again.seeded and "already holds" in again.reason
        assert enc.encoded == 8 + 50  # the second call embedded nothing (no model needed)


def test_a_users_own_corpus_is_never_prefilled(fake_snapshot, tiny_folder, tmp_path):
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth

    corpus = load_corpus(tiny_folder)
    truth = load_truth(tiny_folder.with_name("tiny.truth.json"), corpus)
    enc = FakeSnapEncoder()
    with Store(tmp_path / "s") as store:
        res = seed_from_snapshot(store, corpus, truth, enc, path=fake_snapshot[0])
    assert not res.seeded and "never pre-filled" in res.reason and enc.encoded == 0


def test_disabled_by_the_environment(fake_snapshot, corpus, truth, tmp_path, monkeypatch):
    monkeypatch.setenv(SNAPSHOT_ENV, "1")
    with Store(tmp_path / "s") as store:
        res = seed_from_snapshot(store, corpus, truth, FakeSnapEncoder(), path=fake_snapshot[0])
    assert not res.seeded and SNAPSHOT_ENV in res.reason


def test_another_model_is_refused_by_its_stamp(fake_snapshot, corpus, truth, tmp_path):
    other = FakeSnapEncoder(weights="fake-weights-2")
    lines: list[str] = []
    with Store(tmp_path / "s") as store:
        res = seed_from_snapshot(store, corpus, truth, other, path=fake_snapshot[0], log=lines.append)
        assert store.stored_vectors(other.stamp, [text_sha256(truth.queries[0].text)]) == set()
    assert not res.seeded and "weights_sha256" in res.reason and other.encoded == 0
    assert "ignored" in lines[-1] and "weights_sha256" in lines[-1]


def _rewrite(path: Path, out: Path, **changes) -> Path:
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    for k, v in changes.items():
        arrays[k] = v(arrays[k])
    np.savez_compressed(out, **arrays)
    return out


def test_a_changed_stamp_is_refused(fake_snapshot, corpus, truth, tmp_path):
    def bump(meta_bytes):
        meta = json.loads(bytes(meta_bytes).decode())
        meta["pipeline_version"] = "0"
        meta["strategies"]["C"]["params"]["size"] = 400
        return np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)

    bad = _rewrite(fake_snapshot[0], tmp_path / "bad.npz", meta=bump)
    problems = snapshot_problems(load_snapshot(bad), corpus, truth, FakeSnapEncoder())
    assert "pipeline version differs" in problems and "chunking parameters of C differ" in problems
    with Store(tmp_path / "s") as store:
        assert not seed_from_snapshot(store, corpus, truth, FakeSnapEncoder(), path=bad).seeded


def test_vectors_that_disagree_with_the_model_are_refused(fake_snapshot, corpus, truth, tmp_path):
    """Every chunk vector is off by a little (cosine ~0.9999): the re-embedded sample catches it."""
    rng = np.random.default_rng(1)

    def nudge(v):
        w = v + rng.normal(scale=0.004, size=v.shape).astype(np.float32)
        return (w / np.linalg.norm(w, axis=1, keepdims=True)).astype(np.float32)

    bad = _rewrite(fake_snapshot[0], tmp_path / "bad.npz", vectors=nudge)
    enc = FakeSnapEncoder()
    lines: list[str] = []
    with Store(tmp_path / "s") as store:
        res = seed_from_snapshot(store, corpus, truth, enc, path=bad, log=lines.append)
        assert store.stored_vectors(enc.stamp, [text_sha256(truth.queries[0].text)]) == set()
    assert not res.seeded and res.min_cosine < MIN_COSINE and "agrees only" in lines[-1]


def test_scores_round_trip(corpus, truth, tmp_path):
    """MaxSim scores the maker's store holds are shipped and seeded under the same identity."""
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus

    enc = FakeSnapEncoder()
    identity = snap_mod.maxsim_identity(enc.stamp.as_dict())
    chunk = chunk_corpus(corpus, STRATEGIES["E"])[3].embed_text
    query = truth.queries[0].text
    with Store(tmp_path / "maker") as maker:
        maker.score_cache().put(identity, query, [chunk], np.array([12.5]))
        write_snapshot(tmp_path / "s.npz", maker, corpus, truth, enc)
    with Store(tmp_path / "user") as store:
        res = seed_from_snapshot(store, corpus, truth, enc, path=tmp_path / "s.npz")
        assert res.seeded and res.scores == 1
        assert store.score_cache().get(identity, query, [chunk])[0] == 12.5


@pytest.mark.model
def test_the_shipped_snapshot_matches_this_installation(corpus, truth, encoder):
    """Every stamp matches (the libraries too), it is under 10 MB, and 8 random chunks re-embedded now agree."""
    assert SNAPSHOT_PATH.exists(), "regenerate it: python scripts/make_snapshot.py"
    assert SNAPSHOT_PATH.stat().st_size < 10_000_000
    snap = load_snapshot(SNAPSHOT_PATH)
    assert snapshot_problems(snap, corpus, truth, encoder) == []
    assert snap.vectors.dtype == np.float32 and snap.score_value.size > 0
    texts = {text_sha256(t): t for t in _all_texts(corpus, truth)}
    assert verify_sample(snap, texts, encoder, sample=8) >= MIN_COSINE
    # Made and checked with the pinned libraries: a fresh install seeds its store without loading the model.
    assert same_runtime(snap, encoder), (f"the shipped index was made with {snap.meta.get('runtime')}, this "
                                         f"installation runs {encoder.runtime}: python scripts/make_snapshot.py --restamp")
    assert snap.meta["runtime"]["checked"] >= 8 and snap.meta["runtime"]["min_cosine"] >= MIN_COSINE
