"""The splitters teams use (strategies R, M, W, S): exact offsets, LangChain as the oracle, defaults unchanged.

Semantic chunking (S) embeds sentences with the encoder ``RAGDIAG_ENCODER``
names; here that is the FAKE bag-of-words encoder (plumbing: the offsets, not
the meaning of the cuts), set for this module only.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ragdiag.documents.corpus import load_corpus, make_document
from ragdiag.documents.truth import load_truth
from ragdiag.index import chunking
from ragdiag.index.chunking import DEFAULT_STRATEGIES, STRATEGIES, chunk_corpus, chunk_document, parse_strategies
from ragdiag.index.splitters import recursive, semantic
from ragdiag.index.splitters.semantic import breakpoints

ROOT = Path(__file__).resolve().parents[2]
NEW = ("R", "M", "W", "S")


@pytest.fixture(scope="module", autouse=True)
def fake_breakpoint_encoder():
    """Semantic breakpoints from the FAKE encoder (``tests/`` is on ``sys.path`` under pytest)."""
    old = os.environ.get("RAGDIAG_ENCODER")
    os.environ["RAGDIAG_ENCODER"] = "fakes:fake_encoder"
    yield
    if old is None:
        os.environ.pop("RAGDIAG_ENCODER", None)
    else:
        os.environ["RAGDIAG_ENCODER"] = old


def exact(corpus, chunks) -> None:
    docs = {d.id: d for d in corpus.documents}
    for c in chunks:
        assert docs[c.doc_id].text[c.start:c.end] == c.content, c.id
        assert c.embed_text == c.content  # no header: what is embedded is what is quoted
        assert c.end - c.start <= STRATEGIES[c.id.split(":")[0]].size


def test_the_default_evaluation_is_still_the_six_strategies():
    assert DEFAULT_STRATEGIES == ["A", "B", "C", "D", "E", "F"]
    assert [s.name for s in parse_strategies(None)] == list("ABCDEF")
    assert [s.name for s in parse_strategies("R,m,W,S")] == list(NEW)
    # a plugged-in algorithm is stamped by name, so its stored vectors are never another strategy's
    assert {STRATEGIES[n].params()["cuts"] for n in NEW} == {"recursive", "markdown-headers", "sentence-windows",
                                                             "semantic"}


@pytest.mark.parametrize("folder", ["data/sklearn-user-guide", "data/de-haushalt"])
@pytest.mark.parametrize("name", NEW)
def test_every_chunk_is_exactly_its_text_on_the_shipped_corpora(folder, name):
    corpus = load_corpus(ROOT / folder)
    chunks = chunk_corpus(corpus, STRATEGIES[name])
    assert chunks
    exact(corpus, chunks)


def test_every_chunk_is_exactly_its_text_on_a_beir_collection(tmp_path, corpus, truth):
    from ragdiag.documents.collections import open_collection
    from ragdiag.documents.collections.examples import make_examples

    make_examples(tmp_path, corpus, truth)
    beir = open_collection(f"beir:{tmp_path}/beir-sklearn").corpus
    for name in NEW:
        exact(beir, chunk_corpus(beir, STRATEGIES[name]))


def test_recursive_is_langchains_own_split():
    """Oracle: the chunks' texts are exactly LangChain's ``split_text`` with the stated settings."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    lc = RecursiveCharacterTextSplitter(chunk_size=512, chunk_overlap=64, separators=["\n\n", "\n", " ", ""])
    corpus = load_corpus(ROOT / "data/sklearn-user-guide")
    for doc in corpus.documents[:4]:
        assert [c.content for c in chunk_document(doc, STRATEGIES["R"])] == lc.split_text(doc.text)


def test_recursive_without_langchain_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "langchain_text_splitters", None)  # import fails as if not installed
    with pytest.raises(recursive.SplitterUnavailable, match="requirements-splitters.txt"):
        chunk_document(make_document("d", "word " * 200), STRATEGIES["R"])


def test_markdown_cuts_before_every_heading_outside_fences():
    text = "# T\n\nIntro.\n\n### Deep\n\nDeep text.\n\n```\n# not a heading\n```\n\n## S\n\nLast."
    got = [c.content for c in chunk_document(make_document("d", text), STRATEGIES["M"])]
    assert got == ["# T\n\nIntro.", "### Deep\n\nDeep text.\n\n```\n# not a heading\n```", "## S\n\nLast."]


def test_sentence_windows_hold_every_sentence_with_its_neighbours():
    text = "# T\n\nOne. Two. Three.\n\n## S\n\nFour."
    got = [c.content for c in chunk_document(make_document("d", text), STRATEGIES["W"])]
    # the section "" has units '# T', 'One.', 'Two.', 'Three.'; the section S has '## S', 'Four.'
    assert got == ["# T\n\nOne.", "# T\n\nOne. Two.", "One. Two. Three.", "Two. Three.", "## S\n\nFour."]


