"""The progressive scheduler: order, moving to the front, waiting, failures; merging per-strategy evaluations."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ragdiag.progressive import Scheduler, first_order, merge_evaluations


class Gate:
    """Work that blocks each name until the test releases it (records the order names start in)."""

    def __init__(self):
        self.started: list[str] = []
        self.release = {n: threading.Event() for n in "ABCDEF"}
        self.began = threading.Condition()

    def __call__(self, name, report):
        with self.began:
            self.started.append(name)
            self.began.notify_all()
        report(f"embedding {name}", 1, 2)
        assert self.release[name].wait(10), f"{name} never released"
        if name == "D":
            raise RuntimeError("disk full")
        return name.lower()

    def wait_started(self, n: int) -> None:
        with self.began:
            assert self.began.wait_for(lambda: len(self.started) >= n, 10)


def test_runs_in_order_and_a_picked_name_jumps_the_queue():
    gate = Gate()
    s = Scheduler(list("ABCE"), gate, order=first_order(list("ABCE"), first=["E"]))
    gate.wait_started(1)
    assert gate.started == ["E"]
    st = s.state()
    assert st.running == "E" and st.queued == ("A", "B", "C") and st.stage == "embedding E" and st.done == 1
    s.prioritize("C", "E", "Z")  # E is running, Z unknown: ignored
    assert s.state().queued == ("C", "A", "B")
    gate.release["E"].set()
    assert s.wait(["E"], timeout=10)
    assert s.results() == {"E": "e"}
    gate.wait_started(2)
    assert gate.started == ["E", "C"]
    for n in "ABC":
        gate.release[n].set()
    assert s.wait("ABC", timeout=10)
    assert gate.started == ["E", "C", "A", "B"]
    st = s.state()
    assert st.finished and st.ready == ("A", "B", "C", "E") and st.finished_at is not None


def test_a_failure_is_recorded_and_the_rest_go_on():
    gate = Gate()
    s = Scheduler(list("DA"), gate)
    gate.release["D"].set()
    gate.release["A"].set()
    assert s.wait(["D", "A"], timeout=10)
    st = s.state()
    assert st.ready == ("A",) and "disk full" in st.failed["D"] and "D failed: RuntimeError: disk full" in st.describe()


def test_wait_times_out_while_work_is_unfinished():
    gate = Gate()
    s = Scheduler(["A"], gate)
    assert not s.wait(["A"], timeout=0.2)
    gate.release["A"].set()
    assert s.wait(["A"], timeout=10)


def test_prepare_runs_first_and_its_failure_does_not_stop_the_work():
    seen = []

    def prepare(report):
        seen.append("prepare")
        raise OSError("snapshot unreadable")

    s = Scheduler(["A"], lambda n, r: seen.append(n), prepare=prepare)
    assert s.wait(["A"], timeout=10) and seen == ["prepare", "A"]


def test_order_must_name_the_same_strategies():
    with pytest.raises(ValueError, match="exactly the names"):
        Scheduler(["A", "B"], lambda n, r: n, order=["A"], start=False)


def test_first_order_keeps_the_picked_then_cheapest():
    assert first_order(list("ABCDEF"), first=["E", "Q"]) == list("EABCDF")
    assert first_order(list("ABC"), costs={"A": 5, "B": 5, "C": 1}) == ["C", "A", "B"]


def test_merging_per_strategy_evaluations_equals_one_evaluation(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluate import evaluate, summary_rows

    names = "dense,bm25,hybrid,dense-int8"
    whole = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,C", retrievers=names)
    parts = [evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies=s, retrievers=names)
             for s in ("A", "C")]
    merged = merge_evaluations(parts)
    assert list(merged.indexes) == ["A", "C"] and list(merged.results) == list(whole.results)
    # what the pages read beside the results: the variants' stamps and the notes
    assert merged.retriever_stamps == whole.retriever_stamps and set(merged.retriever_stamps) == {"A/dense-int8",
                                                                                              "C/dense-int8"}
    assert merged.notes == whole.notes
    for a, b in zip(summary_rows(merged), summary_rows(whole)):
        assert {k: v for k, v in a.cells().items() if k != "seconds"} == {k: v for k, v in b.cells().items()
                                                                           if k != "seconds"}
    for cfg in whole.results:
        np.testing.assert_array_equal(merged.results[cfg].needle_rank, whole.results[cfg].needle_rank)


def test_evaluate_reports_each_strategy_as_it_finishes(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluate import evaluate

    seen = []
    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,C,E", retrievers="dense,bm25",
                  on_strategy=lambda partial: seen.append((list(partial.indexes), sorted(c.label for c in partial.results))))
    assert [s[0] for s in seen] == [["A"], ["A", "C"], ["A", "C", "E"]]
    assert seen[0][1] == ["A/bm25", "A/dense"]
    assert seen[-1][1] == sorted(c.label for c in ev.results)


@pytest.mark.model
def test_cli_eval_streams_each_strategy_to_stderr(tiny_folder, tmp_path, capsys):
    from ragdiag.cli import main

    code = main(["eval", "--corpus", str(tiny_folder), "--cache", str(tmp_path / "c"), "--strategies", "A,C",
                 "--retrievers", "dense,bm25"])
    out, err = capsys.readouterr()
    assert code == 0, err
    a, c = err.index("strategy A done"), err.index("strategy C done")
    assert a < c and "A/dense" in err[a:c] and "C/bm25" in err[c:]
    assert "strategy A done" not in out  # stdout holds the same final tables as before
    assert all(f"{cfg} " in out for cfg in ("A/dense", "A/bm25", "C/dense", "C/bm25"))
