"""What the ONNX Runtime and OpenVINO encoders' tests share: the texts they encode against the torch encoder (the
oracle), and the check that loading one by name starts nothing."""

from __future__ import annotations

from ragdiag.index.models import load_encoder, model_label

TEXTS = [
    "Ridge regression shrinks the coefficients.",
    "x",
    "The federal budget allocates funds to schools, roads and hospitals " * 40,  # past the 256-token window
    "Der Haushalt 2024 sieht mehr Geld für Bildung vor.",
]


def assert_loaded_without_a_runtime(name: str, precision: str, kind: type, cache) -> None:
    """``load_encoder(name)`` gives a ``kind`` of ``precision`` that has loaded no runtime and exported nothing."""
    enc = load_encoder(name, cache=cache)
    assert isinstance(enc, kind) and enc.precision == precision
    assert not enc.loaded and model_label(name) == name
    assert not (cache / "onnx").exists()  # nothing exported before the first encode