@pytest.mark.parametrize("vectors, percentile, cuts", [
    ([[1, 0], [1, 0], [0, 1], [0, 1]], 50, [1]),      # distances 0, 1, 0: only the middle is above the median
    ([[1, 0], [0, 1], [1, 0]], 95, []),               # distances 1, 1: none above its own 95th percentile
    ([[1, 0]], 95, []),                               # one sentence: nothing to cut
    ([[1, 0], [1, 0], [0.6, 0.8], [0, 1]], 50, [1]),  # distances 0, 0.4, 0.2: median 0.2, only 0.4 (after 1)
])
def test_semantic_breakpoints_above_the_percentile(vectors, percentile, cuts):
    assert breakpoints(np.array(vectors, dtype=float), percentile=percentile).tolist() == cuts


def test_semantic_cuts_where_the_topic_changes():
    # two topics that share no word: the FAKE encoder's distance between them is 1, within a topic below 1
    text = ("zebras graze grass. zebras graze plains. zebras graze slowly. "
            "volcanic ash falls. volcanic ash covers. volcanic ash cools.")
    got = [c.content for c in chunk_document(make_document("d", text), STRATEGIES["S"])]
    assert got == ["zebras graze grass. zebras graze plains. zebras graze slowly.",
                   "volcanic ash falls. volcanic ash covers. volcanic ash cools."]


_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta.", "end!", "why?", "x", "", "#", "##", "```", "\n",
                          "\n\n", "  ", "a.b", "-", "é", "\t"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(_WORDS, min_size=1, max_size=120), seps=st.lists(st.sampled_from([" ", "\n", "\n\n", "\n## H\n"]),
                                                                     min_size=1, max_size=120),
       size=st.integers(min_value=16, max_value=80))
def test_offsets_are_exact_for_any_text(words, seps, size):
    text = "".join(w + seps[i % len(seps)] for i, w in enumerate(words))
    assume(text.strip())
    doc = make_document("d", text)
    for name in NEW:
        strategy = chunking.Strategy(name, boundaries=True, header=False, overlap=False, size=size,
                                     cuts=STRATEGIES[name].cuts)
        chunks = chunk_document(doc, strategy)
        starts = [c.start for c in chunks]
        assert starts == sorted(starts)
        for c in chunks:
            assert doc.text[c.start:c.end] == c.content and c.content == c.content.strip() and c.content
            assert c.end - c.start <= size


def test_truth_needles_on_the_bundled_corpus(corpus, truth):
    """Sentence windows hold every bundled needle whole (each is one sentence of the corpus)."""
    from ragdiag.index.chunking import destroyed_needles

    needles = [(q.id, q.doc_id, q.start, q.end) for q in truth.questions]
    assert destroyed_needles(chunk_corpus(corpus, STRATEGIES["W"]), needles) == []


class FakeMarkerEncoder:
    """A FAKE encoder for this plumbing test only: [1, 0] for a text holding ``marker``, else [0, 1]."""

    def __init__(self, marker: str):
        self.marker = marker
        self.stamp = {"model": f"FAKE-marker-{marker}"}

    def encode(self, texts, *, progress=None):
        return np.array([[1.0, 0.0] if self.marker in t else [0.0, 1.0] for t in texts])


_TOPICS = ("zebras graze grass. zebras graze plains. zebras graze slowly. "
           "volcanic ash falls. volcanic ash covers. volcanic ash cools.")


@pytest.mark.parametrize("marker, first", [
    # each sentence is embedded with its neighbours: "grass" is in the first two of those, "covers" in the last three,
    # so the one distance of 1 (the cut) is after sentence 2 for "grass" and after sentence 3 for "covers"
    ("grass", "zebras graze grass. zebras graze plains."),
    ("covers", "zebras graze grass. zebras graze plains. zebras graze slowly."),
])
def test_semantic_breakpoints_follow_the_given_encoder(marker, first):
    doc = make_document("topics", _TOPICS)
    with semantic.breakpoint_encoder(FakeMarkerEncoder(marker)):
        got = [c.content for c in chunk_document(doc, STRATEGIES["S"])]
    assert got[0] == first and " ".join(got) == _TOPICS
    # outside the block, the default model (here the FAKE bag-of-words of RAGDIAG_ENCODER) cuts at the topic change
    assert [c.content for c in chunk_document(doc, STRATEGIES["S"])][0] == \
        "zebras graze grass. zebras graze plains. zebras graze slowly."


def test_an_index_of_s_takes_its_breakpoints_from_the_runs_encoder():
    from ragdiag.documents.corpus import Corpus
    from ragdiag.documents.truth import GroundTruth
    from ragdiag.evaluation.evaluate import build_index

    from fakes import FakeEncoder

    class FakeMarkerRunEncoder(FakeEncoder):
        """FAKE: the bag-of-words encoder's tokens, [1, 0]/[0, 1] vectors by the marker "grass"."""

        stamp = {"model": "FAKE-marker-run"}

        def encode(self, texts, *, progress=None):
            return FakeMarkerEncoder("grass").encode(texts)

    corpus = Corpus(root="t", documents=(make_document("topics", _TOPICS),), name="t")
    index = build_index(corpus, GroundTruth((), ()), STRATEGIES["S"], FakeMarkerRunEncoder())
    assert index.chunks[0].content == "zebras graze grass. zebras graze plains."


def test_a_breakpoint_encoder_must_encode():
    with pytest.raises(TypeError, match="encode"):
        with semantic.breakpoint_encoder(object()):
            pass
