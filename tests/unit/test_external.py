"""External runs: validation with line numbers, needle containment, tables, paired tests, the CLI."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, replace

import numpy as np
import pytest

from ragdiag.cli.parser import main
from ragdiag.evaluation.records import Evaluation
from ragdiag.analyses.summary import summary_rows
from ragdiag.evaluation.external import RunError, attach_run, parse_run, rank_rungs, run_result
from ragdiag.analyses.compare.comparisons import compare
from ragdiag.analyses.threshold.gate import sweep_table
from ragdiag.analyses.compare.intervals import clustered_rate


def _lines(rows) -> list[str]:
    return [json.dumps(r) for r in rows]


def _chunk_hit(ev, strategy, pos, **extra):
    c = ev.indexes[strategy].chunks[int(pos)]
    return {"text": c.content, **extra}


def test_bad_lines_are_reported_with_line_numbers(tiny_truth):
    lines = [
        '{"query_id": "nope", "hits": []}',
        "not json",
        '{"query_id": "%s", "hits": [{"text": 3}]}' % tiny_truth.queries[0].id,
        '{"query_id": "%s", "hits": []}' % tiny_truth.queries[1].id,
        '{"query_id": "%s", "hits": []}' % tiny_truth.queries[1].id,
        '{"query_id": "%s", "hits": [{"text": "x", "start": 3}]}' % tiny_truth.queries[2].id,
        '{"hits": []}',
    ]
    with pytest.raises(RunError) as err:
        parse_run(lines, tiny_truth)
    msg = str(err.value)
    assert "line 1: unknown query id 'nope'" in msg
    assert "line 2: not valid JSON" in msg
    assert "line 3, hit 1: 'text' must be a string" in msg
    assert "line 5: duplicate query id" in msg and "first on line 4" in msg
    assert "line 6, hit 1: give both 'start' and 'end'" in msg
    assert "line 7: expected" in msg


def test_empty_run_and_distances_without_scores_are_errors(tiny_truth):
    with pytest.raises(RunError, match="no queries"):
        parse_run(["", "  "], tiny_truth)
    q = tiny_truth.queries[0].id
    with pytest.raises(RunError, match="needs a 'score' on every hit"):
        parse_run(_lines([{"query_id": q, "hits": [{"text": "a"}]}]), tiny_truth, distances=True)


def test_missing_queries_count_as_misses(tiny_eval):
    first = tiny_eval.queries[0]
    run = parse_run(_lines([{"query_id": first.id, "hits": []}]), tiny_eval.truth, name="sparse")
    assert len(run.missing) == len(tiny_eval.queries) - 1
    res = run_result(tiny_eval, run)
    in_domain = tiny_eval.in_domain
    assert (res.needle_rank[in_domain] == 0).all()
    rungs = [r for r in rank_rungs(attach_run(tiny_eval, run), run, k=4) if r is not None]
    assert rungs == ["not-in-pool"] + ["missing"] * (int(in_domain.sum()) - 1)  # the first is in the run, empty


def test_containment_by_offsets_or_by_normalised_text(tiny_eval):
    q = next(q for q in tiny_eval.truth.questions)
    qid = f"{q.id}:{q.queries[0][0]}"
    doc = tiny_eval.corpus.document(q.doc_id)
    spaced = "  " + q.needle.replace(" ", "\n   ") + " trailing"
    rows = [{"query_id": qid, "hits": [
        {"text": "unrelated words", "doc": q.doc_id, "start": 0, "end": 5},  # offsets that miss the needle
        {"text": "not the needle either"},
        {"text": spaced},  # text-only hit: whitespace-normalised containment
    ]}]
    res = run_result(tiny_eval, parse_run(_lines(rows), tiny_eval.truth))
    i = tiny_eval.query_index(qid)
    assert res.needle_rank[i] == 3 and res.top_holds[i, :3].tolist() == [False, False, True]
    # Offsets win over text: a hit whose span holds the needle counts even with other text.
    rows[0]["hits"] = [{"text": "(text ignored)", "doc": q.doc_id, "start": q.start, "end": len(doc.text)}]
    res = run_result(tiny_eval, parse_run(_lines(rows), tiny_eval.truth))
    assert res.needle_rank[i] == 1
    rows[0]["hits"][0]["doc"] = "some-other-doc"
    res = run_result(tiny_eval, parse_run(_lines(rows), tiny_eval.truth))
    assert res.needle_rank[i] == 0


def test_a_run_copied_from_a_configuration_scores_the_same(tiny_eval):
    """Plumbing oracle: the run made of C/bm25's own ranked chunk texts gets C/bm25's recall."""
    res = tiny_eval.result("C/bm25")
    rows = [{"query_id": q.id, "hits": [_chunk_hit(tiny_eval, "C", p) for p in res.top_order[i]]}
            for i, q in enumerate(tiny_eval.queries)]
    run = parse_run(_lines(rows), tiny_eval.truth, name="copy")
    ev = attach_run(tiny_eval, run)
    cfg = run.key
    mine, theirs = ev.results[cfg], res
    ind = ev.in_domain
    # Text containment can also find the needle in a chunk that holds it only as text: ranks never get worse.
    assert (np.where(mine.needle_rank[ind] == 0, 99, mine.needle_rank[ind])
            <= np.where(theirs.needle_rank[ind] == 0, 99, theirs.needle_rank[ind])).all()
    rows_by = {r.config: r for r in summary_rows(ev)}
    hits1 = int(((mine.needle_rank >= 1) & (mine.needle_rank <= 1))[ind].sum())
    hits = ((mine.needle_rank >= 1) & (mine.needle_rank <= 1))[ind]
    questions = [q.question_id for q in ev.queries if q.in_domain]
    assert rows_by["ext/copy"].recall[1] == clustered_rate(hits, questions)  # questions are the unit
    assert rows_by["ext/copy"].recall[1].successes == hits1
    assert rows_by["ext/copy"].destroyed is None
    test = compare(ev, cfg, "C/bm25", k=20).test
    by_question: dict[str, int] = {}  # hits summed over a question's phrasings: questions are the unit
    for qid, a, b in zip(questions, (mine.needle_rank[ind] >= 1) & (mine.needle_rank[ind] <= 20),
                         (theirs.needle_rank[ind] >= 1) & (theirs.needle_rank[ind] <= 20)):
        by_question[qid] = by_question.get(qid, 0) + int(a) - int(b)
    d = np.array(list(by_question.values()))
    assert (test.wins, test.losses, test.ties) == (int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum()))
    assert test.n_questions == len(by_question) < len(questions)


def test_sweep_needs_distances_and_uses_them(tiny_eval):
    res = tiny_eval.result("C/dense")
    rows = [{"query_id": q.id, "hits": [_chunk_hit(tiny_eval, "C", p, score=float(d))
                                         for p, d in zip(res.top_order[i, :4], res.top_distance[i, :4])]}
            for i, q in enumerate(tiny_eval.queries)]
    ev = attach_run(tiny_eval, parse_run(_lines(rows), tiny_eval.truth, name="nodist"))
    no_dist = "ext/nodist"
    with pytest.raises(ValueError, match="no distances"):
        sweep_table(ev, no_dist)
    ev = attach_run(ev, parse_run(_lines(rows), ev.truth, name="dist", distances=True))
    with_dist = "ext/dist"
    cuts = [0.2, 0.5, 0.9, 1.5]
    theirs, ours = sweep_table(ev, with_dist, cuts=cuts), sweep_table(ev, "C/dense", cuts=cuts)
    # Same chunks, same distances: the gate counts agree (text containment can only add answers).
    assert (theirs.bluffs == ours.bluffs).all()
    assert (theirs.answered >= ours.answered).all()


def test_cli_eval_run_needs_no_model_and_reports(tiny_folder, capsys, tmp_path):
    truth = tiny_folder.parent / "tiny.truth.json"
    qids = [q["id"] for q in json.loads(truth.read_text())["questions"]]
    first = json.loads(truth.read_text())["questions"][0]
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(json.dumps({"query_id": f"{q}:course", "hits": [{"text": first["needle"]}]})
                             for q in qids), encoding="utf-8")
    rc = main(["eval-run", str(run), "--corpus", str(tiny_folder), "--no-cache", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert rc == 0
    # 4 questions x 2 phrasings: the 4 ticket queries are absent; of the course ones only q1's holder is returned
    assert "ext/run by the ranks at k = 4 (answerable queries): 4 missing, 3 not-in-pool, 0 ranked-low, 1 found" in out
    assert "missing from the run and count as misses" in err
    assert (tmp_path / "out" / "per_query.csv").exists()


def test_cli_eval_run_bad_file_exits_2(tiny_folder, capsys, tmp_path):
    run = tmp_path / "bad.jsonl"
    run.write_text('{"query_id": "zz", "hits": []}\n', encoding="utf-8")
    assert main(["eval-run", str(run), "--corpus", str(tiny_folder), "--no-cache"]) == 2
    assert "unknown query id 'zz'" in capsys.readouterr().err
    assert main(["eval-run", str(tmp_path / "absent.jsonl"), "--corpus", str(tiny_folder), "--no-cache"]) == 2


def test_evaluation_shell_without_indexes(tiny_corpus, tiny_truth):
    ev = Evaluation(tiny_corpus, tiny_truth, tiny_truth.queries, {}, {})
    q = tiny_truth.questions[0]
    run = parse_run(_lines([{"query_id": f"{q.id}:{q.queries[0][0]}", "hits": [{"text": q.needle}]}]),
                    tiny_truth, name="one")
    ev = attach_run(ev, run)
    cfg = run.key
    row = summary_rows(ev)[0]
    assert row.config == cfg.label and row.recall[1].successes == 1


def test_attach_run_returns_a_new_evaluation_and_leaves_the_old_one(tiny_eval):
    q = tiny_eval.truth.questions[0]
    run = parse_run(_lines([{"query_id": f"{q.id}:{q.queries[0][0]}", "hits": [{"text": q.needle}]}]),
                    tiny_eval.truth, name="one")
    before = dict(tiny_eval.results)
    ev = attach_run(tiny_eval, run)
    assert ev is not tiny_eval and ev.results is not tiny_eval.results
    assert tiny_eval.results == before and "one" not in tiny_eval.external  # the input is untouched
    assert list(ev.results) == [*before, run.key]  # ragdiag's configurations first, the run after them
    assert ev.external["one"] is run and ev.result("ext/one") is ev.results[run.key]
    with pytest.raises(FrozenInstanceError):
        ev.results = {}
    again = attach_run(ev, replace(run, hits={}))  # the same name: replaced in place, not added
    assert list(again.results) == list(ev.results) and again.result("ext/one").needle_rank.sum() == 0


def test_external_key_is_not_a_configuration():
    from ragdiag.evaluation.records import Config, ExternalKey, parse_key

    key = ExternalKey.parse(" ext/my run ")
    assert (key.label, key.strategy, key.retriever, key.external, str(key)) == ("ext/my run", "ext", "my run", True,
                                                                                "ext/my run")
    assert parse_key("ext/my run") == key and parse_key("e/Dense") == Config("E", "dense")
    assert not Config("E", "dense").external and key != Config("E", "dense")
    with pytest.raises(ValueError, match="external run, not a configuration"):
        Config.parse("ext/x")
    with pytest.raises(ValueError, match="ExternalKey"):
        Config("ext", "x")
    for bad in ("E/dense", "ext/", "ext"):
        with pytest.raises(ValueError, match="write ext/NAME"):
            ExternalKey.parse(bad)
    with pytest.raises(ValueError, match="bad configuration"):
        parse_key("ext/")  # no name: not a run, and not a configuration either


def test_result_finds_configurations_and_runs_by_label(tiny_eval):
    run = parse_run(_lines([{"query_id": tiny_eval.queries[0].id, "hits": []}]), tiny_eval.truth, name="r")
    ev = attach_run(tiny_eval, run)
    assert ev.result("C/dense").config.label == "C/dense" and ev.result("ext/r").config == run.key
    with pytest.raises(KeyError, match="ext/zz was not evaluated"):
        ev.result("ext/zz")


def test_an_attached_run_is_written_as_ext_name_in_every_file(tiny_eval, tmp_path):
    """Files keep naming a run as before: strategy ``ext``, retriever NAME, label ``ext/NAME``; no TREC run."""
    import csv

    from ragdiag.present.export import write_outputs

    res = tiny_eval.result("C/dense")
    rows = [{"query_id": q.id, "hits": [_chunk_hit(tiny_eval, "C", p, score=float(d))
                                         for p, d in zip(res.top_order[i, :3], res.top_distance[i, :3])]}
            for i, q in enumerate(tiny_eval.queries)]
    ev = attach_run(tiny_eval, parse_run(_lines(rows), tiny_eval.truth, name="prod", distances=True))
    write_outputs(ev, tmp_path)
    with open(tmp_path / "per_query.csv", newline="", encoding="utf-8") as f:
        ext = [r for r in csv.DictReader(f) if r["strategy"] == "ext"]
    assert len(ext) == len(ev.queries) and {r["retriever"] for r in ext} == {"prod"}
    assert ext[0]["top1_chunk"] == "prod hit 1"
    doc = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    row = next(r for r in doc["summary"] if r["config"] == "ext/prod")
    assert (row["strategy"], row["retriever"], row["chunks"]) == ("ext", "prod", None)
    assert not any("ext" in p.name for p in (tmp_path / "trec").iterdir())  # its hits are not our chunks


def test_a_report_can_name_an_external_run_as_the_competitor(tiny_eval):
    """A run copied from C/bm25 ties with it, so it is a competitor of C/bm25 in the report."""
    from ragdiag.present.report.build import build_report

    res = tiny_eval.result("C/bm25")
    rows = [{"query_id": q.id, "hits": [_chunk_hit(tiny_eval, "C", p) for p in res.top_order[i]]}
            for i, q in enumerate(tiny_eval.queries)]
    ev = attach_run(tiny_eval, parse_run(_lines(rows), tiny_eval.truth, name="copy"))
    with pytest.raises(ValueError, match="ext/copy has no distances"):  # the gate needs its distances
        build_report(ev, config="ext/copy", cut=0.6)
    about_ours = build_report(ev, config="C/bm25", cut=0.6)
    assert "ext/copy" in about_ours.to_html()
