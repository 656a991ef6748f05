"""The one context every page reads: configuration, gate (cut and keep) and goal, kept in the session and the URL.

What a visitor chose lives in one session value (never a widget's own state):
``None`` for a field means "not chosen", and then the page shows the
recommendation (:func:`recommendation`) at its cut, or, for another chosen
configuration, the cut proposed for it for the same goal. The sidebar's fields
are drawn from that value with an explicit ``value`` (:func:`context` draws
them, once per run) and change it only through their ``on_change`` callbacks,
that is, only when the visitor changes them: a field the browser re-sends at a
default, or a widget whose state was dropped mid-run, cannot overwrite the
context. The URL carries the full context (``config``, ``cut``, ``keep``,
``goal``, and when set the answered goal ``answered``, the cut a team runs today, ``current`` in ``units``, and
the cost goal ``bluff_cost``); a URL value this session has not written itself (a link, a new
tab) sets it, an echo of a value it wrote before (a request sent before the
browser caught up) does not. Every change leaves a short note with "Undo".

The cut is held at :data:`~ragdiag.core.gate.CUT_DECIMALS` decimals, rounded
down (:func:`~ragdiag.core.gate.cut_text`): the number printed is the number
used, so typing a printed cut back gives the same rates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import streamlit as st

from ragdiag.core.defaults import DEFAULT_CUT, DEFAULT_KEEP, DEFAULT_MAX_BLUFF, TOP
from ragdiag.core.gate import CUT_DECIMALS, Gate, GateError, OnGate, cut_text
from ragdiag.core.goal import MAX_BLUFF_COST, Goal, GoalError, OnGoal, check_bluff_cost, check_share, percent_share
from ragdiag.evaluation.records import Evaluation
from ui.state import UNAVAILABLE_KEY as _UNAVAILABLE, Settings, settings
from ui.html import md_text
from ragdiag.core.words import pct

__all__ = ["Context", "context", "gate_settings", "context_sidebar", "context_done", "use", "config_words",
           "remember_unavailable", "url_synced", "write_url", "recommendation", "snap_cut", "cut_stops",
           "link_params", "context_config", "context_stops", "cut_slider", "CUT_SLIDER_LABEL", "use_current",
           "use_bluff_cost", "use_min_answered", "current_problem", "CONFIG_KEY", "CUT_KEY",
           "KEEP_KEY", "GOAL_KEY", "ANSWERED_KEY", "CURRENT_KEY", "UNITS_KEY", "COST_KEY", "MAX_BLUFF_COST",
           "SCORE_KEY", "NATIVE_CUT_KEY", "use_score", "use_native_cut"]

CONFIG_KEY, CUT_KEY, KEEP_KEY, GOAL_KEY = "config", "cut", "keep", "goal"
#: The cut a team runs today (a number in ``units``: a cosine distance or a similarity) and the cost goal
#: ("a bluff costs as much as N lost answers"): optional, in the URL only when set.
CURRENT_KEY, UNITS_KEY, COST_KEY = "current", "units", "bluff_cost"
#: The second goal, answered at least this percentage of answerable queries: judged on the Summary and in the
#: report, never optimised (the recommendation and its cut follow the bluff goal alone); in the URL only when set.
ANSWERED_KEY = "answered"
#: The score the Threshold page's gate reads: ``dense`` (the dense model's cosine distance, the default: not in the
#: URL) or ``native`` (the ranking's own score, higher keeps), and the cut on that score the visitor set
#: (``native_cut``, in the score's units; absent: the one proposed for the bluff goal). Both in the URL only when set.
SCORE_KEY, NATIVE_CUT_KEY = "score", "native_cut"
_FIELDS = (CONFIG_KEY, CUT_KEY, KEEP_KEY, GOAL_KEY, ANSWERED_KEY, CURRENT_KEY, UNITS_KEY, COST_KEY, SCORE_KEY,
           NATIVE_CUT_KEY)
#: Kept by "Back to the recommendation" (facts and goals, not choices of a cut); in the URL only when set.
_OPTIONAL = (ANSWERED_KEY, CURRENT_KEY, UNITS_KEY, COST_KEY, SCORE_KEY, NATIVE_CUT_KEY)
_STATE = "_ctx_chosen"  # {field: value or None}: what the visitor chose (None: not chosen)
_WRITTEN = "_ctx_written"  # {field: set of URL texts this session wrote}: their echo is not a choice
_SHOWN = "_ctx_shown"  # the resolved context last drawn: {field: value}
_NOTE = "_ctx_note"  # (words, the chosen state before the change) of the last change
_VER = "_ctx_version"  # bumped on every change: the fields are drawn afresh with the new values
_HOLDER = "_ctx_holder"  # the sidebar container the fields are drawn into
_DRAWN = "_ctx_drawn"  # whether this run drew the fields
_UNSETTLED = "_ctx_unsettled"  # the fields left out of the URL while the recommendation is provisional
_LINE = "_ctx_line"  # the sidebar's placeholder of the context's one line (pages without the fields)
_LIVE = "_ctx_live"  # the keys of the configuration box and the cut slider the last run drew
#: {field: texts}: the configurations and cuts shown before the recommendation moved on its own (strategies
#: finished), until the browser's fields hold the new ones: a field the browser sends back at such a value, in a rerun
#: asked before it caught up, is an echo, not the visitor's choice (the cut of an earlier, provisional pick)
_SUPERSEDED = "_ctx_superseded"


@dataclass(frozen=True)
class Context(OnGate, OnGoal):
    """What every page shows: one configuration, the :class:`~ragdiag.core.gate.Gate` (cut and keep) and the
    :class:`~ragdiag.core.goal.Goal` (the bluff goal, and when set the answered goal and the cost goal), each the
    visitor's choice or, when not chosen, the recommendation's.

    ``chosen``: the configuration was picked by the visitor (else it is the recommended one).
    ``cut_chosen``: the cut was set by the visitor (else the one proposed for the goal).
    ``proposed_cut``: the cut proposed for this configuration and goal (the recommendation's own for it).
    """

    config: str
    gate: Gate
    chosen: bool
    goal: Goal = Goal(DEFAULT_MAX_BLUFF)  # the bluff goal (always), the answered goal and the cost goal (when set)
    cut_chosen: bool = False
    proposed_cut: float | None = None
    recommended_config: str = ""
    provisional: bool = False
    recommended_cut: float | None = None
    current: float | None = None  # the cut a team runs today, as typed, in ``units`` (None: not given)
    units: str = "distance"  # "distance" (cosine distance) or "similarity" (read as the distance 1 - s)
    score: str = "dense"  # the score the Threshold page's gate reads: "dense" or "native" (the ranking's own)
    native_cut: float | None = None  # the visitor's cut on the native score (None: the proposed one)

    @property
    def is_recommendation(self) -> bool:
        """The recommended configuration at the cut proposed for it (nothing the visitor changed)."""
        return (self.config == self.recommended_config and self.proposed_cut is not None
                and abs(self.cut - self.proposed_cut) < 1e-12)

    def params(self) -> dict[str, str]:
        """The context as URL parameters: what every in-app link carries."""
        out = {CONFIG_KEY: self.config, CUT_KEY: self.cut_words, KEEP_KEY: str(self.keep),
               GOAL_KEY: _goal_text(self.max_bluff)}
        return {**out, **_optional_params(self.current, self.units, self.bluff_cost, self.min_answered,
                                          self.score, self.native_cut)}


def _optional_params(current: float | None, units: str | None, bluff_cost: float | None,
                     min_answered: float | None = None, score: str | None = None,
                     native_cut: float | None = None) -> dict[str, str]:
    """The optional fields as URL parameters: only those set (the units only beside a current cut; the native
    score and its cut only when the native score is read)."""
    out = {}
    if score == "native":
        out[SCORE_KEY] = score
        if native_cut is not None:
            out[NATIVE_CUT_KEY] = _number_text(native_cut)
    if min_answered is not None:
        out[ANSWERED_KEY] = _goal_text(min_answered)
    if current is not None:
        out[CURRENT_KEY], out[UNITS_KEY] = _number_text(current), units or "distance"
    if bluff_cost is not None:
        out[COST_KEY] = _number_text(bluff_cost)
    return out


def _number_text(v: float) -> str:
    """A number as the URL carries it: short, and read back to the same float."""
    return repr(float(v)) if float(f"{v:g}") != float(v) else f"{v:g}"


def config_words(label: str) -> str:
    """A configuration in words ("paragraph cuts + section header, hybrid retrieval"), the code after it."""
    from ragdiag.analyses.recommend import describe_config

    try:
        return f"{describe_config(label)} ({label})"
    except ValueError:  # a label the library cannot decode (an external run): its code alone
        return label


def _option_words(label: str) -> str:
    """A configuration as the picker lists it: its id first (two configurations whose words start alike stay
    apart when the box cuts the words short), then its words."""
    words = config_words(label)
    suffix = f" ({label})"
    return f"{label} · {words[:-len(suffix)]}" if words.endswith(suffix) else label


def _options(s: Settings) -> list[str]:
    gone = set(st.session_state.get(_UNAVAILABLE, ()))
    return [f"{st_}/{r}" for st_ in s.strategies for r in s.retrievers if r not in gone]


def remember_unavailable(ev: Evaluation) -> None:
    """Keep retrievers that could not run (e.g. a reranker without its weights offline) out of the picker."""
    gone = tuple(sorted(ev.unavailable))
    if tuple(st.session_state.get(_UNAVAILABLE, ())) != gone:
        st.session_state[_UNAVAILABLE] = gone


# ----- a URL parameter bound to a page's own widget (the Inspector's query) --------------------------

def url_synced(key: str, options: list | None = None, *, fallback=None, parse=str) -> None:
    """Keep a widget in step with ``?key=`` by value, without binding it (so its labels may be words).

    A link that names a new value (``?q=q03:course``) wins over the session's;
    otherwise the session's choice stays; else ``fallback``. ``options``: the
    allowed values (None: any that ``parse`` accepts). Call before drawing the
    widget with ``key`` (and no default of its own); call :func:`write_url`
    with its value after.
    """
    url = st.query_params.get(key)
    seen = st.session_state.get(f"_url_{key}")
    value = None
    if url is not None and url != seen:
        try:
            value = parse(url)
        except (TypeError, ValueError):
            value = None
    if value is not None and (options is None or value in options):
        st.session_state[key] = value
    elif key not in st.session_state or (options is not None and st.session_state[key] not in options):
        st.session_state[key] = fallback


def write_url(key: str, value) -> None:
    """Put ``value`` in the URL under ``key`` (nothing when None) and remember it as the URL's."""
    if value is None:
        st.query_params.pop(key, None)
    elif st.query_params.get(key) != str(value):
        st.query_params[key] = str(value)
    st.session_state[f"_url_{key}"] = None if value is None else str(value)


# ----- the chosen state ---------------------------------------------------------------------------

def _round_cut(cut: float) -> float:
    """A cut as the context holds it: the printed value (3 decimals, rounded down)."""
    return float(cut_text(cut))


def _goal_text(share: float) -> str:
    """A goal (a share) as the URL carries it: a percentage (``0.05`` -> ``"5"``)."""
    return f"{100 * share:g}"


def _one_of(name: str, choices, text: str) -> str:
    """``text`` when it is one of ``choices`` (``ValueError`` naming them when not)."""
    if text not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {text!r}")
    return text


def _parse(field: str, text: str):
    """A URL value as the context holds it (``GateError``/``ValueError`` when it is not one)."""
    if field == CUT_KEY:
        return _round_cut(Gate.from_text(cut=text).cut)
    if field == KEEP_KEY:
        return Gate.from_text(keep=text).keep
    if field == GOAL_KEY:  # the recommendation follows it: some, not all, off-topic queries may bluff
        return percent_share(text, "goal", "bluffs", open_=True)
    if field == ANSWERED_KEY:
        return percent_share(text, "answered", "answerable queries", open_=False)
    if field == CURRENT_KEY:
        v = float(text)
        if not (math.isfinite(v) and -1.0 <= v <= 2.0):
            raise ValueError(f"the cut you run today must be a distance in [0, 2] or a similarity in [-1, 1], "
                             f"got {text!r}")
        return v
    if field == UNITS_KEY:
        from ragdiag.analyses.threshold.proposal import UNITS

        return _one_of("units", UNITS, text)
    if field == COST_KEY:
        return check_bluff_cost(float(text))
    if field == SCORE_KEY:
        from ragdiag.analyses.threshold.score import SCORE_SPACES

        return _one_of("score", SCORE_SPACES, text)
    if field == NATIVE_CUT_KEY:
        v = float(text)
        if not math.isfinite(v):
            raise ValueError(f"the cut on the native score must be a finite number, got {text!r}")
        return v
    return str(text)


def current_problem(value: float | None, units: str | None) -> str | None:
    """Why ``value`` in ``units`` is not a cut (one sentence), or None when it is one (or no value)."""
    from ragdiag.analyses.threshold.proposal import cut_from_units

    if value is None:
        return None
    try:
        cut_from_units(float(value), units or "distance")
    except ValueError as exc:
        return f"The cut you run today {value:g} ({units or 'distance'}) is not valid: {exc}; it was ignored."
    return None


def _chosen() -> dict:
    return st.session_state.setdefault(_STATE, dict.fromkeys(_FIELDS))


def _set_chosen(new: dict, words: str) -> None:
    """Change the chosen state (a visitor's action), leaving a note with what it was before (for "Undo")."""
    old = dict(_chosen())
    if new == old:
        return
    st.session_state[_STATE] = dict(new)
    st.session_state[_NOTE] = (words, old)
    st.session_state[_VER] = st.session_state.get(_VER, 0) + 1


def _adopt_url() -> None:
    """Values a link or a new tab put in the URL become the context; echoes of what this session wrote do not."""
    state = dict(_chosen())
    written = st.session_state.setdefault(_WRITTEN, {f: set() for f in _FIELDS})
    changed = []
    for field in _FIELDS:
        text = st.query_params.get(field)
        if text is None or text in written.setdefault(field, set()):
            continue
        try:
            value = _parse(field, text)
        except ValueError:  # a malformed link: said once, the context stays
            st.session_state[_NOTE] = (f"The link's {field} {text!r} is not valid; it was ignored.", None)
            continue
        shown = st.session_state.get(_SHOWN, {}).get(field)
        if value != state[field] and value != shown:
            state[field] = value
            changed.append(field)
        written[field].add(text)  # read once: later echoes of it are not choices
    problem = current_problem(state[CURRENT_KEY], state[UNITS_KEY])
    if problem:  # each field parsed, the pair is not a cut (a similarity of 1.5): said, the link's pair ignored
        st.session_state[_NOTE] = (problem, None)
        state[CURRENT_KEY], state[UNITS_KEY] = _chosen()[CURRENT_KEY], _chosen()[UNITS_KEY]
        changed = [f for f in changed if f not in (CURRENT_KEY, UNITS_KEY)]
    if changed and _SHOWN not in st.session_state:  # a new tab opened on a link: its context, nothing to undo
        st.session_state[_STATE] = state
    elif changed:
        _set_chosen(state, "Set by the link: " + ", ".join(changed) + ".")


def context_sidebar() -> None:
    """Read a link's context from the URL and make room for the context's fields in the sidebar (the entry point
    calls it on every page, before the page runs; the page's :func:`context` fills the fields)."""
    _caught_up()
    _adopt_url()
    _keep_in_url()
    st.session_state[_DRAWN] = False
    with st.sidebar:
        st.session_state[_HOLDER] = st.container()
    with st.session_state[_HOLDER]:  # the context's line, until the page draws the fields (a page that stops
        st.session_state[_LINE] = st.empty()  # early, st.stop(), never gets to context_done: the line is there)
    _draw_line()


def _keep_in_url() -> None:
    """Every page's URL carries the context, a page that never draws it included (Compare, Glossary, a page that
    stops early): the fields the URL lacks (a page switch drops them) are written from the context last shown, so
    a reload or a shared link opens on the same one. A field the URL has is the link's, adopted above. A session
    that has shown no context yet (a reload on a page that never draws it) keeps what the visitor chose."""
    params = link_params() if st.session_state.get(_SHOWN) else _chosen_params()
    if not params:
        return
    written = st.session_state.setdefault(_WRITTEN, {f: set() for f in _FIELDS})
    for field, text in params.items():
        if field in _FIELDS and field not in st.query_params and field not in st.session_state.get(_UNSETTLED, ()):
            written.setdefault(field, set()).add(text)
            st.query_params[field] = text


def _chosen_params() -> dict[str, str]:
    """What the visitor chose (a link's context), as URL parameters: only the fields chosen."""
    chosen = _chosen()
    out = {}
    if chosen.get(CONFIG_KEY):
        out[CONFIG_KEY] = chosen[CONFIG_KEY]
    if chosen.get(CUT_KEY) is not None:
        out[CUT_KEY] = cut_text(chosen[CUT_KEY])
    if chosen.get(KEEP_KEY) is not None:
        out[KEEP_KEY] = str(chosen[KEEP_KEY])
    if chosen.get(GOAL_KEY) is not None:
        out[GOAL_KEY] = _goal_text(chosen[GOAL_KEY])
    return {**out, **_optional_params(chosen.get(CURRENT_KEY), chosen.get(UNITS_KEY), chosen.get(COST_KEY),
                                      chosen.get(ANSWERED_KEY))}


def context_done() -> None:
    """After a page that never asked for the context: the sidebar says what it is, without fields."""
    if st.session_state.get(_DRAWN) or _HOLDER not in st.session_state:
        return
    _draw_line()


def _draw_line() -> None:
    """The context in one line in the sidebar (replaced by the fields when the page draws them)."""
    shown = st.session_state.get(_SHOWN)
    chosen = _chosen()
    line = st.session_state.get(_LINE)
    with (line.container() if line is not None else st.session_state[_HOLDER]):
        st.subheader("Context")
        if shown:
            st.caption(f"{md_text(shown[CONFIG_KEY])} · strictness (cut) {md_text(cut_text(shown[CUT_KEY]))} · "
                       f"at most {md_text(shown[KEEP_KEY])} passages")
        elif chosen.get(CONFIG_KEY) or chosen.get(CUT_KEY) is not None:  # a link's context, before any results
            # a link's values, before any results checked them: escaped (a crafted config is never Markdown)
            st.caption(" · ".join(part for part in (
                md_text(chosen[CONFIG_KEY]) if chosen.get(CONFIG_KEY) else None,
                None if chosen.get(CUT_KEY) is None else f"strictness (cut) {md_text(cut_text(chosen[CUT_KEY]))}",
                None if chosen.get(KEEP_KEY) is None else f"at most {md_text(chosen[KEEP_KEY])} passages") if part))
        else:
            st.caption("The recommended configuration at its cut (opens with the first results).")


def context_config() -> str | None:
    """The context's configuration without drawing anything (a page about runs of its own, e.g. History, opens on
    it): the one last shown, else the one a link chose, else None."""
    shown = st.session_state.get(_SHOWN) or {}
    return shown.get(CONFIG_KEY) or _chosen().get(CONFIG_KEY)


# ----- the recommendation and the cut proposed for a configuration ----------------------------------

def recommendation(ev: Evaluation, token: str, keep: int = DEFAULT_KEEP, goal: Goal = Goal(DEFAULT_MAX_BLUFF)):
    """The library's :func:`~ragdiag.analyses.recommend.recommend` at the gate's k, once per evaluation, keep
    and bluff goal (the goal a cut follows, :attr:`~ragdiag.core.goal.Goal.cut_goal`: the answered goal is judged,
    never optimised)."""
    from ragdiag.analyses.recommend import recommend
    from ui import cache

    goal = goal.cut_goal
    return cache.by_evaluation("recommend", token, (keep, goal.max_bluff),
                               lambda: recommend(ev, Gate(keep), goal=goal))


def _proposed(ev: Evaluation, token: str, config: str, keep: int, goal: Goal) -> float:
    """The cut proposed for ``config`` and the goal, as the library decides it (the report's rule)."""
    from ui import cache

    try:
        c = cache.choice_for(token, config, keep, goal.cut_goal, ev)
    except ValueError:  # an external run without distances, a goal the set cannot measure
        return DEFAULT_CUT
    if c.conformal_cut is not None:
        return float(c.conformal_cut)
    return float(c.cut) if c.cut is not None else DEFAULT_CUT


def cut_stops(values, *, also=()) -> list[float]:
    """The cuts where an outcome changes, at 3 decimals: for each distance ``d`` the largest printed cut that still
    refuses it (``floor(d)``, so typed back it gives the same rates), with 0 and a cut past every distance.

    Between two stops no query changes outcome, so a slider over these stops shows every distinct result.

    >>> cut_stops([0.5245, 0.61, float("inf")])
    [0.0, 0.524, 0.61, 0.611]
    """
    v = np.asarray([x for x in np.asarray(values, dtype=np.float64).ravel() if np.isfinite(x) and 0 <= x <= 2])
    step = 10.0 ** -CUT_DECIMALS
    stops = {0.0, *(_round_cut(x) for x in v), *(_round_cut(x) for x in also)}
    if len(v):
        stops.add(min(2.0, round(_round_cut(float(v.max())) + step, CUT_DECIMALS)))
    return sorted(stops)


def snap_cut(stops: list[float], cut: float) -> float:
    """The stop a slider shows for ``cut``: the cut itself when it is a stop, else the nearest one."""
    return min(stops, key=lambda s: (abs(s - cut), s)) if stops else cut


# ----- the context of a page ----------------------------------------------------------------------

def context(ev: Evaluation, token: str) -> Context:
    """The context on screen for the evaluation ``ev`` (cache token ``token``); draws the sidebar's fields
    (once per run) and puts the full context in the URL."""
    remember_unavailable(ev)
    state = _chosen()
    keep = state[KEEP_KEY] or DEFAULT_KEEP
    max_bluff = state[GOAL_KEY] or DEFAULT_MAX_BLUFF
    goal = Goal(max_bluff, state.get(ANSWERED_KEY), state[COST_KEY])  # each field parsed by the Goal's ranges
    labels = [c.label for c in ev.results]
    ragdiag_labels = [c.label for c in ev.results if not c.external]
    rec = recommendation(ev, token, keep, goal) if ragdiag_labels else None
    picked = state[CONFIG_KEY]
    chosen = picked in labels
    config = picked if chosen else (rec.config if rec is not None else labels[0])
    proposed = (_round_cut(rec.cut) if rec is not None and config == rec.config
                else _round_cut(_proposed(ev, token, config, keep, goal)))
    cut = proposed if state[CUT_KEY] is None else state[CUT_KEY]
    provisional = len({c.strategy for c in ev.results if not c.external}) < len(settings().strategies)
    ctx = Context(config, Gate(keep, cut), chosen, goal, state[CUT_KEY] is not None, proposed,
                  rec.config if rec is not None else "", provisional,
                  _round_cut(rec.cut) if rec is not None else None,
                  state[CURRENT_KEY], state[UNITS_KEY] or "distance",
                  state.get(SCORE_KEY) or "dense", state.get(NATIVE_CUT_KEY))
    _supersede(st.session_state.get(_SHOWN), state, {CONFIG_KEY: config, CUT_KEY: cut})
    st.session_state[_SHOWN] = {CONFIG_KEY: config, CUT_KEY: cut, KEEP_KEY: keep, GOAL_KEY: max_bluff,
                                ANSWERED_KEY: ctx.min_answered, CURRENT_KEY: ctx.current, UNITS_KEY: ctx.units,
                                COST_KEY: ctx.bluff_cost, SCORE_KEY: ctx.score, NATIVE_CUT_KEY: ctx.native_cut}
    if not st.session_state.get(_DRAWN):
        st.session_state[_DRAWN] = True
        _draw(ev, token, ctx, picked if picked and not chosen else None)
    _write_url(ctx)
    return ctx


def _echo_text(field: str, value) -> str:
    return cut_text(float(value)) if field == CUT_KEY else str(value)


def _supersede(before: dict | None, state: dict, now: dict) -> None:
    """Remember the configuration and cut shown before, where the context moved without the visitor (not chosen)."""
    if not before:
        return
    old = st.session_state.setdefault(_SUPERSEDED, {})
    for field, value in now.items():
        if state[field] is None and before.get(field) is not None and before[field] != value:
            old.setdefault(field, set()).add(_echo_text(field, before[field]))


def _caught_up() -> None:
    """At a run's start: the fields whose value in the browser is the one shown last have caught up; what they
    showed before is no longer an echo (the visitor may choose it again)."""
    shown, old = st.session_state.get(_SHOWN) or {}, st.session_state.get(_SUPERSEDED) or {}
    live = st.session_state.get(_LIVE) or ()
    for field, keys in ((CONFIG_KEY, [k for k in live if k.startswith("ctx_config_")]),
                        (CUT_KEY, ["ctx_cut", *[k for k in live if k.startswith("ctx_slider_")]])):
        if not old.get(field) or shown.get(field) is None:
            continue
        values = [st.session_state[k] for k in keys if st.session_state.get(k) is not None]
        try:
            if values and all(_echo_text(field, v) == _echo_text(field, shown[field]) for v in values):
                old[field] = set()
        except (TypeError, ValueError):
            continue


def _write_url(ctx: Context) -> None:
    written = st.session_state.setdefault(_WRITTEN, {f: set() for f in _FIELDS})
    params = ctx.params()
    for field in _unsettled(ctx):  # a provisional pick stays out of the URL (and out of the next session's choice)
        params.pop(field, None)
        if field in st.query_params and st.query_params.get(field) in written.get(field, set()):
            del st.query_params[field]
    for field, text in params.items():
        written.setdefault(field, set()).add(text)
        if st.query_params.get(field) != text:
            st.query_params[field] = text
    for field in _OPTIONAL:  # an optional field cleared: out of the URL
        if field not in params and field in st.query_params:
            del st.query_params[field]


def _unsettled(ctx: Context) -> tuple[str, ...]:
    """The fields the URL leaves out while the recommendation is provisional (some strategies still computing)
    and the visitor chose none of them: a reload or a reconnect in that time would otherwise read the provisional
    configuration and cut back as the visitor's choice, and keep them ("Your choice") after the final one came."""
    if not ctx.provisional:
        st.session_state[_UNSETTLED] = ()
        return ()
    state = _chosen()
    out = tuple(f for f in (CONFIG_KEY, CUT_KEY) if state[f] is None)
    st.session_state[_UNSETTLED] = out
    return out


def link_params(**extra) -> dict[str, str]:
    """URL parameters for an in-app link: the full context on screen, plus ``extra`` (e.g. ``q=...``).

    ``extra`` may override a context field (``config=`` for a link about another configuration).
    """
    shown = st.session_state.get(_SHOWN)
    base = {}
    if shown:
        base = {CONFIG_KEY: shown[CONFIG_KEY], CUT_KEY: cut_text(shown[CUT_KEY]), KEEP_KEY: str(shown[KEEP_KEY]),
                GOAL_KEY: _goal_text(shown[GOAL_KEY]),
                **_optional_params(shown.get(CURRENT_KEY), shown.get(UNITS_KEY), shown.get(COST_KEY),
                                   shown.get(ANSWERED_KEY), shown.get(SCORE_KEY), shown.get(NATIVE_CUT_KEY))}
    return {**base, **{k: str(v) for k, v in extra.items() if v is not None}}


def _from_field(field: str, key: str) -> None:
    """A sidebar field's ``on_change``: the visitor changed it, so the context follows (and says so)."""
    if key not in st.session_state:
        return
    if key.startswith(("ctx_config_", "ctx_slider_")) and key not in st.session_state.get(_LIVE, (key,)):
        return  # a box drawn for an earlier recommendation (strategies were still computing): not the visitor's
    value = st.session_state[key]
    shown = st.session_state.get(_SHOWN, {})
    if field == CUT_KEY:
        try:
            value = _round_cut(Gate(cut=float(value)).cut)
        except (GateError, TypeError, ValueError):
            return
    elif field == KEEP_KEY:
        value = int(value)
    elif field == GOAL_KEY:
        value = float(value) / 100
    elif field == ANSWERED_KEY:  # emptied: the answered goal is off; out of range: said in the note (the Goal's range)
        use_min_answered(None if value is None else float(value) / 100)
        return
    elif field == CONFIG_KEY and value not in _options(settings()):  # a stale label the browser sent back
        return
    if value is None or value == shown.get(field):
        return
    if field in (CONFIG_KEY, CUT_KEY) and _echo_text(field, value) in (st.session_state.get(_SUPERSEDED) or {}).get(
            field, ()):
        return  # the browser's field still held what was shown before the recommendation moved: not a choice
    state = dict(_chosen())
    state[field] = value
    before = shown.get(field)
    fmt = cut_text if field == CUT_KEY else (lambda v: f"{pct(v, None)}") if field == GOAL_KEY else str
    name = {CUT_KEY: "Strictness (cut)", KEEP_KEY: "Passages kept", CONFIG_KEY: "Configuration",
            GOAL_KEY: "Goal (bluffs at most)"}[field]
    _set_chosen(state, f"{name}: {fmt(before) if before is not None else '–'} → {fmt(value)}.")


def _undo() -> None:
    note = st.session_state.get(_NOTE)
    if note and note[1] is not None:
        _set_chosen(note[1], "Undone.")
        st.session_state[_NOTE] = None


def _reset() -> None:
    state = dict.fromkeys(_FIELDS)
    for field in (GOAL_KEY, *_OPTIONAL):
        if field != NATIVE_CUT_KEY:  # a cut is a choice, not a fact: back to the proposed one
            state[field] = _chosen()[field]
    _set_chosen(state, "Back to the recommendation.")


def _field(key: str, value) -> str:
    """``key``, a context field's stable key, holding the context's ``value`` for this run.

    Each field is given the context's value on every run (a page's widget is its own: another page's state under
    the same key would not show here). The key stays the same from run to run: a key that changed with each change
    made a new element, and during the rerun the browser showed the old field beside the new one.
    """
    st.session_state[key] = value
    return key


def _draw(ev: Evaluation, token: str, ctx: Context, missing: str | None) -> None:
    """The context's fields in the sidebar, each drawn from the context with an explicit value."""
    # the choices' keys (configuration, slider, buttons) carry the version; the number fields' keys are stable (_field)
    ver = st.session_state.get(_VER, 0)
    options = _options(settings())
    if ctx.config not in options:
        options = [ctx.config, *options]
    holder = st.session_state.get(_HOLDER) or st.sidebar
    if st.session_state.get(_LINE) is not None:
        st.session_state[_LINE].empty()  # the one line gives way to the fields
    with holder:
        st.subheader("Context")
        if ctx.provisional:
            st.caption("Provisional: some strategies are still computing; the recommendation may change.")
        # the key names the recommendation: its label says "recommended", and a browser holding the old label
        # (the recommendation changed as strategies finished) would send it back as a value no option has
        config_key = f"ctx_config_{ver}_{ctx.recommended_config}"
        st.session_state[_LIVE] = (config_key, f"ctx_slider_{ver}")
        st.selectbox("Configuration", options, index=options.index(ctx.config), key=config_key,
                     format_func=lambda c: _option_words(c) + (" · recommended" if c == ctx.recommended_config
                                                               else ""),
                     on_change=_from_field, args=(CONFIG_KEY, config_key),
                     help="Every page shows this configuration.")
        st.caption(md_text(config_words(ctx.config)))  # in full: the box cuts a long description short
        stops = context_stops(ev, token, ctx)
        if len(stops) > 1:
            st.select_slider("Strictness (cut): lower refuses more", stops, value=snap_cut(stops, ctx.cut),
                             format_func=cut_text, key=f"ctx_slider_{ver}",
                             on_change=_from_field, args=(CUT_KEY, f"ctx_slider_{ver}"),
                             help="Stops only where some query changes outcome. The gate gives the model only "
                                  "passages closer than this (cosine distance).")
        st.number_input("Cut, exact (cosine distance)", 0.0, 2.0, step=10.0 ** -CUT_DECIMALS,
                        format=f"%.{CUT_DECIMALS}f", key=_field("ctx_cut", ctx.cut),
                        on_change=_from_field, args=(CUT_KEY, "ctx_cut"),
                        help="Typed values are rounded down to 3 decimals, the precision every page prints.")
        st.number_input("Passages kept at most", 1, TOP, key=_field("ctx_keep", ctx.keep),
                        on_change=_from_field, args=(KEEP_KEY, "ctx_keep"),
                        help="The gate gives the model at most this many passages.")
        st.number_input("Goal: bluffs at most (%)", 0.5, 99.5, step=1.0,
                        key=_field("ctx_goal", 100 * ctx.max_bluff), on_change=_from_field, args=(GOAL_KEY, "ctx_goal"),
                        help="Of off-topic questions, the share that may still get passages. The recommendation and "
                             "its cut are chosen for this goal.")
        # drawn with value=None (a field that can be emptied: no goal) and given the context's value on every run
        st.number_input("Goal: answered at least (%)", 0.0, 100.0, value=None, step=1.0, placeholder="none",
                        key=_field("ctx_answered", None if ctx.min_answered is None else 100 * ctx.min_answered),
                        on_change=_from_field, args=(ANSWERED_KEY, "ctx_answered"),
                        help="Of answerable questions, the share that must get a passage holding the answer. "
                             "Judged on the Summary and in the report, not optimised: the recommendation and its "
                             "cut still follow the bluff goal. Empty: no such goal.")
        if missing:
            shown = missing if len(missing) <= 80 else missing[:80] + "…"  # typed in a URL: as text, not Markdown
            st.caption(f"{md_text(shown)} is not evaluated here (yet); showing {md_text(ctx.config)}.")
        if ctx.is_recommendation:
            st.caption("The recommendation at its proposed cut.")
        else:
            st.caption(f"Your choice. Recommended: {ctx.recommended_config} at strictness "
                       f"{cut_text(ctx.recommended_cut) if ctx.recommended_cut is not None else '–'}.")
            st.button("Back to the recommendation", key=f"ctx_reset_{ver}", on_click=_reset)
        note = st.session_state.get(_NOTE)
        if note:
            st.caption(f"Changed: {md_text(note[0])}" if note[1] is not None else md_text(note[0]))
            if note[1] is not None:
                st.button("Undo", key=f"ctx_undo_{ver}", on_click=_undo, icon=":material/undo:")


def context_stops(ev: Evaluation, token: str, ctx: Context) -> list[float]:
    """The cuts a slider over the context's configuration stops at (:func:`cut_stops`, the context's cut among
    them); empty for an external run without distances."""
    from ui import cache

    try:
        inputs = cache.sweep_for(token, ctx.config, ctx.keep, ev)[0]
    except ValueError:  # an external run without distances: no slider, the exact field alone
        return []
    return cut_stops(np.concatenate([inputs.closest, inputs.closest_holder]), also=(ctx.cut,))


#: The label of a page's own slider for the context's cut.
CUT_SLIDER_LABEL = "Cut: lower refuses more"


def cut_slider(ev: Evaluation, token: str, ctx: Context, *, key: str = "page_cut", where=None) -> list[float]:
    """A page's own slider for the context's cut (the sidebar's and the URL's: every page follows it).

    Its key never changes, so a keyboard step keeps the focus across the rerun it starts (arrow keys step from one
    outcome change to the next); its value is set from the context before it is drawn, so a change made elsewhere
    (the sidebar, a button, a click on a curve) moves it. Returns the stops (empty: no slider drawn)."""
    stops = context_stops(ev, token, ctx)
    if len(stops) < 2:
        return stops
    shown = snap_cut(stops, ctx.cut)
    if st.session_state.get(key) != shown:  # before the widget is drawn in this run: allowed, and no rerun
        st.session_state[key] = shown
    (where or st).select_slider(CUT_SLIDER_LABEL, stops, format_func=cut_text, key=key,
                                on_change=_from_field, args=(CUT_KEY, key),
                                help="Stops only where some query changes outcome; arrow keys step from one to the "
                                     "next. The gate gives the model only passages closer than the cut (cosine "
                                     "distance). Every page follows it.")
    return stops


def gate_settings() -> tuple[float, int]:
    """The context's cut and keep alone (a page about another evaluation, e.g. Variants, reads only these):
    the last shown, else the chosen, else the defaults."""
    shown = st.session_state.get(_SHOWN) or {}
    state = _chosen()
    cut = shown.get(CUT_KEY) if shown.get(CUT_KEY) is not None else state[CUT_KEY]
    keep = shown.get(KEEP_KEY) or state[KEEP_KEY] or DEFAULT_KEEP
    return (DEFAULT_CUT if cut is None else cut), keep


def use(*, config: str | None = None, cut: float | None = None, keep: int | None = None,
        max_bluff: float | None = None, min_answered: float | None = None) -> None:
    """Set the context (an ``on_click`` callback of a "use this" button): the sidebar and the URL follow."""
    state = dict(_chosen())
    words = []
    for key, value, stored, said in (  # each setting given: the value kept in the context, the words said
            (CONFIG_KEY, config, lambda v: v, lambda v: f"configuration {v}"),
            (CUT_KEY, cut, _round_cut, lambda v: f"cut {cut_text(v)}"),
            (KEEP_KEY, keep, int, lambda v: f"at most {int(v)} passages"),
            (GOAL_KEY, max_bluff, float, lambda v: f"goal bluffs at most {pct(v, None)}"),
            (ANSWERED_KEY, min_answered, float, lambda v: f"goal answered at least {pct(v, None)}")):
        if value is not None:
            state[key] = stored(value)
            words.append(said(value))
    _set_chosen(state, "Set: " + ", ".join(words) + ".")


def use_current(value: float | None, units: str) -> bool:
    """Set the cut a team runs today (``None``: clear it) in ``units``; an invalid pair (a similarity of 1.5) is
    said in the context's note and changes nothing. Returns whether it was set."""
    problem = current_problem(value, units)
    if problem:
        st.session_state[_NOTE] = (problem, None)
        return False
    state = dict(_chosen())
    state[CURRENT_KEY] = None if value is None else float(value)
    state[UNITS_KEY] = None if value is None else units
    _set_chosen(state, "The cut you run today: " + ("none" if value is None else f"{value:g} ({units})") + ".")
    return True


def use_bluff_cost(n: float | None) -> None:
    """Set the cost goal (a bluff costs as much as ``n`` lost answers; ``None``: off)."""
    try:
        n = None if n is None else check_bluff_cost(n)
    except GoalError:
        st.session_state[_NOTE] = (f"The cost of a bluff must be a positive number of lost answers, got {n!r}.",
                                   None)
        return
    state = dict(_chosen())
    state[COST_KEY] = None if n is None else float(n)
    _set_chosen(state, "Cost goal: " + ("off" if n is None else f"a bluff costs {n:g} lost answers") + ".")


def use_min_answered(share: float | None, *, if_unset: bool = False) -> None:
    """Set the answered goal (answered at least ``share`` of answerable queries; ``None``: off; ``if_unset``: only
    when none is set). It is judged on the Summary and in the report; the recommendation and its cut do not change
    with it."""
    if if_unset and _chosen().get(ANSWERED_KEY) is not None:
        return
    try:
        share = None if share is None else check_share(share, "min_answered")
    except GoalError:
        st.session_state[_NOTE] = (f"The answered goal must be a percentage from 0 to 100, got {100 * share:g}.", None)
        return
    state = dict(_chosen())
    if state.get(ANSWERED_KEY) == share:
        return
    state[ANSWERED_KEY] = None if share is None else float(share)
    _set_chosen(state, "Goal (answered at least): " + ("off" if share is None else f"{pct(share, None)}") + ".")


def use_score(score: str) -> None:
    """Set the score the Threshold page's gate reads (``"dense"`` or ``"native"``); back to dense forgets the
    native cut."""
    from ragdiag.analyses.threshold.score import SCORE_SPACES

    if score not in SCORE_SPACES:
        return
    state = dict(_chosen())
    if (state.get(SCORE_KEY) or "dense") == score:
        return
    state[SCORE_KEY] = None if score == "dense" else score
    if score == "dense":
        state[NATIVE_CUT_KEY] = None
    _set_chosen(state, "Score: " + ("the ranking's own." if score == "native" else "the dense model's distance."))


def use_native_cut(value: float | None) -> None:
    """Set the cut on the native score (``None``: back to the proposed one); the native score is read from then."""
    if value is not None and not math.isfinite(float(value)):
        return
    state = dict(_chosen())
    state[SCORE_KEY] = "native"
    state[NATIVE_CUT_KEY] = None if value is None else float(value)
    _set_chosen(state, "Cut on the native score: " + ("the proposed one" if value is None else f"{value:g}") + ".")
