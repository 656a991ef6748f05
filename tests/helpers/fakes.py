"""FAKE models for plumbing tests only. Nothing here is used by the library or the dashboard.

``RAGDIAG_ENCODER=fakes:fake_encoder`` (with this folder on ``PYTHONPATH``)
makes the CLI and the dashboard use :class:`FakeEncoder`, so their tests run
in seconds without model weights. Its stamp names it (``FAKE-bag-of-words``),
so its numbers can never pass for MiniLM's. One real-model test per surface
stays beside these. :class:`HashEncoder` (a pseudo-random vector per text,
changing with its "weights" and precision) is the store's tests' FAKE: what
they check is which vectors are stored and reused, not what they mean (:class:`FakeSnapEncoder` adds the
tokenizer hash a snapshot stamps). :class:`AxisEncoder` (three texts on two axes, hand-checkable) and
:class:`LengthEncoder` (a vector from the text's length, vectorised for 300,000 log lines) are the monitor's.
:func:`BagOfWords` is :class:`FakeEncoder` with a window wide enough that nothing is truncated.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Sequence

import numpy as np

_WORD = re.compile(r"\S+")


class FakeTokenizer:
    """A FAKE tokenizer for plumbing tests only: every whitespace-separated word is one "wordpiece".

    ``count_tokens`` is words + 2 (a pretend ``[CLS]`` and ``[SEP]``), so expected
    values can be counted by eye. ``window_ends`` is exact for that model: a text
    of more than ``max_seq_length - 2`` words is read up to the end of word number
    ``max_seq_length - 2``; a text that fits is read whole (``len(text)``).
    """

    def __init__(self, max_seq_length: int = 256):
        if max_seq_length < 3:
            raise ValueError("max_seq_length must leave room for one word and two specials")
        self.max_seq_length = max_seq_length

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([len(_WORD.findall(t)) + 2 for t in texts], dtype=np.int64)

    def window_ends(self, texts: Sequence[str]) -> np.ndarray:
        keep = self.max_seq_length - 2
        out = []
        for t in texts:
            words = list(_WORD.finditer(t))
            out.append(words[keep - 1].end() if len(words) > keep else len(t))
        return np.array(out, dtype=np.int64)


class FakeEncoder(FakeTokenizer):
    """A FAKE bi-encoder for plumbing tests only: bag-of-words counts, L2-normalised.

    Each ``ragdiag.retrieval.tokenize`` token of the part of the text inside the
    window (``window_ends``, as :class:`FakeTokenizer` counts it) adds 1 to the
    coordinate ``crc32(token) % dim``, so the cosine of two texts is
    ``shared counts / (norm * norm)`` and can be worked out by hand
    (:meth:`check_no_collisions` makes sure no two words share a coordinate).
    Deterministic across processes (crc32, not Python's salted ``hash``).
    """

    def __init__(self, max_seq_length: int = 256, dim: int = 4096):
        super().__init__(max_seq_length)
        self.dim = dim

    def _index(self, token: str) -> int:
        import zlib

        return zlib.crc32(token.encode("utf-8")) % self.dim

    def check_no_collisions(self, texts: Sequence[str]) -> None:
        from ragdiag.retrieval.bm25 import tokenize

        vocab = {t for text in texts for t in tokenize(text)}
        slots = {self._index(t) for t in vocab}
        assert len(slots) == len(vocab), "FakeEncoder hash collision: change dim"

    def encode(self, texts: Sequence[str], *, progress=None, token_sink=None) -> np.ndarray:
        """Bag-of-words vectors; ``token_sink(i, rows)`` also receives text ``i``'s wordpiece vectors."""
        from ragdiag.retrieval.bm25 import tokenize

        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, (text, end) in enumerate(zip(texts, self.window_ends(texts))):
            for tok in tokenize(text[:end]):
                out[i, self._index(tok)] += 1.0
            if token_sink is not None:
                token_sink(i, self.token_rows(text))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms > 0, norms, 1.0)
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def token_rows(self, text: str) -> np.ndarray:
        """A FAKE text's wordpiece vectors: one one-hot row per token (MaxSim = shared distinct tokens)."""
        from ragdiag.retrieval.bm25 import tokenize

        tokens = tokenize(text)
        rows = np.zeros((max(len(tokens), 1), self.dim), dtype=np.float32)
        for i, tok in enumerate(tokens):
            rows[i, self._index(tok)] = 1.0
        return rows

    def token_embeddings(self, texts: Sequence[str], *, progress=None) -> list[np.ndarray]:
        """Each text's :meth:`token_rows` (what ``rerank-maxsim`` scores with)."""
        return [self.token_rows(t) for t in texts]

    @property
    def stamp(self):
        from ragdiag.index.encoder.protocols import EncoderStamp

        return EncoderStamp(model="FAKE-bag-of-words", weights_sha256="0" * 64, dim=self.dim,
                            max_seq_length=self.max_seq_length, pooling="none", normalize=True, precision="fp32")


