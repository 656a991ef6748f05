"""HTML to Markdown-like canonical text (BeautifulSoup with the stdlib parser).

Headings become ``#`` lines (h1 ``#``, h2 ``##``, h3 ``###`` ...), so ``## ``
sections fall out of the page's own structure; when a page has several h1
(a single-page manual), every heading moves down one level and the page title
becomes the ``# `` line, so its top-level parts become ``## `` sections.
Paragraphs are separated by blank lines, lists become ``- `` / ``1. `` items,
tables become pipe tables, ``<pre>`` becomes a fenced code block.

Dropped: scripts, styles, templates, embedded objects, forms, comments,
``<nav>``, ``<aside>``, page-level ``<header>``/``<footer>`` (those inside an
``<article>`` or ``<main>`` belong to the content and are kept), elements with
a navigation/banner/contentinfo/search/complementary role, hidden elements
(``hidden``, ``aria-hidden="true"``, inline ``display: none``) and common
navigation classes (Sphinx sidebars and related bars, Texinfo node headers,
breadcrumbs, permalink anchors). Nothing is fetched or executed: the stdlib
parser resolves only HTML's own named character references.
"""

from __future__ import annotations

import re
from pathlib import Path

import bs4
from bs4 import BeautifulSoup
from bs4.element import Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag

from .base import ExtractionError, ExtractOptions, Extracted
from ._checks import Deadline, replacement_warning

VERSION = 1
EXTRACTOR = f"html/{VERSION}+bs4-{bs4.__version__}"

_SKIP_STRINGS: tuple[type, ...] = (Comment, Declaration, Doctype, ProcessingInstruction) + tuple(
    cls for cls in (getattr(bs4.element, n, None) for n in ("Script", "Stylesheet", "TemplateString")) if cls
)

_DROP_TAGS = {
    "script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed",
    "applet", "svg", "canvas", "audio", "video", "map", "form", "button", "select", "input",
    "textarea", "nav", "aside", "head", "title", "meta", "link", "base", "dialog",
}
_FURNITURE_TAGS = {"header", "footer"}
_DROP_ROLES = {"navigation", "banner", "contentinfo", "search", "complementary"}
_DROP_CLASSES = {
    "nav", "navbar", "navigation", "sidebar", "sphinxsidebar", "sphinxsidebarwrapper", "related",
    "breadcrumb", "breadcrumbs", "header", "footer", "nav-panel", "section-toc", "mini-toc", "toc",
    "menu", "skip-link", "headerlink", "copiable-anchor", "copiable-link",
}
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)

_BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hgroup", "hr", "html", "legend", "li", "main", "ol", "p", "pre", "section", "summary",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "menu", "listing", "xmp", "plaintext",
}
_HEADINGS = {f"h{i}": i for i in range(1, 7)}

_BR = "\ue000"  # stands for <br> until white space has been collapsed
_WS = re.compile(r"[^\S\ue000]+")
# Lines that would change meaning in the canonical text (headings, fences) are escaped.
_NEEDS_ESCAPE = re.compile(r"^( {0,3})(#{1,6}(?:\s|$)|`{3,}|~{3,})")


def _collapse(text: str) -> str:
    text = _WS.sub(" ", text)
    lines = [ln.strip() for ln in text.split(_BR)]
    return "\n".join(ln for ln in lines if ln)


def _escape(text: str) -> str:
    return "\n".join(_NEEDS_ESCAPE.sub(r"\1\\\2", ln) for ln in text.split("\n"))


def _dropped(tag: Tag) -> bool:
    name = tag.name
    if name in _DROP_TAGS:
        return True
    attrs = tag.attrs or {}
    if name in _FURNITURE_TAGS and tag.find_parent(["article", "main"]) is None:
        return True
    if str(attrs.get("role", "")).strip().lower() in _DROP_ROLES:
        return True
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).strip().lower() == "true":
        return True
    if _HIDDEN_STYLE.search(str(attrs.get("style", ""))):
        return True
    classes = attrs.get("class") or ()
    if isinstance(classes, str):
        classes = classes.split()
    return any(c.lower() in _DROP_CLASSES for c in classes)


