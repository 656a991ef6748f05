"""The ``no_work`` fixture: loading a corpus or a model is an error, so a CLI test sees a bad argument refused
before any work starts (``from no_work import no_work``)."""

from __future__ import annotations

import pytest


@pytest.fixture
def no_work(monkeypatch, tmp_path):
    """Loading a corpus or a model is an error: a bad number must be refused before."""
    from ragdiag.documents import corpus
    from ragdiag.index import models

    def work(*a, **k):
        raise AssertionError("work started before the bad argument was refused")

    monkeypatch.setattr(corpus, "load_corpus", work)
    monkeypatch.setattr(models, "load_encoder", work)
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
