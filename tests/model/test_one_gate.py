"""One gate, computed once: every surface reads the same cut and the same counts.

For random gates (keep, k) and bluff goals on the bundled corpus and on
``data/de-haushalt``, the proposed cut and every count at it agree across
``threshold --json`` (:meth:`CutChoice.as_json`), the exported YAML, the
sweep, the rates, the ladder (gate table), the funnel, the recommendation,
the report (headline, gate section, flow) and the regression gate. The CLI's
own JSON and export are checked once per corpus; the report's cost table on
the FAKE encoder (costs measured at one cut are priced at the report's).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ragdiag.analyses.funnel import funnel
from ragdiag.analyses.gate_table import gate_table
from ragdiag.analyses.outcomes import outcome_counts
from ragdiag.analyses.threshold import Goal, cut_choice, rates_at, sweep
from ragdiag.analyses.threshold.export import thresholds_yaml
from ragdiag.core.gate import Gate, floor_cut

DATA = Path(__file__).resolve().parents[2] / "data"
MODEL = {"model": "all-MiniLM-L6-v2", "weights_sha256": "0" * 64}


@pytest.fixture(scope="module")
def evaluations(corpus, truth, encoder, bundled_store, haushalt_eval):
    """The bundled corpus (A and E, vectors seeded from the shipped index: the session's store) and
    ``data/de-haushalt`` (the session's evaluation, conftest.py)."""
    from ragdiag.evaluation.evaluate import evaluate

    bundled = evaluate(corpus, truth, encoder=encoder, store=bundled_store, strategies="A,E",
                       retrievers="dense,bm25,hybrid")
    return _Evaluations(bundled=bundled, haushalt=haushalt_eval)


class _Evaluations(dict):
    def __repr__(self) -> str:  # Hypothesis prints its arguments on failure: not two whole evaluations
        return f"evaluations({', '.join(self)})"


@pytest.mark.model
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_surface_reads_one_gate(evaluations, data):
    from ragdiag.present.regression.checks import gate_report
    from ragdiag.present.regression.runs import run_from_evaluation
    from ragdiag.present.report.build import build_report

    name = data.draw(st.sampled_from(sorted(evaluations)), label="corpus")
    ev = evaluations[name]
    cfg = data.draw(st.sampled_from(sorted(c.label for c in ev.results)), label="config")
    keep = data.draw(st.integers(1, 8), label="keep")
    max_bluff = data.draw(st.sampled_from([0.02, 0.05, 0.1, 0.2, 0.34]), label="max_bluff")
    gate = Gate(keep)
    table = gate_table(ev, cfg, gate)
    choice = cut_choice(table, Goal(max_bluff=max_bluff))
    proposal = choice.proposal
    assume(proposal.cut is not None)
    cut = proposal.cut

    # threshold --json: the proposed cut is the proposal (conformal when it can be certified)
    proposed = choice.as_json()["proposed"]
    if proposal.method == "conformal":
        assert proposed["cut"] == cut
    # the export carries exactly that cut, and the counts there
    doc = yaml.safe_load(thresholds_yaml(table, choice, config=cfg, model=MODEL))
    assert doc["cut"]["cosine_distance"] == cut and doc["keep"] == keep
    at = doc["rates"]["at_this_cut"]
    rates = rates_at(table, cut)
    row = sweep(table, [cut]).row(cut)
    assert at["answered"]["count"] == rates["answered"].count == row.answered
    assert at["bluffs"]["count"] == rates["bluffs"].count == row.bluffs
    assert rates["lost"].count == row.lost
    # the ladder and the funnel, at the same gate
    counts = outcome_counts(table.at(cut).outcome)
    assert counts["answered"] == row.answered and counts["bluff"] == row.bluffs
    assert funnel(ev, cfg, gate.with_cut(cut)).counts()["answered"] == row.answered
    # the report about this configuration and goal: its cut, cards, gate section and flow
    report = build_report(ev, config=cfg, keep=keep, max_bluff=max_bluff)
    assert report.cut == cut and report.headline.cut == cut
    assert (report.headline.answered.count, report.headline.bluffs.count, report.headline.lost.count) == (
        row.answered, row.bluffs, row.lost)
    assert (report.trade_off.row.answered, report.trade_off.row.bluffs) == (row.answered, row.bluffs)
    assert report.flow.counts["answered"] == row.answered and report.flow.bluffs == row.bluffs
    # the recommendation's own configuration: the same proposal and rates
    from ragdiag.analyses.recommend import recommend

    rec = recommend(ev, gate, max_bluff=max_bluff)
    rec_table = gate_table(ev, rec.config, gate)
    rec_choice = cut_choice(rec_table, Goal(max_bluff=max_bluff))
    assert rec.cut == rec_choice.proposal.cut
    assert rec.answered.count == rates_at(rec_table, rec.cut)["answered"].count
    # the regression gate, stamped at this cut: its answered and bluff rates are these counts
    run = run_from_evaluation(ev, cfg, gate=gate.with_cut(cut))
    checks = {c.name: c for c in gate_report(run, run).checks}
    n_in, n_ood = table.n_answerable, table.n_ood
    assert checks["answered"].baseline == pytest.approx(row.answered / n_in)
    if n_ood:
        assert checks["bluffs"].baseline == pytest.approx(row.bluffs / n_ood)


@pytest.mark.model
@pytest.mark.parametrize("corpus_dir", ["sklearn-user-guide", "de-haushalt"])
def test_threshold_json_and_the_export_carry_the_same_cut(corpus_dir, tmp_path, capsys, monkeypatch):
    from ragdiag.cli.parser import main

    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    args = ["threshold", "E/hybrid", "--max-bluff", "0.05", "--corpus", str(DATA / corpus_dir),
            "--truth", str(DATA / f"{corpus_dir}.truth.json")]
    assert main([*args, "--json"]) == 0
    js = json.loads(capsys.readouterr().out)
    export = tmp_path / "thresholds.yaml"
    assert main([*args, "--export", str(export)]) == 0
    doc = yaml.safe_load(export.read_text(encoding="utf-8"))
    cut = doc["cut"]["cosine_distance"]
    assert js["cut"] == cut  # one cut: the JSON's top-level cut is the one exported
    if js["proposed"]["cut"] is not None:  # a conformal cut: it is the one exported
        assert cut == js["proposed"]["cut"] and doc["cut"]["method"] == "conformal"
        # the YAML prints rates with 6 significant digits
        assert doc["rates"]["at_this_cut"] == {k: {kk: pytest.approx(vv, rel=1e-5) for kk, vv in v.items()}
                                               for k, v in js["proposed"]["rates"].items()
                                               if k in doc["rates"]["at_this_cut"]}
    else:  # too few off-topic queries to certify one: the in-sample cut rounded down, said optimistic in the file
        assert cut == floor_cut(js["in_sample_cut"]) and "optimistic" in doc["cut"]["label"]
    if corpus_dir == "sklearn-user-guide":
        assert cut == 0.524  # the sample report's cut: not the in-sample 0.5285 the export carried before
    optimistic = tmp_path / "in-sample.yaml"
    assert main([*args, "--export", str(optimistic), "--export-rule", "in-sample"]) == 0
    doc = yaml.safe_load(optimistic.read_text(encoding="utf-8"))
    assert doc["cut"]["cosine_distance"] == js["in_sample_cut"] and "optimistic" in doc["cut"]["label"]


def test_the_report_prices_its_costs_at_the_cut_it_decides(tiny_eval, fake_encoder):
    from ragdiag.analyses.cost import costs, prompt_tokens
    from ragdiag.present.report.build import build_report

    measured = costs(tiny_eval, fake_encoder, Gate(4, 0.6), sample=2)  # before the report knows its cut
    with pytest.raises(ValueError, match="pass encoder="):
        build_report(tiny_eval, costs=measured)
    report = build_report(tiny_eval, costs=measured, encoder=fake_encoder)
    assert report.cut != 0.6  # the proposal, not the default the costs were measured at
    rows = report.diag.costs
    assert rows and report.diag.cut == report.cut and report.diag.keep == report.keep
    for r in rows:
        expected = prompt_tokens(tiny_eval, r.config, fake_encoder, Gate(report.keep, report.cut)).mean()
        assert r.prompt_tokens == pytest.approx(round(expected, 1))
    # timings are the measurement's own: pricing at another cut times nothing again
    assert [r.median_ms for r in rows] == [round(m.latency_median_ms, 3) for m in measured]


@given(keep=st.integers(1, 20), k=st.integers(1, 20), cut=st.floats(0, 2),
       d=st.lists(st.floats(0, 2), min_size=1, max_size=25))
def test_the_gate_window_comes_before_the_cut_everywhere(keep, k, cut, d):
    """``Gate.kept`` (the table's ``kept``, the citations) keeps exactly the chunks in the top min(k, keep) under the cut."""
    from ragdiag.analyses.threshold.gate import kept_chunks
    from ragdiag.core.gate import count_under, under_each

    gate = Gate(keep, cut, k)
    row = np.array(d)
    mask = gate.kept(row)[0]
    w = min(k, keep, len(d))
    assert mask.tolist() == [j < w and x < cut for j, x in enumerate(d)]
    fake = type("R", (), {"top_distance": row[None, :], "top_order": np.arange(len(d))[None, :]})
    assert [p for p, _ in kept_chunks(fake, 0, gate)] == [j for j in range(len(d)) if mask[j]]
    # the three spellings of "under the cut" agree
    assert int(count_under(np.sort(row), np.array([cut]))[0]) == int(under_each(row, cut).sum()) == int(
        gate.under(row).sum())


@pytest.mark.parametrize("config", ["C/dense", "C/hybrid"])
def test_a_run_on_disk_is_the_gate_table_for_the_gate_the_history_and_the_plugin(tiny_eval, tmp_path, config):
    """``eval --out`` writes each configuration's gate table; the CI gate (:func:`load_run`), the in-memory path
    (:func:`run_from_evaluation`, which the pytest plugin and ``assert_no_regression`` use), the history and a
    folder written with the old column names (``first``, ``good``) all read back that table and its counts."""
    from ragdiag.present.export import write_outputs
    from ragdiag.present.history import open_history
    from ragdiag.present.regression.checks import gate_report
    from ragdiag.present.regression.runs import load_run, run_from_evaluation
    from ragdiag.testing import assert_no_regression

    out = tmp_path / "run"
    write_outputs(tiny_eval, out)
    disk = load_run(out, config)
    memory = run_from_evaluation(tiny_eval, config, gate=disk.gate)
    table = gate_table(tiny_eval, config, Gate(disk.gate.keep))
    for run in (disk, memory):
        t = run.table
        assert t.query_ids == table.query_ids and t.texts == table.texts
        assert np.array_equal(t.closest, table.closest) and np.array_equal(t.closest_holder, table.closest_holder)
        assert np.array_equal(t.found(), table.found()) and t.kind_names() == table.kind_names()
        assert t.rows() == table.rows()
    cut = disk.gate.cut
    checks = {c.name: c for c in gate_report(disk, memory).checks}
    assert checks["answered"].baseline == checks["answered"].candidate == pytest.approx(
        table.answered(cut)[table.in_domain].mean())
    assert checks["recall"].baseline == pytest.approx(table.found()[table.in_domain].mean())
    assert assert_no_regression(out, tiny_eval, config=config).verdict == "pass"
    with open_history(tmp_path / "h.sqlite") as hist:
        hist.add_folder(out, configs=[config])
        m = hist.measures(1, config)
        assert np.array_equal(hist.table(1, config).closest_holder, table.closest_holder)
    rates = rates_at(table, cut)
    assert (m.answered.successes, m.bluffs.successes) == (rates["answered"].count, rates["bluffs"].count)
    assert (m.answered.low, m.answered.high) == (rates["answered"].low, rates["answered"].high)
    assert (m.bluffs.low, m.bluffs.high) == (rates["bluffs"].low, rates["bluffs"].high)
    # a folder written before the table's own names still reads, to the same table
    old = (out / "gate_inputs.csv").read_text(encoding="utf-8").split("\n", 1)
    (out / "gate_inputs.csv").write_text(old[0].replace("closest_holder", "good").replace("closest", "first")
                                         + "\n" + old[1], encoding="utf-8")
    assert load_run(out, config).table.rows() == disk.table.rows()
