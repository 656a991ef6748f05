"""Static scan of the dashboard: every ``st.*`` call that renders a label or a body as Markdown gets data through
the one escaping path (:func:`ui.html.md_text`, or :func:`ragdiag.core.tables.md_line`).

Each ``{...}`` of an f-string passed as the first argument, ``label=``, ``body=`` or ``help=`` of such a call is
looked at; one whose expression names data (an id, a query, a model or file name, an error's text, ...) must
be inside an escaping call, unless it is one of the few listed below, each with the reason it is not data.
The behaviour is checked too, page by page, with hostile ids (``test_served_round3.py``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Streamlit calls whose label or body is rendered as Markdown.
MARKDOWN_CALLS = {"markdown", "write", "caption", "info", "warning", "error", "success", "toast", "title", "header",
                  "subheader", "text_input", "text_area", "selectbox", "radio", "checkbox", "toggle", "button",
                  "page_link", "expander", "tabs", "multiselect", "slider", "number_input", "select_slider",
                  "download_button", "metric", "popover", "link_button", "form_submit_button", "file_uploader",
                  "status", "spinner", "segmented_control", "pills"}
ESCAPES = {"md_text", "md_line", "md_escape"}
#: Names that carry data a user, a corpus or a file supplied.
DATA = re.compile(r"\b(qid|qids|question_id|query_id|chosen|model|name|names|reason|exc|query|why|failed|picked|"
                  r"target|note|source|doc_id|chunk_id|title|section|label|verdict|text|texts)\b")
#: (file, expression) interpolated as is, and why that is safe.
NOT_DATA = {
    ("app_pages/compare.py", "rec.why"): "the library's sentence from configuration descriptions and numbers",
    ("app_pages/summary.py", "label"): "the metric names of the page ('answered', 'bluffs', ...)",
    ("ui/context.py", "picked"): "a configuration label from the registry's strategies and retrievers",
    ("app_pages/compare.py", "str(declared.source).replace('`', '')"):
        "the operator's declaration, in a code span with its backticks removed (nothing renders in a code span)",
}


def _escaped(node, parents) -> bool:
    return any(isinstance(p, ast.Call) and getattr(p.func, "id", getattr(p.func, "attr", None)) in ESCAPES
               for p in parents)


def _findings(files=None, root: Path = ROOT) -> list[tuple[str, int, str]]:
    out = []
    files = files or [*sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "ui").glob("*.py")),
                      ROOT / "app.py"]
    for path in files:
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr in MARKDOWN_CALLS):
                continue
            for arg in call.args[:1] + [k.value for k in call.keywords if k.arg in ("label", "body", "help")]:
                stack = [(arg, ())]
                while stack:
                    node, parents = stack.pop()
                    if isinstance(node, ast.FormattedValue) and node.format_spec is None \
                            and not _escaped(node, parents) \
                            and not (isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "len"):
                        src = ast.unparse(node.value)
                        if DATA.search(src) and (rel, src) not in NOT_DATA \
                                and not (isinstance(node.value, ast.Call)
                                         and getattr(node.value.func, "id", getattr(node.value.func, "attr", None))
                                         in ESCAPES):
                            out.append((rel, call.lineno, src))
                    for child in ast.iter_child_nodes(node):
                        stack.append((child, (*parents, node)))
    return out


def test_every_data_value_in_a_markdown_label_or_body_is_escaped():
    assert not _findings(), "\n".join(f"{f}:{n}: {{{s}}} is not escaped (wrap it in md_text)" for f, n, s in _findings())


def test_the_scan_finds_an_unescaped_id_and_passes_an_escaped_one(tmp_path):
    """The scan is not vacuous: a page interpolating a question id unescaped is found, escaped it is not."""
    page = tmp_path / "probe.py"
    page.write_text('import streamlit as st\nqid = "q1"\nst.page_link("x.py", label=f"{qid} crowded")\n'
                    'st.warning(f"{md_text(qid)} and {len(qid)} and {0.5:.2f}")\n')
    assert _findings([page], tmp_path) == [("probe.py", 3, "qid")]
