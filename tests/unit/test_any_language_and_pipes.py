"""Unsegmented scripts in BM25 (Thai, Lao, Khmer, Myanmar as character bigrams, like CJK) and ``eval-run -``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragdiag.retrieval.base import QueryBatch
from ragdiag.retrieval.bm25 import BM25Index, BM25Retriever, tokenize

ROOT = Path(__file__).resolve().parents[2]

# Hand-written sentences, no spaces between words, and a query that shares words but not the whole run.
DOCS = {
    "thai": ("แมวชอบกินปลาทุกวัน", "กินปลา"),          # "the cat likes to eat fish every day" / "eat fish"
    "lao": ("ແມວມັກກິນປາທຸກມື້", "ກິນປາ"),             # the same in Lao
    "khmer": ("ឆ្មាចូលចិត្តញ៉ាំត្រី", "ញ៉ាំត្រី"),             # "the cat likes to eat fish" / "eat fish"
    "myanmar": ("ကြောင်သည်ငါးစားသည်", "ငါးစား"),         # "the cat eats fish" / "eat fish"
}


@pytest.mark.parametrize("script", list(DOCS))
def test_an_unsegmented_query_finds_its_document(script):
    doc, query = DOCS[script]
    texts = [doc, "The quick brown fox jumps over the lazy dog.", "机器学习是人工智能的一个分支。"]
    index = BM25Index(texts)
    assert not index.unmatched([query]).any()  # the query shares tokens with the index
    ranking = BM25Retriever(texts).rank(QueryBatch((query,), None))[0]
    assert int(ranking.order[0]) == 0 and ranking.scores[0] > 0
    assert len(tokenize(query)) == len(query) - 1  # overlapping bigrams of code points, as for CJK


def test_mixed_text_keeps_latin_words_whole():
    assert tokenize("BM25 ใช้ได้") == ["bm25", "ใช", "ช้", "้ไ", "ได", "ด้"]


def test_eval_run_reads_standard_input(tiny_folder, tmp_path):
    lines = "\n".join(json.dumps({"query_id": q, "hits": [{"text": "nothing here"}]}) for q in ("q1:course", "o1"))
    for name in ("-", "/dev/stdin"):
        done = subprocess.run([sys.executable, "-m", "ragdiag", "eval-run", name, "--corpus", str(tiny_folder),
                               "--no-cache"], input=lines.encode(), capture_output=True, cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
        assert b"ext/stdin" in done.stdout


def test_standard_input_is_bounded(tiny_folder, monkeypatch, capsys):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_MAX_RUN_BYTES", "100")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}\n" * 1000)))
    code = main(["eval-run", "-", "--corpus", str(tiny_folder), "--no-cache"])
    err = capsys.readouterr().err
    assert code == 2 and "over the limit of 100 bytes" in err and "RAGDIAG_MAX_RUN_BYTES" in err
