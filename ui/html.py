"""HTML for untrusted corpus text: every piece of text is escaped first, then wrapped in our own tags.

Nothing here passes raw corpus text to the browser: a document holding
``<script>`` shows those characters. Output goes to ``st.html`` (no
Markdown processing of the text either).
"""

from __future__ import annotations

import html
from typing import Sequence

from ragdiag.core.tables import md_escape
from ui.frames import segments

__all__ = ["quote_html", "chunk_map_html", "pages_html", "md_text", "BOX", "NARROW_SIDEBAR", "NARROW_PX"]

BOX = ("white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; "
       "font-size: 0.82rem; line-height: 1.55; border: 1px solid rgba(128,128,128,.35); border-radius: .5rem; "
       "padding: .6rem .8rem; margin: 0 0 .5rem 0; overflow-y: auto;")
NEEDLE = "background: #fff59d; color: #000; border-radius: 2px; padding: 0 1px;"
DESTROYED = "background: #ffcdd2; color: #000; outline: 2px solid #c62828; border-radius: 2px;"
INTACT = "background: #c8e6c9; color: #000; border-radius: 2px;"
CHUNK_BG = ("background: rgba(33,150,243,.10);", "background: rgba(255,152,0,.12);")
OVERLAP_BG = "background: rgba(156,39,176,.22);"
LABEL = ("font-size: .68rem; color: #fff; background: #546e7a; border-radius: 3px; padding: 0 3px; margin: 0 2px; "
         "user-select: none;")
CUT = "color: #c62828; font-weight: bold; user-select: none;"

#: Under this width the sidebar starts folded (Streamlit folds it only under 768 px).
NARROW_PX = 1000
#: Our own script (no corpus text): on a tab narrower than NARROW_PX, fold the sidebar once, as its own button does;
#: a visitor who opens it again keeps it open for the rest of the tab's life.
NARROW_SIDEBAR = f"""<span id="ragdiag-narrow-sidebar"></span><script>
(() => {{
  const key = "ragdiag-narrow-sidebar";
  if (window.innerWidth >= {NARROW_PX} || sessionStorage.getItem(key)) return;
  let tries = 0;
  const fold = () => {{
    const side = document.querySelector('[data-testid="stSidebar"]');
    const button = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (side && side.dataset.collapsed === "true") {{
      sessionStorage.setItem(key, "1");
    }} else if (side && button) {{
      sessionStorage.setItem(key, "1");
      button.click();
    }} else if (++tries < 100) {{
      setTimeout(fold, 100);
    }}
  }};
  fold();
}})();
</script>"""


def md_text(text: str) -> str:
    r"""Untrusted text for ``st.markdown``/captions/alerts: every Markdown-significant character
    backslash-escaped (so ``<script>``, links, emphasis, ``:icon:`` and ``$math$`` show as typed).

    >>> md_text("<b>*x*</b> [a](b)")
    '\\<b\\>\\*x\\*\\</b\\> \\[a\\](b)'
    """
    return md_escape(text)


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _box(inner: str, *, max_height: int | None = None, testid: str = "") -> str:
    style = BOX + (f" max-height: {max_height}px;" if max_height else "")
    data = f' data-ragdiag="{_esc(testid)}"' if testid else ""
    return f'<div style="{style}"{data}>{inner}</div>'


def quote_html(text: str, *, base: int = 0, needle: tuple[int, int] | None = None, max_height: int | None = 260) -> str:
    """A quote (``text`` starting at document offset ``base``) with the needle's part highlighted."""
    spans = [(needle[0], needle[1], "needle")] if needle else []
    parts = []
    for seg in segments(base, base + len(text), spans):
        piece = _esc(text[seg.start - base: seg.end - base])
        parts.append(f'<mark style="{NEEDLE}">{piece}</mark>' if "needle" in seg.tags else piece)
    return _box("".join(parts), max_height=max_height, testid="quote")


def chunk_map_html(text: str, chunks: Sequence, *, needles: Sequence[tuple[str, int, int, bool]] = (),
                   cuts: Sequence[int] = (), max_height: int | None = 640, start: int = 0,
                   end: int | None = None) -> str:
    """A document (``text[start:end]``) with chunk spans shaded, each chunk's start labelled, needles marked.

    ``chunks``: objects with ``start``/``end`` (this document's, in order).
    ``needles``: ``(question_id, start, end, destroyed)``; a destroyed needle is
    outlined in red and every cut falling inside it is drawn as a red scissors.
    """
    spans = [(c.start, c.end, f"c{i}") for i, c in enumerate(chunks)]
    spans += [(s, e, f"n{j}") for j, (_, s, e, _) in enumerate(needles)]
    starts = {c.start: i for i, c in enumerate(chunks)}
    cut_points = set(cuts)
    parts = []
    end = len(text) if end is None else min(end, len(text))
    for seg in segments(start, end, spans):
        if seg.start in starts:
            i = starts.pop(seg.start)
            parts.append(f'<span style="{LABEL}" title="chunk {i + 1}: characters {chunks[i].start}-{chunks[i].end}">'
                         f"{i + 1}</span>")
        if seg.start in cut_points:
            cut_points.discard(seg.start)
            parts.append(f'<span style="{CUT}" title="a chunk boundary cuts the needle here">✂</span>')
        piece = _esc(text[seg.start:seg.end])
        chunk_tags = [t for t in seg.tags if t.startswith("c")]
        needle_tags = [int(t[1:]) for t in seg.tags if t.startswith("n")]
        if needle_tags:
            qid, _, _, destroyed = needles[needle_tags[0]]
            style = DESTROYED if destroyed else INTACT
            what = "destroyed needle" if destroyed else "needle"
            piece = f'<mark style="{style}" title="{_esc(what)} {_esc(qid)}">{piece}</mark>'
        if len(chunk_tags) > 1:
            piece = f'<span style="{OVERLAP_BG}" title="overlap: in two chunks">{piece}</span>'
        elif chunk_tags:
            piece = f'<span style="{CHUNK_BG[int(chunk_tags[0][1:]) % 2]}">{piece}</span>'
        parts.append(piece)
    return _box("".join(parts), max_height=max_height, testid="chunk-map")


def pages_html(text: str, page_starts: Sequence[int] = (), *, max_height: int | None = 640,
               start: int = 0, end: int | None = None) -> str:
    """Canonical text ``text[start:end]``, escaped, with a marker at every page boundary (when the document has pages)."""
    end = len(text) if end is None else min(end, len(text))
    if not page_starts:
        return _box(_esc(text[start:end]), max_height=max_height, testid="document")
    parts = []
    bounds = list(page_starts) + [len(text)]
    if bounds[0] > start:
        parts.append(_esc(text[start: min(bounds[0], end)]))
    for n, (s, e) in enumerate(zip(bounds, bounds[1:]), 1):
        if s >= end or (e <= start and s < start):
            continue
        if s >= start:
            parts.append(f'<span style="{LABEL}">page {n} · char {s}</span>')
        parts.append(_esc(text[max(s, start): min(e, end)]))
    return _box("".join(parts), max_height=max_height, testid="document")
