"""``ruler --collection beir:DIR --pool-curve``: a collection judged by document gets its pool curve with documents
as the unit (:func:`ragdiag.authoring.pool_curve.document_pool_curve`). Plumbing, on the FAKE bag-of-words encoder
(``tests/helpers/fakes.py``): the numbers are not MiniLM's; the seeded prediction check is in tests/model/test_pool_curve.py."""

from __future__ import annotations

import json

import pytest

from ragdiag.cli.parser import main


@pytest.fixture
def beir(tmp_path, monkeypatch):
    from ragdiag.documents.collections.examples import make_examples

    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    monkeypatch.setenv("RAGDIAG_NO_SNAPSHOT", "1")
    make_examples(tmp_path / "examples")
    return f"beir:{tmp_path / 'examples' / 'beir-sklearn'}"


@pytest.mark.slow  # about 10 s: chunking and embedding 128 documents with the FAKE encoder
def test_a_beir_collection_gets_its_document_pool_curve(beir, capsys):
    assert main(["ruler", "--collection", beir, "--pool-curve", "--at-size", "1000", "--no-cache", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    curve = doc["pool_curve"]
    assert doc["level"] == "document" and curve["size_unit"] == "documents"
    assert curve["corpus_size"] == 128 and curve["questions"] == 32
    assert [p["fraction"] for p in curve["points"]] == [0.1, 0.25, 0.5, 1.0] * 2
    assert {f["measure"] for f in curve["fits"]} == {"R@4", "answered"}
    for f in curve["fits"]:
        assert f["at_size"] == 1000 and (f["refused"] is None) == (f["estimate"] is not None)
    # the same curve as the library's on the same collection, encoder and gate
    from fakes import fake_encoder
    from ragdiag.authoring.pool_curve import document_pool_curve
    from ragdiag.core.gate import Gate
    from ragdiag.documents.collections import open_collection

    lib = document_pool_curve(open_collection(beir), fake_encoder(), Gate(), at_size=1000).as_json()
    assert lib["points"] == curve["points"]


def test_a_document_collection_without_pool_curve_is_one_line(beir, capsys):
    assert main(["ruler", "--collection", beir, "--no-cache"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: beir:beir-sklearn is judged by document") and "--pool-curve" in err[-1]
    assert main(["ruler", "--collection", beir, "--corpus", "x", "--no-cache"]) == 2
    assert "--collection replaces --corpus" in capsys.readouterr().err


@pytest.mark.slow  # about 5 s
def test_a_span_collection_gets_the_whole_ruler(beir, capsys):
    """SQuAD (judged by answer span) converts to a corpus and needles: the ruler's checks run on it."""
    squad = f"squad:{beir.removeprefix('beir:').rsplit('/', 1)[0]}/squad-sklearn.json"
    assert main(["ruler", "--collection", squad, "--strategies", "E", "--retrievers", "dense,hybrid", "--no-cache",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["configs"] == ["E/dense", "E/hybrid"] and doc["questions"] == 32
    assert doc["shortcuts"]["bm25"] == "E/bm25"  # evaluated beside, for the shortcut check
