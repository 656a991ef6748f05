"""The progressive scheduler: order, moving to the front, waiting, failures; merging per-strategy evaluations."""

from __future__ import annotations

from dataclasses import replace
import threading

import numpy as np
import pytest

from ragdiag.evaluation.progressive import Scheduler, first_order, merge_evaluations


def one_by_one(work):
    """A pass computing ``work(name, report)`` for each name of its order (nothing shared between names)."""

    def run(order, report, publish):
        for name in order:
            if not publish(name, work(name, report)):
                return

    return run


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
    s = Scheduler(list("ABCE"), one_by_one(gate), order=first_order(list("ABCE"), first=["E"]))
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
    assert st.ended == ("E", "C", "A", "B")  # the order they finished in (ready is in name order)


def test_a_failure_is_recorded_and_the_rest_go_on():
    gate = Gate()
    s = Scheduler(list("DA"), one_by_one(gate))
    gate.release["D"].set()
    gate.release["A"].set()
    assert s.wait(["D", "A"], timeout=10)
    st = s.state()
    assert st.ready == ("A",) and "disk full" in st.failed["D"] and "D failed: RuntimeError: disk full" in st.describe()
    assert st.ended == ("D", "A")  # a failure ends a name too, in its turn


def test_wait_times_out_while_work_is_unfinished():
    gate = Gate()
    s = Scheduler(["A"], one_by_one(gate))
    assert not s.wait(["A"], timeout=0.2)
    gate.release["A"].set()
    assert s.wait(["A"], timeout=10)


def test_prepare_runs_first_and_its_failure_does_not_stop_the_work():
    seen = []

    def prepare(report):
        seen.append("prepare")
        raise OSError("snapshot unreadable")

    s = Scheduler(["A"], one_by_one(lambda n, r: seen.append(n)), prepare=prepare)
    assert s.wait(["A"], timeout=10) and seen == ["prepare", "A"]


def test_order_must_name_the_same_strategies():
    with pytest.raises(ValueError, match="exactly the names"):
        Scheduler(["A", "B"], one_by_one(lambda n, r: n), order=["A"], start=False)


def test_first_order_keeps_the_picked_then_cheapest():
    assert first_order(list("ABCDEF"), first=["E", "Q"]) == list("EABCDF")
    assert first_order(list("ABC"), costs={"A": 5, "B": 5, "C": 1}) == ["C", "A", "B"]


def test_merging_per_strategy_evaluations_equals_one_evaluation(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.analyses.summary import summary_rows

    names = "dense,bm25,hybrid,dense-int8"
    whole = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,C", retrievers=names)
    parts = [evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies=s, retrievers=names)
             for s in ("A", "C")]
    merged = merge_evaluations(parts)
    assert list(merged.indexes) == ["A", "C"] and list(merged.results) == list(whole.results)
    # what the pages read beside the results: the variants' and BM25's stamps and the notes
    assert merged.retriever_stamps == whole.retriever_stamps and set(merged.retriever_stamps) == {
        "A/dense-int8", "C/dense-int8", "A/bm25", "C/bm25"}
    assert merged.notes == whole.notes
    for a, b in zip(summary_rows(merged), summary_rows(whole)):
        assert {k: v for k, v in a.cells().items() if k != "seconds"} == {k: v for k, v in b.cells().items()
                                                                           if k != "seconds"}
    for cfg in whole.results:
        np.testing.assert_array_equal(merged.results[cfg].needle_rank, whole.results[cfg].needle_rank)


def test_evaluate_reports_each_strategy_as_it_finishes(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate

    seen = []
    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,C,E", retrievers="dense,bm25",
                  on_strategy=lambda partial: seen.append((list(partial.indexes), sorted(c.label for c in partial.results))))
    assert [s[0] for s in seen] == [["A"], ["A", "C"], ["A", "C", "E"]]
    assert seen[0][1] == ["A/bm25", "A/dense"]
    assert seen[-1][1] == sorted(c.label for c in ev.results)


# ----- passes: the queue computed in one pass that shares the run-level work ----------------------------------

