"""The run history (``ragdiag history``, ``gate --history``): what it keeps, what it recomputes, two writers at once.

The end-to-end runs use the held-out corpus of ``test_regression_gate`` with
the FAKE encoder (plumbing: its numbers are not MiniLM's). The measures the
history recomputes are checked against the gate's own report of the same
folder, an independent path through the same files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ragdiag.core.gate import Gate
from ragdiag.present.history import HistoryError, open_history
from ragdiag.present.regression.runs import DestroyedRecord
from handmade import hand_run
from heldout import heldout_run, run
from processes import child_pythonpath


@pytest.fixture
def evaluated(tmp_path, monkeypatch, capsys):
    """An `eval --out` folder of the held-out corpus (strategies A and C, dense), FAKE encoder."""
    monkeypatch.setenv("RAGDIAG_ENCODER", "fakes:fake_encoder")
    return heldout_run(tmp_path, capsys, "dense")


def test_added_run_measures_equal_the_gates_own_numbers(evaluated, capsys):
    out = evaluated["out"]
    code, text, err = run(capsys, "history", "add", out, "--label", "main", "--commit", "abc1234def")
    assert code == 0, err
    path = out.parent / "ragdiag-history.sqlite"  # the default: beside the run folder
    assert text.strip() == f"added run 1 (A/dense, C/dense) to {path}"
    code, gate_json, err = run(capsys, "gate", out, out, "--config", "C/dense", "--candidate-config", "A/dense",
                               "--json")
    gate = {c["name"]: c for c in json.loads(gate_json)["checks"]}
    with open_history(path) as hist:
        c, a = hist.measures(1, "C/dense"), hist.measures(1, "A/dense")
    # the gate's baseline is C/dense, its candidate A/dense: the history recomputes both from what it stored
    assert (c.recall.estimate, a.recall.estimate) == (gate["recall"]["baseline"], gate["recall"]["candidate"])
    assert (c.answered.estimate, a.answered.estimate) == (gate["answered"]["baseline"],
                                                          gate["answered"]["candidate"])
    assert (c.bluffs.estimate, a.bluffs.estimate) == (gate["bluffs"]["baseline"], gate["bluffs"]["candidate"])
    assert (c.destroyed, a.destroyed) == (0, 3)  # A's blind 512-character cuts destroy q1, q2, q3
    # 6 questions x 2 phrasings answerable, 3 out-of-domain queries; the interval holds the estimate
    assert (c.recall.trials, c.bluffs.trials) == (12, 3)
    assert c.recall.low <= c.recall.estimate <= c.recall.high

    code, listing, _ = run(capsys, "history", "list", "--history", path, "--json")
    [entry] = json.loads(listing)
    assert entry["label"] == "main" and entry["commit"] == "abc1234def" and entry["verdict"] is None
    assert entry["configs"] == ["A/dense", "C/dense"] and len(entry["truth_sha256"]) == 64
    summary = json.loads((out / "summary.json").read_text())
    assert entry["truth_sha256"] == summary["truth"]["sha256"]
    with open_history(path) as hist:
        kept = hist.details(1)
    assert kept["summary"] == summary and kept["stamps"]["ragdiag_version"] == summary["ragdiag_version"]


def test_gate_history_records_the_verdict_and_keeps_failures_out_of_the_trend(evaluated, capsys):
    out, hist_path = evaluated["out"], evaluated["tmp"] / "h.sqlite"
    assert run(capsys, "gate", out, out, "--config", "C/dense", "--history", hist_path)[0] == 0
    code, _, err = run(capsys, "gate", out, out, "--config", "C/dense", "--candidate-config", "A/dense",
                       "--history", hist_path)
    assert code == 1 and f"added run 2 (fail) to {hist_path}" in err
    with open_history(hist_path) as hist:
        first, second = hist.runs()
        assert (first.verdict, first.accepted, second.verdict, second.accepted) == ("pass", True, "fail", False)
        assert hist.details(2)["gate"]["verdict"] == "fail" and hist.details(2)["summary"]["truth"]
        # kept under the gated configuration (the slot you ship); the gate's report says what it was
        assert [(p.run.id, p.run.accepted) for p in hist.trend("C/dense")] == [(1, True), (2, False)]
        assert "configuration: C/dense -> A/dense" in hist.details(2)["gate"]["changes"]
        assert hist.measures(2, "C/dense").destroyed == 3  # A's blind cuts, recorded as the candidate was
    # without FILE: beside the baseline
    assert run(capsys, "gate", out, out, "--config", "C/dense", "--history")[0] == 0
    assert (out.parent / "ragdiag-history.sqlite").is_file()


def _q(qid: str, rank: int, good: float, *, kind="answerable", first=None) -> tuple:
    return (qid, qid.split(".")[0] if kind == "answerable" else "", kind, f"text of {qid}", rank,
            good if first is None else first, good)


def _run(sha: str, queries, destroyed=()):
    return hand_run(queries, destroyed=destroyed, truth_sha256=sha, questions=2, gate=Gate(4, 0.6, 4))


def test_changes_against_the_previous_accepted_run_on_the_same_truth(tmp_path):
    # q1 found at rank 2 and answered (0.5 < 0.6) in run 1; at rank 7 and not answered (0.7) in run 2;
    # the off-topic o1 bluffs in run 1 (0.55 < 0.6) and not in run 2 (0.65)
    one = [_q("q1.a", 2, 0.5), _q("q2.a", 1, 0.3), _q("o1", 0, 2.0, kind="far", first=0.55)]
    two = [_q("q1.a", 7, 0.7), _q("q2.a", 1, 0.3), _q("o1", 0, 2.0, kind="far", first=0.65)]
    with open_history(tmp_path / "h.sqlite") as hist:
        assert hist.add([_run("a" * 64, one)], label="main") == 1
        assert hist.add([_run("a" * 64, two)], verdict="fail") == 2
        assert hist.add([_run("b" * 64, two, [DestroyedRecord("q2", "d", 0, 9, (5,))])]) == 3
        assert hist.add([_run("b" * 64, one)]) == 4
        prev, changes = hist.changes(2, "E/hybrid")
        assert prev.id == 1
        got = {(c.query_id, c.measure, c.before, c.after, c.better) for c in changes}
        assert got == {("q1.a", "found in top 4", True, False, False), ("q1.a", "answered", True, False, False),
                       ("o1", "bluff", True, False, True)}
        # run 3 is on another ground truth: marked, a new segment, nothing to compare with
        runs = hist.runs()
        assert [r.truth_changed for r in runs] == [False, False, True, False]
        assert hist.changes(3, "E/hybrid") == (None, ())
        # run 4 compares with run 3 (same truth, accepted), never with the failed run 2
        assert hist.changes(4, "E/hybrid")[0].id == 3
        trend = hist.trend("E/hybrid")
        assert [p.segment for p in trend] == [0, 0, 1, 1]
        m = trend[2].measures
        # run 3: R@4 1 of 2 questions, answered 1 of 2, bluffs 0 of 1, one destroyed needle
        assert (m.recall.successes, m.recall.trials, m.answered.successes, m.bluffs.successes, m.destroyed) == \
            (1, 2, 1, 0, 1)


def test_two_concurrent_writers_lose_no_run(tmp_path, evaluated):
    """Two processes add 25 runs each to one new file at the same time: 50 runs, every one complete."""
    path = tmp_path / "shared.sqlite"
    go = tmp_path / "go"
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from ragdiag.present.history import open_history
        while not Path({str(go)!r}).exists():
            time.sleep(0.01)
        with open_history({str(path)!r}) as hist:
            for i in range(25):
                hist.add_folder({str(evaluated["out"])!r}, label=f"writer {{sys.argv[1]}} #{{i}}")
    """)
    env = {**os.environ, "PYTHONPATH": child_pythonpath()}
    procs = [subprocess.Popen([sys.executable, "-c", code, w], env=env, stderr=subprocess.PIPE, text=True)
             for w in "AB"]
    go.touch()  # both start writing together
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    with open_history(path) as hist:
        runs = hist.runs()
        assert len(runs) == 50 and [r.id for r in runs] == list(range(1, 51))
        assert sorted(r.label for r in runs) == sorted(f"writer {w} #{i}" for w in "AB" for i in range(25))
        assert all(len(hist.table(r.id, "C/dense").query_ids) == 15 for r in runs)  # 12 answerable + 3 out of domain
        assert hist._con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_show_and_list_read_as_sentences(evaluated, capsys):
    out, path = evaluated["out"], evaluated["tmp"] / "h.sqlite"
    run(capsys, "history", "add", out, "--history", path, "--config", "C/dense", "--label", "main")
    run(capsys, "gate", out, out, "--config", "C/dense", "--candidate-config", "A/dense", "--history", path)
    code, text, _ = run(capsys, "history", "list", "--history", path)
    assert code == 0
    lines = text.splitlines()
    assert lines[0].split() == ["id", "time", "label", "commit", "truth_sha256", "verdict", "configs"]
    assert lines[2].split()[-2:] == ["-", "C/dense"] and lines[3].split()[-2:] == ["fail", "C/dense"]
    code, text, _ = run(capsys, "history", "show", "1", "--history", path)
    assert code == 0 and "C/dense at cut 0.6, keep 4:" in text and "destroyed needles: 0" in text
    assert "no earlier accepted run" in text


