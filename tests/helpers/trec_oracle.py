"""The oracle cross-check of the TREC export: pytrec_eval and ranx read the written files, and their means must be
the summary table's (success@k and MRR, for every configuration)."""

from __future__ import annotations

import numpy as np
import pytest

from ragdiag.analyses.summary import summary_rows
from ragdiag.core.defaults import KS, MRR_DEPTH
from ragdiag.present.export import write_trec

from ranx_plain import ranx_evaluate


def trec_means_equal_the_table(ev, folder) -> dict:
    """Write ``ev``'s TREC files into ``folder``; for every configuration assert that pytrec_eval's and ranx's means
    over them equal the summary table's. Returns, by configuration label, (qrels text, run text, the parsed run,
    pytrec_eval's per-query measures) for the caller's own checks. (Callers skip first when either library is
    missing: ``pytest.importorskip``.)"""
    import pytrec_eval

    write_trec(ev, folder, depth=MRR_DEPTH)
    rows = {r.config: r for r in summary_rows(ev)}
    read = {}
    files = {cfg.label: (folder / f"{cfg.strategy}.qrels", folder / f"{cfg.strategy}_{cfg.retriever}.run")
             for cfg in ev.results}
    ranx_scores = dict(zip(files, ranx_evaluate(list(files.values()),
                                                [f"hit_rate@{k}" for k in KS] + [f"mrr@{MRR_DEPTH}"])))
    for cfg in ev.results:
        qrels_path, run_path = files[cfg.label]
        with open(qrels_path) as f:
            qrels = pytrec_eval.parse_qrel(f)
        with open(run_path) as f:
            run = pytrec_eval.parse_run(f)
        out = pytrec_eval.RelevanceEvaluator(qrels, {"success." + ",".join(map(str, KS)), "recip_rank"}).evaluate(run)
        scores = ranx_scores[cfg.label]
        row = rows[cfg.label]
        for k in KS:
            assert row.recall[k].estimate == pytest.approx(np.mean([v[f"success_{k}"] for v in out.values()]),
                                                           abs=1e-12), (cfg.label, k)
            assert row.recall[k].estimate == pytest.approx(scores[f"hit_rate@{k}"], abs=1e-12), (cfg.label, k)
        assert row.mrr.estimate == pytest.approx(np.mean([v["recip_rank"] for v in out.values()]), abs=1e-12)
        assert row.mrr.estimate == pytest.approx(scores[f"mrr@{MRR_DEPTH}"], abs=1e-12), cfg.label
        read[cfg.label] = (qrels_path.read_text(), run_path.read_text(), run, out)
    return read
