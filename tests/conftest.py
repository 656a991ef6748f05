"""Shared fixtures: the bundled corpus and its ground truth, the real encoder, a fake tokenizer."""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import pytest

from ragdiag.corpus import DEFAULT_CORPUS, Corpus, load_corpus
from ragdiag.truth import GroundTruth, load_truth

BUNDLED_TRUTH = DEFAULT_CORPUS.parent / "sklearn-user-guide.truth.json"

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


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    """The bundled scikit-learn user guide, loaded once per session."""
    return load_corpus(DEFAULT_CORPUS)


@pytest.fixture(scope="session")
def truth(corpus) -> GroundTruth:
    """The bundled ground truth, validated against the bundled corpus."""
    return load_truth(BUNDLED_TRUTH, corpus)


@pytest.fixture(scope="session")
def encoder():
    """The real all-MiniLM-L6-v2 encoder (loaded once; skipped when the weights are not installed)."""
    from ragdiag.encoder import Encoder, ModelUnavailable

    try:
        return Encoder()
    except ModelUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def fake_tokenizer():
    """The :class:`FakeTokenizer` class (call it with ``max_seq_length=...``)."""
    return FakeTokenizer
