"""Bad input, faults and hostile use: every case ends in a clear message (library and CLI), never a wrong answer.

Library and CLI cases that need no model. The dashboard's cases are in ``test_served.py``
(AppTest) and ``test_browser.py`` (a served instance in Chromium).
"""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pytest

from ragdiag.cli.parser import main
from ragdiag.documents.corpus import Corpus, load_corpus, make_document
from ragdiag.documents.walk import CorpusError, walk_corpus
from ragdiag.evaluation.external import RunError, load_run, parse_run
from ragdiag.core.limits import LimitError, Limits, read_limited
from ragdiag.retrieval.bm25 import BM25Index, BM25Retriever, tokenize
from ragdiag.retrieval.base import QueryBatch
from ragdiag.retrieval.hybrid import HybridRetriever
from ragdiag.present.serving import Access, AccessError
from ragdiag.documents.truth import TruthError, default_truth_path, load_truth, needle_length, parse_truth

HAS_MKFIFO = hasattr(os, "mkfifo")


def run_main(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ----- bounded reads ----------------------------------------------------------------

@pytest.mark.skipif(not HAS_MKFIFO, reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(LimitError, match="named pipe"):
        read_limited(fifo, 100)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_not_read(tiny_corpus):
    with pytest.raises(LimitError, match="character device"):
        read_limited("/dev/zero", 100)
    with pytest.raises(TruthError, match="not a regular file"):
        load_truth("/dev/zero", tiny_corpus)


def test_reads_are_bounded_and_name_the_variable(tmp_path, tiny_corpus, tiny_truth):
    big = tmp_path / "big.truth.json"
    big.write_bytes(b" " * 200)
    with pytest.raises(TruthError, match="RAGDIAG_MAX_TRUTH_BYTES"):
        load_truth(big, tiny_corpus, limits=Limits(max_truth_bytes=100))
    run = tmp_path / "run.jsonl"
    run.write_bytes(b" " * 200)
    with pytest.raises(RunError, match="RAGDIAG_MAX_RUN_BYTES"):
        load_run(run, tiny_truth, limits=Limits(max_run_bytes=100))
    assert Limits.from_env({"RAGDIAG_MAX_RUN_BYTES": "1_000"}).max_run_bytes == 1000
    with pytest.raises(LimitError, match="positive integer"):
        Limits.from_env({"RAGDIAG_MAX_FILES": "-3"})


# ----- corpus walking ------------------------------------------------------------------

def _kb(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha text here.\n", encoding="utf-8")
    return root


def test_symlink_loops_dangling_links_and_deep_nesting_skip_that_file(tmp_path):
    root = _kb(tmp_path)
    (root / "loop.md").symlink_to(root / "loop.md")
    (root / "dangling.md").symlink_to(root / "nowhere.md")
    deep = root
    for i in range(6):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "deep.md").write_text("# Deep\n\ndeep text.\n", encoding="utf-8")
    if HAS_MKFIFO:
        os.mkfifo(root / "pipe.md")
    corpus = load_corpus(root, limits=Limits(max_depth=3))
    assert [d.id for d in corpus.documents] == ["a"]
    reasons = {f.path: f.reason for f in corpus.failures}
    assert reasons["loop.md"] == "symlink loop (not followed)"
    assert reasons["dangling.md"] == "dangling symlink: its target does not exist"
    assert "nested deeper than 3 levels" in reasons["d0/d1/d2/d3"] and "RAGDIAG_MAX_DEPTH" in reasons["d0/d1/d2/d3"]
    if HAS_MKFIFO:
        assert reasons["pipe.md"] == "named pipe (FIFO), not a regular file; skipped"


def test_corpus_file_count_and_total_bytes_are_capped(tmp_path):
    root = _kb(tmp_path)
    for i in range(5):
        (root / f"n{i}.md").write_text(f"# N{i}\n\n" + "x" * 100, encoding="utf-8")
    with pytest.raises(CorpusError, match=r"more than 3 files.*RAGDIAG_MAX_FILES"):
        load_corpus(root, limits=Limits(max_files=3))
    with pytest.raises(CorpusError, match=r"exceed 300 bytes.*RAGDIAG_MAX_CORPUS_BYTES"):
        load_corpus(root, limits=Limits(max_total_bytes=300))
    assert len(walk_corpus(root, Limits())) == 6


def test_dot_corpus_finds_the_truth_beside_the_folder(tmp_path, monkeypatch):
    root = _kb(tmp_path)
    (tmp_path / "kb.truth.json").write_text("{}", encoding="utf-8")
    monkeypatch.chdir(root)
    assert default_truth_path(".") == tmp_path / "kb.truth.json"


# ----- ground truth -----------------------------------------------------------------------

def _truth_dict(needle: str, **query) -> dict:
    return {"questions": [{"id": "q1", "needle": needle, "queries": query or {"course": "what?"}}], "ood": []}


def test_duplicate_keys_are_errors_in_json_and_yaml(tmp_path, tiny_corpus):
    needle = "Zebras graze quietly near riverbanks every single morning."
    j = tmp_path / "t.json"
    j.write_text('{"questions": [{"id": "q1", "needle": "%s", "queries": {"course": "a?", "course": "b?"}}]}' % needle)
    with pytest.raises(TruthError, match="duplicate key 'course'"):
        load_truth(j, tiny_corpus)
    y = tmp_path / "t.yaml"
    y.write_text(f"questions:\n  - id: q1\n    needle: {needle}\n    queries:\n      course: a?\n      course: b?\n")
    with pytest.raises(TruthError, match=r"line 6: duplicate key 'course'"):
        load_truth(y, tiny_corpus)


def test_byte_order_marks_are_accepted(tmp_path, tiny_corpus, tiny_truth):
    needle = "Zebras graze quietly near riverbanks every single morning."
    t = tmp_path / "t.json"
    t.write_bytes(b"\xef\xbb\xbf" + json.dumps(_truth_dict(needle)).encode())
    assert load_truth(t, tiny_corpus).questions[0].id == "q1"
    r = tmp_path / "r.jsonl"
    r.write_bytes(b"\xef\xbb\xbf" + json.dumps({"query_id": "q1:course", "hits": []}).encode())
    assert "q1:course" in load_run(r, tiny_truth).hits


def test_messages_give_the_right_reason(tmp_path, tiny_corpus):
    needle = "Zebras graze quietly near riverbanks every single morning."
    with pytest.raises(TruthError, match="query 'course' must be a string, got int"):
        parse_truth(_truth_dict(needle, course=7), tiny_corpus)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(TruthError, match="nested too deeply"):
        load_truth(deep, tiny_corpus)
    huge = tmp_path / "huge.json"
    huge.write_text('{"questions": ' + "9" * 5000 + "}")
    with pytest.raises(TruthError, match="invalid JSON"):
        load_truth(huge, tiny_corpus)


def test_needle_length_rule_works_for_scripts_without_spaces():
    sentence = "机器学习模型需要大量的训练数据才能达到较好的效果。"  # 25 characters, one sentence
    corpus = Corpus("zh", (make_document("zh", f"# 说明\n\n前言。{sentence}后记。\n"),))
    truth = parse_truth(_truth_dict(sentence), corpus)
    assert truth.questions[0].needle == sentence
    assert needle_length(sentence) == 24 * 3 + 3  # the ideographic full stop is wide too
    with pytest.raises(TruthError, match="a CJK character counts 3"):
        parse_truth(_truth_dict("机器学习模型"), corpus)


# ----- BM25 in any language ------------------------------------------------------------------

@pytest.mark.parametrize(("text", "tokens"), [
    ("Die Größe der STRASSE", ["die", "grösse", "der", "strasse"]),
    ("Straße", ["strasse"]),
    ("Η ΜΗΧΑΝΙΚΗ μάθηση ΣΟΦΟΣ σοφός", ["η", "μηχανικη", "μαθηση", "σοφοσ", "σοφοσ"]),
    ("机器学习", ["机器", "器学", "学习"]),
    ("東京に行く", ["東京", "京に", "に行", "行く"]),
    ("ｶﾀｶﾅ ＡＢＣ", ["カタ", "タカ", "カナ", "abc"]),  # NFKC: half-width kana and full-width Latin
    ("l1_ratio=0.15", ["l1", "ratio", "0", "15"]),
])
def test_tokenize_unicode(text, tokens):
    assert tokenize(text) == tokens


def test_tokenize_equals_ascii_rule_on_ascii_text():
    import re

    text = "SGDClassifier's l1_ratio=0.15, max_iter=1000 -- K-Means++ (n_init='auto')"
    assert tokenize(text) == re.findall(r"[a-z0-9]+", text.lower())


@pytest.mark.parametrize(("docs", "query", "best"), [
    (["Die Größe des Modells bestimmt die Laufzeit.", "Grüße aus Berlin und gute Reise."], "Größe", 0),
    (["Η μηχανική μάθηση χρειάζεται δεδομένα.", "Ο καιρός είναι καλός σήμερα."], "ΜΗΧΑΝΙΚΗ ΜΑΘΗΣΗ", 0),
    (["今天天气很好，我们去公园。", "机器学习需要大量的训练数据。"], "机器学习的数据", 1),
    (["猫が好きです。毎日遊びます。", "東京で機械学習を勉強しています。"], "機械学習", 1),
])
def test_bm25_retrieves_in_german_greek_chinese_japanese(docs, query, best):
    r = BM25Retriever(docs).rank(QueryBatch((query,)))[0]
    assert r.order[0] == best and r.scores[0] > 0 and r.scores[1] == 0


def test_query_with_no_known_token_is_reported_and_hybrid_ignores_bm25_for_it():
    docs = ["zebras graze", "volcanic ash", "ferns and spores"]
    index = BM25Index(docs)
    assert index.unmatched(["量子色動力学", "zebras"]).tolist() == [True, False]

    class Fixed:  # a FAKE dense retriever with a fixed order (plumbing test)
        name = "dense"

        def rank(self, batch, *, depth=None):
            from ragdiag.retrieval.base import Ranking

            return [Ranking(np.array([2, 0, 1]), np.array([0.9, 0.5, 0.1])) for _ in batch.texts]

    fused = HybridRetriever([Fixed(), BM25Retriever(docs)]).rank(QueryBatch(("量子色動力学",)))[0]
    assert fused.order.tolist() == [2, 0, 1]  # dense alone, not mixed with BM25's chunk-order fallback


def test_evaluation_notes_queries_bm25_cannot_match(tiny_corpus, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate

    data = json.loads(json.dumps(__import__("conftest").TINY_TRUTH))
    data["ood"].append({"id": "o3", "kind": "far", "query": "量子色動力学"})
    truth = parse_truth(data, tiny_corpus)
    ev = evaluate(tiny_corpus, truth, encoder=fake_encoder, strategies="C", retrievers="bm25")
    # o2 "quantum chromodynamics" and o3 share no word with the corpus
    assert "2 of 11 queries share no word" in ev.notes["bm25 C"] and "o2, o3" in ev.notes["bm25 C"]
    i = [q.id for q in ev.queries].index("o3")
    assert ev.result("C/bm25").top_scores[i].max() == 0


# ----- encoder pipelines ------------------------------------------------------------------------

def _st_folder(tmp_path, modules, pooling=None):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "modules.json").write_text(json.dumps(
        [{"idx": i, "name": str(i), "path": p, "type": f"sentence_transformers.models.{t}"} for i, (t, p) in
         enumerate(modules)]))
    if pooling is not None:
        (folder / "1_Pooling").mkdir()
        (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return folder


MEAN = {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False, "pooling_mode_max_tokens": False}


@pytest.mark.parametrize(("modules", "pooling", "message"), [
    ([("Transformer", ""), ("Pooling", "1_Pooling"), ("Normalize", "2_Normalize")],
     {**MEAN, "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": True}, "its pooling is max"),
    ([("Transformer", ""), ("Pooling", "1_Pooling"), ("Dense", "2_Dense"), ("Normalize", "3_Normalize")],
     MEAN, "has a Dense module"),
    ([("Transformer", ""), ("Pooling", "1_Pooling")], MEAN, "no Normalize module"),
    ([("Transformer", ""), ("Pooling", "1_Pooling"), ("Normalize", "2")], {"pooling_mode": "lasttoken"},
     "its pooling is lasttoken"),
])
def test_encoder_refuses_pipelines_it_does_not_implement(tmp_path, modules, pooling, message):
    from ragdiag.index.encoder.resolve import ModelUnavailable, read_pipeline

    with pytest.raises(ModelUnavailable, match=message):
        read_pipeline(_st_folder(tmp_path, modules, pooling))


def test_encoder_accepts_mean_and_cls(tmp_path):
    from ragdiag.index.encoder.resolve import read_pipeline

    ok = [("Transformer", ""), ("Pooling", "1_Pooling"), ("Normalize", "2_Normalize")]
    assert read_pipeline(_st_folder(tmp_path, ok, MEAN)) == ("mean", True)
    from ragdiag.index.encoder.resolve import resolve_model_dir  # the bundled model's own folder

    assert read_pipeline(resolve_model_dir(None)) == ("mean", True)


# ----- external runs mapped, not guessed ------------------------------------------------------------

def _run_line(qid, **hit):
    return json.dumps({"query_id": qid, "hits": [{"text": "x", **hit}]})


def test_run_doc_names_are_mapped_or_reported(tiny_corpus, tiny_truth):
    needle = tiny_truth.question("q1")
    for name in ("animals.md", "./animals.md", "/data/exports/animals.md", "animals"):
        run = parse_run([_run_line("q1:course", doc=name, start=needle.start, end=needle.end)], tiny_truth,
                        corpus=tiny_corpus)
        assert run.hits["q1:course"][0].doc == "animals"
        if name != "animals":
            assert "mapped to corpus ids" in run.notes[0] and repr(name) in run.notes[0]
    with pytest.raises(RunError, match=r"doc 'animls' is not a document of the corpus.*closest corpus ids: animals"):
        parse_run([_run_line("q1:course", doc="animls", start=0, end=5)], tiny_truth, corpus=tiny_corpus)


def test_run_offsets_past_the_end_are_errors(tiny_corpus, tiny_truth):
    with pytest.raises(RunError, match=r"offsets 10-99999 run past the end of document 'plants'"):
        parse_run([_run_line("q1:course", doc="plants", start=10, end=99999)], tiny_truth, corpus=tiny_corpus)


def test_run_huge_numbers_are_line_errors(tiny_truth):
    line = '{"query_id": "q1:course", "hits": [{"text": "x", "score": ' + "9" * 5000 + "}]}"
    with pytest.raises(RunError, match="line 1: not valid JSON"):
        parse_run([line], tiny_truth)
    line = '{"query_id": "q1:course", "hits": [{"text": "x", "score": ' + "9" * 400 + "}]}"
    with pytest.raises(RunError, match="finite number"):
        parse_run([line], tiny_truth)


# ----- serving ---------------------------------------------------------------------------------------

def test_access_allows_only_the_configured_data_and_roots(tmp_path):
    kb = _kb(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (kb / "link").symlink_to(other)
    acc = Access.from_env({"RAGDIAG_CORPUS": str(kb)})
    assert acc.allows(kb) and acc.allows(kb / "a.md") and acc.allows(tmp_path / "kb.truth.json")
    assert not acc.allows(other) and not acc.allows(kb / "link") and not acc.allows("/etc/passwd")
    assert not acc.allows(kb / ".." / "other")
    missing, existing = tmp_path / "nope.json", other
    messages = set()
    for p in (missing, existing, "/etc", "/dev/zero"):
        with pytest.raises(AccessError) as info:
            acc.check(p)
        messages.add(str(info.value))
    assert len(messages) == 1  # the same answer whether or not it exists: no file-existence oracle
    wider = Access.from_env({"RAGDIAG_CORPUS": str(kb), "RAGDIAG_ROOTS": str(other), "RAGDIAG_LOCKED": "1"})
    assert wider.allows(other / "x") and wider.locked


# ----- CLI: numbers, outputs, caches -----------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["sweep", "C/dense", "--cut", "5"], "cut must be a finite cosine distance in [0, 2], got 5.0"),
    (["sweep", "C/dense", "--cut", "-1"], "cut must be a finite cosine distance in [0, 2], got -1.0"),
    (["sweep", "C/dense", "--cut", "nan"], "cut must be a finite cosine distance in [0, 2], got nan"),
    (["sweep", "C/dense", "--step", "1e-9"], "rows from 0.3 to 0.9; at most 2001"),
    (["sweep", "C/dense", "--stop", "inf"], "--stop must be a finite number"),
    (["sweep", "C/dense", "--keep", "0"], "--keep must be a whole number from 1 to 20, got 0"),
    (["eval-run", "RUN", "--keep", "0", "--distances"], "--keep must be a whole number from 1 to 20, got 0"),
    (["eval-run", "RUN", "--compare", "ext/x"], "'ext/x' is not a ragdiag configuration"),
    (["compare", "C/dense", "C/bm25", "--phrasing", "nope"], "unknown phrasing 'nope'; choose one of: all,"),
    (["report", "--cut", "nan"], "--cut must be a finite cosine distance in [0, 2], got nan"),
])
def test_cli_numbers_and_names_are_validated_before_any_work(tiny_folder, tmp_path, capsys, args, message):
    run = tmp_path / "run.jsonl"
    run.write_text("", encoding="utf-8")
    args = [str(run) if a == "RUN" else a for a in args]
    code, out, err = run_main(capsys, *args, "--corpus", tiny_folder, "--cache", tmp_path / "cache")
    assert code == 2 and message in err and "Traceback" not in err


def test_cli_out_and_cache_are_checked_before_work(tiny_folder, tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    code, _, err = run_main(capsys, "eval", "--corpus", tiny_folder, "--out", a_file)
    assert code == 2 and "which is a file; pass a folder" in err
    code, _, err = run_main(capsys, "eval", "--corpus", tiny_folder, "--cache", a_file)
    assert code == 2 and "--cache names" in err and "which is a file" in err
    code, _, err = run_main(capsys, "report", "--corpus", tiny_folder, "--out", tmp_path)
    assert code == 2 and "which is a folder" in err


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root ignores permissions")
def test_cli_unwritable_out_is_an_error(tiny_folder, tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    code, _, err = run_main(capsys, "eval", "--corpus", tiny_folder, "--out", ro / "sub")
    assert code == 2 and "cannot be written" in err


def test_unusable_cache_folder_warns_and_continues(tmp_path, capsys, monkeypatch):
    from ragdiag.index import store
    from ragdiag.cli import common as cli

    def refuse(*a, **k):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(store.Store, "__init__", refuse)
    args = type("A", (), {"no_cache": False, "cache": str(tmp_path / "c")})()
    assert cli.open_store(args) is None
    assert "continuing without it" in capsys.readouterr().err


def test_report_never_overwrites_an_unrelated_markdown_twin(tmp_path):
    from ragdiag.present.report.render import markdown_twin

    readme = tmp_path / "README.md"
    readme.write_text("# My project\n")
    with pytest.raises(ValueError, match="not a ragdiag report; it is not overwritten.*--md"):
        markdown_twin(tmp_path / "README.html")
    assert markdown_twin(tmp_path / "README.html", tmp_path / "r.md") == tmp_path / "r.md"
    ours = tmp_path / "report.md"
    ours.write_text("# ragdiag retrieval report: E/hybrid on kb\n")
    assert markdown_twin(tmp_path / "report.html") == ours  # an earlier report is refreshed
    with pytest.raises(ValueError, match="same file"):
        markdown_twin(tmp_path / "x.html", tmp_path / "x.html")
    assert readme.read_text() == "# My project\n"


# ----- the store --------------------------------------------------------------------------------------

def _stamp(root: str, n: int = 2):
    from ragdiag.index.encoder.protocols import EncoderStamp
    from ragdiag.index.store.stamps import IndexStamp

    enc = EncoderStamp("fake", "0" * 64, 2, 8, "mean", True, "fp32")
    return IndexStamp.build(enc, corpus_sha256="a" * 64, corpus_root=root, chunking={"name": "C"}, n_chunks=n)


class Ones:  # a FAKE encoder: every text maps to the same unit vector
    from ragdiag.index.encoder.protocols import EncoderStamp

    stamp = EncoderStamp("fake", "0" * 64, 2, 8, "mean", True, "fp32")

    def encode(self, texts, *, progress=None):
        return np.tile(np.float32([0.6, 0.8]), (len(texts), 1))


def test_index_clear_corpus_clears_that_corpus_only(tmp_path, capsys):
    from ragdiag.index.store import Store

    a, b = str(tmp_path / "kb_a"), str(tmp_path / "kb_b")
    with Store(tmp_path / "cache") as store:
        store.embed(Ones(), ["a1", "a2", "b1", "b2"])
        store.record_index(_stamp(a), texts=["a1", "a2"])
        store.record_index(_stamp(b), texts=["b1", "b2"])
    code, out, err = run_main(capsys, "index", "clear", "--corpus", a, "--cache", tmp_path / "cache")
    assert code == 0, err
    assert f"removing 1 index(es) of corpus {a!r}" in out
    with Store(tmp_path / "cache") as store:
        assert [s.corpus_root for s in store.indexes()] == [os.path.abspath(b)]
        assert store.embed(Ones(), ["b1", "b2"]).reused == 2 and store.embed(Ones(), ["a1"]).computed == 1


def test_store_deleted_during_a_run_is_noticed(tmp_path):
    from ragdiag.index.store import Store

    with Store(tmp_path / "cache") as store:
        store.embed(Ones(), ["a"])
        for f in (tmp_path / "cache").iterdir():
            if f.name.startswith("ragdiag.sqlite"):
                f.unlink()
        with pytest.warns(RuntimeWarning, match="deleted or replaced while in use"):
            store.embed(Ones(), ["b"])
        assert (tmp_path / "cache" / "ragdiag.sqlite").exists()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert store.embed(Ones(), ["b"]).reused == 1  # written to the new file, not lost


def test_report_refuses_to_overwrite_before_any_work(tiny_folder, tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text("# Mine\n")
    code, _, err = run_main(capsys, "report", "--corpus", tiny_folder, "--out", tmp_path / "README.html",
                            "--cache", tmp_path / "cache")
    assert code == 2 and "is not a ragdiag report; it is not overwritten" in err
    assert readme.read_text() == "# Mine\n" and not (tmp_path / "README.html").exists()


def test_eval_run_keep_above_the_run_length_works(tiny_folder, tmp_path, capsys):
    """A run with two hits per query and the default keep of 4: the sweep keeps both, no traceback."""
    run = tmp_path / "short.jsonl"
    run.write_text("\n".join(json.dumps({"query_id": q, "hits": [{"text": "a", "score": 0.2},
                                                                 {"text": "b", "score": 0.4}]})
                             for q in ("q1:course", "o1")), encoding="utf-8")
    code, out, err = run_main(capsys, "eval-run", run, "--corpus", tiny_folder, "--distances", "--no-cache")
    assert code == 0, err
    assert "threshold sweep of ext/short (keep 4)" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("0.300")]
    assert rows and "Traceback" not in err


def test_ingest_of_a_huge_tree_stops_at_the_file_limit(tmp_path, capsys, monkeypatch):
    root = tmp_path / "tree"
    for i in range(30):
        (root / f"d{i % 3}").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 3}" / f"f{i}.txt").write_text("x")
    monkeypatch.setenv("RAGDIAG_MAX_FILES", "10")
    code, _, err = run_main(capsys, "ingest", root)
    assert code == 2 and "more than 10 files" in err and "RAGDIAG_MAX_FILES" in err


def test_served_config_is_safe_by_default():
    import tomllib

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1"
    assert config["client"]["showErrorDetails"] == "none"
    assert config["server"]["maxUploadSize"] * 1_000_000 == Limits().max_run_bytes


def test_report_carries_the_evaluation_notes(tiny_corpus, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.present.report.build import build_report

    data = json.loads(json.dumps(__import__("conftest").TINY_TRUTH))
    data["ood"].append({"id": "o3", "kind": "far", "query": "量子色動力学"})
    ev = evaluate(tiny_corpus, parse_truth(data, tiny_corpus), encoder=fake_encoder, strategies="C",
                  retrievers="dense,bm25,hybrid")
    report = build_report(ev, config="C/hybrid", cut=0.6, keep=4)
    assert "share no word with any chunk of C" in report.to_html()
    assert "share no word with any chunk of C" in report.to_markdown()
