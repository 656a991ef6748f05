"""The store's memo of derived arrays: BM25 tokens and token layouts read back equal, a damaged file recomputed."""

from __future__ import annotations

import numpy as np

from ragdiag.index.audit import audit_tokens
from ragdiag.index.chunking import STRATEGIES, chunk_corpus
from ragdiag.index.store.memo import Memo, content_key
from ragdiag.retrieval.bm25 import BM25Index, stored_tokens, tokenize_corpus


def test_tokens_are_stored_once_and_read_back_equal(tmp_path, monkeypatch):
    import ragdiag.retrieval.bm25 as bm25

    texts = ["Cat dog cat.", "cat, CAT fish", "", "bird Ünïcode 机器学习"]
    memo = Memo(tmp_path)
    first = stored_tokens(texts, memo)
    want = BM25Index(texts).scores(["cat fish", "机器"])
    calls = []
    monkeypatch.setattr(bm25, "tokenize_corpus", lambda t: calls.append(1) or tokenize_corpus(t))
    again = stored_tokens(texts, memo)
    assert calls == []  # read, not tokenised
    assert np.array_equal(first.ids, again.ids) and np.array_equal(first.indptr, again.indptr)
    assert first.vocab == again.vocab
    assert np.array_equal(BM25Index(again).scores(["cat fish", "机器"]), want)
    stored_tokens(texts[:3], memo)  # other texts: another key, tokenised
    assert calls == [1]


def test_a_damaged_file_is_recomputed(tmp_path):
    memo = Memo(tmp_path)
    key = content_key("x", ["a"])
    memo.put("k", key, {"a": np.arange(5)})
    assert memo.get("k", key)["a"].tolist() == [0, 1, 2, 3, 4]
    path = next((tmp_path / "memo" / "k").glob("*.npz"))
    np.savez(path, _crc=np.int64(12345), a=np.arange(5))  # the arrays no longer match their CRC
    assert memo.get("k", key) is None
    path.write_bytes(b"")
    assert memo.get("k", key) is None and memo.get("k", "missing") is None


def test_the_token_audit_reads_its_layout_back(corpus, fake_tokenizer, tmp_path):
    fake_tokenizer = fake_tokenizer(max_seq_length=64)

    class Layout:  # plumbing: the FAKE tokenizer's counts through token_layout, counted calls
        stamp, max_seq_length, calls = "fake", fake_tokenizer.max_seq_length, 0

        def token_layout(self, texts, prefix):
            Layout.calls += 1
            n = fake_tokenizer.count_tokens(texts)
            return n, np.minimum(prefix, n), fake_tokenizer.window_ends(texts)

    chunks = chunk_corpus(corpus, STRATEGIES["E"])[:50]
    memo = Memo(tmp_path)
    a = audit_tokens(chunks, Layout(), memo=memo)
    b = audit_tokens(chunks, Layout(), memo=memo)
    c = audit_tokens(chunks, Layout())
    assert Layout.calls == 2  # the second audit read the memo
    for x in (b, c):
        assert np.array_equal(a.tokens, x.tokens) and np.array_equal(a.window_end, x.window_end)
        assert np.array_equal(a.header_tokens, x.header_tokens)


def test_scores_read_in_one_pass_equal_one_query_at_a_time(tmp_path):
    from ragdiag.index.store import Store

    with Store(tmp_path) as store:
        cache = store.score_cache()
        cache.put("scorer-x", "q1", ["a", "b"], np.array([0.5, 0.25]))
        cache.put("scorer-x", "q2", ["b"], np.array([0.75]))
        many = cache.get_many("scorer-x", ["q1", "q2", "q3"], [["a", "b", "c"], ["b", "a"], ["a"]])
        one = [cache.get("scorer-x", q, ts) for q, ts in (("q1", ["a", "b", "c"]), ("q2", ["b", "a"]), ("q3", ["a"]))]
        # q1: a, b stored, c not; q2: b stored, a not (scores belong to the pair); q3: nothing
        assert all(np.array_equal(m, o, equal_nan=True) for m, o in zip(many, one))
        assert np.array_equal(many[0], [0.5, 0.25, np.nan], equal_nan=True)
        assert np.array_equal(many[1], [0.75, np.nan], equal_nan=True) and np.isnan(many[2]).all()