def _fence_lang(tag: Tag) -> str:
    for node in (tag, tag.parent, tag.parent.parent if tag.parent is not None else None):
        if not isinstance(node, Tag):
            continue
        for c in node.get("class") or ():
            for prefix in ("language-", "lang-", "highlight-"):
                if c.startswith(prefix):
                    lang = c[len(prefix):]
                    if lang and lang not in ("default", "none", "text", "plaintext"):
                        return re.sub(r"[^A-Za-z0-9_+.#-]", "", lang)
    return ""


class _Converter:
    def __init__(self, deadline: Deadline, shift: int):
        self.deadline = deadline
        self.shift = shift
        self._steps = 0

    def _tick(self) -> None:
        self._steps += 1
        if self._steps % 200 == 0:
            self.deadline.check("converting HTML")

    # -- inline ---------------------------------------------------------
    def inline(self, node: Tag) -> str:
        """The inline text of ``node``'s children."""
        return "".join(self.inline_node(child) for child in node.children)

    def inline_node(self, node) -> str:
        if isinstance(node, NavigableString):
            return "" if isinstance(node, _SKIP_STRINGS) else str(node)
        if not isinstance(node, Tag):
            return ""
        name = node.name
        if name == "br":
            return _BR
        if name == "img":
            return ""
        if name in ("code", "kbd", "samp", "tt"):
            inner = " ".join(node.get_text().split())
            if not inner:
                return ""
            tick = "``" if "`" in inner else "`"
            pad = " " if inner.startswith("`") or inner.endswith("`") else ""
            return f"{tick}{pad}{inner}{pad}{tick}"
        if name in _BLOCK_TAGS:
            return " " + self.inline(node) + " "
        return self.inline(node)

    # -- blocks ---------------------------------------------------------
    def blocks(self, node: Tag) -> list[str]:
        """Block texts of ``node``'s children; runs of inline children form paragraphs."""
        out: list[str] = []
        buf: list[str] = []

        def flush() -> None:
            if buf:
                text = _collapse("".join(buf))
                buf.clear()
                if text:
                    out.append(_escape(text))

        for child in node.children:
            if isinstance(child, Tag) and child.name in _BLOCK_TAGS:
                flush()
                out.extend(self.block(child))
            else:
                buf.append(self.inline_node(child))
        flush()
        return out

    def block(self, tag: Tag) -> list[str]:
        self._tick()
        name = tag.name
        if name in _HEADINGS:
            text = " ".join(_collapse(self.inline(tag)).split())
            if not text:
                return []
            level = min(_HEADINGS[name] + self.shift, 6)
            return ["#" * level + " " + text]
        if name in ("pre", "listing", "xmp", "plaintext"):
            return self.pre(tag)
        if name == "table":
            return self.table(tag)
        if name in ("ul", "ol", "menu"):
            return self.list(tag)
        if name == "blockquote":
            inner = "\n\n".join(self.blocks(tag))
            if not inner:
                return []
            return ["\n".join(("> " + ln) if ln else ">" for ln in inner.split("\n"))]
        if name == "hr":
            return []
        return self.blocks(tag)

    def pre(self, tag: Tag) -> list[str]:
        parts: list[str] = []
        for node in tag.descendants:
            if isinstance(node, NavigableString) and not isinstance(node, _SKIP_STRINGS):
                parts.append(str(node))
            elif isinstance(node, Tag) and node.name == "br":
                parts.append("\n")
        code = "".join(parts).replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    ")
        code = "\n".join(ln.rstrip() for ln in code.split("\n")).strip("\n")
        if not code.strip():
            return []
        fence = "```"
        while fence in code:
            fence += "`"
        return [f"{fence}{_fence_lang(tag)}\n{code}\n{fence}"]

    def table(self, tag: Tag) -> list[str]:
        rows: list[list[str]] = []
        for tr in tag.find_all("tr"):
            if tr.find_parent("table") is not tag:
                continue
            cells = []
            for cell in tr.find_all(["td", "th"], recursive=False):
                text = " ".join(_collapse(self.inline(cell)).split())
                cells.append(text.replace("|", "\\|"))
            if any(cells):
                rows.append(cells)
        out: list[str] = []
        caption = tag.find("caption")
        if caption is not None and caption.find_parent("table") is tag:
            cap = _collapse(self.inline(caption))
            if cap:
                out.append(_escape(cap))
        if not rows:
            return out
        width = max(len(r) for r in rows)
        lines = []
        for i, row in enumerate(rows):
            row = row + [""] * (width - len(row))
            lines.append("| " + " | ".join(row) + " |")
            if i == 0:
                lines.append("|" + "|".join([" --- "] * width) + "|")
        out.append("\n".join(lines))
        return out

    def list(self, tag: Tag) -> list[str]:
        ordered = tag.name == "ol"
        try:
            n = int(tag.get("start", 1)) if ordered else 1
        except ValueError:
            n = 1
        items: list[str] = []
        for li in tag.find_all("li", recursive=False):
            body = "\n".join(self.blocks(li))
            if not body.strip():
                continue
            marker = f"{n}. " if ordered else "- "
            n += 1
            pad = " " * len(marker)
            lines = body.split("\n")
            items.append("\n".join([marker + lines[0]] + [(pad + ln) if ln else "" for ln in lines[1:]]))
        return ["\n".join(items)] if items else []