@pytest.mark.parametrize("argv, message", [
    (["show", "7"], "no run 7"),
    (["list"], "does not exist"),
])
def test_bad_history_input_exits_2(tmp_path, capsys, argv, message):
    path = tmp_path / ("h.sqlite" if argv[0] == "show" else "absent.sqlite")
    if argv[0] == "show":
        open_history(path).close()
    code, out, err = run(capsys, "history", *argv, "--history", path)
    assert code == 2 and message in err and "Traceback" not in err


def test_a_file_that_is_not_a_history_is_refused(tmp_path):
    import sqlite3

    other = tmp_path / "app.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE users (name TEXT)")
    with pytest.raises(HistoryError, match="not a ragdiag history"):
        open_history(other)
    (tmp_path / "text.sqlite").write_text("hello, not a database" * 100)
    with pytest.raises(HistoryError, match="cannot be opened"):
        open_history(tmp_path / "text.sqlite")


def test_export_without_mlflow_says_how_to_install_it(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("mlflow") is not None:
        pytest.skip("mlflow is installed here: the export itself is tested")
    path = tmp_path / "h.sqlite"
    with open_history(path) as hist:
        hist.add([_run("a" * 64, [_q("q1.a", 1, 0.3)])])
    code, out, err = run(capsys, "history", "export", "1", "--mlflow", f"file:{tmp_path / 'mlruns'}",
                         "--history", path)
    assert code == 2 and "pip install mlflow" in err


def test_export_to_mlflow_writes_metrics_summary_and_table(evaluated, capsys, tmp_path, monkeypatch):
    """Against a local file-store tracking URI; read back with MLflow's own client."""
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
    out, path = evaluated["out"], tmp_path / "h.sqlite"
    run(capsys, "history", "add", out, "--history", path, "--label", "main", "--commit", "abc1234")
    uri = (tmp_path / "mlruns").as_uri()
    code, text, err = run(capsys, "history", "export", "1", "--mlflow", uri, "--history", path)
    assert code == 0, err
    client = mlflow.MlflowClient(tracking_uri=uri)
    [found] = client.search_runs([client.get_experiment_by_name("ragdiag").experiment_id])
    assert text.strip().endswith(f"MLflow run {found.info.run_id})")
    with open_history(path) as hist:
        m = hist.measures(1, "C/dense")
    metrics = found.data.metrics
    assert metrics["C/dense/recall_at_4"] == m.recall.estimate and metrics["C/dense/bluffs_high"] == m.bluffs.high
    assert metrics["A/dense/destroyed"] == 3
    assert found.data.tags["ragdiag.commit"] == "abc1234" and found.data.params["C/dense/cut"] == "0.6"
    local = Path(client.download_artifacts(found.info.run_id, "", str(tmp_path / "art")))
    assert json.loads((local / "summary.json").read_text()) == json.loads((out / "summary.json").read_text())
    table = json.loads((local / "per_query.json").read_text())
    assert len(table["data"]) == 2 * 15  # two configurations x (12 answerable + 3 out-of-domain queries)


def test_report_includes_the_last_runs_as_one_chart(evaluated, capsys):
    out, tmp = evaluated["out"], evaluated["tmp"]
    path = tmp / "h.sqlite"
    for label in ("main", "next"):
        run(capsys, "history", "add", out, "--history", path, "--config", "C/dense", "--label", label)
    run(capsys, "gate", out, out, "--config", "C/dense", "--candidate-config", "A/dense", "--history", path)
    report = tmp / "report.html"
    code, text, err = run(capsys, "report", "--corpus", evaluated["folder"], "--truth", evaluated["truth"],
                          "--no-cache", "--strategies", "A,C", "--retrievers", "dense", "--config", "C/dense",
                          "--no-cost", "--history", path, "--history-runs", "2", "--out", report)
    assert code == 0, err
    md = report.with_suffix(".md").read_text(encoding="utf-8")
    section = md.split("## The last runs", 1)[1]
    assert "The last 2 of 3 kept runs of C/dense." in section
    with open_history(path) as hist:
        m2, m3 = hist.measures(2, "C/dense"), hist.measures(3, "C/dense")
    rows = [line for line in section.splitlines() if line.startswith("| 2 ") or line.startswith("| 3 ")]
    pct = lambda iv: f"{100 * iv.estimate:.0f}% ({100 * iv.low:.0f}–{100 * iv.high:.0f})"  # noqa: E731
    assert pct(m2.recall) in rows[0] and "not gated" in rows[0] and rows[0].rstrip("| ").endswith("0")
    assert pct(m3.recall) in rows[1] and "fail" in rows[1] and rows[1].rstrip("| ").endswith("3")
    html = report.read_text(encoding="utf-8")
    assert '<section id="history">' in html and ">run 2</text>" in html and ">run 3</text>" in html
    # a file that is not there is refused before any evaluation
    code, _, err = run(capsys, "report", "--history", tmp / "absent.sqlite", "--out", tmp / "r2.html")
    assert code == 2 and "does not exist" in err


def test_a_history_written_by_the_previous_release_reads_as_it_is_and_migrates_when_written(tmp_path):
    """``fixtures/history-v1.sqlite`` was written by the release before schema 2 (``history add`` of the bundled
    corpus's ``eval --out``, C/dense and E/hybrid, twice): a reader lists the same runs without writing, a
    writer migrates it (``first``/``good`` -> ``closest``/``closest_holder``) and reads the same measures."""
    import shutil
    import sqlite3

    path = tmp_path / "h.sqlite"
    shutil.copyfile(Path(__file__).parents[1] / "fixtures" / "history-v1.sqlite", path)
    # what the previous release printed for `history show 2` (counts; the intervals are rates_at's now)
    expected = {"C/dense": (31, 29, 5, 1), "E/hybrid": (38, 35, 3, 1)}

    def measured(hist):
        return {c: (m.recall.successes, m.answered.successes, m.bluffs.successes, m.destroyed)
                for c in ("C/dense", "E/hybrid") for m in [hist.measures(2, c)]}

    with open_history(path, create=False) as hist:
        runs = hist.runs()
        assert [(r.id, r.label, r.commit, r.configs) for r in runs] == [
            (1, "main", "abc1234", ("C/dense", "E/hybrid")), (2, "pr-7", "", ("C/dense", "E/hybrid"))]
        assert measured(hist) == expected
        assert hist.changes(2, "C/dense")[1] == ()
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 1  # reading did not migrate
    with open_history(path) as hist:
        assert [(r.id, r.label) for r in hist.runs()] == [(1, "main"), (2, "pr-7")]
        assert measured(hist) == expected
        table = hist.table(2, "E/hybrid")
        assert len(table.query_ids) == 94 and table.n_answerable == 64
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 2
        assert {"closest", "closest_holder"} <= {r[1] for r in con.execute("PRAGMA table_info(outcomes)")}