class PassGate:
    """A pass whose names block until the test releases them (records each pass's order and what it computed)."""

    def __init__(self):
        self.passes: list[tuple[str, ...]] = []
        self.computed: list[str] = []
        self.release = {n: threading.Event() for n in "ABCDEF"}
        self.began = threading.Condition()

    def __call__(self, order, report, publish):
        self.passes.append(tuple(order))
        for name in order:
            with self.began:
                self.computed.append(name)
                self.began.notify_all()
            assert self.release[name].wait(10), f"{name} never released"
            if name == "D":
                raise RuntimeError("disk full")
            if not publish(name, name.lower()):
                return

    def wait_computing(self, n: int) -> None:
        with self.began:
            assert self.began.wait_for(lambda: len(self.computed) >= n, 10)


def test_one_pass_computes_the_queue_and_publishes_each_name_as_it_is_ready():
    gate = PassGate()
    s = Scheduler(list("ABCE"), run_pass=gate, order=first_order(list("ABCE"), first=["E"]))
    gate.wait_computing(1)
    assert s.state().running == "E" and s.state().queued == ("A", "B", "C")
    gate.release["E"].set()
    assert s.wait(["E"], timeout=10) and s.results() == {"E": "e"}  # ready before the others are computed
    for n in "ABC":
        gate.release[n].set()
    assert s.wait("ABC", timeout=10)
    assert gate.passes == [("E", "A", "B", "C")] and s.passes == 1
    assert s.results() == {"A": "a", "B": "b", "C": "c", "E": "e"} and s.state().finished


def test_picking_a_queued_name_ends_the_pass_after_its_running_name_and_starts_one_from_it():
    gate = PassGate()
    s = Scheduler(list("ABCE"), run_pass=gate, order=list("EABC"))
    gate.wait_computing(1)
    s.prioritize("C")
    gate.release["E"].set()
    gate.wait_computing(2)
    assert gate.passes == [("E", "A", "B", "C"), ("C", "A", "B")]  # E was kept, nothing is computed twice
    for n in "ABC":
        gate.release[n].set()
    assert s.wait("ABC", timeout=10)
    assert gate.computed == ["E", "C", "A", "B"] and s.passes == 2


def test_a_failure_in_a_pass_is_recorded_and_the_rest_go_on_in_a_new_pass():
    gate = PassGate()
    for n in "ADF":
        gate.release[n].set()
    s = Scheduler(list("ADF"), run_pass=gate)
    assert s.wait("ADF", timeout=10)
    assert gate.passes == [("A", "D", "F"), ("F",)]
    st = s.state()
    assert st.ready == ("A", "F") and "disk full" in st.failed["D"]


def test_close_ends_the_pass_after_its_running_name():
    gate = PassGate()
    s = Scheduler(list("AB"), run_pass=gate)
    gate.wait_computing(1)
    s.close()
    gate.release["A"].set()
    assert not s.wait(["B"], timeout=10)
    assert s.results() == {"A": "a"} and gate.computed == ["A"] and s.state().running is None


def test_a_pass_that_skips_its_running_name_records_it_as_failed():
    s = Scheduler(["A", "B"], run_pass=lambda order, report, publish: None)
    assert s.wait(["A", "B"], timeout=10)
    assert set(s.state().failed) == {"A", "B"} and "without computing" in s.state().failed["A"]


class FakeSharedModel:
    """A FAKE run-level model (what a cross-encoder is to a real run): counts how often it is built."""

    builds = 0

    def __init__(self):
        type(self).builds += 1


def _register_fake_model_retriever():
    from ragdiag.retrieval.registry import RetrieverSpec, register_retriever

    def prepare(run):
        run.shared("fake-model", FakeSharedModel)

    def build(ctx):
        ctx.shared("fake-model", FakeSharedModel)
        return ctx.retriever("dense")

    register_retriever(RetrieverSpec("fake-model-dense", build=build, prepare=prepare, default=False), replace=True)


