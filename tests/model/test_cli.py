"""Tests for the CLI on the tiny corpus folder (conftest.py ``tiny_folder``).

Runs that evaluate load the real model and are marked ``model``; they call
``ragdiag.cli.parser.main`` in-process (the libraries are imported once) and one
bad-input run goes through ``python -m ragdiag`` to check the entry point.
Bad input is rejected before any model is loaded, so those tests are fast.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ragdiag.cli.parser import main
from ragdiag.documents.corpus import load_corpus

REPO = Path(__file__).resolve().parents[2]
CONFIGS = ("C/dense", "C/bm25", "C/hybrid")
PER_QUERY_HEAD = ["strategy", "retriever", "query_id", "question_id", "phrasing", "needle_rank", "outcome", "kept",
                  "needle_distance", "top1_distance"]


def run_main(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.model
def test_eval_prints_the_table_and_writes_outputs(tiny_folder, tmp_path, capsys):
    out_dir = tmp_path / "out"
    # no --truth: the truth file beside the folder (tiny.truth.json) is found by convention
    code, out, err = run_main(capsys, "eval", "--corpus", tiny_folder, "--cache", tmp_path / "cache",
                              "--strategies", "C", "--retrievers", "dense,bm25,hybrid", "--out", out_dir)
    assert code == 0, err
    lines = out.splitlines()
    assert "2 documents" in out and "4 questions, 8 in-domain queries, 2 ood" in out
    header = next(line for line in lines if line.startswith("config"))
    for col in (*(f"R@{k} (95% interval)" for k in (1, 4, 8, 20)), "MRR", "destroyed", "chunks"):
        assert col in header
    for cfg in CONFIGS:
        row = next(line for line in lines if line.startswith(cfg + " "))
        assert re.search(r"\d+% \(\d+–\d+\)", row), row  # Interval's text, "59% (47–71)"
    assert "phrasing: course" in out and "phrasing: ticket" in out
    assert "destroyed by C: q1" not in out and "destroyed by C: q3" in out
    assert "embedded" in err  # the stderr summary of the run

    summary = json.loads((out_dir / "summary.json").read_text())
    assert {"model", "versions", "corpus", "summary"} <= set(summary)
    assert summary["corpus"]["sha256"] == load_corpus(tiny_folder).sha256
    assert summary["model"]["model"] == "sentence-transformers/all-MiniLM-L6-v2" and summary["model"]["dim"] == 384
    assert {"python", "torch", "transformers", "numpy"} <= set(summary["versions"])
    assert [r["config"] for r in summary["summary"]] == list(CONFIGS)
    for r in summary["summary"]:
        assert r["queries"] == 8 and r["destroyed"] == 1
        assert 0 <= r["R@1_low"] <= r["R@1"] <= r["R@1_high"] <= 1
    assert set(summary["by_phrasing"]) == {"course", "ticket"}

    with open(out_dir / "per_query.csv", newline="") as f:
        rows = list(csv.DictReader(f))
        columns = list(rows[0])
    assert columns[: len(PER_QUERY_HEAD)] == PER_QUERY_HEAD
    assert len(rows) == 3 * 10
    assert {r["phrasing"] for r in rows} == {"course", "ticket", "ood"}
    for r in rows:
        if r["outcome"] in ("destroyed", "bluff", "abstained"):
            assert r["needle_rank"] == "", r  # absent, not 0
        elif r["outcome"] not in ("not-in-pool", "truncated"):  # BM25's not retrieved: no rank either
            assert int(r["needle_rank"]) >= 1
        assert (r["question_id"] == "") == (r["phrasing"] == "ood")
    assert {r["outcome"] for r in rows if r["query_id"].startswith("q3:")} == {"destroyed"}
    # the store was used
    assert any((tmp_path / "cache").iterdir())


@pytest.mark.model
def test_compare_prints_the_paired_test_over_questions(tiny_folder, capsys):
    code, out, err = run_main(capsys, "compare", "C/dense", "C/bm25", "--k", "4", "--corpus", tiny_folder,
                              "--no-cache")
    assert code == 0, err
    m = re.search(r"C/dense vs C/bm25 at R@4 \(all\), over 4 questions: wins (\d+), losses (\d+), ties (\d+); "
                  r"exact sign-flip test p = ([0-9.e-]+)", out)
    assert m, out
    assert int(m[1]) + int(m[2]) + int(m[3]) == 4  # questions, not the 8 queries
    verdict = out.splitlines()[1]
    assert verdict.startswith("C/dense vs C/bm25 at R@4 over 4 questions: ")
    assert ": not shown different: " in verdict or " is ahead: wins " in verdict


@pytest.mark.model
def test_compare_json_counts_questions_and_p_is_the_sign_flip_of_the_discordant_queries(tiny_folder, capsys):
    from collections import Counter

    from ragdiag.analyses.compare.paired import sign_flip_test

    code, out, err = run_main(capsys, "compare", "C/dense", "C/bm25", "--k", "4", "--corpus", tiny_folder,
                              "--no-cache", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["unit"] == "question" and doc["n_questions"] == 4 and doc["phrasings_per_question"] == 2
    assert doc["wins"] + doc["losses"] + doc["ties"] == 4
    assert doc["family_size"] == 1 and doc["p_adjusted"] == doc["p"]  # no family: the pair alone, exact
    assert set(doc["difference"]) == {"estimate", "low", "high", "kind"} and doc["difference"]["kind"] == "simultaneous"
    assert (doc["status"] == "different") == (doc["difference"]["low"] > 0 or doc["difference"]["high"] < 0)
    assert set(doc["mrr"]["difference"]) == {"estimate", "low", "high", "kind"}
    # rebuild each question's difference from the discordant queries the JSON lists
    plus = Counter(q.split(":")[0] for q in doc["discordant_queries"]["a_finds"])
    minus = Counter(q.split(":")[0] for q in doc["discordant_queries"]["b_finds"])
    d = [plus[q] - minus[q] for q in ("q1", "q2", "q3", "q4")]
    assert doc["p"] == sign_flip_test(d)
    assert doc["wins"] == sum(x > 0 for x in d) and doc["losses"] == sum(x < 0 for x in d)
    assert doc["difference"]["estimate"] == pytest.approx(sum(d) / 8)

    code, out, err = run_main(capsys, "compare", "C/dense", "C/bm25", "--k", "4", "--corpus", tiny_folder,
                              "--no-cache", "--json", "--family", "all", "--strategies", "C",
                              "--retrievers", "dense,bm25,hybrid")
    fam = json.loads(out)
    assert fam["family_size"] == 3 and fam["p_adjusted"] >= fam["p"] == doc["p"]
    code, out, err = run_main(capsys, "compare", "C/dense", "C/bm25", "--corpus", tiny_folder, "--no-cache",
                              "--family", "planned")
    assert code == 2 and "needs a baseline declared before looking" in err


@pytest.mark.model
def test_pairs_lists_the_family_over_questions(tiny_folder, capsys):
    code, out, err = run_main(capsys, "pairs", "--strategies", "C", "--retrievers", "dense,bm25,hybrid",
                              "--corpus", tiny_folder, "--no-cache", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["unit"] == "question" and doc["family_size"] == 3 and doc["k"] == 4
    for r in doc["rows"]:
        assert r["wins"] + r["losses"] + r["ties"] == 4 and r["p_adjusted"] >= r["p"]
        assert (r["status"] == "different") == (r["difference"]["low"] > 0 or r["difference"]["high"] < 0)
        assert r["difference"]["kind"] == "simultaneous" and "low" in r["mrr"]["difference"]
    code, out, err = run_main(capsys, "pairs", "--strategies", "C", "--retrievers", "dense,bm25,hybrid",
                              "--baseline", "C/hybrid", "--corpus", tiny_folder, "--no-cache", "--json")
    doc = json.loads(out)
    assert doc["family_size"] == 2 and all(r["a"] == "C/hybrid" for r in doc["rows"])


@pytest.mark.model
def test_sweep_prints_the_table(tiny_folder, capsys):
    code, out, err = run_main(capsys, "sweep", "C/dense", "--keep", "2", "--corpus", tiny_folder, "--no-cache",
                              "--cut", "0.95")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("C/dense: the gate keeps at most 2 chunks") and "8 answerable queries, 2 out-of-domain" in lines[0]
    assert "dense model" in lines[0]  # the distance the gate uses is named
    assert lines[1].split() == ["cut", "answered", "wrong_sources", "no_answer", "lost", "bluffs", "abstained",
                                "bluffs_near", "bluffs_far"]
    table = []
    for line in lines[3:]:
        if not line.strip():
            break
        table.append([float(x) for x in line.split()])
    assert len(table) == 25  # 0.3 to 0.9 by 0.025
    assert table[0][0] == 0.3 and table[-1][0] == 0.9
    # every row against a brute-force gate over the same evaluation: top 2 ranked, kept when closer than the cut
    import ragdiag

    corpus = ragdiag.load_corpus(tiny_folder)
    truth = ragdiag.load_truth(Path(tiny_folder).parent / "tiny.truth.json", corpus)
    ev = ragdiag.evaluate(corpus, truth, encoder=ragdiag.load_encoder(),
                          strategies="C", retrievers="dense")
    for cut, answered, wrong_sources, no_answer, lost, bluffs, abstained, near, far in table:
        assert (answered, wrong_sources, no_answer, bluffs, near, far) == _brute_gate(ev, cut), cut
        assert lost == 8 - answered and abstained == 2 - bluffs, cut
    assert "bluffing out-of-domain queries at cut 0.95:" in out
    assert "out-of-domain queries bluff" in out


def _brute_gate(ev, cut: float, keep: int = 2) -> tuple[int, ...]:
    """C/dense at (keep, cut) counted query by query from the kept chunks: answered, wrong sources, no answer,
    bluffs, near bluffs, far bluffs (the oracle of the sweep's rows)."""
    from ragdiag.analyses.threshold.gate import kept_chunks
    from ragdiag.core.gate import Gate

    res = ev.result("C/dense")
    kept = [kept_chunks(res, i, Gate(keep, cut)) for i in range(len(ev.queries))]
    holds = [any(res.top_holds[i, list(res.top_order[i]).index(o)] for o, _ in k) for i, k in enumerate(kept)]
    qs = ev.queries
    return (sum(h for h, q in zip(holds, qs) if q.in_domain),
            sum(bool(k) and not h for k, h, q in zip(kept, holds, qs) if q.in_domain),
            sum(not k for k, q in zip(kept, qs) if q.in_domain),
            sum(bool(k) for k, q in zip(kept, qs) if not q.in_domain),
            sum(bool(k) for k, q in zip(kept, qs) if not q.in_domain and q.kind == "near"),
            sum(bool(k) for k, q in zip(kept, qs) if not q.in_domain and q.kind == "far"))


@pytest.mark.model
def test_sweep_and_threshold_json(tiny_folder, capsys):
    code, out, err = run_main(capsys, "sweep", "C/dense", "--keep", "2", "--corpus", tiny_folder, "--no-cache",
                              "--json", "--start", "0.5", "--stop", "1", "--step", "0.1")
    assert code == 0, err
    doc = json.loads(out)
    assert [r["cut"] for r in doc["rows"]] == pytest.approx([0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    import ragdiag

    corpus = ragdiag.load_corpus(tiny_folder)
    ev = ragdiag.evaluate(corpus, ragdiag.load_truth(Path(tiny_folder).parent / "tiny.truth.json", corpus),
                          encoder=ragdiag.load_encoder(), strategies="C", retrievers="dense")
    for row in doc["rows"]:
        assert set(row) == {"cut", "answered", "wrong_sources", "no_answer", "bluffs", "bluffs_near", "bluffs_far"}
        counts = tuple(row[key]["count"] for key in ("answered", "wrong_sources", "no_answer", "bluffs", "bluffs_near",
                                                     "bluffs_far"))
        assert counts == _brute_gate(ev, row["cut"]), row["cut"]
        for key, cell in row.items():
            if key != "cut":
                assert set(cell) == {"count", "rate", "low", "high"}
                assert cell["low"] <= cell["rate"] <= cell["high"]
    code, out, err = run_main(capsys, "threshold", "C/dense", "--keep", "2", "--corpus", tiny_folder, "--no-cache",
                              "--max-bluff", "0.5", "--json", "--folds", "2")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["rule"].startswith("the largest cut at which at most 50.0%")
    assert doc["in_sample"]["bluffs"]["count"] <= 1 and doc["in_sample_cut"] == doc["in_sample"]["cut"]
    assert doc["cross_validation"] == {"folds": 2, "grouped_by": "question", "seed": doc["cross_validation"]["seed"],
                                       "fold_cuts": doc["cross_validation"]["fold_cuts"]}
    # 2 ood queries: j = floor(0.5 * 3) = 1, the smallest ood distance certifies 1/3 <= 50%
    assert doc["conformal_cut"] is not None and doc["conformal"].startswith("the 1st smallest of 2 out-of-domain")
    assert doc["conformal_cut"] <= doc["in_sample_cut"] and doc["cut"] == doc["conformal_cut"]
    assert "dense model" in doc["distance"]
    code, out, err = run_main(capsys, "threshold", "C/dense", "--keep", "2", "--corpus", tiny_folder, "--no-cache",
                              "--max-bluff", "0.05", "--json")
    doc = json.loads(out)
    assert doc["conformal_cut"] is None and "it takes at least 19" in doc["conformal"]  # 1/0.05 - 1


def write_truth(path, questions, ood=()):
    path.write_text(json.dumps({"questions": questions, "ood": list(ood)}), encoding="utf-8")
    return path


@pytest.fixture
def dup_folder(tmp_path):
    folder = tmp_path / "dup"
    folder.mkdir()
    sentence = "This sentence appears twice in the corpus, word for word."
    (folder / "a.md").write_text(f"# A\n\n{sentence}\n\n## More\n\n{sentence}\n", encoding="utf-8")
    return folder, sentence


BAD_INPUTS = ["missing corpus folder", "needle occurs twice", "unknown strategy", "bad config", "unreadable truth",
              "unknown phrasing", "sweep step too small", "cut not finite", "cut out of range", "no goal"]


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_exits_2_saying_what_to_fix(case, tiny_folder, dup_folder, tmp_path, capsys):
    truth = tiny_folder.parent / "tiny.truth.json"
    if case == "missing corpus folder":
        argv = ["eval", "--corpus", tmp_path / "nope", "--no-cache"]
        expected = ["does not exist", "nope", "pass a folder"]
    elif case == "needle occurs twice":
        folder, sentence = dup_folder
        t = write_truth(tmp_path / "t.json", [{"id": "q1", "needle": sentence, "queries": {"course": "twice?"}}])
        argv = ["eval", "--corpus", folder, "--truth", t, "--no-cache"]
        expected = ["question q1", "occurs 2 times", "exactly once"]
    elif case == "unknown strategy":
        argv = ["eval", "--corpus", tiny_folder, "--truth", truth, "--strategies", "Z", "--no-cache"]
        expected = ["unknown strategy Z", "choose from A,B,C,D,E,F"]
    elif case == "bad config":
        argv = ["compare", "E-dense", "C/bm25", "--corpus", tiny_folder, "--no-cache"]
        expected = ["'E-dense'", "STRATEGY/RETRIEVER", "E/hybrid"]
    elif case == "unknown phrasing":
        argv = ["compare", "C/dense", "C/bm25", "--phrasing", "tciket", "--corpus", tiny_folder, "--no-cache"]
        expected = ["unknown phrasing 'tciket'", "all, course, ticket"]
    elif case == "sweep step too small":
        argv = ["sweep", "C/dense", "--step", "1e-9", "--corpus", tiny_folder, "--no-cache"]
        expected = ["at most 2001", "use a step of at least"]
    elif case == "cut not finite":
        argv = ["sweep", "C/dense", "--cut", "nan", "--corpus", tiny_folder, "--no-cache"]
        expected = ["finite cosine distance in [0, 2]"]
    elif case == "cut out of range":
        argv = ["sweep", "C/dense", "--stop", "3", "--corpus", tiny_folder, "--no-cache"]
        expected = ["finite cosine distance in [0, 2]", "3.0"]
    elif case == "no goal":
        argv = ["threshold", "C/dense", "--corpus", tiny_folder, "--no-cache"]
        expected = ["exactly one goal", "--max-bluff"]
    else:
        bad = tmp_path / "bad.json"
        bad.write_text('{"questions": [\n  {"id": "q1",,}\n]}', encoding="utf-8")
        argv = ["eval", "--corpus", tiny_folder, "--truth", bad, "--no-cache"]
        expected = ["bad.json", "invalid JSON at line 2"]
    code, out, err = run_main(capsys, *argv)
    assert code == 2
    assert err.startswith("error: ")
    assert "Traceback" not in err
    for text in expected:
        assert text in err, (text, err)


def test_python_m_ragdiag_entry_point_reports_bad_input(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "eval", "--corpus", str(tmp_path / "missing"), "--no-cache"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "error: corpus folder" in proc.stderr and "does not exist" in proc.stderr
    assert proc.stdout == ""


def test_exit_statuses_of_main(tmp_path, capsys, monkeypatch):
    """0 done, 1 nothing loaded (ingest), 2 bad input, 130 interrupted: whichever module holds the command."""
    from ragdiag.cli import data

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "x.pdf").write_text("not a PDF", encoding="utf-8")
    assert run_main(capsys, "ingest", broken)[0] == 1
    assert run_main(capsys, "ingest", broken, "--max-pages", "0")[0] == 2

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(data, "cmd_ingest", interrupted)
    code, _, err = run_main(capsys, "ingest", broken)
    assert code == 130 and "interrupted" in err