def _drop_furniture(soup: BeautifulSoup) -> None:
    """Remove dropped elements, top-down, without looking inside removed subtrees."""
    stack: list[Tag] = [soup]
    while stack:
        node = stack.pop()
        for child in list(node.children):
            if isinstance(child, Tag):
                if _dropped(child):
                    child.decompose()
                else:
                    stack.append(child)
            elif isinstance(child, _SKIP_STRINGS):
                child.extract()


def _title(soup: BeautifulSoup) -> str:
    t = soup.find("title")
    return " ".join(t.get_text().split()) if t is not None else ""


def extract_html(path: Path, data: bytes, options: ExtractOptions) -> Extracted:
    """Canonical text of an HTML page (see the module docstring); :class:`ExtractionError` with a reason."""
    if not data.strip():
        raise ExtractionError("empty file")
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ExtractionError("binary content (NUL bytes) in an HTML file")
    deadline = Deadline(options.time_limit_s)
    try:
        soup = BeautifulSoup(data, "html.parser")
    except Exception as exc:  # the stdlib parser is lenient; anything here is exotic
        raise ExtractionError(f"cannot parse HTML: {exc}") from None
    deadline.check("parsing HTML")
    title = _title(soup)
    try:
        _drop_furniture(soup)
        deadline.check("removing navigation")
        h1 = [" ".join(h.get_text().split()) for h in soup.find_all("h1")]
        h1 = [h for h in h1 if h]
        # One h1: it is the title. None or several: the page title becomes the "# " line
        # (and with several, every heading moves down a level so parts become sections).
        shift = 1 if len(h1) > 1 else 0
        title_line = len(h1) != 1 and bool(title or h1)
        if len(h1) == 1 or not title:
            title = h1[0] if h1 else title
        root = soup.body or soup
        blocks = _Converter(deadline, shift).blocks(root)
    except RecursionError:
        raise ExtractionError("HTML nested too deeply to convert") from None
    if not blocks:
        raise ExtractionError("no text in the HTML after removing navigation, scripts and styles")
    body_chars = sum(len(b) for b in blocks)
    if title_line:
        blocks.insert(0, "# " + title)
    text = "\n\n".join(blocks) + "\n"
    warnings = []
    w = replacement_warning(text)
    if w:
        warnings.append(w)
    if len(data) > 20_000 and body_chars < 500:
        warnings.append(
            f"little text ({body_chars} characters from {len(data):,} bytes of HTML): "
            "the page may build its content with JavaScript, which is never run"
        )
    return Extracted(text=text, kind="html", extractor=EXTRACTOR, warnings=tuple(warnings), title=title)
