"""``./run.sh dashboard``: serve ``app.py`` with the operator's evaluation already under way.

``python -m ui.serve [streamlit options]`` is ``streamlit run app.py [options]``
plus one thing: as the server starts, a thread starts the evaluation of the
operator's configured data (``RAGDIAG_CORPUS``, ``RAGDIAG_TRUTH``,
``RAGDIAG_STRATEGIES``, ...), the shared background job a first page view
would otherwise start (:func:`ui.jobs.start_operator_job`). A visitor who
comes later finds it running or done; the server's console says when each
strategy is ready. ``RAGDIAG_WARM=0`` leaves it to the first visit.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"
WARM_ENV = "RAGDIAG_WARM"
_THREAD = "ragdiag-warm"


def _say(message: str) -> None:
    print(f"ragdiag: {message}", file=sys.stderr, flush=True)


class _NoContextWarning(logging.Filter):
    """Streamlit warns that a cached loader ran outside a page; during the warm-up that is the point."""

    warming = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(self.warming, "on", False)


_QUIET = _NoContextWarning()


def warm(say=_say) -> None:
    """Start the operator's job, then report each strategy as it is ready (the thread's target)."""
    logger = logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context")
    if _QUIET not in logger.filters:
        logger.addFilter(_QUIET)
    t0 = time.monotonic()
    _QUIET.warming.on = True
    try:
        from ragdiag.retrieval.registry import load_plugins
        from ui.jobs import start_operator_job

        load_plugins()  # as app.py does first: plugin strategies and retrievers are part of the configuration
        sched = start_operator_job().scheduler
    except Exception as exc:  # noqa: BLE001 - the first page view reports it to the visitor, in full
        say(f"the configured data is not evaluated before a visit ({type(exc).__name__}: {exc}); "
            "the dashboard shows why when it is opened")
        return
    finally:
        _QUIET.warming.on = False
    say(f"evaluating the configured data in the background ({len(sched.names)} strategies); "
        "visitors see each strategy as soon as it is ready")
    told: set[str] = set()
    while True:
        finished = sched.wait(sched.names, timeout=5.0)
        state = sched.state()
        for name in state.ended:
            if name not in told:
                told.add(name)
                what = "ready" if name in state.ready else f"failed: {state.failed[name]}"
                say(f"strategy {name} {what} after {time.monotonic() - t0:.0f} s "
                    f"({len(told)} of {len(sched.names)})")
        if finished or state.finished:
            say(f"all strategies done after {time.monotonic() - t0:.0f} s")
            return


def main(argv: list[str] | None = None) -> int:
    """Start the warm-up thread (unless ``RAGDIAG_WARM=0``) and run Streamlit on ``app.py``."""
    args = list(sys.argv[1:] if argv is None else argv)
    from ui.collection_view import collection_spec

    # a served collection (RAGDIAG_COLLECTION) is evaluated by its page's cache: the corpus job is not needed
    if (os.environ.get(WARM_ENV) or "1").strip().lower() not in {"0", "false", "no", "off"} and not collection_spec():
        threading.Thread(target=warm, name=_THREAD, daemon=True).start()
    from streamlit.web import cli

    from ui.serving import install

    install()  # before the first session: its messages too go out without the server path
    sys.argv = ["streamlit", "run", str(APP), *args]
    return cli.main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main())