def fake_encoder(model=None, **_options) -> FakeEncoder:
    """The ``RAGDIAG_ENCODER`` factory: a :class:`FakeEncoder` (``model`` must be None: there is only one)."""
    if model is not None:
        raise ValueError(f"the FAKE encoder takes no model, got {model!r}")
    return FakeEncoder(dim=1024)


class HashEncoder:
    """A FAKE encoder for the store's plumbing tests only: a pseudo-random unit vector per text, no meaning.

    Each text's vector is SHAKE-256 of (weights tag, precision, text) read as
    uniform numbers, centred and normalised: deterministic across processes,
    and different for a different "model" or precision. ``encoded`` counts
    texts encoded, ``calls`` counts ``encode`` calls.
    """

    def __init__(self, dim: int = 16, *, precision: str = "fp32", weights: str = "fake-weights-1",
                 model: str = "fake/hash-encoder", max_seq_length: int = 64):
        from ragdiag.index.encoder.protocols import EncoderStamp

        self.stamp = EncoderStamp(model=model, weights_sha256=hashlib.sha256(weights.encode()).hexdigest(), dim=dim,
                                  max_seq_length=max_seq_length, pooling="mean", normalize=True, precision=precision)
        self.encoded = 0
        self.calls = 0

    def vector(self, text: str) -> np.ndarray:
        key = f"{self.stamp.weights_sha256}\0{self.stamp.precision}\0{text}".encode()
        raw = np.frombuffer(hashlib.shake_256(key).digest(4 * self.stamp.dim), dtype="<u4")
        v = raw / 2.0**32 - 0.5
        return (v / np.linalg.norm(v)).astype(np.float32)

    def encode(self, texts: Sequence[str], *, progress=None) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.stamp.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = self.vector(t)
            if progress is not None and ((i + 1) % 64 == 0 or i + 1 == len(texts)):
                progress(i + 1, len(texts))
        self.encoded += len(texts)
        return out


def BagOfWords():  # noqa: N802 - reads as the class it stood for
    """The FAKE encoder with a window wide enough that nothing is truncated."""
    return FakeEncoder(max_seq_length=10_000, dim=4096)


class AxisEncoder:
    """FAKE encoder for plumbing tests only: the text "a" maps to (1, 0), "b" to (0.6, 0.8), anything else to (0, 1)."""

    stamp = {"model": "FAKE-axis", "dim": 2}

    def encode(self, texts, *, progress=None):
        table = {"a": [1.0, 0.0], "b": [0.6, 0.8]}
        return np.array([table.get(t, [0.0, 1.0]) for t in texts], dtype=np.float32)


class LengthEncoder:
    """FAKE encoder for plumbing tests only: a unit vector from the text's length (vectorised, no model: the monitor's
    streaming test embeds 300,000 log lines with it)."""

    stamp = {"model": "FAKE-hash", "dim": 4}

    def encode(self, texts, *, progress=None):
        n = np.array([len(t) for t in texts], dtype=np.float64)
        v = np.stack([np.cos(n), np.sin(n), np.cos(n / 7), np.sin(n / 7)], axis=1)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


class FakeSnapEncoder(HashEncoder):
    """The FAKE hash encoder plus the tokenizer hash a snapshot stamps (plumbing tests only)."""

    tokenizer_sha256 = "f" * 64


class DyingEncoder(HashEncoder):
    """The FAKE hash encoder whose process dies on every ``encode`` (plumbing tests of a crashing Ray actor only)."""

    def encode(self, texts, *, progress=None):
        os._exit(17)
