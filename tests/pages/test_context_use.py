"""``ui.context.use`` (the "use this" buttons' callback), headless: each setting given is kept in the context as
the sidebar reads it and named in the note, in one order; a setting not given is left as it was.
"""

from __future__ import annotations

import json

import pytest


def _use_all():
    import streamlit as st

    from ui.context import use

    use(config="E/bm25", cut=0.31234, keep=6.0, max_bluff=0.1, min_answered=0.75)
    words, before = st.session_state["_ctx_note"]
    st.text(words)
    st.json({"chosen": st.session_state["_ctx_chosen"], "before": before})


def _use_cut_then_keep():
    import streamlit as st

    from ui.context import use

    use(cut=0.5)
    use(keep=3)
    st.text(st.session_state["_ctx_note"][0])
    st.json({"chosen": st.session_state["_ctx_chosen"]})


@pytest.mark.parametrize("script, words, chosen", [
    (_use_all, "Set: configuration E/bm25, cut 0.312, at most 6 passages, goal bluffs at most 10%, goal answered "
               "at least 75%.",
     {"config": "E/bm25", "cut": 0.312, "keep": 6, "goal": 0.1, "answered": 0.75}),
    (_use_cut_then_keep, "Set: at most 3 passages.", {"cut": 0.5, "keep": 3}),
])
def test_use_keeps_each_setting_given_and_names_it(script, words, chosen):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(script, default_timeout=30).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.text[0].value == words
    got = json.loads(at.json[0].value)["chosen"]
    assert {k: v for k, v in got.items() if v is not None} == chosen
    assert isinstance(got["keep"], int)
