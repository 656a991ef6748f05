"""A shipped index made and checked with the libraries installed here is trusted without loading a model.

Plumbing tests on the FAKE hash encoder (``tests/helpers/fakes.py``) given a ``runtime`` stamp; the real
shipped file's stamp is checked against the real installation in ``tests/model/test_snapshot.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiag.index.encoder.hardware import runtime_versions
from ragdiag.index.snapshot import (
    SNAPSHOT_ENV,
    WRITE_SAMPLE,
    load_snapshot,
    restamp_snapshot,
    same_runtime,
    seed_from_snapshot,
    write_snapshot,
)
from ragdiag.index.store import Store

from fakes import FakeSnapEncoder

HERE = {"torch": "2.13.0+cpu", "transformers": "5.24.0", "tokenizers": "0.23.3", "machine": "x86_64"}


class RuntimeEncoder(FakeSnapEncoder):
    """The FAKE snapshot encoder that names the libraries computing it (``runtime``), as the real one does."""

    def __init__(self, runtime=HERE, **kw):
        super().__init__(**kw)
        self.runtime = dict(runtime)


@pytest.fixture(autouse=True)
def _snapshot_enabled(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


@pytest.fixture(scope="module")
def made(tmp_path_factory, corpus, truth):
    path = tmp_path_factory.mktemp("snap") / "fake.index.npz"
    enc = RuntimeEncoder()
    with Store(path.parent / "maker") as store:
        meta = write_snapshot(path, store, corpus, truth, enc, scores=False)
    return path, meta, enc


def test_writing_checks_a_sample_and_stamps_the_runtime(made):
    path, meta, enc = made
    assert meta["runtime"] == {**HERE, "checked": WRITE_SAMPLE, "min_cosine": 1.0}
    assert load_snapshot(path).meta["runtime"] == meta["runtime"]


@pytest.mark.parametrize("runtime, re_embedded", [
    (HERE, 0),  # the same libraries on the same architecture: trusted, no model
    ({**HERE, "torch": "2.14.0"}, 8),  # another torch: the sample is re-embedded
    ({**HERE, "machine": "aarch64"}, 8),  # another CPU architecture
    ({**HERE, "onnxruntime": "1.24.0"}, 8),  # a library the snapshot was not made with
])
def test_seeding_re_embeds_the_sample_only_on_other_libraries(made, corpus, truth, tmp_path, runtime, re_embedded):
    path = made[0]
    enc = RuntimeEncoder(runtime)
    lines: list[str] = []
    with Store(tmp_path / "s") as store:
        res = seed_from_snapshot(store, corpus, truth, enc, path=path, rng=np.random.default_rng(0), log=lines.append)
    assert res.seeded and enc.encoded == re_embedded and res.sample == re_embedded
    if re_embedded:
        assert "a sample of 8 chunks re-embedded agrees" in lines[-1]
    else:
        assert "made and checked with torch 2.13.0+cpu, transformers 5.24.0, tokenizers 0.23.3 on x86_64" in lines[-1]
        assert "no chunk re-embedded" in lines[-1]


def test_an_encoder_that_does_not_name_its_runtime_is_always_checked(made, corpus, truth, tmp_path):
    enc = FakeSnapEncoder()
    with Store(tmp_path / "s") as store:
        res = seed_from_snapshot(store, corpus, truth, enc, path=made[0])
    assert res.seeded and enc.encoded == 8


def test_a_snapshot_without_the_stamp_is_always_checked(corpus, truth, tmp_path):
    path = tmp_path / "old.index.npz"
    with Store(tmp_path / "maker") as store:
        meta = write_snapshot(path, store, corpus, truth, FakeSnapEncoder(), scores=False)
    assert "runtime" not in meta
    enc = RuntimeEncoder()
    with Store(tmp_path / "s") as store:
        assert seed_from_snapshot(store, corpus, truth, enc, path=path).seeded
    assert enc.encoded == 8 and same_runtime(load_snapshot(path), enc) == ""


def test_restamping_keeps_every_array_and_adds_the_stamp(corpus, truth, tmp_path):
    path = tmp_path / "old.index.npz"
    with Store(tmp_path / "maker") as store:
        write_snapshot(path, store, corpus, truth, FakeSnapEncoder(), scores=False)
    with np.load(path) as z:
        before = {k: z[k] for k in z.files}
    meta = restamp_snapshot(path, corpus, truth, RuntimeEncoder())
    with np.load(path) as z:
        after = {k: z[k] for k in z.files}
    assert sorted(before) == sorted(after)
    for name in before:
        if name != "meta":
            np.testing.assert_array_equal(before[name], after[name])
    old, new = (json.loads(bytes(z["meta"]).decode()) for z in (before, after))
    assert {k: v for k, v in new.items() if k != "runtime"} == old and new["runtime"] == meta["runtime"]


def test_vectors_computed_elsewhere_are_not_stamped(corpus, truth, tmp_path):
    """A store filled by another "installation" (other vectors under the same stamp) is refused at writing."""
    path = tmp_path / "s.index.npz"
    with Store(tmp_path / "maker") as store:
        write_snapshot(path, store, corpus, truth, FakeSnapEncoder(), scores=False)

        class Drifted(RuntimeEncoder):
            def vector(self, text):
                v = super().vector(text) + 0.01
                return (v / np.linalg.norm(v)).astype(np.float32)

        with pytest.raises(ValueError, match="computed elsewhere"):
            write_snapshot(tmp_path / "again.npz", store, corpus, truth, Drifted(), scores=False)
        with pytest.raises(ValueError, match="computed elsewhere"):
            restamp_snapshot(path, corpus, truth, Drifted())


def test_the_runtime_is_read_without_importing_anything():
    got = runtime_versions(("numpy", "no-such-package-xyz"))
    assert got["numpy"] == np.__version__ and got["no-such-package-xyz"] == "not installed" and got["machine"]
