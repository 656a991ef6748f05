"""A command that reads never writes, and a bad file name or file is one line and exit status 2 (or 1 for a
truth file's own problems), never a traceback: eval-store, index, report, eval, truth check/stats/suggest."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragdiag.cli.parser import main
from tiny import write_tiny_kb


def run_main(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# ----- eval-store opens a store, never creates one ------------------------------------------------------

@pytest.mark.skipif(not _installed("chromadb"), reason="chromadb is not installed")
def test_eval_store_chroma_writes_nothing_where_it_points(tmp_path, capsys, tiny_folder):
    folder = tmp_path / "not-a-store"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    missing = tmp_path / "missing"
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    for path, says in ((folder, "no chroma.sqlite3"), (missing, "does not exist"), (a_file, "is a file")):
        code, out, err = run_main(capsys, "eval-store", "--corpus", tiny_folder, "--no-cache", "--chroma", path)
        assert code == 2 and says in err and "Traceback" not in err, err
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"] and not missing.exists()


@pytest.mark.skipif(not _installed("qdrant_client"), reason="qdrant-client is not installed")
def test_eval_store_qdrant_bad_places_are_one_line(tmp_path, capsys, tiny_folder):
    missing = tmp_path / "missing"
    code, _, err = run_main(capsys, "eval-store", "--corpus", tiny_folder, "--no-cache", "--qdrant-path", missing)
    assert code == 2 and "does not exist" in err and not missing.exists()
    for url in ("http://127.0.0.1:1", "http://[bad", "::not a url::"):
        code, _, err = run_main(capsys, "eval-store", "--corpus", tiny_folder, "--no-cache", "--qdrant-url", url)
        assert code == 2 and "cannot read the Qdrant server" in err and len(err.strip().splitlines()) == 1, err


# ----- index status / clear -----------------------------------------------------------------------------

def test_index_status_on_a_new_folder_creates_nothing(tmp_path, capsys):
    new = tmp_path / "newdir"
    code, out, _ = run_main(capsys, "index", "status", "--cache", new)
    assert code == 0 and "no store at" in out and not new.exists()
    code, out, _ = run_main(capsys, "index", "clear", "--cache", new)
    assert code == 0 and "nothing removed" in out and not new.exists()


@pytest.mark.model
def test_index_clear_stale_does_not_need_a_valid_truth(tmp_path, capsys):
    from ragdiag.index.store import Store

    corpus = write_tiny_kb(tmp_path, "{broken")
    Store(tmp_path / "cache").close()
    code, out, err = run_main(capsys, "index", "clear", "--stale", "--corpus", corpus, "--cache", tmp_path / "cache")
    assert code == 0 and "invalid JSON" not in err, err


# ----- report --out -------------------------------------------------------------------------------------

def test_report_out_refuses_a_special_file_and_a_page_that_is_not_a_report(tmp_path, capsys, tiny_folder):
    twin = Path(os.devnull + ".md")
    before = twin.stat().st_mtime_ns if twin.exists() else None
    code, _, err = run_main(capsys, "report", "--corpus", tiny_folder, "--no-cache", "--out", os.devnull)
    assert code == 2 and "not a regular file" in err
    assert (twin.stat().st_mtime_ns if twin.exists() else None) == before  # no /dev/null.md written
    page = tmp_path / "index.html"
    page.write_text("<html><title>my team's page</title></html>")
    code, _, err = run_main(capsys, "report", "--corpus", tiny_folder, "--no-cache", "--out", page)
    assert code == 2 and "is not a ragdiag report" in err
    assert page.read_text() == "<html><title>my team's page</title></html>"


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="no /proc here")
def test_eval_out_that_cannot_be_written_is_refused_before_the_run(capsys, tiny_folder):
    code, out, err = run_main(capsys, "eval", "--corpus", tiny_folder, "--no-cache", "--strategies", "A",
                              "--retrievers", "bm25", "--out", "/proc/forbidden")
    assert code == 2 and "cannot be written" in err and "R@" not in out  # nothing was evaluated


# ----- truth files -----------------------------------------------------------------------------------------

def test_truth_suggest_bad_out_and_negative_ood(tmp_path, capsys, tiny_folder):
    code, _, err = run_main(capsys, "truth", "suggest", "--corpus", tiny_folder, "--out", tmp_path / "nodir" / "x.json")
    assert code == 2 and "does not exist" in err
    code, _, err = run_main(capsys, "truth", "suggest", "--corpus", tiny_folder, "--out", tmp_path / "x.json",
                            "--ood", "-1")
    assert code == 2 and "--ood" in err and not (tmp_path / "x.json").exists()


def test_truth_check_and_stats_refuse_duplicate_keys(tmp_path, capsys, tiny_folder):
    truth = json.loads((tiny_folder.parent / "tiny.truth.json").read_text())
    text = json.dumps(truth)
    dup = tmp_path / "dup.truth.json"
    # the first out-of-domain query written with its "query" twice
    dup.write_text(text.replace('"query": ', '"query": "first", "query": ', 1))
    code, out, _ = run_main(capsys, "truth", "check", dup, "--corpus", tiny_folder)
    assert code == 1 and "duplicate key 'query'" in out
    code, _, err = run_main(capsys, "truth", "stats", dup, "--corpus", tiny_folder)
    assert code == 2 and "duplicate key 'query'" in err


def test_truth_check_accepts_a_bom_and_names_json_errors_as_json(tmp_path, capsys, tiny_folder):
    text = (tiny_folder.parent / "tiny.truth.json").read_text()
    bom = tmp_path / "bom.truth.json"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode())
    code, out, err = run_main(capsys, "truth", "check", bom, "--corpus", tiny_folder, "--errors-only")
    assert code == 0, out + err
    bad = tmp_path / "bad.truth.json"
    bad.write_text('{"questions": [,]}')
    code, out, _ = run_main(capsys, "truth", "check", bad, "--corpus", tiny_folder)
    assert code == 1 and "not valid JSON: at line 1" in out and "YAML" not in out


def test_truth_check_of_a_device_says_what_it_is(capsys, tiny_folder):
    code, _, err = run_main(capsys, "truth", "check", os.devnull, "--corpus", tiny_folder)
    assert code == 2 and "not a regular file" in err and "no such file" not in err
