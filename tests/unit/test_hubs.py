"""Tests for ragdiag.analyses.hubs: boilerplate flags (table-driven), k-occurrence, hubs and crowding."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.analyses.hubs import HUB_RATIO, boilerplate_flags, crowding, hubness, hubs, k_occurrence

TEXTS = [
    ("prose", "The kernel cache size has a strong impact on run times for larger problems.", ()),
    ("licence", "Copyright (c) 2007-2024 The scikit-learn developers.\nAll rights reserved.", ("licence",)),
    ("licence-mention-in-prose", "C5.0 is released under a proprietary license and is more accurate.", ()),
    ("examples-list", "Examples:\n\n-   Plot the decision surfaces of trees\n\n-   Pixel importances with a forest",
     ("navigation",)),
    ("starts-inside-a-list", "-   Gradient Boosting regularization\n\n-   OOB Errors for Random Forests",
     ("navigation",)),
    ("prose-list", "The solver supports:\n\n-   sparse inputs, which are converted\n-   dense inputs, kept as they are",
     ()),
    ("links", "[Home](index.html) | [Next](next.html)\n[Previous](prev.html)", ("navigation",)),
    ("references", "References\n\n[B2001]\n\nL. Breiman, “Random Forests”, Machine Learning, 45(1), 5-32, 2001.",
     ("references",)),
    ("code", "```python\n>>> from sklearn import svm\n>>> clf = svm.SVC()\n```", ("code-only",)),
    ("code-and-prose", "Fit the model as usual; the example below shows how it is done in two lines of code "
                       "and what the output looks like.\n>>> clf.fit(X, y)", ()),
    ("see also", "See also Dimensionality reduction for dimensionality reduction with NCA.", ("navigation",)),
    ("author-year references", "-   C.D. Manning, P. Raghavan and H. Schütze (2008). Introduction to Information "
                               "Retrieval. Cambridge University Press.\n-   A. McCallum and K. Nigam (1998). A comparison "
                               "of event models. Proc. AAAI/ICML-98 Workshop on Learning for Text Categorization.",
     ("references",)),
    ("table", "| a | b |\n|---|---|\n| 1 | 2 |", ("table-only",)),
    ("table cut mid-row", "yes | yes | no |\n| **Behaviors** | | |\n| Penalize | no | yes |", ("table-only",)),
    ("starts inside code, then prose", "clf.fit(X)\narray([1, 2])\n```\n\nAs expected, the first column was "
                                       "removed because its variance is below the threshold we set above.", ()),
    ("starts inside code, then code again", "fit(X)\n```\n\nA sentence of prose between two code blocks, long enough to count.\n\n```python\n>>> a = 1\n"
                                            ">>> b = 2\n>>> c = a + b\n>>> print(c, a, b, a * b, c - a)", ()),
    ("prose then code", "Fit it:\n```\nclf = SVC()\nclf.fit(X, y)\nclf.predict(X_test)\nclf.score(X, y)\n```",
     ("code-only",)),
    ("empty", "   \n  ", ()),
]


@pytest.mark.parametrize("name,text,expected", TEXTS, ids=[t[0] for t in TEXTS])
def test_boilerplate_flags(name, text, expected):
    assert boilerplate_flags(text) == expected


class _Res:
    """A FAKE ConfigResult: only the top order matters to k-occurrence."""

    def __init__(self, top_order):
        self.top_order = np.asarray(top_order)


def test_k_occurrence_hand_counted():
    res = _Res([[0, 1, 2], [0, 2, 3], [0, 4, 1]])
    assert k_occurrence(res, 1, n_chunks=6).tolist() == [3, 0, 0, 0, 0, 0]
    assert k_occurrence(res, 2, n_chunks=6).tolist() == [3, 1, 1, 0, 1, 0]
    assert k_occurrence(res, 2, mask=[True, False, False], n_chunks=6).tolist() == [1, 1, 0, 0, 0, 0]
    assert k_occurrence(res, 3, n_chunks=6).sum() == 9
    with pytest.raises(ValueError, match="k must be"):
        k_occurrence(res, 0)
    # k beyond the list (a corpus with fewer chunks than k): the whole list
    assert k_occurrence(res, 4, n_chunks=6).tolist() == k_occurrence(res, 3, n_chunks=6).tolist()


def test_hubs_on_the_tiny_corpus(tiny_eval):
    res = tiny_eval.result("C/dense")
    n_chunks = len(tiny_eval.indexes["C"].chunks)
    table = hubs(tiny_eval, "C/dense", k=2, top=None)
    counts = k_occurrence(res, 2, n_chunks=n_chunks)
    assert sum(h.occurrences for h in table) == 2 * len(tiny_eval.queries)
    assert [h.occurrences for h in table] == sorted(counts[counts > 0].tolist(), reverse=True)
    for h in table:
        assert h.expected == pytest.approx(len(tiny_eval.queries) * 2 / n_chunks)
        assert h.hub == (h.ratio >= HUB_RATIO and h.clusters >= 3)
        assert set(h.displaced) <= set(h.queries)
        for qid in h.displaced:  # in its top 2, needle outside it, not destroyed
            i = tiny_eval.query_index(qid)
            assert not 1 <= res.needle_rank[i] <= 2
            assert tiny_eval.indexes["C"].holders[tiny_eval.queries[i].question_id].size > 0
    # the zebra chunk (position 1) holds q1's needle
    zebra = next(h for h in table if h.position == 1)
    assert zebra.holds_for == ("q1",)
    # hubness = the skewness of every chunk's k-occurrence (chunks in no top 2 count 0), scipy as the oracle
    from scipy.stats import skew

    n_chunks = len(tiny_eval.indexes["C"].chunks)
    by_hand = np.bincount(res.top_order[:, :2].ravel(), minlength=n_chunks)
    assert hubness(tiny_eval, "C/dense", k=2) == pytest.approx(skew(by_hand)) and skew(by_hand) > 0


def test_crowding_lists_the_passages_given_in_the_answers_place(tiny_eval):
    i = tiny_eval.query_index("q1:ticket")  # dense rank 4 (see test_evaluate.py)
    res = tiny_eval.result("C/dense")
    chunks = tiny_eval.indexes["C"].chunks
    got = crowding(tiny_eval, "C/dense", i, keep=2)
    # ranks 1-3 are above the answer; keep = 2 gives ranks 1 and 2 in its place
    assert (got.answer_rank, got.above) == (4, 3)
    assert [c.rank for c in got.crowders] == [1, 2]
    assert [c.chunk for c in got.crowders] == [chunks[int(p)].id for p in res.top_order[i, :2]]
    assert got.answer_position == int(res.top_order[i, 3]) and res.top_holds[i, 3]
    assert got.answer_distance == pytest.approx(float(res.top_distance[i, 3]))
    for c, d in zip(got.crowders, res.top_distance[i, :2]):  # closer_by = answer's distance - its own
        assert c.closer_by == pytest.approx(float(res.top_distance[i, 3]) - float(d))
    assert crowding(tiny_eval, "C/dense", i, keep=4).crowders == ()  # the answer is given (4th of 4): no one took its place
    top = crowding(tiny_eval, "C/dense", tiny_eval.query_index("q1:course"), keep=2)
    assert (top.answer_rank, top.above, top.crowders) == (1, 0, ())  # rank 1: nothing above
    with pytest.raises(ValueError, match="keep"):
        crowding(tiny_eval, "C/dense", i, keep=0)


def test_boilerplate_on_a_real_readme_and_html_page(kb_corpus):
    """Unseen real documents (the fixture knowledge base): link lists, licence lines and code are flagged."""
    from ragdiag.index.chunking import STRATEGIES, chunk_corpus

    by_folder: dict[str, list] = {}
    for c in chunk_corpus(kb_corpus, STRATEGIES["E"]):
        by_folder.setdefault(c.doc_id.split("/")[0], []).append(c)
    chunks = by_folder["notes"]
    flags = {c.id: boilerplate_flags(c.content) for c in chunks}
    nav = [cid for cid, f in flags.items() if "navigation" in f]
    assert nav, flags
    for cid in nav:  # every chunk flagged as navigation is mostly markdown links or link list items
        text = next(c.content for c in chunks if c.id == cid)
        assert "](http" in text
    assert any("code-only" in f for f in flags.values())
    html_chunks = by_folder["html"]
    lic = [c for c in html_chunks if "licence" in boilerplate_flags(c.content)]
    assert lic and all("licen" in c.content.lower() for c in lic)
