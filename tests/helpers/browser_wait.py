"""One way for the browser tests to wait: for Streamlit's run to be over, then for the one element read to hold
its value.

A helper module, not a test file. Every context the ``browser`` fixture of ``test_browser.py`` opens carries
:data:`WATCH_JS`, which counts in the page what Streamlit's websocket carries: each rerun the page asks for
(``BackMsg.rerun_script``, a widget changed or a page link clicked), each run's start (``ForwardMsg.new_session``)
and end (``ForwardMsg.script_finished``, with its status). :func:`settle` waits until

* the last run asked for has started and finished (not "finished early for a rerun"),
* no element is stale (Streamlit marks the previous run's elements ``data-stale`` until the run redraws them),
* no status widget, no progress bar, no "Strategies still computing" line (the app's own background work), no
  skeleton (an element whose code is still loading),
* and the page has not changed for :data:`QUIET_MS` since (React draws the last messages after they arrive).

Streamlit's own "Running…" widget shows only after half a second of running, so its absence alone says nothing
about a short run; the run counts do. A read then goes through :func:`one` (the locator resolves to exactly one
element: a rerun's stale copy next to the new one fails, it is not read) and, where the value is known, waits for it
(``expect`` auto-waits): :func:`text_of`, :func:`value_of`. No read happens after a fixed pause.

The health of a server just started is polled over HTTP (:func:`wait_healthy`); that is the only timed loop here.
"""

from __future__ import annotations

import re
import time
import urllib.request

__all__ = ["WATCH_JS", "QUIET_MS", "LIMIT_MS", "watched", "settle", "one", "main", "sidebar", "text_of",
           "value_of", "main_text", "sidebar_text", "count", "texts_of", "wait_healthy"]

#: The page must have stood still this long after the run's end (no DOM change) before it is read.
QUIET_MS = 400
#: The overall limit of one wait: a wait ends as soon as its state is reached, so a slow machine makes a test slower,
#: not red (a load of 10-30 on 2 cores); the limit only bounds a page that never gets there.
LIMIT_MS = 600_000

#: Counts Streamlit's runs from its websocket's protobuf frames (top-level field numbers of ForwardMsg/BackMsg,
#: checked against streamlit.proto by tests/unit/test_browser_waits.py) and the time of the page's last DOM change.
WATCH_JS = """
(() => {
  if (window.__ragdiagRuns) return;
  const R = window.__ragdiagRuns = {asked: 0, started: 0, finished: 0, status: -1, last: 'none', changed: 0,
                                    ended: 0};
  const now = () => performance.now();
  const fields = (data) => {  // top-level protobuf fields: {number: varint value or true}
    const b = new Uint8Array(data), out = {};
    let i = 0;
    const varint = () => { let v = 0, m = 1, c; do { c = b[i++]; v += (c & 127) * m; m *= 128; } while (c & 128); return v; };
    while (i < b.length) {
      const tag = varint(), f = Math.floor(tag / 8), w = tag % 8;
      if (w === 0) out[f] = varint();
      else if (w === 2) { const n = varint(); out[f] = true; i += n; }
      else if (w === 1) i += 8; else if (w === 5) i += 4; else break;
    }
    return out;
  };
  const Native = window.WebSocket;
  class Watched extends Native {
    constructor(...args) {
      super(...args);
      if (!String(args[0]).includes('_stcore/stream')) return;
      this.addEventListener('message', (e) => {
        if (!(e.data instanceof ArrayBuffer)) return;
        const f = fields(e.data);
        if (f[NEW_SESSION]) { R.started += 1; R.last = 'started'; }
        if (f[SCRIPT_FINISHED] !== undefined) {
          R.finished += 1; R.status = f[SCRIPT_FINISHED] === true ? 0 : f[SCRIPT_FINISHED];
          R.last = 'finished'; R.ended = now();
        }
      });
    }
    send(data) {
      try {
        if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) {
          const f = fields(data instanceof ArrayBuffer ? data : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
          if (f[RERUN_SCRIPT]) { R.asked += 1; R.last = 'asked'; }
        }
      } catch (err) { /* a frame this reader does not know: not a rerun */ }
      return super.send(data);
    }
  }
  window.WebSocket = Watched;
  new MutationObserver(() => { R.changed = now(); }).observe(document, {subtree: true, childList: true,
                                                                     attributes: true, characterData: true});
})();
"""
#: ForwardMsg.new_session, ForwardMsg.script_finished, BackMsg.rerun_script; ScriptFinishedStatus's
#: FINISHED_EARLY_FOR_RERUN (a rerun follows at once).
PROTO_FIELDS = {"NEW_SESSION": 4, "SCRIPT_FINISHED": 6, "RERUN_SCRIPT": 11}
EARLY_FOR_RERUN = 2
for _name, _number in PROTO_FIELDS.items():
    WATCH_JS = WATCH_JS.replace(f"[{_name}]", f"[{_number}]")

