"""External run: evaluate another system's results against the same ground truth, beside ragdiag's."""

import re
from collections import Counter

import streamlit as st

from ragdiag.core.defaults import PRIMARY_K
from ragdiag.analyses.summary import summary_rows
from ragdiag.evaluation.external import RunError, attach_run, decode_run, load_run, parse_run, rank_rungs
from ragdiag.core.limits import ENV as LIMIT_ENV, LimitError, Limits
from ragdiag.present.serving import AccessError
from ragdiag.core.defaults import KS
from ragdiag.analyses.compare.comparisons import compare
from ragdiag.analyses.threshold.gate import sweep_table
from ragdiag.analyses.gate_table import gate_table
from ragdiag.core.gate import Gate
from ragdiag.analyses.threshold.rates import rate_rows
from ui.tables import gate_view, ranks_view, recall_view
from ui.html import md_text
from ui.context import context
from ui.jobs import evaluation
from ui.state import access
from ragdiag.core.words import cut_text


def page() -> None:
    st.title("External run")
    st.markdown(
        "Upload the results of the retriever you run in production as JSON Lines, one query per line, hits in "
        "rank order: `{\"query_id\": \"q01:course\", \"hits\": [{\"text\": \"...\", \"doc\": \"svm\", "
        "\"start\": 120, \"end\": 610, \"score\": 0.31}]}` (`doc`, `start`, `end`, `score` optional). A hit holds "
        "the needle when its offsets contain the needle's span, or, without offsets, when its text contains it."
    )
    ev, token = evaluation()

    acc = access()
    try:
        limits = Limits.from_env()
    except LimitError as exc:
        st.error(md_text(exc))
        st.stop()
    up, path_col = st.columns(2)
    uploaded = up.file_uploader("Run file (.jsonl)", type=["jsonl", "json", "txt"], key="run_file",
                                help=f"At most {limits.max_run_bytes / 1e6:g} MB.")
    server_path = "" if acc.locked else path_col.text_input(
        "…or a run file on the server", key="run_path", max_chars=4096,
        help="A path under the folders the operator allowed (RAGDIAG_ROOTS).")
    distances = st.checkbox("Scores are cosine distances (lower = closer): enables the threshold sweep",
                            key="run_distances")


    def _run_name(file_name: str) -> str:
        """A safe name for tables and headings: letters, digits, '-', '_' and '.' from the file's stem only."""
        stem = file_name.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].rsplit(".", 1)[0]
        return re.sub(r"[^\w.-]+", "_", stem)[:40].strip("._") or "external"


    try:
        if uploaded is not None:
            if uploaded.size > limits.max_run_bytes:
                raise RunError("upload", [f"the file is {uploaded.size:,} bytes; the limit is {limits.max_run_bytes:,} "
                                          f"(the operator sets {LIMIT_ENV['max_run_bytes']})"])
            source = name = _run_name(uploaded.name)
            run = parse_run(decode_run(uploaded.getvalue(), source), ev.truth, name=name, source=source,
                            distances=distances, corpus=ev.corpus)
        elif server_path.strip():
            try:
                path = acc.check(server_path.strip(), "run file")
            except AccessError as exc:
                st.error(f"Cannot open that: {md_text(exc)}.")
                st.stop()
            run = load_run(path, ev.truth, name=_run_name(path.name), distances=distances, corpus=ev.corpus,
                           limits=limits)
        else:
            st.info("No run loaded yet.")
            st.stop()
    except RunError as exc:
        st.error(f"This run cannot be evaluated: {md_text(str(exc).splitlines()[0].removeprefix('run '))}")
        st.code("\n".join(exc.problems[:50]), language=None)
        st.stop()
    for note in run.notes:
        st.info(md_text(note))

    # A new evaluation: the cached one is shared by every session and stays as it is.
    view = attach_run(ev, run)
    result = view.result(run.key)
    if run.missing:
        st.warning(f"{len(run.missing)} ground-truth queries are missing from the run and count as misses: "
                   + md_text(", ".join(run.missing[:20])) + (" …" if len(run.missing) > 20 else ""))

    rows = [r for r in summary_rows(view) if r.config == result.config.label]
    st.subheader(f"Recall of {md_text(result.config.label)}")
    recall, _ = recall_view(rows, ks=KS, primary=PRIMARY_K)
    st.dataframe(recall, hide_index=True, key="run_recall")
    counts = Counter(r for r in rank_rungs(view, run, PRIMARY_K) if r)  # the rungs its ranks can tell
    st.caption(f"by the ranks at k = {PRIMARY_K}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))

    st.subheader("Paired comparison with a ragdiag configuration")
    a, b = st.columns([2, 1])
    ours = [c.label for c in ev.results if not c.external]
    other = a.selectbox("Compare with", ours, index=ours.index(context(ev, token).config)
                        if context(ev, token).config in ours else 0, key="run_vs", bind="query-params")
    k = b.selectbox("k", list(KS), index=list(KS).index(PRIMARY_K), key="run_k")
    c = compare(view, result.config, other, k=k)
    t = c.test
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"{md_text(result.config.label)} wins", t.wins)
    m2.metric("losses", t.losses)
    m3.metric("ties", t.ties)
    m4.metric("exact sign-flip p (questions)", f"{t.p:.3g}")
    st.markdown(f"**{md_text(c.verdict)}**")

    per_query, same = ranks_view([q.id for q in view.queries], [q.phrasing for q in view.queries],
                                 result.needle_rank, list(rank_rungs(view, run, PRIMARY_K)))
    st.caption(f"Per answerable query of {md_text(result.config.label)}, best needle rank first (a dash: the needle "
               "is not among its hits)." + "".join(f" Every row: {md_text(k)} {md_text(v)}." for k, v in same.items()))
    st.dataframe(per_query, hide_index=True, key="run_ranks")

    if run.distances:
        st.subheader("Threshold")
        ctx = context(ev, token)
        cut, keep = ctx.cut, ctx.keep
        st.caption(f"At the context's cut {cut_text(cut)}, keeping at most {keep} chunks (sidebar).")
        table = sweep_table(view, result.config, Gate(keep), cuts=[cut])
        rates = rate_rows(gate_table(view, result.config, Gate(keep)), [cut])[0]
        st.dataframe(gate_view(rates, table.row(cut)), hide_index=True, key="run_gate")


page()
