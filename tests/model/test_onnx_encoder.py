"""The ONNX Runtime encoder (dense@minilm-onnx, dense@minilm-onnx-int8): loading by name, errors, the export.

The fast tests check the plumbing (names, options, the message without ONNX Runtime);
the ``model`` tests export the bundled MiniLM once into a temporary store folder and
check the fp32 graph against the torch encoder (the oracle) and int8's drift.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ragdiag.index.encoder.onnx import OnnxEncoder, onnx_model_files
from ragdiag.index.encoder.resolve import ModelUnavailable
from ragdiag.index.models import load_encoder
from runtime_encoders import TEXTS, assert_loaded_without_a_runtime

@pytest.mark.parametrize("name,precision", [("minilm-onnx", "fp32"), ("minilm-onnx-int8", "int8")])
def test_loaded_by_name_without_loading_a_runtime(name, precision, tmp_path):
    assert_loaded_without_a_runtime(name, precision, OnnxEncoder, tmp_path)


@pytest.mark.parametrize("options,message", [({"precision": "bf16"}, "sets its own precision"),
                                             ({"device": "cuda"}, "not device"),
])
def test_options_it_does_not_take_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        load_encoder("minilm-onnx", **options)


def test_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="fp32, int8"):
        OnnxEncoder(precision="int4")


def test_missing_runtime_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails as when it is not installed
    enc = OnnxEncoder(precision="int8", cache=tmp_path)
    with pytest.raises(ModelUnavailable, match=r"requirements-onnx\.txt"):
        enc.encode(["a"])


def test_export_files_are_keyed_by_weights_in_the_store_folder(tmp_path):
    a, b = onnx_model_files("a" * 64, tmp_path), onnx_model_files("b" * 64, tmp_path)
    assert a["fp32"].parent == tmp_path / "onnx" and a["int8"].name.endswith("-int8.onnx")
    assert a["fp32"] != b["fp32"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    cache = tmp_path_factory.mktemp("onnx-store")
    return cache, {p: OnnxEncoder(precision=p, cache=cache) for p in ("fp32", "int8")}


@pytest.fixture(scope="module")
def torch_vectors():
    return load_encoder(None).encode(TEXTS)


@pytest.mark.model
def test_fp32_graph_equals_the_torch_encoder(exported, torch_vectors):
    _, encs = exported
    v = encs["fp32"].encode(TEXTS)
    assert v.shape == torch_vectors.shape and v.dtype == np.float32
    np.testing.assert_allclose(v, torch_vectors, atol=1e-5)


@pytest.mark.model
def test_int8_drifts_little_and_is_stamped_apart(exported, torch_vectors):
    _, encs = exported
    v = encs["int8"].encode(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert (v * torch_vectors).sum(1).min() > 0.95
    stamps = {encs["fp32"].stamp, encs["int8"].stamp, load_encoder(None).stamp}
    assert len(stamps) == 3 and {s.precision for s in stamps} == {"fp32", "onnx-fp32", "onnx-int8"}
    assert len({s.weights_sha256 for s in stamps}) == 1  # made from the same packaged weights


@pytest.mark.model
def test_export_is_cached_and_reused(exported):
    cache, encs = exported
    encs["int8"].encode(TEXTS[:1])
    files = onnx_model_files(encs["int8"].stamp_weights, cache)
    before = {p: files[p].stat().st_mtime_ns for p in files}
    again = OnnxEncoder(precision="int8", cache=cache)
    again.encode(TEXTS[:1])
    assert {p: files[p].stat().st_mtime_ns for p in files} == before
    assert sorted(x.name for x in (cache / "onnx").iterdir()) == sorted(f.name for f in files.values())


@pytest.mark.model
def test_token_sink_and_window_match_the_torch_encoder(exported):
    _, encs = exported
    tokens = {}
    encs["fp32"].encode(TEXTS, token_sink=lambda i, t: tokens.__setitem__(i, t))
    counts = encs["fp32"].count_tokens(TEXTS)
    for i, n in enumerate(counts):
        assert tokens[i].shape == (min(n, encs["fp32"].max_seq_length) - 2, 384)


@pytest.mark.model
def test_passes_at_once_give_the_same_vectors_in_order(exported, torch_vectors):
    cache, _ = exported
    enc = OnnxEncoder(precision="fp32", batch_size=1, passes=2, threads=2, cache=cache)
    seen = []
    v = enc.encode(TEXTS, progress=lambda done, total: seen.append((done, total)))
    np.testing.assert_allclose(v, torch_vectors, atol=1e-5)
    assert seen == [(i, len(TEXTS)) for i in range(1, len(TEXTS) + 1)]
    assert enc.layout == "onnxruntime cpu: 2 passes x 1 thread, fp32"
