"""Imported context prefixes: 20 hand-written prefixes change those chunks' vectors and nothing else,
the store reuses every other vector, and a citation quotes only the chunk's own text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragdiag.core.gate import Gate
from ragdiag.index.chunking import STRATEGIES, chunk_corpus, destroyed_needles, register_strategy
from ragdiag.index.citations import Answer, cite
from ragdiag.index.prefixes import load_prefixes, parse_prefixes, unmatched, with_prefixes
from ragdiag.index.store import Store

from fakes import FakeEncoder, HashEncoder

FIXTURE = Path(__file__).parents[1] / "fixtures" / "prefixes-e.jsonl"


@pytest.fixture(scope="module")
def prefixed(corpus):
    """Strategy E with the fixture's 20 hand-written prefixes (registered as E+P)."""
    return register_strategy(with_prefixes(STRATEGIES["E"], load_prefixes(FIXTURE, corpus)), replace=True)


def test_the_fixture_names_twenty_chunks_of_e(corpus, prefixed):
    assert len(prefixed.prefixes) == 20 and prefixed.name == "E+P"
    assert unmatched(prefixed.prefixes, corpus=corpus, strategy=prefixed) == []
    assert "prefixes" not in STRATEGIES["E"].params()  # the built-in stamps are unchanged
    assert prefixed.params()["prefixes"] == 20 and prefixed.params()["name"] == "E+P"


def test_only_the_prefixed_chunks_embed_differently(corpus, truth, prefixed):
    plain, ctx = chunk_corpus(corpus, STRATEGIES["E"]), chunk_corpus(corpus, prefixed)
    assert [(c.doc_id, c.start, c.end, c.content, c.header) for c in plain] == \
           [(c.doc_id, c.start, c.end, c.content, c.header) for c in ctx]
    spans = {(d, s, e): p for d, s, e, p in prefixed.prefixes}
    changed = [i for i, (a, b) in enumerate(zip(plain, ctx)) if a.embed_text != b.embed_text]
    assert len(changed) == 20
    for i in changed:
        p = spans[(ctx[i].doc_id, ctx[i].start, ctx[i].end)]
        assert ctx[i].embed_text == f"{p}\n{plain[i].embed_text}"  # prefix, then E's header line, then the text
    # destroyed stays "no chunk holds the needle whole": a prefix adds no text to a chunk
    needles = [(q.id, q.doc_id, q.start, q.end) for q in truth.questions]
    assert destroyed_needles(ctx, needles) == destroyed_needles(plain, needles)


def test_the_store_reuses_every_other_vector(tmp_path, corpus, prefixed):
    enc = HashEncoder()
    plain = [c.embed_text for c in chunk_corpus(corpus, STRATEGIES["E"])]
    ctx = [c.embed_text for c in chunk_corpus(corpus, prefixed)]
    with Store(tmp_path) as store:
        first = store.embed(enc, plain)
        second = store.embed(enc, ctx)
    assert second.computed == 20 and second.reused == len(set(ctx)) - 20
    differ = np.flatnonzero(np.any(first.vectors != second.vectors, axis=1))
    assert differ.tolist() == [i for i, (a, b) in enumerate(zip(plain, ctx)) if a != b]


def test_an_evaluation_embeds_only_the_twenty(tmp_path, corpus, truth, prefixed):
    from ragdiag.evaluation.evaluate import evaluate

    enc = FakeEncoder(dim=1024)
    with Store(tmp_path) as store:
        evaluate(corpus, truth, encoder=enc, strategies="E", retrievers="dense", store=store)
        ev = evaluate(corpus, truth, encoder=enc, strategies="E,E+P", retrievers="dense", store=store)
    assert ev.indexes["E"].embedded == 0 and ev.indexes["E+P"].embedded == 20
    a, b = ev.indexes["E"].vectors, ev.indexes["E+P"].vectors
    assert int(np.any(a != b, axis=1).sum()) == 20


def test_a_citation_under_a_prefix_quotes_only_the_chunks_text(corpus, prefixed):
    chunks = [c for c in chunk_corpus(corpus, prefixed) if c.embed_text.split("\n", 1)[0] in
              {p for *_, p in prefixed.prefixes}]
    assert len(chunks) == 20
    answer = cite("when is the kernel cache size important?", [(c, 0.1) for c in chunks[:4]], corpus, Gate())
    assert isinstance(answer, Answer)
    for cit, chunk in zip(answer.citations, chunks):
        prefix = chunk.embed_text.split("\n", 1)[0]
        assert cit.quote == corpus.document(chunk.doc_id).text[chunk.start:chunk.end] == chunk.content
        assert prefix not in cit.quote and prefix not in answer.prompt


@pytest.mark.parametrize("line, message", [
    ("not json", "line 1: not JSON"),
    ('["svm", 0, 10, "p"]', "expected an object"),
    ('{"doc": "nope", "start": 0, "end": 5, "prefix": "p"}', "unknown document 'nope'"),
    ('{"doc": "svm", "start": 5, "end": 5, "prefix": "p"}', "0 <= start < end"),
    ('{"doc": "svm", "start": 0, "end": 99999999, "prefix": "p"}', "0 <= start < end"),
    ('{"doc": "svm", "start": 0.5, "end": 9, "prefix": "p"}', "whole numbers"),
    ('{"doc": "svm", "start": 0, "end": 9, "prefix": "  "}', "non-empty"),
    ('{"doc": "svm", "start": 0, "end": 9, "prefix": "' + "x" * 2001 + '"}', "over 2000"),
])
def test_a_bad_line_is_refused_with_its_number(corpus, line, message):
    with pytest.raises(ValueError, match=message):
        parse_prefixes([line], corpus)


def test_two_different_prefixes_for_one_span_are_refused(corpus):
    a = '{"doc": "svm", "start": 0, "end": 9, "prefix": "one"}'
    b = '{"doc": "svm", "start": 0, "end": 9, "prefix": "two"}'
    assert parse_prefixes([a, a], corpus) == (("svm", 0, 9, "one"),)
    with pytest.raises(ValueError, match="line 2: a second, different prefix"):
        parse_prefixes([a, b], corpus)


def test_cli_ledger_has_a_row_for_the_imported_prefixes(monkeypatch, capsys):
    import json

    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    assert main(["chunking", "--ledger", "--baseline", "E", "--retriever", "dense", "--strategies", "E",
                 "--prefixes", str(FIXTURE), "--no-cache", "--no-cost", "--json", "--expand", "none"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["config"] for r in rows] == ["E/dense", "E+P/dense"]
    assert rows[1]["method"] == "boundaries + header + imported prefixes (20)"
    capsys.readouterr()
    assert main(["chunking", "--ledger", "--baseline", "A", "--retriever", "dense", "--strategies", "A",
                 "--prefixes", str(FIXTURE), "--no-cache"]) == 2  # written for E's spans: blind cuts hold none
    assert "none of the 20 prefixes is at the span of a chunk of strategy A" in capsys.readouterr().err
