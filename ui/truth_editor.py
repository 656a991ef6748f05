"""The Ground truth editor's session state: which file it writes, the open file and its edits, save and reload.

The page (``app_pages/ground_truth.py``) draws; this module keeps what the
visitor typed across reruns and page switches and talks to
:mod:`ragdiag.authoring.save`. Messages for the next run go through
:func:`say` / :func:`pop_message`.
"""

from __future__ import annotations

import copy
from pathlib import Path

import streamlit as st

from ragdiag.authoring.save import ConflictError, backup_path, merge, open_truth, renumber_new_ids, save_truth
from ui.html import md_text
from ui.state import Settings

__all__ = ["PERSIST", "restore_widgets", "keep_widgets", "save_target", "file_state", "save", "reload", "say",
           "pop_message", "CONFLICT"]

#: Widget values copied to plain session keys, so a page switch (which drops widget state) loses nothing.
PERSIST = ("gt_doc", "gt_sec", "gt_sent", "gt_span", "gt_new_id", "gt_ood_text", "gt_ood_kind", "gt_sugg_n",
           "gt_edit")
#: Session key of the last save's conflict message (shown until a reload resolves it).
CONFLICT = "gt_conflict"
_MSG = "gt_msg"


def restore_widgets() -> None:
    """Give the editor's widgets back what they held before a page switch (call first on the page)."""
    for k in PERSIST:
        if k not in st.session_state and f"_keep_{k}" in st.session_state:
            st.session_state[k] = st.session_state[f"_keep_{k}"]


def keep_widgets(phrasings) -> None:
    """Copy the editor's widget values to plain keys (call last on the page), the new question's phrasings too."""
    for k in (*PERSIST, *(f"gt_new_{n}" for n in phrasings)):
        if k in st.session_state:
            st.session_state[f"_keep_{k}"] = st.session_state[k]


def save_target(conf: Settings) -> tuple[Path, str | None]:
    """The file this page writes: :meth:`ragdiag.present.serving.Access.truth_target` (the configured truth file, or the
    one beside the corpus folder when the access check allows it), and a note when that is not the file in use.

    Never a path typed by a visitor; :class:`~ragdiag.present.serving.AccessError` when no file may be written.
    """
    from ui.state import access

    chosen = conf.truth_path
    target = access().truth_target(conf.corpus, chosen)
    if target == chosen:
        return target, None
    return target, (f"This page writes only the configured ground-truth file or the one beside the corpus "
                    f"folder; it edits {target.name}, not {chosen.name}.")


def file_state(target: Path) -> dict:
    """This session's open copy of ``target``: ``{"base": what is on disk, "data": the edited document}``.

    Opened on first use (``ValueError`` when the file cannot be read as ground truth).
    """
    files = st.session_state.setdefault("gt_files", {})
    key = str(target)
    if key not in files:
        opened = open_truth(target)
        files[key] = {"base": opened, "data": copy.deepcopy(opened.data)}
    return files[key]


def say(kind: str, text: str) -> None:
    """A message (``st.<kind>``) for the page's next run."""
    st.session_state[_MSG] = (kind, text)


def pop_message() -> tuple[str, str] | None:
    """The message :func:`say` left, once."""
    return st.session_state.pop(_MSG, None)


def save(target: Path, state: dict) -> None:
    """Write the edits (a button's callback): refused with a conflict when the file changed on disk since read."""
    try:
        state["base"] = save_truth(target, state["data"], expected_sha256=state["base"].sha256, fmt=state["base"].fmt)
        state["data"] = copy.deepcopy(state["base"].data)
        say("success", f"Saved {target.name}; the previous version is kept as {backup_path(target).name}.")
        st.session_state.pop(CONFLICT, None)
    except ConflictError as exc:
        st.session_state[CONFLICT] = str(exc)
    except (OSError, ValueError) as exc:  # a full disk: one line, the file as it was; no server path shown
        text = str(exc)
        paths = {str(target.resolve()): target.name, str(target): target.name,
                 str(target.parent.resolve()): "its folder", str(target.parent): "its folder"}
        for where in sorted(paths, key=len, reverse=True):  # the file before its folder
            text = text.replace(where, paths[where])
        say("error", f"Not saved: {md_text(text)}")


def conflict_note(conflicts: list[str], mine: dict) -> str:
    """What a merge did with the entries both sides changed, said as it is (:func:`ragdiag.authoring.save.merge`).

    An entry both changed keeps this session's version, except one this session *deleted* while the file's
    version edited it: the merge keeps the edited entry (an edit is not lost to a deletion), so the note says
    the deletion was dropped and how to delete it again.

    >>> conflict_note(["q1"], {"questions": [{"id": "q1"}]})
    ' Both sides changed q1: your version is kept.'
    >>> conflict_note(["q2"], {"questions": []})
    ' You deleted q2, which was edited on disk: the edited version is kept and your deletion was dropped; delete it again if you mean to.'
    """
    from ragdiag.authoring.edit import ids

    have = ids(mine)
    kept = [c for c in conflicts if c in have]
    dropped = [c for c in conflicts if c not in have]
    note = f" Both sides changed {md_text(', '.join(kept))}: your version is kept." if kept else ""
    if dropped:
        names = md_text(", ".join(dropped))
        note += (f" You deleted {names}, which {'was' if len(dropped) == 1 else 'were'} edited on disk: the edited "
                 "version is kept and your deletion was dropped; delete it again if you mean to.")
    return note


def reload(target: Path, state: dict, keep_mine: bool) -> None:
    """Read the file again (a button's callback), with this session's edits merged on top or discarded."""
    try:
        disk = open_truth(target)
    except ValueError as exc:
        say("error", f"Cannot reload: {exc}")
        return
    if keep_mine and disk.sha256 is None:  # the file was deleted: keep everything typed, save creates it again
        say("info", f"{target.name} was deleted on disk; your version is kept; save to write it again.")
    elif keep_mine:
        mine, renamed = renumber_new_ids(state["base"].data, state["data"], disk.data)
        merged, conflicts = merge(state["base"].data, mine, disk.data)
        state["data"] = merged
        note = conflict_note(conflicts, mine)
        note += "".join(f" {md_text(old)} was added on disk too: yours is now {md_text(new)}."
                        for old, new in renamed.items())
        say("info", "Reloaded from disk with your edits applied on top; save again." + note)
    else:
        state["data"] = copy.deepcopy(disk.data)
        for k in [k for k in st.session_state if str(k).startswith(("gt_ed_", "_keep_gt_ed_"))]:
            del st.session_state[k]  # edit boxes show the file again
        say("info", "Reloaded from disk; your unsaved edits were discarded.")
    state["base"] = disk
    st.session_state.pop(CONFLICT, None)
