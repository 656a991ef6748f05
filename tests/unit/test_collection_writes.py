"""``eval --collection --out`` and ``convert`` write all or nothing, never over the collection's own files.

A full disk is injected at the one place ``core.files`` writes bytes (as
tests/unit/test_writes.py does): the files of the previous run stay byte for byte,
and ``convert`` leaves no folder and no truth file behind.
"""

from __future__ import annotations

import errno
import json

import pytest

from ragdiag.cli.parser import main
from ragdiag.core import files


@pytest.fixture(autouse=True)
def _fake(monkeypatch):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")


def _beir(folder):
    docs = {"d1": "Bees make honey from nectar.", "d2": "Ants farm aphids for honeydew.",
            "d3": "Wasps build paper nests from wood pulp."}
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "title": k, "text": v}) + "\n"
                                                 for k, v in docs.items()))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in
                                                  (("q1", "what do bees make"), ("q2", "who builds paper nests"))))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t2\n")
    return folder


def _disk_full_after(monkeypatch, n: int):
    real, calls = files._write_fd, []

    def write(fd, data):
        calls.append(fd)
        if len(calls) > n:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(files, "_write_fd", write)


def test_eval_collection_out_is_all_or_nothing_on_a_full_disk(tmp_path, capsys, monkeypatch):
    beir, out = _beir(tmp_path / "kb"), tmp_path / "out"
    argv = ["eval", "--collection", f"beir:{beir}", "--strategies", "E", "--retrievers", "bm25", "--no-cache",
            "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert {str(p) for p in before} >= {"measures.json", "per_question.csv", "trec/E_bm25.run", "trec/E_bm25.qrels"}
    capsys.readouterr()
    _disk_full_after(monkeypatch, 2)
    assert main(argv) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no space left on device" in errors[0] and "none of the 4 files" in errors[0]
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # nothing partial, no temporary file left


def test_eval_collection_out_refuses_the_collections_own_folder(tmp_path, capsys):
    beir = _beir(tmp_path / "kb")
    assert main(["eval", "--collection", f"beir:{beir}", "--strategies", "E", "--retrievers", "bm25", "--no-cache",
                 "--out", str(beir)]) == 2
    err = capsys.readouterr().err
    assert "the collection's own folder" in err
    assert sorted(p.name for p in beir.iterdir()) == ["corpus.jsonl", "qrels", "queries.jsonl"]


def test_convert_leaves_nothing_on_a_full_disk(tmp_path, capsys, monkeypatch):
    beir = _beir(tmp_path / "kb")
    _disk_full_after(monkeypatch, 0)
    assert main(["convert", f"beir:{beir}", "--out", str(tmp_path / "converted")]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "nothing was left" in errors[0], errors
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kb"]  # no folder, no truth file, no hidden staging
    monkeypatch.undo()
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    assert main(["convert", f"beir:{beir}", "--out", str(tmp_path / "converted")]) == 0
    assert sorted(p.name for p in (tmp_path / "converted").iterdir()) == ["d1.md", "d2.md", "d3.md"]
    assert (tmp_path / "converted.truth.json").is_file()
