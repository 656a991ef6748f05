"""Render a :class:`~ragdiag.present.report.model.Report` with the package's Jinja2 templates, and write it.

``templates/report.html.j2`` and ``templates/report.md.j2`` show the same
sections from the same model; ``macros.html.j2`` holds the HTML building blocks
and ``diag.*.j2`` the funnel, hubs, cost and variants sections. Corpus and query
text are untrusted: the HTML is autoescaped (with :func:`html.escape`, as the
dashboard escapes), the Markdown goes through the ``md`` filter
(:func:`ragdiag.core.tables.md_line`); StrictUndefined makes a misspelt field an error.
"""

from __future__ import annotations

import html
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, pass_eval_context, select_autoescape
from markupsafe import Markup

from ...core.stats import Interval
from ...core.tables import md_line, md_table
from ...analyses.threshold.gate import GATE_DISTANCE
from .diag import COST_MEANS, FUNNEL_MEANS, HUB_MEANS, VARIANT_MEANS
from .sections import CutText
from ...core.words import GLOSSARY, rate_text
from .words import MEANS

__all__ = ["render", "environment", "write_report", "markdown_twin", "MARKDOWN_SIGNATURE"]

MARKDOWN_SIGNATURE = "# ragdiag retrieval report:"
_CUT_MARK = Markup('<span class="cut" title="cut">&#9986;</span>')


def _h(value) -> Markup:
    return Markup(html.escape(str(value), quote=True))


@pass_eval_context
def _finalize(eval_ctx, value):
    """Escape every output with :func:`html.escape` in HTML (markup we built is kept); as is in Markdown."""
    if eval_ctx.autoescape and not hasattr(value, "__html__"):
        return _h(value)
    return value


def _cell(value):
    """An HTML table cell: an interval with its bounds in grey, a needle with its cuts marked, else the text."""
    if isinstance(value, Interval):
        rate, _, bounds = rate_text(value).partition(" ")  # "55%", "(42–67)"
        return _h(rate) + Markup(' <span class="ci">') + _h(bounds) + Markup("</span>")
    if isinstance(value, CutText):
        return Markup('<span class="quote">') + _CUT_MARK.join(_h(p) for p in value.pieces) + Markup("</span>")
    return value


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The report's Jinja2 environment: package templates, HTML autoescaped, undefined names fail."""
    env = Environment(loader=PackageLoader("ragdiag.present.report", "templates"),
                      autoescape=select_autoescape(("html.j2", "html")), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, finalize=_finalize)
    env.filters.update(md=md_line, cell=_cell)
    env.globals.update(MEANS=MEANS, GATE_DISTANCE=GATE_DISTANCE, FUNNEL_MEANS=FUNNEL_MEANS, HUB_MEANS=HUB_MEANS,
                       COST_MEANS=COST_MEANS, VARIANT_MEANS=VARIANT_MEANS, md_table=md_table, GLOSSARY=GLOSSARY)
    return env


def render(report, template: str) -> str:
    """``report`` through ``template`` (``report.html.j2`` or ``report.md.j2``)."""
    return environment().get_template(template).render(r=report)


def markdown_twin(out: str | Path, md: str | Path | None = None) -> Path:
    """Where the Markdown of a report goes: ``md`` when named, else ``out`` with ``.md``.

    The unnamed twin never overwrites a file that is not an earlier ragdiag report
    (``--out README.html`` must not destroy ``README.md``): ValueError then.
    """
    out = Path(out)
    if md is not None:
        md = Path(md)
        if md.resolve() == out.resolve():
            raise ValueError(f"--md and --out name the same file {str(out)!r}")
        return md
    twin = out.with_suffix(".md")
    if twin == out:
        raise ValueError(f"--out names the HTML file (e.g. report.html), got {str(out)!r}")
    if twin.exists() or twin.is_symlink():
        try:
            with open(twin, encoding="utf-8", errors="replace") as f:
                ours = f.read(len(MARKDOWN_SIGNATURE)) == MARKDOWN_SIGNATURE and twin.is_file()
        except OSError:
            ours = False
        if not ours:
            raise ValueError(f"{str(twin)!r} exists and is not a ragdiag report; it is not overwritten. Name the "
                             f"Markdown file with --md (e.g. --md {out.stem}-report.md)")
    return twin


def write_report(report, out: str | Path, *, md: str | Path | None = None) -> list[str]:
    """Write ``out`` (HTML) and the Markdown (``md``, default: beside it, see :func:`markdown_twin`).

    Both are written or neither (:func:`ragdiag.core.files.write_all`: a full disk leaves the previous pages).
    """
    from ...core.files import write_all

    out = Path(out)
    md = markdown_twin(out, md)
    out.parent.mkdir(parents=True, exist_ok=True)
    md.parent.mkdir(parents=True, exist_ok=True)
    return write_all({out: report.to_html(), md: report.to_markdown()})
