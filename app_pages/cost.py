"""Cost: index build time, query latency, embedded and prompt tokens beside recall, and the Pareto front."""

import streamlit as st

from ragdiag.analyses.cost import LATENCY_SAMPLE, RERANK_SAMPLE
from ui.diag_frames import cost_frame
from ui.diag import costs_for, last_costs, measurement_words, no_measurement_words
from ui.html import md_text
from ui.diag_charts import pareto_chart
from ui.context import context
from ui.fmt import dash_missing, drop_constant, highlight_row, rate
from ui.jobs import evaluation
from ui.chart_theme import themed


def page() -> None:
    st.title("Cost")
    st.caption(f"Per configuration: index build time, query latency (one query at a time, from its text to the ranked "
               f"list, median and p95 over a seeded sample of queries; a reranker on the first {RERANK_SAMPLE} of them), wordpieces embedded for the index, and the "
               f"prompt the gate would send at the cut (mean wordpieces per query, 0 for NO ANSWER; counted with the "
               f"embedding model's tokenizer). Quality is span recall at the gate's keep. A configuration is "
               f"Pareto-optimal when no other has at least its recall at no more cost.")
    ev, token = evaluation()
    ctx = context(ev, token)
    gate = ctx.gate  # the Summary's gate: the prompt is priced at its cut and keep, recall at its k
    c1, c3 = st.columns([4, 1])
    c1.caption(f"Prompts at the context's cut {gate.cut_words}, keeping at most {gate.keep} chunks (sidebar).")
    # a float field read as a whole number: ?sample=1e999 falls back to the default (a whole-number field: an error)
    sample = round(c3.number_input("Queries timed", 1.0, 500.0, float(LATENCY_SAMPLE), step=1.0, format="%.0f",
                                   key="sample", bind="query-params"))
    measure = st.toggle("Measure now (timings take a while: every configuration is run query by query)", key="measure")
    if measure:
        with st.spinner("Measuring…"):
            m = costs_for(token, gate, int(sample), ev)
    else:  # the last measurement of these inputs, kept in the cache folder: shown until the visitor measures again
        m = last_costs(ev)
        if m is None:
            st.info(no_measurement_words(ev, int(sample)))
            st.stop()
    st.caption(md_text(measurement_words(m, gate, fresh=measure)))
    items = list(m.rows)
    frame = cost_frame(items)
    quality = f"R@{m.gate.k}"  # the measurement's own k (the last one kept may be at another gate)
    left, right = st.columns(2)
    left.altair_chart(themed(pareto_chart(frame, "ms/query median", "Pareto (latency)", quality)), width="stretch")
    right.altair_chart(themed(pareto_chart(frame, "prompt tokens/query", "Pareto (prompt)", quality)), width="stretch")
    share = f"{quality} (share of queries)"
    shown = (frame.assign(**{share: [rate(r.recall) for r in items], "Pareto (latency)": frame["Pareto (latency)"].map(
                 {True: "yes", False: ""}), "Pareto (prompt)": frame["Pareto (prompt)"].map({True: "yes", False: ""})})
             .sort_values([quality, "config"], ascending=[False, True])
             .drop(columns=[quality, "low", "high"]).rename(columns={"config": "configuration"}))
    shown = shown[["configuration", share, *[c for c in shown.columns if c not in ("configuration", share)]]]
    shown, same = drop_constant(dash_missing(shown), keep=["configuration"])
    st.dataframe(highlight_row(shown, "configuration", ctx.config), hide_index=True, key="cost_table",
                 column_config={c: st.column_config.NumberColumn(format="%.2f")
                                for c in ("ms/query median", "ms/query p95", "build s", "prompt tokens/query")})
    if same:
        st.caption("Same on every row: " + "; ".join(f"{k} {v}" for k, v in same.items()) + f". Sorted by {quality}; "
                   "the context's configuration highlighted.")


page()
