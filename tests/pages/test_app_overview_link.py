"""The Overview's first line links recall in the top k (found) to the Summary's answered share (FAKE encoder)."""

from __future__ import annotations

from urllib.parse import parse_qs

from apptest import fake_tiny, open_page, run  # noqa: F401  (fixture)


def _app(page: str, **params):
    return open_page(page, timeout=60, **params)


def test_overview_first_line_says_found_then_answered_and_links_the_summary(fake_tiny):
    from fakes import fake_encoder
    from ragdiag.analyses.summary import summary_rows
    from ragdiag.analyses.versus import gate_rates
    from ragdiag.core.gate import Gate
    from ragdiag.documents.corpus import load_corpus
    from ragdiag.documents.truth import load_truth
    from ragdiag.evaluation.evaluate import evaluate

    corpus = load_corpus(fake_tiny["root"])
    ev = evaluate(corpus, load_truth(fake_tiny["truth"], corpus), encoder=fake_encoder(), strategies="A,E",
                  retrievers="dense,bm25,hybrid")
    found = next(r for r in summary_rows(ev, ks=(4,)) if r.config == "E/dense").recall[4].estimate
    answered = gate_rates(ev, "E/dense", Gate(4, 0.54))["answered"]
    # oracle: every answer is in E/dense's top 4 (8 of 8); at cut 0.54 only q1:course (0.538) and q3:course (0.444)
    # pass the cut: 2 of 8 answered
    assert (found, answered.count) == (1.0, 2)

    at = _app("app_pages/overview.py", config="E/dense", cut="0.54")
    first = at.main.markdown[0].value.replace("\\", "")
    assert first == ("E/dense: 100% of answerable queries have the answer in the top 4 passages (found); after the "
                     "cut 0.540, 25% are answered.")
    link = next(p.proto for p in at.main.get("page_link") if p.proto.label == "See the Summary")
    params = {k: v[0] for k, v in parse_qs(link.query_string).items()}
    assert params == {"config": "E/dense", "cut": "0.540", "keep": "4", "goal": "5"}  # the context travels

    at = _app("app_pages/summary.py", **params)  # where the link goes: the same answered share, same words
    mine = next(i.value for i in at.info if "Your choice" in i.value)
    assert "answered 25% (" in mine
