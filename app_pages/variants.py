"""Variants: embedding model x precision x index for one strategy, judged against exact search by paired tests."""

import altair as alt
import pandas as pd
import streamlit as st

from ragdiag.index.chunking import STRATEGIES
from ragdiag.core.defaults import DEFAULT_STRATEGY, PRIMARY_K
from ragdiag.index.models import MODEL_ALIASES
from ragdiag.analyses.model_cut import gate_model
from ragdiag.retrieval.variant_kinds import VARIANT_KINDS
from ragdiag.present.serving import AccessError
from ragdiag.analyses.variants import variant_configs, variant_names, variant_rows
from ui.context import gate_settings
from ui.fmt import DASH, dash_missing, drop_constant, rate, said_once
from ragdiag.core.words import difference_text
from ui.html import md_text
from ui.jobs import evaluation_of
from ui.model_cut import model_cut_caption
from ui.state import access
from ui.chart_theme import themed


def page() -> None:
    st.title("Variants")
    st.caption("Which embedding model, which precision, which index? Each variant is a retriever of the registry over "
               f"the same chunks, evaluated like every other one and judged on the same questions: recall at k = "
               f"{PRIMARY_K} with its 95% interval and a paired, question-level verdict against exact float32 search "
               "with the run's model, simultaneous within the family of the variants shown (adjusted p, max-T over "
               "questions).")

    names = list(STRATEGIES)
    c1, c2, c3 = st.columns([1, 3, 3])
    strategy = c1.selectbox("Strategy", names, index=names.index(DEFAULT_STRATEGY), key="vstrategy",
                            bind="query-params")
    acc = access()
    models = c2.multiselect("Models", [*MODEL_ALIASES, *acc.models], default=["minilm"], key="vmodels",
                            bind="query-params", help="; ".join(f"{k}: {v[0]}" for k, v in MODEL_ALIASES.items()))
    bases = c3.multiselect("Precision / index", list(VARIANT_KINDS), default=list(VARIANT_KINDS), key="vkinds",
                           bind="query-params")
    # Locked: no name can be typed (only the aliases and RAGDIAG_MODELS above); unlocked: a name passes the access
    # check (a cached hub id or a folder under the allowed roots), one answer whether or not it exists.
    extra = ""
    if not acc.locked:
        with st.expander("Another model"):
            extra = st.text_input("A folder under the allowed roots or a hub id already in the cache", key="vextra",
                                  max_chars=4096)
            if extra.strip():
                try:
                    extra = acc.model(extra)
                except AccessError as exc:
                    st.error(f"Cannot load that model: {md_text(exc)}.")
                    extra = ""
    models = [*models, *([extra.strip()] if extra.strip() else [])] or ["minilm"]
    retrievers = tuple(dict.fromkeys(["dense", *variant_names(models, bases or ["dense"])]))

    # The shared job, for this strategy and these retrievers: every session asking the same set reuses it.
    ev, token = evaluation_of((strategy,), retrievers)

    phrasing = st.segmented_control("Phrasing", ["all", *ev.truth.phrasings], default="all", key="vphrasing",
                                    bind="query-params", required=True) or "all"
    rows = variant_rows(ev, strategy, k=PRIMARY_K, phrasing=phrasing)
    key = f"R@{PRIMARY_K}"

    # the chart's numbers
    frame = pd.DataFrame([{
        "variant": r.config, "model": r.model, key: r.recall.estimate, "low": r.recall.low, "high": r.recall.high,
        "bytes/vector": r.bytes_per_vector, "ms/query": r.ms_per_query,
        "Pareto": "Pareto-optimal" if r.pareto else "not Pareto-optimal",  # the shape's legend (never "undefined")
    } for r in rows])
    # the table, in the one grammar: rates with intervals, units in the headers, a dash for nothing
    table = pd.DataFrame([{
        "variant": r.config, "model": r.model, "precision": r.precision, "index": r.index,
        f"R@{PRIMARY_K} (queries)": rate(r.recall),
        "difference to baseline (simultaneous)": difference_text(r.difference),  # the verdict's interval
        "questions won / lost": "baseline" if r.p is None else f"+{r.wins}/-{r.losses}",
        "adjusted p": DASH if r.p_adjusted is None else f"{r.p_adjusted:.3g}", "verdict": r.status,
        "bytes per vector": DASH if r.bytes_per_vector is None else f"{r.bytes_per_vector:g}",
        "rescore bytes": r.rescore_bytes, "ms per query": round(r.ms_per_query, 3),
        f"overlap@{PRIMARY_K} (share)": DASH if r.overlap is None else f"{r.overlap:.3f}",
        "truncated (chunks)": DASH if r.truncated is None else r.truncated,
        "Pareto": "★" if r.pareto else "",
    } for r in rows])
    shown_frame, same = drop_constant(dash_missing(table), keep=["variant"])
    if same:
        st.caption(md_text(said_once(same, "Every variant")))
    st.dataframe(shown_frame, hide_index=True)
    st.caption("bytes per vector: what the search reads per chunk (rescoring variants also keep the float32 vectors, "
               "often on disk). ms per query: the evaluation's ranking time per query, the queries already embedded. "
               f"overlap@{PRIMARY_K}: share of the exact top {PRIMARY_K} of the same model that the variant returns "
               "(below 1: the precision or the index loses neighbours; a model's own misses do not show here). "
               "★ Pareto-optimal: no other variant is at least as good on recall, memory (codes plus any rescoring "
               "vectors) and time, and better on one. truncated: chunks longer than the run's model's window.")

    chart = alt.Chart(frame).mark_point(filled=True, size=90).encode(
        x=alt.X("bytes/vector:Q", scale=alt.Scale(type="log"), title="bytes per vector (log)"),
        y=alt.Y(f"{key}:Q", title=f"recall@{PRIMARY_K}", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("model:N"), shape=alt.Shape("Pareto:N", title=None),
        tooltip=["variant", key, "low", "high", "bytes/vector", "ms/query"],
    )
    bars = alt.Chart(frame).mark_rule().encode(x="bytes/vector:Q", y="low:Q", y2="high:Q", color="model:N")
    st.altair_chart(themed(bars + chart), width="stretch")

    st.subheader("Verdicts against the baseline")
    for r in rows:
        if r.p is not None:
            (st.info if r.status == "not shown different" else st.warning)(md_text(r.verdict))

    st.subheader("A cut belongs to one model")
    cut = gate_settings()[0]  # the context's cut (sidebar)
    seen = set()
    for cfg in variant_configs(ev, strategy):
        model = gate_model(ev, cfg)
        if model not in seen:
            seen.add(model)
            model_cut_caption(ev, token, cfg.label, cut)
    st.caption("Cosine distances of two models are not on one scale: a cut tuned for MiniLM means something else for "
               "another model. The percentile among the corpus's own nearest-chunk distances is the reading that "
               "survives a model change.")

    for name, reason in ev.unavailable.items():
        st.warning(f"**{md_text(name)}** is unavailable: {md_text(reason)}")
    with st.expander("Stamps: which model, precision and index made which numbers"):
        st.json({r.config: r.stamp for r in rows if r.stamp}, expanded=False)


page()
