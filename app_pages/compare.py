"""Compare: the question asked fixes the comparisons, and every verdict stands beside the interval it was decided with.

- What should we ship? -> comparison with the best, and the recommendation (ragdiag.analyses.recommend).
- What does each chunking switch do? -> the design's contrasts per retriever, one family (ragdiag.analyses.compare.effects).
- Is the candidate better than what we run? -> the operator's declared baseline against each other configuration.
- Explore every pair -> exploratory: all pairs, simultaneous intervals, Benjamini-Hochberg q-values, no colours.
"""

import altair as alt
import pandas as pd
import streamlit as st

from ragdiag.analyses.compare.baseline import declared_baseline
from ragdiag.analyses.compare.comparisons import compare, compare_in_family, family
from ragdiag.analyses.compare.effects import effects
from ragdiag.analyses.gate_table import gate_table
from ragdiag.analyses.compare.intervals import RECALL_INTERVAL_WORDS, clustered_rate
from ragdiag.core.defaults import ALPHA, KS, PRIMARY_K
from ragdiag.core.metrics import hits_at_k
from ragdiag.analyses.recommend import describe_config
from ragdiag.core.gate import Gate
from ui.fmt import difference_text, drop_constant, rate, said_once
from ui.html import md_text
from ui import cache
from ui.context import context, link_params, recommendation
from ui.jobs import evaluation
from ui.state import config_labels
from ui.chart_theme import themed
from ragdiag.core.words import cut_text, diff_points, difference_of


