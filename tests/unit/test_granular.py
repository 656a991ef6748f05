"""Tests for ragdiag.analyses.granular: recall at document/section/span level, redundancy, and credit-once recall."""

from __future__ import annotations

import pytest

from ragdiag.evaluation.evaluate import evaluate
from ragdiag.analyses.summary import summary_rows
from ragdiag.analyses.granular import LEVELS, granular_rows, level_ranks, redundancy, redundancy_rows, redundant_slots
from ragdiag.core.metrics import hits_at_k

SLOTS = [
    ("distinct docs", [("a", 0, 100), ("b", 0, 100)], [False, False]),
    ("same span twice", [("a", 0, 100), ("a", 0, 100)], [False, True]),
    ("overlap 64 of 512", [("a", 0, 512), ("a", 448, 960)], [False, False]),
    ("short inside long", [("a", 0, 500), ("a", 100, 160)], [False, True]),
    ("long after short", [("a", 100, 160), ("a", 0, 500)], [False, True]),
    ("exactly half", [("a", 0, 100), ("a", 50, 150)], [False, False]),
    ("just over half", [("a", 0, 100), ("a", 49, 149)], [False, True]),
    ("touching", [("a", 0, 100), ("a", 100, 200)], [False, False]),
    ("against any higher", [("a", 0, 100), ("b", 0, 10), ("a", 10, 90)], [False, False, True]),
]


@pytest.mark.parametrize("name,spans,expected", SLOTS, ids=[s[0] for s in SLOTS])
def test_redundant_slots(name, spans, expected):
    assert redundant_slots(spans).tolist() == expected


def test_levels_nest_span_section_document(tiny_eval):
    for cfg in tiny_eval.results:
        d, s, p = (level_ranks(tiny_eval, cfg, lv) for lv in ("document", "section", "span"))
        for k in (1, 2, 4, 8):
            hd, hs, hp = hits_at_k(d, k), hits_at_k(s, k), hits_at_k(p, k)
            assert (hp <= hs).all() and (hs <= hd).all()  # a holder is in the section, which is in the document


def test_span_level_equals_summary_rows(tiny_eval):
    rows = {(r.config, r.level): r for r in granular_rows(tiny_eval)}
    assert {lv for _, lv in rows} == set(LEVELS)
    for r in summary_rows(tiny_eval):
        for k in (1, 4, 8, 20):
            assert rows[(r.config, "span")].recall[k] == r.recall[k]


def test_destroyed_needle_still_found_at_document_level(tiny_eval):
    # q3's needle straddles chunks 3 and 4 of strategy C: no span hit, but its document and section are found.
    i = tiny_eval.query_index("q3:course")
    assert level_ranks(tiny_eval, "C/dense", "span")[i] == 0
    assert level_ranks(tiny_eval, "C/dense", "document")[i] >= 1
    assert level_ranks(tiny_eval, "C/dense", "section")[i] >= 1


def test_redundancy_of_a_non_overlapping_strategy_is_zero(tiny_eval):
    for row in redundancy_rows(tiny_eval, k=4):
        assert row.redundant_slots == 0 and row.slots == 4 * len(tiny_eval.queries)
        assert row.redundancy.estimate == 0.0
        assert row.cells() == {"config": row.config, "k": 4, "redundant slots": 0, "slots": 4 * len(tiny_eval.queries),
                               "redundancy": 0.0, "redundancy_low": row.redundancy.low,
                               "redundancy_high": row.redundancy.high}


# ----- overlapping chunks: a needle inside the 64-character overlap of two blind chunks (strategy B) --------

NEEDLE = "Quokkas smile broadly whenever tourists approach."  # 49 characters


@pytest.fixture(scope="module")
def overlap_eval(fake_encoder):
    from ragdiag.documents.corpus import Corpus, make_document
    from ragdiag.documents.truth import parse_truth

    filler = " ".join(f"w{i:03d}" for i in range(91))  # 454 characters
    text = filler + " " + NEEDLE + " " + " ".join(f"z{i:03d}" for i in range(120)) + "\n"
    doc = make_document("marsupials", text, path="marsupials.md")
    corpus = Corpus(root="overlap", documents=(doc,), name="overlap")
    truth = parse_truth({"questions": [{"id": "q1", "needle": NEEDLE,
                                        "queries": {"course": "Do quokkas smile at tourists?",
                                                    "ticket": "quokkas smile broadly whenever tourists approach"}}],
                         "ood": []}, corpus)
    return evaluate(corpus, truth, encoder=fake_encoder, strategies="B", retrievers="dense,bm25")


def test_recall_credits_a_query_once_however_many_chunks_hold_the_needle(overlap_eval):
    ev = overlap_eval
    holders = ev.indexes["B"].holders["q1"]
    assert holders.size == 2  # both chunks around the overlap hold the needle whole
    for cfg, res in ev.results.items():
        assert res.top_holds[:, :2].sum(axis=1).tolist() == [2, 2]  # both holders in every top 2
        assert res.needle_rank.tolist() == [1, 1]  # credit at the first holder
        row = {r.config: r for r in summary_rows(ev, ks=[2])}[cfg.label]
        assert row.recall[2].successes == 2 and row.recall[2].estimate == 1.0  # two queries, two hits: never above 1
        for lv in granular_rows(ev, ks=[2]):
            assert lv.recall[2].estimate <= 1.0
    # the 64-character overlap is less than half of either chunk: not counted as redundant
    assert redundancy(ev, "B/dense", k=2).successes == 0
