"""Vector database adapters: hits mapped back to the corpus, and real Chroma / Qdrant instances.

The database tests build real embedded instances (Chroma persistent, Qdrant
local mode) from ragdiag's own chunk vectors and check that evaluating them
gives the same needle ranks and recall as ragdiag's dense retriever over the
same vectors. They are skipped, with the reason, when the optional packages of
requirements-vectordb.txt are not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.adapters.base import evaluate_store, map_hits, query_vectors
from ragdiag.core.defaults import KS, TOP
from ragdiag.evaluation.evaluate import evaluate
from ragdiag.analyses.summary import summary_rows
from ragdiag.evaluation.external import ExternalHit

NEED_CHROMA = "chromadb is not installed (optional: pip install -r requirements-vectordb.txt)"
NEED_QDRANT = "qdrant-client is not installed (optional: pip install -r requirements-vectordb.txt)"


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# ---------------------------------------------------------------------------
# Mapping hits back to the corpus (no database)
# ---------------------------------------------------------------------------


def test_map_hits_by_offsets_by_text_and_unmapped(tiny_corpus):
    doc = tiny_corpus.documents[0]
    start = doc.text.index("Zebras graze")
    end = start + len("Zebras graze quietly near riverbanks every single morning.")
    hits = {
        "q": [
            ExternalHit(doc.text[start:end], doc.id, start, end, 0.1),  # offsets point at the text
            ExternalHit("Zebras   graze quietly\nnear riverbanks", None, None, None, 0.2),  # text only, other spaces
            ExternalHit(doc.text[start:end], doc.id, 0, 5, 0.3),  # offsets point elsewhere: the text decides
            ExternalHit("Giraffes eat leaves.", doc.id, 0, 20, 0.4),  # nowhere in the corpus
        ]
    }
    mapped, report = map_hits(tiny_corpus, hits)
    assert (report.by_offsets, report.by_text) == (1, 2)
    assert report.unmapped == (("q", 4, "offsets point elsewhere and its text is in no document"),)
    assert mapped["q"][0].start == start and mapped["q"][2].start is None  # bad offsets dropped, never trusted
    assert "1 UNMAPPED" in report.summary() and report.total == 4


class FakeStore:
    """A FAKE store for plumbing: answers every query with the given hits."""

    name = "fake"
    distances = True

    def __init__(self, hits):
        self.hits = hits

    def search(self, vectors, k):
        return [list(self.hits)[:k] for _ in vectors]


def test_unmapped_hits_are_reported_and_a_short_answer_is_checked(tiny_corpus, tiny_truth, fake_encoder):
    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers="dense")
    qv = query_vectors(ev.queries, fake_encoder)
    res = evaluate_store(ev, FakeStore([ExternalHit("nothing of the kind", score=0.5)]), qv)
    assert len(res.mapping.unmapped) == len(ev.queries)
    assert res.config.label == "ext/fake" and res.evaluation.result("ext/fake").needle_rank.sum() == 0
    assert res.config not in ev.results  # the evaluation given is left as it was

    class Short(FakeStore):
        def search(self, vectors, k):
            return [[]]

    with pytest.raises(ValueError, match="returned 1 answers"):
        evaluate_store(ev, Short([]), qv)
    with pytest.raises(ValueError, match="one query vector per query"):
        evaluate_store(ev, FakeStore([]), qv[:2])


# ---------------------------------------------------------------------------
# Real databases
# ---------------------------------------------------------------------------


def _build_chroma(tmp_path, index):
    from ragdiag.adapters import ChromaAdapter

    ChromaAdapter.build(tmp_path / "chroma", index.chunks, index.vectors, "kbase", offsets=True)
    return ChromaAdapter(tmp_path / "chroma", "kbase")


def _build_qdrant(tmp_path, index):
    from ragdiag.adapters import QdrantAdapter

    # No offsets stored: every hit is mapped by its text.
    QdrantAdapter.build(index.chunks, index.vectors, "kb", path=tmp_path / "qdrant", offsets=False)
    return QdrantAdapter("kb", path=tmp_path / "qdrant")


BUILDERS = [
    pytest.param(_build_chroma, "by_offsets", marks=pytest.mark.skipif(not _installed("chromadb"), reason=NEED_CHROMA),
                 id="chroma"),
    pytest.param(_build_qdrant, "by_text", marks=pytest.mark.skipif(not _installed("qdrant_client"), reason=NEED_QDRANT),
                 id="qdrant"),
]


@pytest.mark.parametrize("build, mapped_by", BUILDERS)
def test_real_database_tiny_corpus(build, mapped_by, tmp_path, tiny_corpus, tiny_truth, fake_encoder):
    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers="dense")
    adapter = build(tmp_path, ev.indexes["C"])
    res = evaluate_store(ev, adapter, query_vectors(ev.queries, fake_encoder))
    ev = res.evaluation
    n_hits = len(ev.queries) * len(ev.indexes["C"].chunks)
    assert getattr(res.mapping, mapped_by) == n_hits and not res.mapping.unmapped
    ours, theirs = ev.result("C/dense"), ev.result(res.config)
    # The FAKE encoder gives many exact ties (zero cosines) that a database may order its own way:
    # compare where the needle's cosine is not tied with another chunk's.
    dist = np.array(ours.top_distance)
    for i in np.flatnonzero(ours.needle_rank):
        r = ours.needle_rank[i]
        if np.sum(np.isclose(dist[i], dist[i, r - 1], atol=1e-6)) == 1:
            assert theirs.needle_rank[i] == r, ev.queries[i].id
    np.testing.assert_allclose(theirs.top1_distance, ours.top1_distance, atol=1e-5)


@pytest.mark.model
@pytest.mark.parametrize("build, mapped_by", BUILDERS)
def test_real_database_bundled_corpus_same_recall_as_dense(build, mapped_by, tmp_path, corpus, truth, encoder,
                                                          bundled_store):
    """Strategy E of the bundled corpus, vectors from the store: the database's recall is ragdiag's dense recall."""
    ev = evaluate(corpus, truth, encoder=encoder, strategies="E", retrievers="dense", store=bundled_store)
    qv = query_vectors(ev.queries, encoder, bundled_store)
    adapter = build(tmp_path, ev.indexes["E"])
    res = evaluate_store(ev, adapter, qv, k=TOP)
    ev = res.evaluation
    assert not res.mapping.unmapped and getattr(res.mapping, mapped_by) == len(ev.queries) * TOP
    rows = {r.config: r for r in summary_rows(ev)}
    ours, theirs = rows["E/dense"], rows[res.config.label]
    for k in KS:
        assert theirs.recall[k].estimate == ours.recall[k].estimate, k
    a, b = ev.result("E/dense"), ev.result(res.config)
    # Every in-domain query found within the top 20 at the same rank (a rank beyond 20 is 0 for the store).
    found = (a.needle_rank > 0) & (a.needle_rank <= TOP)
    np.testing.assert_array_equal(b.needle_rank[found], a.needle_rank[found])
    np.testing.assert_allclose(b.top_distance[:, 0], a.top_distance[:, 0], atol=1e-5)


@pytest.mark.skipif(not _installed("qdrant_client"), reason=NEED_QDRANT)
def test_eval_store_command_on_a_qdrant_folder(tiny_folder, tmp_path, monkeypatch, capsys):
    """``eval-store`` end to end (FAKE encoder through RAGDIAG_ENCODER), against ragdiag's own C/dense."""
    from fakes import fake_encoder

    from ragdiag.adapters import QdrantAdapter
    from ragdiag.cli.parser import main
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import default_truth_path, load_truth

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    corpus = load_corpus(tiny_folder)
    ev = evaluate(corpus, load_truth(default_truth_path(tiny_folder), corpus), encoder=fake_encoder(),
                  strategies="C", retrievers="dense")
    QdrantAdapter.build(ev.indexes["C"].chunks, ev.indexes["C"].vectors, "tiny", path=tmp_path / "q")
    code = main(["eval-store", "--corpus", str(tiny_folder), "--no-cache", "--qdrant-path", str(tmp_path / "q"),
                 "--collection", "tiny", "--compare", "C/dense", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "ext/qdrant-tiny" in out and "C/dense" in out and "threshold sweep of ext/qdrant-tiny" in out
    assert "mapped by offsets" in err and "UNMAPPED" not in err
    assert (tmp_path / "out" / "summary.json").exists()
    assert main(["eval-store", "--corpus", str(tiny_folder), "--no-cache", "--qdrant-path", str(tmp_path / "q"),
                 "--collection", "nope"]) == 2
    assert "no Qdrant collection 'nope'" in capsys.readouterr().err
