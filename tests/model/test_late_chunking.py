"""Late chunking: a chunk alone in its window gets its plain vector, a chunk with context another one, its
citation quotes only its own text, and the store keeps late vectors apart from plain ones."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.core.gate import Gate
from ragdiag.documents.corpus import Corpus, make_document
from ragdiag.index.chunking import STRATEGIES, Chunk, chunk_corpus, register_strategy
from ragdiag.index.citations import Answer, cite
from ragdiag.index.late import METHOD, late_embed, pack_windows, with_late


def chunk(i: int, doc: str, text: str) -> Chunk:
    return Chunk(f"{doc}:{i}", doc, "s", "", 10 * i, 10 * i + len(text), text, text)


# (wordpieces per chunk, documents, room) -> windows' members
PACKING = [
    ([3, 3, 3], "ddd", 6, [(0, 1), (2,)]),
    ([3, 3, 3], "ddd", 9, [(0, 1, 2)]),
    ([3, 3, 3], "dde", 9, [(0, 1), (2,)]),  # never across documents
    ([7, 1, 1], "ddd", 5, [(0,), (1, 2)]),  # a chunk over the room is a window alone
    ([2, 5, 2], "ddd", 5, [(0,), (1,), (2,)]),
    ([1], "d", 1, [(0,)]),
]


@pytest.mark.parametrize("counts, docs, room, expected", PACKING)
def test_windows_pack_whole_chunks_in_order(counts, docs, room, expected):
    chunks = [chunk(i, d, f"text {i}") for i, d in enumerate(docs)]
    windows = pack_windows(chunks, counts, room)
    assert [w.members for w in windows] == expected
    for w in windows:
        assert len({chunks[i].doc_id for i in w.members}) == 1
        for (s, e), i in zip(w.spans, w.members):
            assert w.text[s:e] == chunks[i].embed_text


def test_packing_refuses_bad_arguments():
    with pytest.raises(ValueError, match="room"):
        pack_windows([chunk(0, "d", "a")], [1], 0)
    with pytest.raises(ValueError, match="counts"):
        pack_windows([chunk(0, "d", "a")], [1, 2], 5)


def test_keys_depend_on_the_context_and_the_span():
    a, b, c = chunk(0, "d", "alpha"), chunk(1, "d", "beta"), chunk(2, "d", "gamma")
    w1, = pack_windows([a, b], [1, 1], 4)
    w2, = pack_windows([a, c], [1, 1], 4)
    assert w1.key(0) != w2.key(0)  # the same chunk text, another context
    assert w1.key(0) != w1.key(1)


def test_the_strategy_stamps_late_chunking_and_keeps_the_builtin_stamps():
    late = with_late(STRATEGIES["E"])
    assert late.name == "E+LATE" and late.params()["late"] is True
    assert "late" not in STRATEGIES["E"].params()
    with pytest.raises(ValueError, match="already"):
        with_late(late)


def test_a_sentence_encoder_without_wordpieces_is_refused(corpus):
    from fakes import FakeEncoder

    with pytest.raises(ValueError, match="wordpiece vectors"):
        late_embed(FakeEncoder(), chunk_corpus(corpus, STRATEGIES["E"])[:3])


def test_a_citation_under_late_chunking_quotes_only_the_chunks_text(corpus):
    late = register_strategy(with_late(STRATEGIES["E"]), replace=True)
    plain, ctx = chunk_corpus(corpus, STRATEGIES["E"]), chunk_corpus(corpus, late)
    assert [(c.doc_id, c.start, c.end, c.content, c.embed_text) for c in plain] == \
           [(c.doc_id, c.start, c.end, c.content, c.embed_text) for c in ctx]
    docs = {d.id: d for d in corpus.documents}
    answer = cite("when is the kernel cache size important?", [(c, 0.1) for c in ctx[:4]], corpus, Gate())
    assert isinstance(answer, Answer)
    for cit, c in zip(answer.citations, ctx[:4]):
        assert cit.quote == c.content == docs[c.doc_id].text[c.start:c.end]


# ----- the real model ------------------------------------------------------------------------------------------

def _doc_chunks(n_words: list[int]) -> tuple[Corpus, list[Chunk]]:
    words = "kernel margin support vector classifier penalty gamma feature scaling solver".split()
    parts = [" ".join(words[(i + j) % len(words)] for j in range(n)) + "." for i, n in enumerate(n_words)]
    text = "\n\n".join(parts)
    doc = make_document("d", text, path="d.md")
    chunks, at = [], 0
    for i, p in enumerate(parts):
        s = text.index(p, at)
        chunks.append(Chunk(f"d:{i}", "d", "s", "[D > s]", s, s + len(p), p, f"[D > s]\n{p}"))
        at = s + len(p)
    return Corpus(root="d", documents=(doc,), name="d"), chunks


@pytest.mark.model
def test_a_chunk_that_fills_its_window_gets_its_plain_vector(encoder):
    # 300 words: over the 254 wordpieces of the window; alone in it, truncated as plain embedding truncates it
    _, chunks = _doc_chunks([300, 20, 300])
    vectors, computed = late_embed(encoder, chunks)
    assert computed == 3
    plain = encoder.encode([c.embed_text for c in chunks])
    np.testing.assert_allclose(vectors, plain, atol=1e-5)  # every chunk is alone in its window here
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    # the oracle: sentence-transformers' own pooling and normalisation of the same model
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(encoder.folder), device="cpu", local_files_only=True)
    np.testing.assert_allclose(vectors, st.encode([c.embed_text for c in chunks], normalize_embeddings=True),
                               atol=1e-5)


@pytest.mark.model
def test_chunks_read_with_context_differ_from_plain(encoder):
    _, chunks = _doc_chunks([30, 30, 30, 200])
    vectors, _ = late_embed(encoder, chunks)
    plain = encoder.encode([c.embed_text for c in chunks])
    cos = np.einsum("ij,ij->i", vectors, plain)
    assert (cos[:3] < 1 - 1e-4).all()  # the first three share a window: each carries the others' context
    assert cos[3] == pytest.approx(1, abs=1e-5)  # the long one is alone: its plain vector
    assert (cos[:3] > 0.5).all()  # still mostly the chunk's own meaning


@pytest.mark.model
def test_the_store_keeps_late_vectors_apart_and_reuses_them(tmp_path, encoder):
    from ragdiag.index.store import Store

    _, chunks = _doc_chunks([30, 30, 30])
    with Store(tmp_path) as store:
        plain = store.embed(encoder, [c.embed_text for c in chunks]).vectors
        first, computed = late_embed(encoder, chunks, store=store)
        again, recomputed = late_embed(encoder, chunks, store=store)
        served = store.embed(encoder, [c.embed_text for c in chunks])
    assert computed == 3 and recomputed == 0
    np.testing.assert_array_equal(first, again)
    assert served.computed == 0  # the plain vectors are still served as they were
    np.testing.assert_array_equal(served.vectors, plain)
    assert "late chunking" in METHOD


@pytest.mark.model
def test_late_chunking_runs_on_the_bundled_corpus(corpus, encoder):
    late = register_strategy(with_late(STRATEGIES["E"]), replace=True)
    docs = tuple(d for d in corpus.documents if d.id in {"naive_bayes", "kernel_approximation"})
    small = Corpus(root=corpus.root, documents=docs, name=corpus.name)
    from ragdiag.documents.truth import GroundTruth
    from ragdiag.evaluation.evaluate import build_index

    index = build_index(small, GroundTruth((), ()), late, encoder)  # the evaluation's path for E+LATE
    chunks, vectors = index.chunks, index.vectors
    assert index.embedded == len(chunks) and vectors.shape == (len(chunks), encoder.dim)
    assert len(chunks) == len(chunk_corpus(small, STRATEGIES["E"]))
    plain = encoder.encode([c.embed_text for c in chunks])
    cos = np.einsum("ij,ij->i", vectors, plain)
    assert (cos < 1 - 1e-4).mean() > 0.5  # most E chunks share a window with a neighbour
    assert np.isfinite(vectors).all()


@pytest.mark.parametrize("argv, message", [
    (["--late"], "--late needs --ledger and a named baseline"),
    (["--late", "--ledger", "--baseline", "E"], "--late: late chunking needs the wordpiece vectors"),
])
def test_cli_late_errors_are_one_line(monkeypatch, capsys, argv, message):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")  # a sentence encoder: no wordpiece vectors
    monkeypatch.delenv("RAGDIAG_BASELINE", raising=False)
    assert main(["chunking", "--no-cache", "--strategies", "E", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
