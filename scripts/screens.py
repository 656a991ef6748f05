"""Regenerate the screenshots of ``docs/screens/`` that show the context (``context-*.png``).

Chromium (Debian's, as the browser tests use it) at 1400 × 900 on the bundled corpus, served as
``streamlit run app.py`` with an empty cache (seeded from the shipped index), nothing chosen, in the light and
the dark theme (the browser's ``prefers-color-scheme``, which the dashboard follows); the Summary and the Inspector
also at 800 px. Each shot waits for the page's own "done" state (no status widget, no progress bar, no
"still computing" line), never a fixed time.

    .venv/bin/python scripts/screens.py            # every shot listed in SHOTS
    .venv/bin/python scripts/screens.py inspector  # the shots whose name contains "inspector"
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from browsing import ARGS, CHROMIUM, start_server, stop_server  # noqa: E402

OUT = ROOT / "docs" / "screens"
LIMIT_MS = 600_000
SETTLED = """() => !document.querySelector('[data-testid="stProgress"]')
    && !document.body.innerText.includes('Strategies still computing')
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && document.querySelector('[data-testid="stMain"] h1')"""

#: (file, path and query, width, theme, heading to scroll to or None)
SHOTS = [
    *[(f"context-{name}-{theme}.png", path, 1400, theme, None)
      for name, path in (("summary", "/"), ("threshold", "/threshold"), ("inspector", "/inspector"))
      for theme in ("light", "dark")],
    ("context-summary-800-light.png", "/", 800, "light", None),
    ("context-inspector-800-light.png", "/inspector", 800, "light", None),
    *[(f"inspector-crowded-{theme}.png", "/inspector?stage=ranked-low", 1400, theme, "What crowded the answer out")
      for theme in ("light", "dark")],
]


#: Every widget drawn: Streamlit loads a widget's code on first use and shows a grey placeholder until then.
DRAWN = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]')]
    .every(el => el.offsetHeight === 0 || el.querySelector('[data-testid]:not([data-testid="stSkeleton"])'))
    && !document.querySelector('[data-testid="stSkeleton"]')"""


def settle(page) -> None:
    """Twice: a strategy finishing in the background reruns the page; then every widget's code loaded."""
    for _ in range(2):
        page.wait_for_function(SETTLED, timeout=LIMIT_MS, polling=250)
        page.wait_for_timeout(400)  # let the last rerun start, if any, before reading its state again
    page.wait_for_load_state("networkidle", timeout=LIMIT_MS)
    page.wait_for_function(DRAWN, timeout=LIMIT_MS, polling=250)
    page.evaluate("document.fonts.ready")


def main(only: str = "") -> None:
    from playwright.sync_api import sync_playwright

    shots = [s for s in SHOTS if only in s[0]]
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server({"RAGDIAG_CACHE": str(Path(tmp) / "cache")}, Path(tmp) / "streamlit.log")
        pw = sync_playwright().start()
        try:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            for name, path, width, theme, scroll_to in shots:
                ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=theme)
                page = ctx.new_page()
                page.set_default_timeout(LIMIT_MS)
                page.goto(url + path)
                settle(page)
                if scroll_to:
                    page.get_by_role("heading", name=scroll_to).first.scroll_into_view_if_needed()
                    settle(page)
                page.screenshot(path=str(OUT / name))
                print(f"wrote docs/screens/{name}", flush=True)
                ctx.close()
            browser.close()
        finally:
            pw.stop()
            stop_server(proc)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
