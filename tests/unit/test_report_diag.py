"""The report's funnel, hubs and cost sections: the numbers are the library's, text is escaped."""

from __future__ import annotations


from ragdiag.core.gate import Gate
from ragdiag.analyses.compare.paired import Difference
from ragdiag.core.words import count_rate_text, difference_text
from ragdiag.analyses.funnel import funnels
from ragdiag.analyses.outcomes import LADDER
from ragdiag.present.report.build import build_report


def test_report_carries_funnel_hubs_and_cost(tiny_eval, fake_encoder):
    from ragdiag.analyses.cost import costs, machine
    from ragdiag.analyses.hubs import hubs

    items = costs(tiny_eval, fake_encoder, sample=2)
    r = build_report(tiny_eval, config="C/hybrid", cut=0.6, keep=4, costs=items, machine=machine())
    html, md = r.to_html(), r.to_markdown()
    for section in ('id="funnel"', 'id="hubs"', 'id="cost"', 'id="funnel-table"', 'id="cost-table"'):
        assert section in html
    assert "## Where answers were lost" in md and "## Cost beside quality" in md and "## Hub chunks of C/hybrid" in md
    fs = {f.config.label: f for f in funnels(tiny_eval, gate=Gate(keep=4, cut=0.6, k=4))}
    rows = {row.config: row for row in r.diag.funnel}
    assert set(rows) == set(fs)
    for label, f in fs.items():
        assert [int(cell.split(" = ")[0]) for cell in rows[label].stages] == [f.counts()[s] for s in LADDER]
        ivs = f.intervals()  # each rung as the funnel command writes it: "12 = 19% (11–30)", the one shape of a rate
        assert list(rows[label].stages) == [count_rate_text(ivs[s]) if ivs[s].trials else "0" for s in LADDER]
    assert [h.chunk for h in r.diag.hubs] == [h.chunk_id for h in hubs(tiny_eval, "C/hybrid", k=4, top=10,
                                                                            only_hubs=True)]
    assert [c.config for c in r.diag.costs] == [c.config for c in items]
    assert "Measured on" in md


def test_report_without_costs_says_how_to_get_them(tiny_eval):
    r = build_report(tiny_eval, config="C/dense", cut=0.6)
    assert r.diag.costs is None
    assert "python -m ragdiag cost" in r.to_markdown() and "Not measured for this report" in r.to_html()


def test_hub_text_is_escaped(tiny_eval):
    from dataclasses import replace

    from ragdiag.present.report.diag import DiagSections, HubRow

    d = DiagSections("C/dense", Gate(4, 0.6, 4), (), (),
                     (HubRow("x", 3, 3, 9.0, "", "", 0, "<script>alert(1)</script>"),), (), None, None)
    r = replace(build_report(tiny_eval, config="C/dense", cut=0.6), diag=d)
    assert "<script>" not in r.to_html() and "&lt;script&gt;alert(1)&lt;/script&gt;" in r.to_html()
    assert "<script>" not in r.to_markdown() and r"\<script\>alert(1)\</script\>" in r.to_markdown()


def test_report_carries_the_variants_against_exact_search(tiny_corpus, tiny_truth, fake_encoder):
    from ragdiag.evaluation.evaluate import evaluate
    from ragdiag.present.report.diag import variant_rows
    from ragdiag.analyses.compare.comparisons import family
    from ragdiag.evaluation.records import Config

    ev = evaluate(tiny_corpus, tiny_truth, encoder=fake_encoder, strategies="C",
                  retrievers="dense,bm25,dense-int8,dense-binary")
    rows = {r.config: r for r in variant_rows(ev, k=2)}
    assert set(rows) == {"C/dense-int8", "C/dense-binary"}  # bm25 is no variant of dense
    base = Config("C", "dense")
    fam = {c.b.label: c for c in family(ev, k=2, baseline=base, configs=[base, *map(Config.parse, rows)])}
    for label, row in rows.items():
        c = fam[label]
        d = c.interval  # the simultaneous interval of the family, the one the status was decided with
        # the row is the variant minus the baseline
        assert row.difference == difference_text(Difference(-d.estimate, -d.high, -d.low))
        assert row.p_holm == c.p_adjusted and row.status == c.status
        assert (row.status == "different") == (not d.low <= 0 <= d.high)
        assert row.bytes == ev.retriever_stamps[label]["bytes_per_vector"]
    report = build_report(ev, config="C/dense", cut=0.6, k=2)
    html, md = report.to_html(), report.to_markdown()
    assert 'id="variants-table"' in html and "C/dense-binary" in html
    assert "## Variants against exact search" in md and "C/dense-int8" in md.replace("\\", "")


def test_no_variants_no_section(tiny_eval):
    report = build_report(tiny_eval, config="C/dense", cut=0.6)
    assert "variants-table" not in report.to_html()
