"""Two messages of Streamlit's protocol closed for a served dashboard (:func:`install`, once per process).

- **clear-cache**: any websocket client can send it (the "Clear cache" menu item, or a raw client); Streamlit
  then clears every ``st.cache_resource`` and ``st.cache_data`` of the process, for all visitors: the shared
  evaluation job and the encoder are rebuilt and the store written again. Here it clears only the sender's own
  session state; the operator clears the caches by restarting the server. ``RAGDIAG_ALLOW_CLEAR_CACHE=1``
  restores Streamlit's behaviour (a developer's own instance).
- **new session**: Streamlit tells every client the absolute server path of ``app.py``; started by the launcher
  (``./run.sh dashboard``, ``python -m ui.serve``), only its file name.

Both replace a method of Streamlit's ``AppSession`` (private API, pinned by ``tests/model/test_served_surface.py``).
"""

from __future__ import annotations

import os

__all__ = ["ALLOW_CLEAR_CACHE_ENV", "install"]

ALLOW_CLEAR_CACHE_ENV = "RAGDIAG_ALLOW_CLEAR_CACHE"

#: Streamlit's own methods, set once by :func:`install` (the patched ones call them).
_ORIGINAL: dict = {}


def install(*, script_path: bool = True) -> None:
    """Patch ``AppSession`` once: clear-cache refused (unless allowed), and with ``script_path`` the script path
    sent without folders.

    The launcher (:mod:`ui.serve`) installs both before the server starts. The app installs only the first
    (``script_path=False``) when it runs under a plain ``streamlit run``: a session's first message went out
    before the app ran, and a browser that sees the script path change mid-session starts the page over.
    """
    from streamlit.runtime.app_session import AppSession

    if "clear" not in _ORIGINAL:
        _ORIGINAL["clear"] = AppSession._handle_clear_cache_request
        AppSession._handle_clear_cache_request = _clear_cache
    if script_path and "new_session" not in _ORIGINAL:
        _ORIGINAL["new_session"] = AppSession._create_new_session_message
        AppSession._create_new_session_message = _new_session_message


def _clear_cache(self) -> None:
    if (os.environ.get(ALLOW_CLEAR_CACHE_ENV) or "").strip().lower() in {"1", "true", "yes", "on"}:
        return _ORIGINAL["clear"](self)
    self._session_state.clear()  # the sender's own session only; the shared caches stay


def _new_session_message(self, *args, **kwargs):
    msg = _ORIGINAL["new_session"](self, *args, **kwargs)
    msg.new_session.main_script_path = os.path.basename(msg.new_session.main_script_path)
    return msg
