"""Tests for ragdiag.index.audit: plumbing with a fake tokenizer, then the real encoder on the bundled corpus."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from ragdiag.index.audit import audit_tokens, chunk_report
from ragdiag.index.chunking import STRATEGIES, Chunk, chunk_corpus, chunk_document, parse_strategies
from ragdiag.documents.corpus import make_document

# ---------------------------------------------------------------------------
# Plumbing: FakeTokenizer counts whitespace words + 2 (see conftest.py)
# ---------------------------------------------------------------------------

TEXT = "one two three\n\nfour five six seven\n\nx\n\na b c d e f"
#       0-13            15-34                   36-37  39-50


def _chunk(i, start, end, header=None):
    content = TEXT[start:end]
    embed = f"[{header}]\n{content}" if header else content
    return Chunk(f"T:d:{i:04d}", "d", "", header or "d", start, end, content, embed)


CHUNKS = [
    _chunk(0, 0, 13),  # "one two three": 3 words
    _chunk(1, 15, 34, "T > S"),  # "[T > S]\nfour five six seven": 3 header words + 4 words
    _chunk(2, 36, 37, "A long title > B"),  # "[A long title > B]\nx": 5 header words + 1 word
    _chunk(3, 39, 50),  # "a b c d e f": 6 words
]


def test_fake_tokenizer_is_what_it_says(fake_tokenizer):
    tok = fake_tokenizer(max_seq_length=6)
    assert tok.count_tokens(["hello world", "", "a\tb\nc"]).tolist() == [4, 2, 5]
    # 4 words fit (6 - 2 specials); "a b c d e" is read up to the end of "d" (offset 7)
    assert tok.window_ends(["a b c d", "a b c d e"]).tolist() == [7, 7]
    assert tok.window_ends(["a b c d e "]).tolist() == [7]


def test_audit_hand_computed(fake_tokenizer):
    audit = audit_tokens(CHUNKS, fake_tokenizer(max_seq_length=6))
    # tokens = words of embed_text + 2
    assert audit.tokens.tolist() == [5, 9, 8, 8]
    # header tokens = embed tokens - content tokens: 9 - 6, 8 - 3
    assert audit.header_tokens.tolist() == [0, 3, 5, 0]
    # window keeps 4 words of the embedded text:
    #  0: 3 words fit -> 13 (the end)
    #  1: 4th word "four" ends at 12 in embed_text; minus the 8-char prefix "[T > S]\n" -> 15 + 4 = 19
    #  2: 4th word ">" ends at 15, inside the 19-char prefix -> clipped to the chunk start 36
    #  3: 4th word "d" ends at 7 -> 39 + 7 = 46
    assert audit.window_end.tolist() == [13, 19, 36, 46]
    assert audit.chars_lost.tolist() == [0, 15, 1, 4]
    assert audit.n_chunks == 4
    assert audit.total_tokens == 30
    assert audit.total_header_tokens == 8
    assert audit.header_share == pytest.approx(8 / 30)
    assert audit.truncated == 3  # 9, 8, 8 > 6
    assert audit.total_chars_lost == 20
    assert audit.max_seq_length == 6


def test_audit_nothing_lost_when_everything_fits(fake_tokenizer):
    audit = audit_tokens(CHUNKS, fake_tokenizer(max_seq_length=9))
    assert audit.truncated == 0
    assert audit.window_end.tolist() == [c.end for c in CHUNKS]
    assert audit.total_chars_lost == 0


def test_audit_of_no_chunks(fake_tokenizer):
    audit = audit_tokens([], fake_tokenizer())
    assert (audit.n_chunks, audit.total_tokens, audit.header_share, audit.truncated, audit.total_chars_lost) == (
        0,
        0,
        0.0,
        0,
        0,
    )


CATS = "# Cats\n\nCats purr. They nap a lot.\n\n## Food\n\nFish is good. Milk is not.\n"


def test_chunk_report_row(fake_tokenizer):
    # C at size 20: "# Cats\n\nCats purr." [0,18) "They nap a lot." [19,34) "## Food" [36,43)
    # "Fish is good." [45,58) "Milk is not." [59,71): sizes 18+15+7+13+12 = 65, mean 13.0
    # fake tokens 6+6+4+5+5 = 26; with a window of 5, the two 6-token chunks are cut after
    # their 3rd word: "Cats" ends at 12 (6 lost of 18), "a" ends at 19+10 = 29 (5 lost of 15)
    strategy = replace(STRATEGIES["C"], size=20)
    chunks = chunk_document(make_document("cats", CATS), strategy)
    needles = [("q1", "cats", 8, 34), ("q2", "cats", 19, 34)]  # q1 spans two sentences of one paragraph
    report = chunk_report(strategy, chunks, needles, fake_tokenizer(max_seq_length=5))
    assert [d.question_id for d in report.destroyed] == ["q1"]
    assert report.destroyed[0].cuts == (18, 19)
    assert report.audit.window_end.tolist() == [12, 29, 43, 58, 71]
    assert report.row() == {
        "strategy": "C",
        "description": "boundaries",
        "chunks": 5,
        "mean_chars": 13.0,
        "destroyed": 1,
        "embedded_tokens": 26,
        "tokens_per_chunk": 5.2,
        "header_tokens": 0,
        "header_share": 0.0,
        "truncated": 2,
        "chars_lost": 11,
    }


def test_header_tokens_add_up(fake_tokenizer):
    # Same cuts with and without the header: E's tokens are C's plus the header lines.
    # Headers "[Cats]" (1 word) on two chunks, "[Cats > Food]" (3 words) on three: 1+1+3+3+3 = 11.
    doc = make_document("cats", CATS)
    tok = fake_tokenizer()
    c = audit_tokens(chunk_document(doc, replace(STRATEGIES["C"], size=20)), tok)
    e = audit_tokens(chunk_document(doc, replace(STRATEGIES["E"], size=20)), tok)
    assert e.header_tokens.tolist() == [1, 1, 3, 3, 3]
    assert e.total_tokens == c.total_tokens + e.total_header_tokens == 26 + 11


# ---------------------------------------------------------------------------
# The real encoder
# ---------------------------------------------------------------------------


@pytest.mark.model
def test_real_count_tokens(encoder):
    # [CLS] hello world [SEP]
    assert encoder.count_tokens(["hello world"]).tolist() == [4]
    assert encoder.count_tokens([]).tolist() == []
    assert encoder.max_seq_length == 256


@pytest.mark.model
@pytest.mark.parametrize(("name", "header_tokens", "window_end"), [("C", 0, 1523), ("E", 3, 1505)])
def test_real_window_end_of_a_long_chunk(encoder, name, header_tokens, window_end):
    # 600 x "hello" (one wordpiece each); word k ends at offset 6k - 1, the chunk at 3599.
    # The window keeps 256 - 2 = 254 wordpieces: 254 hellos (C), or "[", "d", "]" + 251 hellos (E).
    doc = make_document("d", " ".join(["hello"] * 600))
    (chunk,) = chunk_document(doc, replace(STRATEGIES[name], size=5000))
    audit = audit_tokens([chunk], encoder)
    assert audit.tokens.tolist() == [602 + header_tokens]
    assert audit.header_tokens.tolist() == [header_tokens]
    assert audit.truncated == 1
    assert audit.window_end.tolist() == [window_end]
    assert window_end < chunk.end == 3599
    assert audit.chars_lost.tolist() == [3599 - window_end]


@pytest.fixture(scope="module")
def reports(corpus, truth, encoder):
    return {
        name: chunk_report(s, chunk_corpus(corpus, s), truth.needles(), encoder) for name, s in ((x.name, x) for x in parse_strategies(None))
    }


@pytest.mark.model
def test_bundled_corpus_audit(reports):
    a, b, c, d, e, f = (reports[n] for n in "ABCDEF")
    assert len(a.chunks) == len(b.chunks)
    assert len(c.chunks) == len(d.chunks) == len(e.chunks) == len(f.chunks)
    for r in (a, b, c, d):
        assert r.audit.header_share == 0.0 and r.audit.total_header_tokens == 0
    for r in (e, f):
        assert r.audit.header_share > 0
        assert (r.audit.header_tokens > 0).all()  # every chunk carries a header
    # the header is the only difference between C and E (and between D and F)
    assert e.audit.total_tokens == c.audit.total_tokens + e.audit.total_header_tokens
    assert f.audit.total_tokens == d.audit.total_tokens + f.audit.total_header_tokens
    # overlap only ever saves needles, and only those it can: B saves every needle up to 64 characters
    for base, over in ((a, b), (c, d), (e, f)):
        assert {x.question_id for x in over.destroyed} <= {x.question_id for x in base.destroyed}
    assert all(x.end - x.start > STRATEGIES["B"].overlap_chars for x in b.destroyed)
    assert a.destroyed, "blind 512 should cut at least one bundled needle"
    for r in reports.values():
        assert all(x.cuts for x in r.destroyed)


@pytest.mark.model
@pytest.mark.parametrize("name", "ABCDEF")
def test_bundled_truncation_is_consistent(reports, name):
    r = reports[name]
    ends = np.array([c.end for c in r.chunks])
    starts = np.array([c.start for c in r.chunks])
    over = r.audit.tokens > 256
    assert r.audit.truncated == int(over.sum())
    assert (r.audit.window_end[over] < ends[over]).all()
    assert (r.audit.window_end[~over] == ends[~over]).all()
    assert (r.audit.chars_lost == ends - r.audit.window_end).all()
    assert ((starts <= r.audit.window_end) & (r.audit.window_end <= ends)).all()
