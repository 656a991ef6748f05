"""Ground truth: write questions (verbatim needles, phrasings) and out-of-domain queries, with live checks.

The file written is the configured ground-truth file (the sidebar's, or the one
named after the corpus folder beside it); no other path can be typed here.
Everything typed lives in the session, so reruns and page switches lose nothing.
"""

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from ragdiag.authoring.checks import check_needle, check_truth, closest_chunks, near_ood_matches, question_leakage
from ragdiag.authoring.coverage import coverage, phrasing_names
from ragdiag.authoring.edit import add_ood, add_question, next_id, remove_entry, update_queries
from ragdiag.authoring.leakage import leakage
from ragdiag.authoring.suggest import suggest
from ragdiag.authoring.text import document_sentences
from ragdiag.core.defaults import PRIMARY_K
from ragdiag.present.serving import AccessError
from ui.context import link_params
from ui.html import md_text
from ui.state import access, load_corpus_only, settings
from ui.truth_editor import (CONFLICT, file_state, keep_widgets, pop_message, reload, restore_widgets, save,
                             save_target, say)
from ragdiag.core.words import pct


def page() -> None:
    restore_widgets()

    st.title("Ground truth")
    st.markdown("[How many more questions a decision needs, where to write them, and drafts to review →](truth_review)")
    _context = urlencode(link_params())  # the context on screen travels with the link
    st.markdown("[Can this set tell? Headroom, shortcuts, leakage, and the smallest difference these questions resolve "
                f"→](truth_review{'?' + _context if _context else ''})")
    if access().locked:  # the read-only presentation mode writes nothing on the server
        st.info("This dashboard is served read-only (RAGDIAG_LOCKED): the ground truth is edited on the operator's "
                "own instance, not here.")
        st.stop()
    conf = settings()
    corpus = load_corpus_only(conf)


    try:
        target, note = save_target(conf)
    except AccessError as exc:  # the file beside a visitor's corpus is outside the allowed roots
        st.error(f"Cannot edit a ground truth here: {md_text(exc)}.")
        st.stop()
    if note:
        st.warning(note)
    try:
        state = file_state(target)
    except ValueError as exc:
        st.error(f"Cannot open {md_text(target.name)}: {md_text(exc)}")
        st.stop()
    data: dict = state["data"]
    base = state["base"]


    def _set_data(new: dict) -> None:
        state["data"] = new


    # ----- file bar ---------------------------------------------------------------

    dirty = data != base.data
    n_q = len(data.get("questions") or [])
    n_o = len(data.get("ood") or [])
    st.caption(f"File **{md_text(target.name)}** ({base.fmt.upper()}, the configured ground-truth file) · {n_q} questions · {n_o} "
               f"out-of-domain queries · " + ("**unsaved changes**" if dirty else "saved"))
    if base.sha256 is None:
        st.info(f"There is no {md_text(target.name)} yet: this page starts a new one, and Save creates it.")


    cols = st.columns([1, 1, 4])
    cols[0].button("Save", type="primary", on_click=save, args=(target, state), key="gt_save",
                   disabled=not dirty and base.sha256 is not None)
    cols[1].button("Reload from disk", on_click=reload, args=(target, state, False), key="gt_reload",
                   help="Discard unsaved edits and read the file again.")
    if CONFLICT in st.session_state:
        st.error(st.session_state[CONFLICT])
        c1, c2 = st.columns(2)
        c1.button("Reload and keep my edits", on_click=reload, args=(target, state, True), key="gt_merge")
        c2.button("Reload and discard my edits", on_click=reload, args=(target, state, False), key="gt_discard")
    msg = pop_message()
    if msg:
        getattr(st, msg[0])(msg[1])

    names = list(phrasing_names(data))
    tab_add, tab_q, tab_ood, tab_sugg, tab_cov = st.tabs(
        ["Add a question", f"Questions ({n_q})", f"Out-of-domain ({n_o})", "Suggestions", "Coverage and checks"])

    # ----- add a question ------------------------------------------------------------

    with tab_add:
        doc_ids = [d.id for d in corpus.documents]
        if st.session_state.get("gt_doc") not in doc_ids:
            st.session_state["gt_doc"] = doc_ids[0]
        doc = corpus.document(st.selectbox("Document", doc_ids, key="gt_doc"))
        titles = [s.title for s in doc.sections]
        if st.session_state.get("gt_sec") not in titles:
            st.session_state["gt_sec"] = titles[0]
        section_title = st.selectbox("Section", titles, key="gt_sec", format_func=lambda t: t or f"{doc.title} (preamble)")
        section = next(x for x in doc.sections if x.title == section_title)
        with st.expander("Read the section"):
            st.text(doc.text[section.start:section.end])
        sents = [x for x in document_sentences(doc) if x.section == section_title]
        if not sents:
            st.warning("This section has no prose sentences to pick.")
            needle = ""
        else:
            if not isinstance(st.session_state.get("gt_sent"), int) or st.session_state["gt_sent"] >= len(sents):
                st.session_state["gt_sent"] = 0
            i = st.selectbox("Sentence", list(range(len(sents))), key="gt_sent",
                             format_func=lambda j: f"{j + 1}. {sents[j].text[:140]}")
            span = st.radio("Needle", ["this sentence", "this and the next sentence"], key="gt_span", horizontal=True)
            last = sents[min(i + 1, len(sents) - 1)] if span.startswith("this and") else sents[i]
            needle = doc.text[sents[i].start:last.end]
        st.code(needle, language=None, wrap_lines=True)
        chk = check_needle(needle, corpus) if needle else None
        if chk is not None:
            if chk.ok:
                st.success(f"Occurs exactly once ({md_text(doc.id)} @{chk.start}), {len(needle)} characters (40 to 250), "
                           "not a heading.")
            for p in chk.problems:
                st.error(md_text(p))
            if chk.chunking:
                rows = []
                for c in chk.chunking:
                    where = "; ".join(f"after {o} chars: …{needle[max(o - 20, 0):o]}|{needle[o:o + 20]}…" for o in c.cuts)
                    rows.append({"strategy": c.strategy, "chunking": c.description,
                                 "needle": "whole" if c.whole else "DESTROYED", "cut falls": where})
                st.caption("What each chunking strategy does to it (a destroyed needle cannot be retrieved whole):")
                st.dataframe(pd.DataFrame(rows), hide_index=True)
        drafts = st.session_state.get("gt_draft_hint")
        if drafts:
            st.info(f"Draft from the suggestion (a template: rewrite it as a person would ask): {md_text(drafts)}")
        texts = {}
        for name in names:
            if f"gt_new_{name}" not in st.session_state and f"_keep_gt_new_{name}" in st.session_state:
                st.session_state[f"gt_new_{name}"] = st.session_state[f"_keep_gt_new_{name}"]
            texts[name] = st.text_input(f"Phrasing '{md_text(name)}'", key=f"gt_new_{name}",
                                        help="course: in the documents' words; ticket: as a user would write a "
                                             "support ticket. Don't copy the needle.")
            if texts[name].strip() and needle:
                lk = leakage(texts[name], needle)
                (st.warning if lk.warn else st.caption)(f"Leakage: {md_text(lk)}" + (" — rewrite it in other words" if lk.warn else ""))
        taken_by = [str(q.get("id")) for q in data.get("questions") or [] if isinstance(q, dict) and q.get("needle") == needle]
        if taken_by:
            st.warning(f"This needle is already question {md_text(', '.join(taken_by))}.")
        suggested_id = next_id(data, "q")
        st.text_input("Id", key="gt_new_id", placeholder=suggested_id)
        ready = bool(chk and chk.ok and not taken_by and all(t.strip() for t in texts.values()))

        def _add() -> None:
            # read what was typed from the session (a click can arrive with text typed since the last run)
            qid = st.session_state.get("gt_new_id", "").strip() or next_id(state["data"], "q")
            try:
                _set_data(add_question(state["data"], qid, needle, {n: st.session_state[f"gt_new_{n}"].strip()
                                                                   for n in names}))
            except ValueError as exc:
                say("error", str(exc))
                return
            for n in names:
                st.session_state[f"gt_new_{n}"] = ""
            st.session_state["gt_new_id"] = ""
            st.session_state.pop("gt_draft_hint", None)
            say("success", f"Added {qid} (not saved yet).")

        st.button("Add question", on_click=_add, disabled=not ready, key="gt_add",
                  help=None if ready else "Needs a valid needle and every phrasing.")

    # ----- questions ------------------------------------------------------------

    with tab_q:
        questions = [q for q in data.get("questions") or [] if isinstance(q, dict)]
        if not questions:
            st.info("No questions yet: add one in the first tab, or start from the suggestions.")
        else:
            rows = []
            for q in questions:
                needle_q = q.get("needle") if isinstance(q.get("needle"), str) else ""
                c = check_needle(needle_q, corpus, strategies=()) if needle_q else None
                lk = question_leakage(q)
                row = {"id": q.get("id"), "document": c.doc_id if c and c.ok else "", "section": c.section if c and c.ok else "",
                       "needle": needle_q}
                for name in names:
                    row[name] = (q.get("queries") or {}).get(name, "") if isinstance(q.get("queries"), dict) else ""
                row["max leakage"] = max((v.share for v in lk.values()), default=0.0)
                row["check"] = "ok" if c and c.ok else "; ".join(c.problems) if c else "no needle"
                rows.append(row)
            st.dataframe(pd.DataFrame(rows), hide_index=True,
                         column_config={"max leakage": st.column_config.ProgressColumn(format="percent", min_value=0,
                                                                                       max_value=1)})
            qids = [str(q.get("id")) for q in questions]
            if st.session_state.get("gt_edit") not in qids:
                st.session_state["gt_edit"] = qids[0]
            chosen = st.selectbox("Edit question", qids, key="gt_edit")
            q = next(q for q in questions if str(q.get("id")) == chosen)
            st.code(str(q.get("needle")), language=None, wrap_lines=True)
            current = q.get("queries") if isinstance(q.get("queries"), dict) else {}
            edited = {}
            for name in dict.fromkeys([*names, *current]):
                k = f"gt_ed_{chosen}_{name}"
                if k not in st.session_state:
                    st.session_state[k] = st.session_state.get(f"_keep_{k}", str(current.get(name, "")))
                edited[name] = st.text_input(f"{md_text(chosen)}: phrasing '{md_text(name)}'", key=k)
                st.session_state[f"_keep_{k}"] = edited[name]
                if edited[name].strip() and isinstance(q.get("needle"), str):
                    lk = leakage(edited[name], q["needle"])
                    (st.warning if lk.warn else st.caption)(f"Leakage: {md_text(lk)}")

            def _apply(qid=chosen, keys=tuple(edited)) -> None:
                values = {n: st.session_state.get(f"gt_ed_{qid}_{n}", "").strip() for n in keys}
                _set_data(update_queries(state["data"], qid, {n: t for n, t in values.items() if t}))

            def _delete(qid=chosen) -> None:
                _set_data(remove_entry(state["data"], "questions", qid))
                say("info", f"Deleted {qid} (not saved yet).")

            c1, c2 = st.columns(2)
            c1.button("Apply changes", on_click=_apply, key="gt_apply")
            c2.button("Delete question", on_click=_delete, key="gt_delete")

    # ----- out of domain -------------------------------------------------------------

    with tab_ood:
        ood = [o for o in data.get("ood") or [] if isinstance(o, dict)]
        if ood:
            st.dataframe(pd.DataFrame([{"id": o.get("id"), "kind": o.get("kind"), "query": o.get("query")} for o in ood]),
                         hide_index=True)
        text = st.text_area("Out-of-domain query", key="gt_ood_text", height=80,
                            help="A question the corpus does not answer. near: in the corpus's own vocabulary; "
                                 "far: another domain.")
        kind = st.radio("Kind", ["near", "far"], key="gt_ood_kind", horizontal=True)
        if text.strip():
            m = near_ood_matches(text, corpus, top=1)
            if m and m[0].warn:
                st.warning(f"One sentence holds {pct(m[0].share)} of its content words "
                           f"({md_text(', '.join(m[0].shared))}): {md_text(m[0].sentence.doc_id)}: "
                           f"{md_text(repr(m[0].sentence.text[:200]))}. Confirm it does not answer the query.")
            if kind == "near":
                st.caption("Closest chunks by BM25 (strategy E; the embedding model is not loaded on this page). "
                           "Confirm that none answers the query:")
                for chunk, score in closest_chunks(text, corpus):
                    with st.expander(f"{md_text(chunk.header)} · BM25 {score:.2f}"):
                        st.text(chunk.content)

        def _add_ood() -> None:
            oid = next_id(state["data"], "o")
            _set_data(add_ood(state["data"], oid, st.session_state["gt_ood_kind"], st.session_state["gt_ood_text"].strip()))
            st.session_state["gt_ood_text"] = ""
            say("success", f"Added {oid} (not saved yet).")

        st.button("Add out-of-domain query", on_click=_add_ood, disabled=not text.strip(), key="gt_add_ood")
        if ood:
            oids = [str(o.get("id")) for o in ood]
            gone = st.selectbox("Delete", oids, key="gt_ood_del")
            st.button("Delete out-of-domain query", key="gt_del_ood",
                      on_click=lambda: _set_data(remove_entry(state["data"], "ood", gone)))

    # ----- suggestions ----------------------------------------------------------------

    with tab_sugg:
        st.caption("Candidate needles by known-item sampling (distinctive, unique sentences spread over the corpus in "
                   "proportion to size), with why each was picked; no LLM. Use one to load it into the first tab, then "
                   "write its phrasings yourself: the draft is only a template.")
        n_sugg = st.number_input("How many", min_value=1, max_value=200, value=20, key="gt_sugg_n")
        if st.button("Suggest", key="gt_suggest"):
            st.session_state["gt_sugg"] = suggest(corpus, int(n_sugg))
        sugg = st.session_state.get("gt_sugg")
        if sugg is not None:
            used = {q.get("needle") for q in data.get("questions") or [] if isinstance(q, dict)}

            def _use(c) -> None:
                d = corpus.document(c.doc_id)
                sec = d.section_at(c.start).title
                sents_ = [s for s in document_sentences(d) if s.section == sec]
                st.session_state["gt_doc"] = c.doc_id
                st.session_state["gt_sec"] = sec
                st.session_state["gt_sent"] = next(j for j, s in enumerate(sents_) if s.start == c.start)
                st.session_state["gt_span"] = "this sentence"
                st.session_state["gt_draft_hint"] = c.draft
                say("info", f"Loaded the candidate from {c.doc_id} into 'Add a question'.")

            for j, c in enumerate(sugg.questions):
                a, b = st.columns([6, 1])
                a.markdown(f"**{md_text(c.doc_id)} › {md_text(c.section)}** · " + " · ".join(md_text(w) for w in c.why))
                a.text(c.needle)
                b.button("Use", key=f"gt_use_{j}", on_click=_use, args=(c,), disabled=c.needle in used)
            st.caption("Near out-of-domain candidates (the corpus's vocabulary, a combination it does not discuss):")
            have = {o.get("query") for o in data.get("ood") or [] if isinstance(o, dict)}
            for j, o in enumerate(sugg.ood):
                a, b = st.columns([6, 1])
                a.text(f"{o.query}\n  ({o.why})")
                b.button("Add", key=f"gt_use_ood_{j}", disabled=o.query in have,
                         on_click=lambda o=o: _set_data(add_ood(state["data"], next_id(state["data"], "o"), "near", o.query)))

    # ----- coverage and checks --------------------------------------------------------------

    with tab_cov:
        cov = coverage(data, corpus, k=PRIMARY_K)
        st.markdown(f"**{md_text(cov.sentence)}.**")
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("valid questions", cov.n_questions)
        c2.metric("phrasings missing", len(cov.missing))
        c3.metric("near ood", cov.near)
        c4.metric("far ood", cov.far)
        st.dataframe(pd.DataFrame(cov.by_document(), columns=["document", "characters", "sections", "questions"]),
                     hide_index=True)
        with st.expander("Questions per section"):
            st.dataframe(pd.DataFrame([{"document": r.doc_id, "section": r.section or "(preamble)",
                                        "characters": r.chars, "questions": r.questions} for r in cov.sections]),
                         hide_index=True)
        if cov.missing:
            st.warning("Phrasings missing: " + md_text(", ".join(f"{qid} {p}" for qid, p in cov.missing)))
        problems = check_truth(data, corpus, source=target.name)
        if problems:
            st.caption(f"{sum(p.severity == 'error' for p in problems)} error(s) (the file will not load until they are "
                       f"fixed), {sum(p.severity == 'warning' for p in problems)} warning(s):")
            st.dataframe(pd.DataFrame([{"severity": p.severity, "entry": p.item, "field": p.field, "problem": p.message}
                                       for p in problems]), hide_index=True)
        else:
            st.success("No problems: the file loads, and no query copies its needle.")

    keep_widgets(names)


page()
