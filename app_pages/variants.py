"""Variants: embedding model x precision x index for one strategy, judged against exact search by paired tests."""

import altair as alt
import pandas as pd
import streamlit as st

from ragdiag.chunking import STRATEGIES
from ragdiag.defaults import DEFAULT_CUT, DEFAULT_STRATEGY, PRIMARY_K, TOP
from ragdiag.models import MODEL_ALIASES
from ragdiag.retrieval.quantized import DEFAULT_RESCORE
from ragdiag.retrieval.variant_kinds import VARIANT_KINDS
from ragdiag.model_cut import cut_percentile, nearest_chunk_distances
from ragdiag.serving import AccessError
from ragdiag.variants import variant_rows
from ui.html import md_text
from ui.state import _encoder, _file_sha, _store, access, load_inputs, settings

st.title("Variants")
st.caption("Which embedding model, which precision, which index? Each variant is a retriever over the same chunks, "
           f"judged on the same questions: recall at k = {PRIMARY_K} with its 95% interval and a paired, "
           "question-level verdict against exact float32 search with the default model (MiniLM).")

s = settings()
corpus, truth = load_inputs(s)
names = list(STRATEGIES)
c1, c2, c3 = st.columns([1, 3, 3])
strategy = c1.selectbox("Strategy", names, index=names.index(DEFAULT_STRATEGY), key="vstrategy",
                        bind="query-params")
acc = access()
models = c2.multiselect("Models", [*MODEL_ALIASES, *acc.models], default=["minilm"], key="vmodels",
                        bind="query-params", help="; ".join(f"{k}: {v[0]}" for k, v in MODEL_ALIASES.items()))
bases = c3.multiselect("Precision / index", list(VARIANT_KINDS), default=list(VARIANT_KINDS), key="vkinds",
                       bind="query-params")
with st.expander("More models and parameters"):
    # Locked: no name can be typed (only the aliases and RAGDIAG_MODELS above); unlocked: a name passes the
    # access check (a cached hub id or a folder under the allowed roots), one answer whether or not it exists.
    extra = "" if acc.locked else st.text_input(
        "Another model: a folder under the allowed roots or a hub id already in the cache", key="vextra",
        max_chars=4096)
    if extra.strip():
        try:
            extra = acc.model(extra)
        except AccessError as exc:
            st.error(f"Cannot load that model: {md_text(exc)}.")
            extra = ""
    p1, p2, p3, p4 = st.columns(4)
    rescore = int(p1.number_input("Rescore shortlist", 1, 1000, DEFAULT_RESCORE, key="vrescore"))
    hnsw_m = int(p2.number_input("HNSW M", 2, 128, 16, key="vm"))
    hnsw_efc = int(p3.number_input("HNSW ef_construction", 4, 2000, 200, key="vefc"))
    hnsw_efs = int(p4.number_input("HNSW ef_search", 1, 2000, 64, key="vefs"))
models = [*models, *([extra.strip()] if extra.strip() else [])] or ["minilm"]
bases = bases or ["dense"]
variant_names = tuple(b if m == "minilm" else f"{b}@{m}" for m in models for b in bases)


@st.cache_resource(max_entries=4, show_spinner=False)
def _run(corpus_sha: str, truth_sha: str, strategy: str, variant_names: tuple, rescore: int, m: int, efc: int,
         efs: int, cache: str | None, _corpus, _truth):
    from ragdiag.retrieval.ann import HNSWParams
    from ragdiag.variants import run_variants

    return run_variants(_corpus, _truth, strategy=strategy, variants=list(variant_names), encoder=_encoder(),
                        store=_store(cache), rescore=rescore, hnsw=HNSWParams(m, efc, efs))


with st.spinner(f"Building {len(variant_names)} variants of strategy {strategy} (stored vectors are reused)…"):
    run = _run(corpus.sha256, _file_sha(s.truth_path), strategy, variant_names, rescore, hnsw_m, hnsw_efc, hnsw_efs,
               s.cache, corpus, truth)