#: True when the run is over and the page stands still (see the module's docstring).
SETTLED_JS = """(quiet) => {
  const R = window.__ragdiagRuns;
  if (!R || R.last !== 'finished' || R.status === %d) return false;
  const t = performance.now();
  if (t - R.ended < quiet || t - R.changed < quiet) return false;
  if (document.querySelector('[data-stale="true"], [data-testid="stStatusWidget"], [data-testid="stProgress"], '
                             + '[data-testid="stSkeleton"]'))
    return false;
  const main = document.querySelector('[data-testid="stMain"]');
  return main !== null && !document.body.innerText.includes('Strategies still computing');
}""" % EARLY_FOR_RERUN


def watched(browser):
    """``browser`` whose every new context (and page) counts Streamlit's runs (:data:`WATCH_JS`) and asks for
    reduced motion."""
    return _WatchedBrowser(browser)


class _WatchedBrowser:
    def __init__(self, browser):
        self._browser = browser

    def __getattr__(self, name):
        return getattr(self._browser, name)

    def new_context(self, **kwargs):
        # No transitions or running animations to draw: about 15% of Chromium's CPU for a page (measured at
        # 1400 x 900), and a test reads the page once it stands still, never mid-animation.
        kwargs.setdefault("reduced_motion", "reduce")
        ctx = self._browser.new_context(**kwargs)
        ctx.add_init_script(WATCH_JS)
        return ctx

    def new_page(self, **kwargs):
        return self.new_context(**kwargs).new_page()


def settle(page, timeout_ms: int = LIMIT_MS) -> None:
    """Wait until the run last asked for is over and the page stands still (see the module's docstring)."""
    page.wait_for_function(SETTLED_JS, arg=QUIET_MS, timeout=timeout_ms, polling=100)


def _expect():
    from playwright.sync_api import expect

    return expect


def one(locator, timeout_ms: int = LIMIT_MS):
    """``locator`` once it resolves to exactly one element (a stale copy beside the new one is not read)."""
    _expect()(locator).to_have_count(1, timeout=timeout_ms)
    return locator


def main(page):
    """The page's main area (not the sidebar)."""
    return page.locator('[data-testid="stMain"]')


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def text_of(locator, expected: str | re.Pattern | None = None, *, timeout_ms: int = LIMIT_MS) -> str:
    """The one element's text once the run is over, after it holds ``expected`` (a substring or a pattern) if
    given."""
    settle(locator.page, timeout_ms)
    one(locator, timeout_ms)
    if expected is not None:
        _expect()(locator).to_contain_text(expected, timeout=timeout_ms, use_inner_text=True)  # the text as read
    return locator.inner_text()


def value_of(locator, expected: str | re.Pattern | None = None, *, timeout_ms: int = LIMIT_MS) -> str:
    """The one field's value once the run is over, after it holds ``expected`` if given."""
    settle(locator.page, timeout_ms)
    one(locator, timeout_ms)
    if expected is not None:
        _expect()(locator).to_have_value(expected, timeout=timeout_ms)
    return locator.input_value()


def main_text(page, expected: str | re.Pattern | None = None) -> str:
    return text_of(main(page), expected)


def sidebar_text(page, expected: str | re.Pattern | None = None) -> str:
    return text_of(sidebar(page), expected)


def count(locator, timeout_ms: int = LIMIT_MS) -> int:
    """How many elements ``locator`` finds once the run is over (a "none" or "n of them" check)."""
    settle(locator.page, timeout_ms)
    return locator.count()


def texts_of(locator, timeout_ms: int = LIMIT_MS) -> list[str]:
    """The texts of every element ``locator`` finds once the run is over."""
    settle(locator.page, timeout_ms)
    return locator.all_inner_texts()


def wait_healthy(base: str, proc, log_path, limit_s: float = 90.0) -> None:
    """Poll a server just started until ``/_stcore/health`` answers 200 (raises with its log's tail if it exits or
    does not answer within ``limit_s``). A server has no page to wait on yet: its health is polled every 0.3 s."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}: "
                               f"{log_path.read_text(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the server did not become healthy within {limit_s:.0f} s: "
                       f"{log_path.read_text(errors='replace')[-2000:]}")
