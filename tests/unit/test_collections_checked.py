"""The collection and vector readers refuse a malformed file in one line naming the file and the field.

BEIR grades of ``inf`` or ``nan``, SQuAD files of the wrong shape at any level,
a Parquet ``vector`` column that is not a list of numbers, and ``--corpus .``
named after its folder rather than "".
"""

from __future__ import annotations

import json
import os

import pytest

from ragdiag.documents.collections import CollectionError, open_collection


def _beir(folder, grade: str):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "title": "Bees", "text": "Bees make honey."}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "what do bees make"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{grade}\n")
    return folder


@pytest.mark.parametrize("grade", ["inf", "-inf", "nan", "1e400", "lots"])
def test_a_beir_grade_that_is_not_a_finite_number_is_one_line(tmp_path, grade):
    with pytest.raises(CollectionError, match=r"qrels test.tsv line 2: score .* is not a finite number") as err:
        open_collection(f"beir:{_beir(tmp_path / 'b', grade)}")
    assert "\n" not in str(err.value)


def test_a_beir_folder_still_reads_with_a_whole_grade(tmp_path):
    c = open_collection(f"beir:{_beir(tmp_path / 'kb', '2')}")
    assert c.name == "beir:kb" and [t.id for t in c.topics] == ["q1"]


@pytest.mark.parametrize("data, words", [
    ({"data": [1]}, r"data\[1\]: must be an object"),
    ({"data": [{"title": "t", "paragraphs": 5}]}, r"data\[1\].paragraphs: must be a list"),
    ({"data": [{"paragraphs": ["x"]}]}, r"data\[1\].paragraphs\[1\]: must be an object"),
    ({"data": [{"paragraphs": [{"context": "c", "qas": {"id": 1}}]}]}, r"paragraphs\[1\]: must be an object"),
    ({"data": [{"paragraphs": [{"context": "c", "qas": [7]}]}]}, r"qas\[1\]: must be an object"),
    ({"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "a", "question": "q", "answers": [
        {"text": "c", "answer_start": True}]}]}]}]}, "answer_start"),
    ({"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "a", "question": "q", "answers": [
        {"text": "c", "answer_start": -4}]}]}]}]}, "answer_start"),
    ({"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "a", "question": "q", "answers": [5]}]}]}]},
     "answer_start"),
    ([[1, 2]], "row 1: must be an object"),
    ("[" * 100_000 + "]" * 100_000, "cannot be read as JSON"),
])
def test_a_malformed_squad_file_is_one_line(tmp_path, data, words):
    path = tmp_path / "squad.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(CollectionError, match=words) as err:
        open_collection(f"squad:{path}")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("column, words", [
    ([1, 2], "column 'vector' is int64"),
    ([["x", "y"], ["z", "w"]], "column 'vector' is list<element: string>"),
    ([{"a": 1}, {"a": 2}], "column 'vector' is struct"),
])
def test_a_vector_column_that_is_not_a_list_of_numbers_is_one_line(tmp_path, column, words):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from ragdiag.index.imported import VectorFileError, read_vector_table

    path = tmp_path / "v.parquet"
    pq.write_table(pa.table({"chunk_id": ["a", "b"], "vector": column}, metadata={"model": "m", "dim": "2"}), path)
    with pytest.raises(VectorFileError, match=words) as err:
        read_vector_table(path)
    assert str(err.value).startswith("v.parquet: ") and "\n" not in str(err.value)


def test_integer_vectors_read_as_float32(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from ragdiag.index.imported import read_vector_table

    path = tmp_path / "v.parquet"
    pq.write_table(pa.table({"chunk_id": ["a", "b"], "vector": [[3, 4], [0, 2]]}, metadata={"model": "m", "dim": "2"}),
                   path)
    table = read_vector_table(path)
    assert table.vectors.dtype.name == "float32"
    assert [round(v, 6) for row in table.vectors.tolist() for v in row] == [0.6, 0.8, 0.0, 1.0]  # (3, 4) / 5


def test_corpus_dot_is_named_after_its_folder(tmp_path, monkeypatch):
    from ragdiag.documents.corpus import load_corpus

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# Bees\n\nBees make honey from nectar.\n")
    monkeypatch.chdir(kb)
    assert load_corpus(".").name == "kb" and load_corpus(os.curdir).root == "."
