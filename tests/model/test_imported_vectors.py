"""``eval --vectors``: vectors computed by a separate job give the same results as ragdiag's own embedding.

The plumbing tests use the FAKE bag-of-words encoder (``RAGDIAG_ENCODER``) on
both sides, so they run in seconds; the ``model`` test runs the real
all-MiniLM-L6-v2 in the separate script and in ragdiag.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragdiag.cli.parser import main

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "embed_to_parquet.py"
SELECT = ("--strategies", "C", "--retrievers", "dense,bm25,hybrid", "--no-cache")


def _script(*argv, cwd=REPO) -> None:
    subprocess.run([sys.executable, str(SCRIPT), *map(str, argv)], check=True, cwd=cwd, capture_output=True)


def _eval(capsys, out, *extra):
    code = main(["eval", *SELECT, "--out", str(out), *map(str, extra)])
    _, err = capsys.readouterr()
    return code, err


@pytest.fixture
def fake_model(monkeypatch):
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """ragdiag's own evaluation with the FAKE encoder (strategy C), once for the module."""
    out = tmp_path_factory.mktemp("own")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
        assert main(["eval", *SELECT, "--out", str(out)]) == 0
    return out


def _same_results(a: Path, b: Path) -> None:
    assert (a / "per_query.csv").read_bytes() == (b / "per_query.csv").read_bytes()
    for name in ("C_dense.run", "C_bm25.run", "C_hybrid.run"):  # every rank and score
        assert (a / "trec" / name).read_bytes() == (b / "trec" / name).read_bytes()


@pytest.mark.parametrize("key", ["chunk_id", "span", "text"])
def test_a_parquet_file_from_a_separate_job_gives_ragdiags_own_results(key, own, fake_model, tmp_path, capsys):
    _script(tmp_path / "chunks.parquet", "--strategies", "C", "--key", key, "--fake")
    code, err = _eval(capsys, tmp_path / "imported", "--vectors", tmp_path / "chunks.parquet")
    assert code == 0, err
    _same_results(own, tmp_path / "imported")
    stamp = json.loads((tmp_path / "imported" / "summary.json").read_text())["model"]
    assert stamp["model"] == "FAKE-bag-of-words" and stamp["pooling"] == "imported"  # stamped, the model named
    assert json.loads((own / "summary.json").read_text())["model"]["pooling"] == "none"


def test_the_commands_of_the_docs_page(own, fake_model, tmp_path, monkeypatch, capsys):
    """docs/vectors.md's commands, run as written (the script on the FAKE encoder): the page cannot drift."""
    block = (REPO / "docs" / "vectors.md").read_text(encoding="utf-8").split("```bash\n", 1)[1].split("```", 1)[0]
    script, evaluate = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert script[:2] == ["python", "examples/embed_to_parquet.py"] and evaluate[:4] == ["python", "-m", "ragdiag", "eval"]
    monkeypatch.chdir(tmp_path)
    _script(*script[2:], "--fake", cwd=tmp_path)
    assert main([*evaluate[3:], "--no-cache"]) == 0, capsys.readouterr().err
    _same_results(own, tmp_path / evaluate[evaluate.index("--out") + 1])


def test_query_vectors_from_a_second_file(own, fake_model, tmp_path, capsys):
    _script(tmp_path / "chunks.parquet", "--strategies", "C", "--fake", "--queries", tmp_path / "queries.parquet")
    code, err = _eval(capsys, tmp_path / "imported", "--vectors", tmp_path / "chunks.parquet",
                      "--query-vectors", tmp_path / "queries.parquet")
    assert code == 0, err
    _same_results(own, tmp_path / "imported")


def test_npy_with_its_ids(own, fake_model, tmp_path, capsys):
    import pyarrow.parquet as pq

    _script(tmp_path / "chunks.parquet", "--strategies", "C", "--fake")
    table = pq.read_table(tmp_path / "chunks.parquet")
    vectors = np.stack(table.column("vector").to_pylist()).astype(np.float32)
    np.save(tmp_path / "chunks.npy", vectors)
    (tmp_path / "chunks.json").write_text(json.dumps({"model": "FAKE-bag-of-words", "dim": vectors.shape[1],
                                                      "key": "chunk_id", "ids": table.column("chunk_id").to_pylist()}))
    assert _eval(capsys, tmp_path / "imported", "--vectors", tmp_path / "chunks.npy")[0] == 0
    _same_results(own, tmp_path / "imported")


def _write(path, columns: dict, vectors: np.ndarray, meta: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    vec = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), type=pa.float32()), vectors.shape[1])
    pq.write_table(pa.table({**columns, "vector": vec}).replace_schema_metadata(meta), path)


@pytest.mark.parametrize("case, message", [
    ("dim", "its vectors have 8 dimensions but its metadata says FAKE-bag-of-words has 1024"),
    ("model-dim", "8-dimensional vectors, but the model that embeds the queries (FAKE-bag-of-words) gives 1024"),
    ("missing", "no vector for 917 of 918 chunks (first: C:"),
    ("no-model", "no 'model' in its metadata"),
    ("no-key", "no key column; add chunk_id, doc_id + start + end, or text"),
])
def test_a_mismatch_is_one_line(case, message, fake_model, tmp_path, capsys):
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus

    first = chunk_corpus(load_corpus(), STRATEGIES["C"])[0].id
    v = np.eye(8, dtype=np.float32)[:1]
    cols = {"chunk_id": [first]} if case != "no-key" else {"name": [first]}
    meta = {"model": "FAKE-bag-of-words", "dim": "1024" if case == "dim" else "8"}
    if case == "no-model":
        meta.pop("model")
    if case == "missing":
        v, meta["dim"] = np.eye(1024, dtype=np.float32)[:1], "1024"
    _write(tmp_path / "v.parquet", cols, v, meta)
    code = main(["eval", *SELECT, "--vectors", str(tmp_path / "v.parquet")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and message in lines[0], err


def test_query_vectors_need_vectors(tmp_path, capsys):
    code = main(["eval", *SELECT, "--query-vectors", str(tmp_path / "q.parquet")])
    assert code == 2 and "--query-vectors goes with --vectors" in capsys.readouterr().err


@pytest.mark.model
@pytest.mark.slow
def test_the_real_model_embedded_by_a_separate_script(tmp_path, capsys):
    """all-MiniLM-L6-v2 run by the script, then ragdiag's own embedding of the same texts: identical results."""
    _script(tmp_path / "chunks.parquet", "--strategies", "C")
    assert _eval(capsys, tmp_path / "own")[0] == 0
    assert _eval(capsys, tmp_path / "imported", "--vectors", tmp_path / "chunks.parquet")[0] == 0
    _same_results(tmp_path / "own", tmp_path / "imported")
    assert json.loads((tmp_path / "imported" / "summary.json").read_text())["model"]["model"] == "all-MiniLM-L6-v2"
