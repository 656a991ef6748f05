"""The Overview's charts for people: a sorted dot plot of recall, 100%-stacked funnels and a waterfall.

Pure ``DataFrame -> alt.Chart`` builders. The chosen configuration is drawn in
the accent colour and the others grey; red is kept for losses; at most eight
colour categories; labels are never dropped (no label limit, one row each).
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from ragdiag.analyses.outcomes import LADDER as STAGES
from ragdiag.core.words import RUNG_WORDS, pct
from ui.fmt import ACCENT, NEUTRAL
from ui.gate_charts import FIT_X

__all__ = ["recall_dots", "funnel_stack", "funnel_waterfall", "STAGE_COLORS"]

GREY = "#9e9e9e"
#: Losses in reds and oranges, from the earliest (the chunking) to the gate; answered in slate.
STAGE_COLORS = {"destroyed": "#7f0000", "truncated": "#b71c1c", "not-in-pool": "#e53935", "ranked-low": "#ef6c00",
                "refused": "#ffb74d", "kept-but-wrong": "#fdd835", "answered": "#455a64"}


def recall_dots(long: pd.DataFrame, *, k: int, chosen: str | None = None, title: str | None = None) -> alt.Chart:
    """Recall@k per configuration as a dot with its 95% interval, sorted, one panel per retriever
    (``frames.recall_long``); the chosen configuration in the accent colour."""
    df = long[long["k"] == k].copy()
    df["strategy"] = df["config"].str.split("/").str[0]
    df["retriever"] = df["config"].str.split("/", n=1).str[1]
    df["chosen"] = df["config"] == chosen
    df["label"] = df["recall"].map(lambda v: f"{pct(v)}")
    color = alt.condition("datum.chosen", alt.value(ACCENT), alt.value(GREY))
    y = alt.Y("strategy:N", title=None, sort=alt.EncodingSortField("recall", order="descending"),
              axis=alt.Axis(labelLimit=0))
    tooltip = ["config:N", alt.Tooltip("recall:Q", format=".1%"), alt.Tooltip("low:Q", format=".1%", title="95% low"),
               alt.Tooltip("high:Q", format=".1%", title="95% high"), alt.Tooltip("hits:Q", title="queries found"),
               alt.Tooltip("queries:Q", title="queries")]
    x = alt.X("low:Q", title=f"R@{k} (share of queries)", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    base = alt.Chart().encode(y=y, tooltip=tooltip)
    rule = base.mark_rule(strokeWidth=2).encode(x=x, x2="high:Q", color=color)
    dot = base.mark_point(filled=True, size=90, opacity=1).encode(x="recall:Q", color=color)
    text = base.mark_text(align="left", dx=8, dy=-8, fontSize=11).encode(  # text in a grey that reads (NEUTRAL)
        x="recall:Q", text="label:N", color=alt.condition("datum.chosen", alt.value(ACCENT), alt.value(NEUTRAL)))
    n_ret = df["retriever"].nunique()
    return (alt.layer(rule, dot, text, data=df)
            .properties(width=260, height=alt.Step(26))
            .facet(facet=alt.Facet("retriever:N", title=None, header=alt.Header(labelFontWeight="bold")),
                   columns=min(3, max(1, n_ret)))
            .resolve_scale(y="independent")
            .properties(title=alt.TitleParams(title or f"Recall at k = {k}, 95% intervals over questions",
                                              anchor="start")))


def funnel_stack(df: pd.DataFrame, *, chosen: str | None = None, title: str | None = None) -> alt.Chart:
    """Per configuration, where its answerable queries went, as 100%-stacked horizontal bars (``funnel_frame``),
    configurations sorted by the share answered; a bar links to its queries in the Inspector."""
    d = df.copy()
    answered = d[d["stage"] == "answered"].set_index("config")["share"]
    order = list(answered.sort_values(ascending=False).index)
    d["row"] = [("▶ " if c == chosen else "") + c for c in d["config"]]
    rows = [("▶ " if c == chosen else "") + c for c in order]
    d["order"] = d["stage"].map({s: i for i, s in enumerate(STAGES)})
    d["rung"] = d["stage"].map(lambda s: RUNG_WORDS.get(s, s))  # the legend and tooltip say each rung's one name
    return alt.Chart(d).mark_bar().encode(
        y=alt.Y("row:N", sort=rows, title=None, axis=alt.Axis(labelLimit=0)),
        x=alt.X("queries:Q", stack="normalize", title="share of answerable queries", axis=alt.Axis(format="%")),
        color=alt.Color("rung:N", title=None, sort=[RUNG_WORDS[s] for s in STAGES],
                        scale=alt.Scale(domain=[RUNG_WORDS[s] for s in STAGE_COLORS],
                                        range=list(STAGE_COLORS.values())),
                        legend=alt.Legend(orient="top", columns=4, labelLimit=0)),
        order=alt.Order("order:Q"),
        href="link:N",
        tooltip=["config:N", alt.Tooltip("rung:N", title="stage"), alt.Tooltip("queries:Q", title="queries"),
                 alt.Tooltip("of:Q", title="of"),
                 alt.Tooltip("share:Q", format=".1%"), alt.Tooltip("low:Q", format=".1%", title="95% low"),
                 alt.Tooltip("high:Q", format=".1%", title="95% high")],
    ).properties(height=alt.Step(22), autosize=FIT_X, title=alt.TitleParams(title or "Where answerable queries go", anchor="start",
                                                             subtitleColor=NEUTRAL, subtitle="first stage that lost the answer; click a "
                                                                      "bar for its queries"))


def funnel_waterfall(df: pd.DataFrame, config: str, *, title: str | None = None) -> alt.Chart:
    """One configuration's waterfall: queries in, each stage's loss, answered at the end (``funnel_frame``)."""
    d = df[df["config"] == config].set_index("stage")
    n = int(d["of"].iloc[0]) if len(d) else 0
    steps, level = [{"step": "queries in", "start": 0, "end": n, "kind": "in", "queries": n}], n
    for stage in STAGES[:-1]:
        lost = int(d.loc[stage, "queries"]) if stage in d.index else 0
        steps.append({"step": RUNG_WORDS[stage], "start": level - lost, "end": level, "kind": "lost", "queries": lost})
        level -= lost
    steps.append({"step": "answered", "start": 0, "end": level, "kind": "answered", "queries": level})
    w = pd.DataFrame(steps)
    w["label"] = [f"−{q}" if k == "lost" else str(q) for q, k in zip(w["queries"], w["kind"])]
    w["top"] = w[["start", "end"]].max(axis=1)
    colors = {"in": GREY, "lost": "#c62828", "answered": ACCENT}
    x = alt.X("step:N", sort=list(w["step"]), title=None,
              axis=alt.Axis(labelAngle=-30, labelLimit=0, labelOverlap=False))
    bars = alt.Chart(w).mark_bar().encode(
        x=x, y=alt.Y("start:Q", title="queries", scale=alt.Scale(domain=[0, max(n, 1) * 1.1])), y2="end:Q",
        color=alt.Color("kind:N", legend=None, scale=alt.Scale(domain=list(colors), range=list(colors.values()))),
        tooltip=["step:N", alt.Tooltip("queries:Q", title="queries")])
    text = alt.Chart(w).mark_text(dy=-6, fontSize=12).encode(x=x, y="top:Q", text="label:N")
    return (bars + text).properties(height=260, autosize=FIT_X, title=alt.TitleParams(
        title or f"{config}: {level} of {n} answerable queries answered", anchor="start",
        subtitleColor=NEUTRAL, subtitle="queries in, each stage's loss, answered"))