phrasing = st.segmented_control("Phrasing", ["all", *truth.phrasings], default="all", key="vphrasing",
                                bind="query-params", required=True) or "all"
rows = variant_rows(run, k=PRIMARY_K, phrasing=phrasing)
key = f"R@{PRIMARY_K}"
frame = pd.DataFrame([{
    "variant": r["variant"], "model": r["model"], "precision": r["precision"], "index": r["index"],
    key: r[key].estimate, "low": r[key].low, "high": r[key].high,
    "vs baseline": "baseline" if r["p"] is None else f"+{r['wins']}/-{r['losses']}",
    "p": r["p"], "bytes/vector": r["bytes_per_vector"], "+ rescore bytes": r["rescore_bytes"],
    "ms/query": r["ms_per_query"], "build s": r["build_s"], f"overlap@{PRIMARY_K}": r[f"overlap@{PRIMARY_K}"],
    "truncated": r["truncated"], "Pareto": "★" if r["pareto"] else "",
} for r in rows])
st.dataframe(frame, hide_index=True, column_config={
    key: st.column_config.NumberColumn(format="%.3f"), "low": st.column_config.NumberColumn(format="%.3f"),
    "high": st.column_config.NumberColumn(format="%.3f"), "p": st.column_config.NumberColumn(format="%.4f"),
    "ms/query": st.column_config.NumberColumn(format="%.3f"), "build s": st.column_config.NumberColumn(format="%.3f"),
})
st.caption("bytes/vector: what the search reads per chunk (rescoring variants also keep the float32 vectors, "
           f"often on disk). ms/query: search of the top {TOP} only, the queries already embedded. "
           f"overlap@{PRIMARY_K}: share of the exact top {PRIMARY_K} of the same model that the variant returns "
           "(below 1: the precision or the index loses neighbours; a model's own misses do not show here). "
           "★ Pareto-optimal: no other variant is at least as good on recall, memory (codes plus any rescoring "
           "vectors) and time, and better on one. "
           "truncated: chunks longer than the model's window.")

chart = alt.Chart(frame).mark_point(filled=True, size=90).encode(
    x=alt.X("bytes/vector:Q", scale=alt.Scale(type="log"), title="bytes per vector (log)"),
    y=alt.Y(f"{key}:Q", title=f"recall@{PRIMARY_K}", scale=alt.Scale(domain=[0, 1])),
    color=alt.Color("model:N"), shape=alt.Shape("Pareto:N", title="Pareto"),
    tooltip=["variant", key, "low", "high", "bytes/vector", "ms/query"],
)
bars = alt.Chart(frame).mark_rule().encode(x="bytes/vector:Q", y="low:Q", y2="high:Q", color="model:N")
st.altair_chart(bars + chart, width="stretch")

st.subheader("Verdicts against the baseline")
for r in rows:
    if r["p"] is not None:
        (st.info if r["p"] >= 0.05 else st.warning)(r["verdict"])

st.subheader("A cut belongs to one model")
cut = st.slider("Cut (cosine distance)", 0.0, 1.0, DEFAULT_CUT, step=0.005, format="%.3f", key="vcut")
for label, index in run.model_indexes.items():
    if len(index.vectors) > 1:
        pct = cut_percentile(cut, nearest_chunk_distances(index.vectors))
        st.markdown(f"- **{label}**: cut {cut:.3f} is percentile **{pct:.1f}** of the {strategy} chunks' distances "
                    "to their nearest other chunk")
st.caption("Cosine distances of two models are not on one scale: a cut tuned for MiniLM means something else for "
           "another model. The percentile among the corpus's own nearest-chunk distances is the reading that "
           "survives a model change.")

for name, reason in run.unavailable.items():
    st.warning(f"**{name}** is unavailable: {reason}")
with st.expander("Stamps: which model, precision and index made which numbers"):
    st.json({name: info.stamp for name, info in run.info.items()}, expanded=False)
