"""Regenerate the bundled sample report and its two images (README, "A report made this way").

Run from the repository root: ``python scripts/sample_report.py`` (``--images-only`` re-shoots the images of
the report already in ``docs/``).

1. ``python -m ragdiag report --out docs/sample-report.html`` on the bundled corpus with the default model
   (the shipped index seeds the store; costs are measured, so their timings are this machine's), which also
   writes ``docs/sample-report.md`` (the HTML page is not kept in the repository, .gitignore: it is the
   template's output, its style a copy of ``report.css``; the Markdown twin and the two images are kept);
2. Debian's headless Chromium (Playwright, the browser of the tests): the first screen at 1200 x 900 ->
   ``docs/sample-report-first-screen.png``; the page printed to A4 with the margins of
   ``tests/browser/test_browser_report.py`` -> its first page at 80 dpi (``pdftoppm``) -> ``docs/sample-report-print.png``.

The recall figures, rates and cut of the report are the bundled corpus's and change only when the
change is the point (docs/CONTRIBUTING.md); the timings in its appendix are measured anew each time.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "docs" / "sample-report.html"
FIRST = ROOT / "docs" / "sample-report-first-screen.png"
PRINT = ROOT / "docs" / "sample-report-print.png"
CHROMIUM = "/usr/bin/chromium"


def report() -> None:
    """The documented command, on the bundled corpus."""
    subprocess.run([sys.executable, "-m", "ragdiag", "report", "--out", str(HTML)], cwd=ROOT, check=True)


def images() -> None:
    """The first screen at 1200 x 900 and the printed first page of ``docs/sample-report.html``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(HTML.as_uri())
        page.screenshot(path=str(FIRST))
        page.emulate_media(media="print")
        pdf = page.pdf(format="A4", margin={"top": "14mm", "bottom": "14mm", "left": "12mm", "right": "12mm"})
        browser.close()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "report.pdf"
        src.write_bytes(pdf)
        subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile", str(src),
                        str(Path(tmp) / "page")], check=True)
        PRINT.write_bytes((Path(tmp) / "page.png").read_bytes())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images-only", action="store_true", help="re-shoot the images of the report in docs/")
    args = ap.parse_args()
    if shutil.which("pdftoppm") is None:  # said before the minutes of the report, not after them
        sys.exit("pdftoppm is missing: it renders the printed page's image (Debian: apt-get install poppler-utils)")
    if not args.images_only:
        report()
    images()
    for path in (HTML, HTML.with_suffix(".md"), FIRST, PRINT):
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