def page() -> None:
    ACCENT, GREY = "#1f77b4", "#b0b0b0"
    st.title("Compare")
    ev, token = evaluation()
    if len(config_labels(ev)) < 2:
        st.info("Only one configuration was evaluated: there is nothing to compare.")
        st.stop()
    try:
        declared = declared_baseline()
    except ValueError as exc:  # a project file that cannot be read: say so, offer no planned family
        declared = None
        st.caption(f"No baseline: {md_text(exc)}")
    if declared is not None and declared.config not in config_labels(ev):
        st.caption(f"What you run today, {md_text(declared.config)}, was not evaluated here.")
        declared = None

    VIEWS = {"ship": "What should we ship?", "switches": "What does each chunking switch do?",
             **({"baseline": "Is the candidate better than what we run?"} if declared else {}),
             "pairs": "Explore every pair"}
    # the question itself is the option (and the URL's ?view=): a link opens the view by its words
    KEYS = {words: key for key, words in VIEWS.items()}
    view = KEYS[st.segmented_control("Question", list(KEYS), default=VIEWS["ship"], key="view", bind="query-params",
                                     required=True) or VIEWS["ship"]]
    if declared is None:  # how to declare one is the operator's business: docs/serving.md, `ragdiag dashboard --help`
        st.caption("A comparison with what you run today needs the operator to name it before anyone looks at the "
                   "results (see the serving guide); until then every comparison is with the runner-up.")


    def effects_for(token: str, k: int, ev):
        """The design's contrasts as one family, once per evaluation."""
        with st.spinner("Testing the switch contrasts…"):
            return cache.by_evaluation("effects", token, (k,), lambda: effects(ev, k=k))


    def family_for(token: str, k: int | None, phrasing: str, baseline: str | None, ev):
        """The family on screen: all pairs (exploratory) or the declared baseline against each other."""
        with st.spinner("Testing the family…"):
            return cache.by_evaluation("family", token, (k, phrasing, baseline),
                                       lambda: family(ev, k=k, phrasing=phrasing, baseline=baseline))


    def titled(chart: alt.Chart, title: str, subtitle: str) -> alt.Chart:
        """A finding as the title, the measure as the subtitle, never clipped (anchored left, wrapped by width)."""
        return chart.properties(title=alt.TitleParams(title, subtitle=subtitle, anchor="start", limit=0),
                                width="container")


    def pair_details(comp, *, coloured: bool) -> None:
        """Counts, the verdict with its interval, power, MRR and the discordant queries of one pair."""
        t = comp.test
        a, b = comp.a.label, comp.b.label
        m1, m2, m3, m4 = st.columns(4)
        m1.metric(f"wins of {a}", t.wins, help=f"questions on which {a} finds more phrasings in its top k than {b}")
        m2.metric(f"losses of {a}", t.losses, help=f"questions on which {b} finds more phrasings")
        m3.metric("ties", t.ties, help="questions on which both find the same number of phrasings")
        m4.metric("p adjusted", f"{comp.p_shown:.3g}", help=f"{comp.correction}; the pair alone: p = {t.p:.3g}")
        say = ({"different": st.success, "not shown different": st.info}.get(comp.status, st.write) if coloured
               else st.write)
        say(comp.verdict)
        st.caption(f"Simultaneous interval {comp.difference_words()} ({comp.method}); "
                   f"the pair alone, unadjusted: {difference_of(comp.metric, t.difference)}. {comp.power}")
        mrr = compare(ev, comp.a, comp.b, k=None, phrasing=comp.phrasing)
        st.caption(f"MRR (descriptive, this pair alone): {mrr.difference_words()}, sign-flip p = {mrr.test.p:.3g}.")
        with st.expander(f"Discordant queries ({len(comp.wins) + len(comp.losses)})"):
            texts = {q.id: q.text for q in ev.queries}
            ra, rb = ev.result(comp.a), ev.result(comp.b)
            cols = st.columns(2)
            for col, title, ids, cfg in ((cols[0], f"{a} finds, {b} misses", comp.wins, a),
                                         (cols[1], f"{b} finds, {a} misses", comp.losses, b)):
                with col:
                    st.markdown(f"**{md_text(title)}** ({len(ids)})")
                    for qid in ids:
                        i = ev.query_index(qid)
                        ranks = f"rank {int(ra.needle_rank[i]) or '–'} vs {int(rb.needle_rank[i]) or '–'}"
                        st.page_link("app_pages/inspector.py", label=md_text(f"{qid} · {ranks} · {texts[qid][:90]}"),
                                     icon=":material/search:", query_params=link_params(q=qid, config=cfg))


    if view == "ship":
        ctx = context(ev, token)
        # the Summary's recommendation (the context's keep and goal, not the defaults) and the comparison it decided on
        rec = recommendation(ev, token, ctx.keep, ctx.goal)
        res = rec.comparison
        st.success(rec.sentence())
        st.caption(f"Why: {rec.why} Cut ({rec.cut_method}): {rec.guarantee or 'no guarantee'}. Lost: {rate(rec.lost)} "
                   f"of answerable queries." + (f" Runner-up {describe_config(rec.runner_up)} ({rec.runner_up}): "
                                                f"answered {rate(rec.runner_up_rates['answered'])}, bluffs "
                                                f"{rate(rec.runner_up_rates['bluffs'])} at strictness "
                                                f"{cut_text(rec.runner_up_cut)}, its own for the same goal."
                                                if rec.runner_up_rates else ""))
        groups = ev.groups(ev.in_domain)
        recall = {c.label: clustered_rate(hits_at_k(ev.result(c).needle_rank[ev.in_domain], PRIMARY_K), groups)
                  for c in ev.results if not c.external}
        # the decision's measure: answered at each one's own cut for the goal, with the interval every rate has
        answered = {c: clustered_rate(gate_table(ev, c, Gate(ctx.keep)).answered(cut)[ev.in_domain], groups)
                    for c, cut in rec.cuts.items()}
        rows = sorted(res.rows, key=lambda r: -r.mean)
        df = pd.DataFrame([{"configuration": describe_config(r.config), "code": r.config,
                            "answered": answered[r.config].estimate, "low": answered[r.config].low,
                            "high": answered[r.config].high,
                            "tier": "best set" if r.in_best_set else "ruled out as the best",
                            "difference to best": r.estimate, "simultaneous low": r.low, "simultaneous high": r.high,
                            "p adjusted": "–" if r.p_adjusted is None else f"{r.p_adjusted:.3f}"} for r in rows])
        n_set = len(res.best_set)
        base = alt.Chart(df).encode(y=alt.Y("code:N", sort=list(df["code"]), title=None))
        colour = alt.Color("tier:N", scale=alt.Scale(domain=["best set", "ruled out as the best"],
                                                     range=[ACCENT, GREY]), legend=alt.Legend(orient="bottom", title=None))
        chart = (base.mark_rule().encode(x=alt.X("low:Q", title="answered at its own cut (share of answerable queries)",
                                                 scale=alt.Scale(domain=[0, 1])), x2="high:Q", color=colour)
                 + base.mark_point(filled=True, size=60).encode(
                     x="answered:Q", color=colour,
                     tooltip=["configuration", "code", alt.Tooltip("answered:Q", format=".2f")]))
        st.altair_chart(themed(titled(chart.properties(height=alt.Step(20)),
                                      f"{n_set} of {len(df)} configurations are not shown worse than the best",
                                      f"Answered at its own cut, 95% interval; tier simultaneous over all {len(df)}")),
                        width="stretch")
        # one format for a rate and a difference, as in sentences: "62% (48–75)", "−12 pts (−38 to +12)" (this minus
        # the best: negative is worse)
        shown_df = pd.DataFrame({
            "configuration": df["configuration"], "code": df["code"],
            "answered at its own cut": [rate(answered[c]) for c in df["code"]],
            f"found in the top {PRIMARY_K} (before the gate)": [rate(recall[c]) for c in df["code"]],
            "tier": df["tier"],
            "difference to the best (points, simultaneous 95%)": [
                f"best: {difference_text(r)} over the runner-up" if c == res.best else difference_text(r)
                for c, r in zip(df["code"], rows)],
            "p adjusted": df["p adjusted"]})
        best_table, best_same = drop_constant(shown_df, keep=["configuration", "code"])
        if best_same:
            st.caption(md_text(said_once(best_same)))
        st.dataframe(best_table, hide_index=True)
        st.caption(f"Comparison with the best on the share {rec.measure}, each with its "
                   f"{RECALL_INTERVAL_WORDS.split(' (')[0]} ({res.method}). Found in the top {PRIMARY_K} is what the "
                   "retriever found before the gate, the diagnostic of why an answer is lost. A configuration is in the "
                   f"best set when its simultaneous interval of the difference to the best reaches 0 (adjusted p ≥ "
                   f"{ALPHA}); one ruled out is not the best (another is at least as good), which Hsu's method "
                   "guarantees, whichever is truly best. The best's own row: its lead over the runner-up.")

    elif view == "switches":
        try:
            res = effects_for(token, PRIMARY_K, ev)
        except ValueError:  # no two strategies differ by one switch with the same retriever
            st.info("Evaluate two strategies that differ by one switch (e.g. E and C, with the same retriever) to see "
                    "what it does.")
            st.stop()
        shown = [r for r in res.rows if r.status == "different"]
        for r in shown:
            st.success(r.sentence())
        if not shown:
            st.info(f"No switch is shown to change R@{PRIMARY_K} within the {len(res.rows)} contrasts; the table gives "
                    "each contrast's difference and interval.")
        df = pd.DataFrame([{"switch": r.switch, "contrast": f"{r.contrast} · {r.retriever}", "retriever": r.retriever,
                            "wins": r.wins, "losses": r.losses, "ties": r.ties, "difference": r.estimate,
                            "low": r.low, "high": r.high, "p": r.p, "p adjusted": r.p_adjusted,
                            "destroyed": " / ".join(f"{s}: {n}" for s, n in r.destroyed.items()), "status": r.status}
                           for r in res.rows])
        means = df.groupby("switch")["difference"].mean()
        words = ", ".join(f"{s} {diff_points(v)}" for s, v in means.items())
        base = alt.Chart(df).encode(y=alt.Y("contrast:N", sort=list(df["contrast"]), title=None))
        colour = alt.Color("switch:N", legend=alt.Legend(orient="bottom", title=None),  # no red: red means a loss
                           scale=alt.Scale(domain=["boundaries", "header", "overlap"],
                                           range=["#1f77b4", "#2ca02c", "#9467bd"]))
        chart = (alt.Chart(pd.DataFrame({"x": [0]})).mark_rule(color="black").encode(x="x:Q")
                 + base.mark_rule().encode(x=alt.X("low:Q", title=f"difference in R@{PRIMARY_K} (with − without)"),
                                           x2="high:Q", color=colour)
                 + base.mark_point(filled=True, size=60).encode(x="difference:Q", color=colour,
                                                                tooltip=["contrast", "wins", "losses", "destroyed"]))
        # the title says what is shown different; the estimates are what was seen, not findings
        st.altair_chart(themed(titled(chart.properties(height=alt.Step(20)),
                                      f"{len(shown)} of {len(df)} contrasts shown different at R@{PRIMARY_K}",
                                      f"seen, mean per switch in points: {words}")), width="stretch")
        table = df.drop(columns=["contrast"]).assign(contrast=[r.contrast for r in res.rows])
        table = table[["switch", "contrast", *[c for c in table.columns if c not in ("switch", "contrast")]]]
        st.dataframe(table, hide_index=True,
                     column_config={c: st.column_config.NumberColumn(format="%+.3f") for c in ("difference", "low", "high")}
                     | {c: st.column_config.NumberColumn(format="%.3f") for c in ("p", "p adjusted")})
        st.caption("Each switch alone, per retriever. p: the contrast alone (exact sign-flip over questions); p adjusted, "
                   f"low and high: simultaneous 95% within the family over questions ({res.method}). destroyed: needles "
                   "no chunk holds whole under each strategy (recall capped at 0).")

    else:
        c1, c2, c3 = st.columns([4, 1, 2])
        k = c2.selectbox("k", list(KS), index=list(KS).index(PRIMARY_K), key="k", bind="query-params",
                         help=f"R@{PRIMARY_K} (the gate's keep) carries the verdicts; other k are descriptive")
        # the planned family is fixed before looking: every phrasing, one family (a phrasing picked on screen after
        # seeing the results would be a second family chosen by its outcome); the exploratory view may split them
        phrasing = "all" if view == "baseline" else (
            c3.segmented_control("Phrasing", ["all", *ev.truth.phrasings], default="all", key="phrasing",
                                 bind="query-params", required=True) or "all")
        everything = config_labels(ev)
        if view == "baseline":
            st.markdown(f"What you run today: **{md_text(describe_config(declared.config))}** ({declared.config}), "
                        "named by the operator before looking; the candidates are every other configuration, on every "
                        "phrasing (fixed with the family; the exploratory view can split by phrasing).")
            others = [x for x in everything if x != declared.config]
            cand = c1.selectbox("Candidate", others, key="b", bind="query-params")
            fam = family_for(token, k, phrasing, declared.config, ev)
            comp = compare_in_family(ev, cand, declared.config, k=k, phrasing=phrasing, comparisons=fam)
            pair_details(comp, coloured=True)
            rows = [{"candidate": c.b.label, "configuration": describe_config(c.b.label),
                     "difference": c.difference()["estimate"], "low": c.difference()["low"],
                     "high": c.difference()["high"], "p adjusted": c.p_adjusted, "status": c.status} for c in fam]
            st.subheader(f"Every candidate against {declared.config}")
            st.caption(f"{len(fam)} comparisons at R@{k} (baseline minus candidate), simultaneous within this planned "
                       "family.")
            st.dataframe(pd.DataFrame(rows), hide_index=True)
        else:
            first = context(ev, token).config  # the sidebar's configuration (the recommended one by default)
            second = next((x for x in ("A/dense", "E/dense", "C/hybrid") if x in everything and x != first),
                          next(x for x in everything if x != first))
            ca, cb = c1.columns(2)
            a = ca.selectbox("Configuration A", everything, index=everything.index(first), key="a", bind="query-params")
            b = cb.selectbox("Configuration B", everything, index=everything.index(second), key="b",
                             bind="query-params")
            fam = family_for(token, k, phrasing, None, ev)
            st.caption(f"Exploratory: all {len(fam)} pairs at R@{k}; intervals simultaneous over the {len(fam)}, "
                       "q-values (Benjamini-Hochberg) to sort what to look at, not verdicts."
                       + ("" if k == PRIMARY_K else f" Descriptive: verdicts are at R@{PRIMARY_K}."))
            if a == b:
                st.info("Choose two different configurations.")
            else:
                pair_details(compare_in_family(ev, a, b, k=k, phrasing=phrasing, comparisons=fam), coloured=False)
            beats: dict[str, list[str]] = {x: [] for x in everything}
            for c in fam:
                if c.status == "different":
                    winner, loser = (c.a.label, c.b.label) if c.difference()["estimate"] > 0 else (c.b.label, c.a.label)
                    beats[winner].append(loser)
            mask = ev.mask(phrasing) & ev.in_domain
            table = []
            for x in everything:
                ranks = ev.result(x).needle_rank[mask]
                iv = clustered_rate(hits_at_k(ranks, k), ev.groups(mask))
                table.append({"configuration": describe_config(x), "code": x, f"R@{k} (95% interval)": str(iv),
                              "beats, after correction": ", ".join(sorted(beats[x])) or "–", "n": len(beats[x]),
                              "_order": iv.estimate})
            st.subheader("Which configurations each one beats, after correction")
            st.dataframe(pd.DataFrame(table).sort_values("_order", ascending=False, kind="stable").drop(
                columns="_order"), hide_index=True)
            with st.expander("Every pair, with q-values"):
                st.dataframe(pd.DataFrame([{"a": c.a.label, "b": c.b.label, "wins": c.test.wins, "losses": c.test.losses,
                                            "difference": c.difference()["estimate"], "low": c.difference()["low"],
                                            "high": c.difference()["high"], "p": c.test.p, "p adjusted": c.p_adjusted,
                                            "q": c.q_value} for c in fam]), hide_index=True)


page()
