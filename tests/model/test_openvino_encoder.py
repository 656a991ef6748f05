"""The OpenVINO encoder (dense@minilm-openvino, dense@minilm-openvino-int8): loading by name, errors, its vectors.

The fast tests check the plumbing (names, options, the message without OpenVINO); the ``model`` tests export the
bundled MiniLM once into a temporary store folder and check OpenVINO's fp32 vectors against the torch encoder (the
oracle) and the int8 graph's drift and stamp.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ragdiag.index.encoder.openvino import OpenVinoEncoder
from ragdiag.index.encoder.resolve import ModelUnavailable
from ragdiag.index.models import load_encoder
from runtime_encoders import TEXTS, assert_loaded_without_a_runtime

@pytest.mark.parametrize("name,precision", [("minilm-openvino", "fp32"), ("minilm-openvino-int8", "int8")])
def test_loaded_by_name_without_loading_a_runtime(name, precision, tmp_path):
    assert_loaded_without_a_runtime(name, precision, OpenVinoEncoder, tmp_path)


@pytest.mark.parametrize("options,message", [({"precision": "int8"}, "sets its own precision"),
                                             ({"device": "cuda"}, "not device")])
def test_options_it_does_not_take_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        load_encoder("minilm-openvino", **options)


def test_missing_openvino_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "openvino", None)  # import fails as when it is not installed
    enc = OpenVinoEncoder(precision="fp32", cache=tmp_path)
    with pytest.raises(ModelUnavailable, match=r"minilm-openvino.*requirements-openvino\.txt"):
        enc.encode(["a"])
    assert not (tmp_path / "onnx").exists()  # refused before any export


@pytest.fixture(scope="module")
def encoders(tmp_path_factory):
    for package in ("openvino", "onnxruntime", "onnx"):
        pytest.importorskip(package)
    cache = tmp_path_factory.mktemp("openvino-store")
    return {p: OpenVinoEncoder(precision=p, cache=cache) for p in ("fp32", "int8")}


@pytest.mark.model
def test_fp32_equals_the_torch_encoder_and_int8_is_stamped_apart(encoders):
    torch_enc = load_encoder(None)
    want = torch_enc.encode(TEXTS)
    v = encoders["fp32"].encode(TEXTS)
    assert v.shape == want.shape and v.dtype == np.float32
    np.testing.assert_allclose(v, want, atol=1e-5)  # f32 inference held: no bf16 on a CPU that has it
    v8 = encoders["int8"].encode(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(v8, axis=1), 1.0, atol=1e-5)
    assert (v8 * want).sum(1).min() > 0.95
    stamps = {encoders["fp32"].stamp, encoders["int8"].stamp, torch_enc.stamp}
    assert {s.precision for s in stamps} == {"fp32", "openvino-fp32", "openvino-int8"}
    assert len({s.weights_sha256 for s in stamps}) == 1  # made from the same packaged weights
    assert encoders["fp32"].layout.startswith("openvino cpu")


@pytest.mark.model
def test_passes_at_once_give_the_same_vectors_in_order(encoders):
    one = OpenVinoEncoder(precision="fp32", batch_size=1, passes=1, threads=1, cache=encoders["fp32"].cache)
    two = OpenVinoEncoder(precision="fp32", batch_size=1, passes=2, threads=2, cache=encoders["fp32"].cache)
    np.testing.assert_allclose(two.encode(TEXTS), one.encode(TEXTS), atol=1e-6)
