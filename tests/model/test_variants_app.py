"""The Variants page, headless, on the dashboard tests' tiny corpus: its numbers equal the library's."""

from __future__ import annotations

import pytest

from apptest import app, frame_with, texts, tiny  # noqa: F401 - fixtures and helpers shared with the app tests

pytestmark = pytest.mark.model


def test_variants_page_equals_library(tiny):  # noqa: F811
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.core.defaults import PRIMARY_K
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.index.store import Store
    from ragdiag.documents.truth import load_truth
    from ragdiag.analyses.variants import variant_rows
    from ui.state import _encoder

    at = app("app_pages/variants.py", vstrategy="E", vkinds=["dense-int8", "dense-binary", "dense-binary-rescore"])
    frame = frame_with(at, "variant")
    corpus = load_corpus(tiny["root"])
    truth = load_truth(tiny["truth"], corpus)
    with Store(tiny["cache"]) as store:  # the same evaluate path the page's shared job runs
        ev = evaluate(corpus, truth, encoder=_encoder(), store=store, strategies="E",
                      retrievers="dense,dense-int8,dense-binary,dense-binary-rescore")
    rows = {r.config: r for r in variant_rows(ev, "E")}
    assert set(frame["variant"]) == set(rows) == {"E/dense", "E/dense-int8", "E/dense-binary", "E/dense-binary-rescore"}
    for _, shown in frame.iterrows():
        lib = rows[shown["variant"]]
        r = lib.recall
        want = f"{100 * r.estimate:.0f}% ({100 * r.low:.0f}–{100 * r.high:.0f})"
        if f"R@{PRIMARY_K} (queries)" in frame:
            assert shown[f"R@{PRIMARY_K} (queries)"] == want
        else:  # the same on every row: said once in the caption
            assert want in texts(at)
        if "bytes per vector" in frame:
            assert shown["bytes per vector"] == f"{lib.bytes_per_vector:g}"
        assert shown["verdict"] == lib.status
        assert shown["adjusted p"] == ("–" if lib.p_adjusted is None else f"{lib.p_adjusted:.3g}")
        if lib.difference is not None:  # the interval the verdict was decided with
            d = lib.difference
            from ragdiag.core.words import signed_whole

            said = shown["difference to baseline (simultaneous)"]
            assert said.startswith(f"{signed_whole(100 * d['estimate'])} pts")
            assert "-0" not in said and "−0" not in said and "+0" not in said  # zero has no sign
    assert "is percentile" in texts(at) and "baseline" in set(frame["questions won / lost"])


def test_every_page_takes_variant_configurations(tiny, monkeypatch):  # noqa: F811
    monkeypatch.setenv("RAGDIAG_RETRIEVERS", "dense,dense-int8,dense-binary-rescore,dense-hnsw")
    at = app("app_pages/overview.py")
    import importlib.util

    blob = " ".join(str(j.value) for j in at.json)  # the variants' stamps
    assert "E/dense-int8" in blob and "E/dense-binary-rescore" in blob
    if importlib.util.find_spec("faiss") is not None:
        assert "E/dense-hnsw" in blob and "ef_search" in blob
    assert "E/dense-binary-rescore" in set(frame_with(at, "configuration")["configuration"])
    app("app_pages/compare.py", a="E/dense-int8", b="E/dense")
    at = app("app_pages/threshold.py", config="E/dense-binary-rescore")
    assert "minilm** cosine distances" in texts(at) and "is percentile" in texts(at)
    app("app_pages/inspector.py", config="E/dense-int8", q="q1:course")
    app("app_pages/chunking.py")
    app("app_pages/export.py")
