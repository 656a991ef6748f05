"""Registries: a retriever and a chunking strategy defined in a test file run everywhere.

``plugin_example`` (in this folder) registers ``header-bm25`` and strategy ``P``
without editing any ragdiag file; these tests run it through the library,
``python -m ragdiag eval`` and the dashboard, with the FAKE encoder of
``fakes.py`` (plumbing: the real model is exercised elsewhere).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import plugin_example  # noqa: F401 - registers header-bm25 and strategy P
from fakes import FakeEncoder
from processes import child_pythonpath
from ragdiag.index.chunking import STRATEGIES, Strategy, chunk_corpus, parse_strategies, register_spanner
from ragdiag.evaluation.records import Config
from ragdiag.evaluation.evaluate import evaluate
from ragdiag.retrieval.base import Unavailable
from ragdiag.retrieval.registry import (RetrieverSpec, parse_retrievers, register_retriever, retriever_names,
                                        retriever_spec)

REPO = Path(__file__).resolve().parents[2]


def test_builtins_are_registered_in_order():
    assert retriever_names(default_only=True)[:5] == ("dense", "bm25", "hybrid", "rerank-maxsim", "rerank-ce")
    assert "header-bm25" in retriever_names() and "header-bm25" not in retriever_names(default_only=True)
    assert "P" not in [s.name for s in parse_strategies(None)]  # plugins are opt-in by name
    assert parse_retrievers("Header-BM25, dense") == ["header-bm25", "dense"]


@pytest.mark.parametrize("name, message", [
    ("colbert", "choose from"),
    ("bm25@mpnet", "takes no @parameter"),
])
def test_unknown_names_say_what_to_do(name, message):
    with pytest.raises(ValueError, match=message):
        retriever_spec(name)


def test_a_name_cannot_be_registered_twice_by_accident():
    with pytest.raises(ValueError, match="already registered"):
        register_retriever(RetrieverSpec("dense", build=lambda ctx: None))
    with pytest.raises(ValueError, match="upper-case"):
        from ragdiag.index.chunking import register_strategy

        register_strategy(Strategy("p2", boundaries=True, header=False, overlap=False))
    with pytest.raises(ValueError, match="unknown span algorithm"):
        Strategy("Z", boundaries=True, header=False, overlap=False, cuts="no-such-algorithm")


def test_plugin_strategy_keeps_offsets(tiny_corpus):
    chunks = chunk_corpus(tiny_corpus, STRATEGIES["P"])
    docs = {d.id: d.text for d in tiny_corpus.documents}
    assert chunks and all(docs[c.doc_id][c.start:c.end] == c.content for c in chunks)
    # one chunk per paragraph: no chunk holds a blank line
    assert not any("\n\n" in c.content for c in chunks)
    assert parse_strategies("p,c") == [STRATEGIES["P"], STRATEGIES["C"]]


def test_a_faulty_span_algorithm_fails_loudly(tiny_corpus):
    register_spanner("backwards", lambda doc, size: [(5, 2)], replace=True)
    with pytest.raises(ValueError, match="spans must be non-empty"):
        chunk_corpus(tiny_corpus, Strategy("X", boundaries=True, header=False, overlap=False, cuts="backwards"))


def test_evaluate_builds_registered_retrievers_with_dependencies_once(tiny_corpus, tiny_truth):
    built = []

    def build(ctx):
        built.append((ctx.strategy.name, ctx.param))
        return ctx.retriever("dense")  # reuses the strategy's dense retriever

    register_retriever(RetrieverSpec("echo-dense", build=build, requires=("bm25",), parametric=True,
                                     default=False), replace=True)

    def broken(ctx):
        raise Unavailable(ctx.name, "needs a model that is not installed")

    register_retriever(RetrieverSpec("never", build=broken, default=False), replace=True)
    ev = evaluate(tiny_corpus, tiny_truth, encoder=FakeEncoder(),
                  strategies="C,P", retrievers="dense,echo-dense@x,header-bm25,never")
    assert built == [("C", "x"), ("P", "x")]
    assert ev.unavailable == {"never": "needs a model that is not installed"}
    assert {c.label for c in ev.results} == {f"{s}/{r}" for s in "CP" for r in ("dense", "echo-dense@x", "header-bm25")}
    # the same retriever object ranks the same way: identical per-query ranks
    for s in "CP":
        np.testing.assert_array_equal(ev.result(f"{s}/echo-dense@x").needle_rank, ev.result(f"{s}/dense").needle_rank)
    assert Config.parse("P/echo-dense@x") == Config("P", "echo-dense@x")


def _env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDIAG_")}
    env.update(PYTHONPATH=child_pythonpath(), RAGDIAG_PLUGINS="plugin_example",
               RAGDIAG_ENCODER="fakes:fake_encoder", RAGDIAG_CACHE=str(tmp_path / "cache"))
    return env


def test_plugin_runs_through_eval(tiny_folder, tmp_path):
    cmd = [sys.executable, "-m", "ragdiag", "eval", "--corpus", str(tiny_folder), "--strategies", "P,C",
           "--retrievers", "dense,header-bm25"]
    done = subprocess.run(cmd, cwd=REPO, env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split()[0] for line in done.stdout.splitlines() if line[:2] in ("P/", "C/")]
    assert {"P/dense", "P/header-bm25", "C/dense", "C/header-bm25"} <= set(rows)
    assert "FAKE-bag-of-words" in done.stdout  # the stamp names the model that made these numbers
    helped = subprocess.run([sys.executable, "-m", "ragdiag", "eval", "--help"], cwd=REPO, env=_env(tmp_path),
                            capture_output=True, text=True, timeout=120)
    listed = "".join(helped.stdout.split())  # argparse may wrap the list at a hyphen
    assert "header-bm25" in listed and "word-rerank" in listed


def test_a_missing_plugin_is_an_error_not_silence(tmp_path):
    env = {**_env(tmp_path), "RAGDIAG_PLUGINS": "no_such_plugin_module"}
    done = subprocess.run([sys.executable, "-m", "ragdiag", "index", "status"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no_such_plugin_module" in done.stderr


def test_plugin_appears_in_the_dashboard(tiny_folder, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    for key, value in _env(tmp_path).items():
        if key.startswith("RAGDIAG_"):
            monkeypatch.setenv(key, value)
    monkeypatch.setenv("RAGDIAG_CORPUS", str(tiny_folder))
    monkeypatch.setenv("RAGDIAG_STRATEGIES", "P")
    monkeypatch.setenv("RAGDIAG_RETRIEVERS", "dense,header-bm25")
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/overview.py").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = {str(v) for d in at.dataframe for v in d.value.astype(str).to_numpy().ravel()}
    assert {"P/dense", "P/header-bm25"} <= shown


class FakePairScorer:
    """A FAKE pair scorer (plumbing): scores a text by its length; ``prepare`` reports progress."""

    identity = "fake-length-scorer"

    def prepare(self, texts, *, progress=None):
        if progress is not None:
            progress(len(texts), len(texts))

    def score(self, query, texts):
        return np.array([float(len(t)) for t in texts])


def test_progress_events_are_records_for_every_stage(tiny_corpus, tiny_truth):
    from ragdiag.core.progress import ProgressEvent
    from ragdiag.retrieval.builtin import _rerank

    register_retriever(RetrieverSpec("rerank-length", build=lambda ctx: _rerank(ctx, FakePairScorer()),
                                     requires=("hybrid",), default=False), replace=True)
    events = []
    ev = evaluate(tiny_corpus, tiny_truth, encoder=FakeEncoder(), strategies="C", retrievers="dense,rerank-length",
                  progress=events.append)
    assert all(isinstance(e, ProgressEvent) for e in events)
    assert {(e.stage, e.retriever) for e in events} >= {("embed", None), ("rank", "dense"), ("rerank", "rerank-length"),
                                                         ("rank", "rerank-length")}
    # the reranker reorders the hybrid head by text length: the longest candidate comes first
    res = ev.result("C/rerank-length")
    chunks = ev.indexes["C"].chunks
    first = [len(chunks[p].embed_text) for p in res.top_order[:, 0]]
    second = [len(chunks[p].embed_text) for p in res.top_order[:, 1]]
    assert all(a >= b for a, b in zip(first, second))
