"""tokenize_corpus (ASCII runs split in numpy and Arrow) gives exactly the tokens of tokenize, text by text.

The oracle is :func:`ragdiag.retrieval.bm25.tokenize` applied to each text
(:func:`~ragdiag.retrieval.bm25._tokenize_corpus_per_text`, the former
implementation): the same token ids, row offsets and vocabulary (ids in order
of first appearance), for texts of every script the tokenizer handles and
ASCII and non-ASCII texts mixed, across block boundaries.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.retrieval import bm25
from ragdiag.retrieval.bm25 import _tokenize_corpus_per_text, tokenize, tokenize_corpus

# Characters of every script ragdiag tokenizes differently: ASCII words and separators, Latin with
# accents and ligatures (NFKC, casefold: ß -> ss), Greek with tonos, Cyrillic, Arabic, Hebrew, Devanagari
# with vowel signs (combining marks), the unspaced scripts made bigrams (Han, Hiragana, Katakana, Thai, Lao,
# Khmer, Myanmar), Hangul, full-width forms (NFKC), underscores, digits, combining marks alone, whitespace.
ALPHABETS = [
    "abcXYZ019 _-.,'\n\t",
    "àéîõüÅßẞﬁæ",
    "άέήίόύώϊϋΐΰΑΣσς",
    "привет МИР",
    "مرحبا عالم",
    "שלום עולם",
    "नमस्ते दुनिया",
    "机器学习中文字",
    "ひらがなカタカナ",
    "แมวกินปลา",
    "ພາສາລາວ",
    "ភាសាខ្មែរ",
    "မြန်မာစာ",
    "한국어 문장",
    "ＡＢＣ１２３",
    "\u0301\u0308\u200b\u00a0",
]

ascii_text = st.text(alphabet=ALPHABETS[0], max_size=40)
any_text = st.text(alphabet=st.sampled_from("".join(ALPHABETS)), max_size=40)
corpus = st.lists(st.one_of(ascii_text, any_text, st.sampled_from(["", " ", "Ridge ridge RIDGE"])), max_size=30)


def as_tuple(t):
    return t.ids.tolist(), t.indptr.tolist(), list(t.vocab.items())


def check(texts) -> None:
    got = tokenize_corpus(texts)
    assert as_tuple(got) == as_tuple(_tokenize_corpus_per_text(texts))
    words = list(got.vocab)
    for i, text in enumerate(texts):  # and each row reads back as tokenize(text)
        assert [words[j] for j in got.ids[got.indptr[i]:got.indptr[i + 1]]] == tokenize(text)
    assert got.ids.dtype == np.int32 and got.indptr.dtype == np.int64


@contextlib.contextmanager
def sizes(block: int, min_run: int):
    """Blocks of ``block`` texts, ASCII runs split at once from ``min_run`` texts (small: every path taken)."""
    old = bm25._BLOCK, bm25._MIN_RUN
    bm25._BLOCK, bm25._MIN_RUN = block, min_run
    try:
        yield
    finally:
        bm25._BLOCK, bm25._MIN_RUN = old


@pytest.mark.parametrize("min_run", [1, 32])
@pytest.mark.parametrize("texts", [
    [], [""], ["ab", ""], ["", "a", ""], ["ab", "cd"], ["x.", "y"], ["A1b2 C", "", "  ", "q"],
    ["a", "ä", "b"], ["Die GRÖSSE der Straße", "机器学习", "the machine"], ["l1_ratio=0.15", "SGDClassifier's"],
    ["Ridge", "ridge"] * 40,
])
def test_table(texts, min_run):
    with sizes(bm25._BLOCK, min_run):
        check(texts)


@settings(max_examples=300, deadline=None)
@given(corpus)
def test_same_tokens_as_tokenize_text_by_text(texts):
    with sizes(bm25._BLOCK, 1):
        check(texts)


@settings(max_examples=100, deadline=None)
@given(corpus)
def test_same_across_block_boundaries(texts):
    with sizes(3, 1):  # the vocabulary is carried from block to block
        check(texts)