def test_one_pass_builds_the_run_level_model_once_per_strategy_work_builds_it_per_strategy(
        tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.evaluation.progressive import evaluation_pass

    _register_fake_model_retriever()
    names = "dense,fake-model-dense"
    FakeSharedModel.builds = 0
    s = Scheduler(list("ACE"), run_pass=evaluation_pass(tiny_corpus, tiny_truth, encoder=fake_encoder,
                                                        retrievers=names))
    assert s.wait("ACE", timeout=60) and not s.state().failed
    assert FakeSharedModel.builds == 1 and s.passes == 1

    FakeSharedModel.builds = 0  # the old way: one evaluation per strategy
    old = Scheduler(list("ACE"), one_by_one(lambda name, report: evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder,
                                                                          strategies=[name], retrievers=names)))
    assert old.wait("ACE", timeout=60)
    assert FakeSharedModel.builds == 3


def test_the_parts_of_one_pass_merge_into_the_whole_evaluation(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.analyses.summary import summary_rows
    from ragdiag.evaluation.progressive import evaluation_pass

    names = "dense,bm25,hybrid,dense-int8"
    whole = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="A,C,E", retrievers=names)
    parts_seen = []
    s = Scheduler(list("ACE"), run_pass=evaluation_pass(tiny_corpus, tiny_truth, encoder=fake_encoder,
                                                        retrievers=names, on_part=parts_seen.append),
                  order=list("EAC"))
    assert s.wait("ACE", timeout=60) and not s.state().failed
    parts = s.results()
    assert [list(p.indexes) for p in parts_seen] == [["E"], ["A"], ["C"]]  # each part holds its own strategy
    assert all({c.strategy for c in parts[n].results} == {n} for n in "ACE")
    assert all(parts[n].timings["total"] >= 0 and f"index_{n}" in parts[n].timings for n in "ACE")
    merged = merge_evaluations(list(parts.values()))
    assert list(merged.indexes) == ["A", "C", "E"] and list(merged.results) == list(whole.results)
    assert merged.retriever_stamps == whole.retriever_stamps and merged.notes == whole.notes
    assert merged.unavailable == whole.unavailable
    for a, b in zip(summary_rows(merged), summary_rows(whole)):
        assert replace(a, seconds=0.0) == replace(b, seconds=0.0)
    for cfg in whole.results:
        np.testing.assert_array_equal(merged.results[cfg].needle_rank, whole.results[cfg].needle_rank)
        np.testing.assert_array_equal(merged.results[cfg].top_order, whole.results[cfg].top_order)


class FakeTokenEncoder:
    """The FAKE encoder (wordpiece vectors: one-hot per word), counting whose wordpieces it computed alone."""

    def __new__(cls, base):
        from fakes import FakeEncoder

        class _Fake(FakeEncoder):
            def __init__(self):
                super().__init__(max_seq_length=base.max_seq_length, dim=base.dim)
                self.alone: list[str] = []  # texts whose wordpieces were computed by token_embeddings

            def token_embeddings(self, texts, *, progress=None):
                self.alone.extend(texts)
                return super().token_embeddings(texts, progress=progress)

        return _Fake()


def test_maxsim_computes_each_query_s_wordpieces_once_per_pass(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.evaluation.progressive import evaluation_pass

    enc = FakeTokenEncoder(fake_encoder)
    names = "hybrid,rerank-maxsim"
    s = Scheduler(list("ACE"), run_pass=evaluation_pass(tiny_corpus, tiny_truth, encoder=enc, retrievers=names))
    assert s.wait("ACE", timeout=60) and not s.state().failed
    queries = [q.text for q in tiny_truth.queries]
    assert sorted(enc.alone) == sorted(set(enc.alone)) and set(enc.alone) <= set(queries)  # once each, chunks never
    whole = evaluate(tiny_corpus, tiny_truth, encoder=FakeTokenEncoder(fake_encoder), strategies="A,C,E",
                     retrievers=names)
    merged = merge_evaluations(list(s.results().values()))
    for cfg in whole.results:
        np.testing.assert_array_equal(merged.results[cfg].top_order, whole.results[cfg].top_order)
