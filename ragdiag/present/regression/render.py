"""The gate's report as Markdown (a pull-request comment, a CI job summary) and as JUnit XML.

JUnit: one ``testcase`` per check in one ``testsuite`` named ``ragdiag gate``.
A failing check has a ``failure`` element (message: the check's sentence; text:
the questions lost); an inconclusive one a ``skipped`` element with the same
message (CI shows it as neither passed nor failed; ``strict`` makes it a
``failure``); every case carries its sentence in ``system-out``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .checks import Check, GateReport
from ...core.words import pct

__all__ = ["gate_markdown", "gate_junit", "is_gate_output", "MARKDOWN_TITLE", "JUNIT_SUITE"]

_ICON = {"pass": "✅ pass", "fail": "❌ fail", "inconclusive": "⚠️ inconclusive"}
#: The first words of every Markdown summary (how ``gate --markdown`` knows a file it may replace).
MARKDOWN_TITLE = "## ragdiag gate:"
#: The JUnit suite's name (how ``gate --junit`` knows a file it may replace).
JUNIT_SUITE = "ragdiag gate"
# Characters XML 1.0 cannot hold at all (even escaped): C0 controls but tab, newline and return; U+FFFE/U+FFFF;
# lone surrogates. Dropped, as are the C1 controls and DEL, which no reader shows.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def is_gate_output(head: str) -> bool:
    """Whether a file's first bytes are a summary or a JUnit file ``gate`` wrote (so it may be replaced).

    >>> is_gate_output("## ragdiag gate: ✅ pass"), is_gate_output("# my notes")
    (True, False)
    """
    return head.startswith(MARKDOWN_TITLE) or (head.startswith("<?xml")
                                                and f'<testsuite name="{JUNIT_SUITE}"' in head[:500])


def _xml(text) -> str:
    r"""Text an XML 1.0 file can hold: the characters it cannot (control characters) dropped.

    >>> _xml("what\x1b[31m is\x00 it")
    'what[31m is it'
    """
    return _NOT_XML.sub("", str(text))


def _md(text: str) -> str:
    r"""Text for a Markdown table cell or list item: control characters dropped, pipes and newlines escaped,
    markup characters neutralised.

    >>> _md("![x](http://e.example/p.png) a|b\x07")
    '!\\[x\\](http://e.example/p.png) a\\|b'
    """
    out = " ".join(_xml(text).split())
    for ch in "\\`*_[]<|":
        out = out.replace(ch, "\\" + ch)
    return out


def _code(text: str) -> str:
    """Text for inside a code span: only letters, digits and ``./-_`` kept (a hash, a configuration label)."""
    return re.sub(r"[^0-9A-Za-z./_-]", "", str(text))


def _items(title: str, items) -> list[str]:
    if not items:
        return []
    lines = [f"**{_md(title)}** ({len(items)}):", ""]
    for i in items:
        where = f" — {_md(i.where)}" if i.where else ""
        lines.append(f"- **{_md(i.id)}** {_md(i.text)}{where}")
    return lines + [""]


def _lost_title(c: Check) -> tuple[str, str]:
    if c.name == "destroyed needles":
        return "Newly destroyed (where the cut fell)", "Destroyed in the baseline, whole now"
    if c.name == "bluffs":
        return "Newly bluffing (out-of-domain queries now given sources)", "No longer bluffing"
    return f"Newly lost ({c.metric})", f"Newly found ({c.metric})"


def gate_markdown(report: GateReport) -> str:
    """The report as GitHub-flavoured Markdown: the verdict first, then each check, the queries lost and found."""
    r = report
    verdict = _ICON[r.verdict] + (" (strict: counted as a failure)" if r.verdict == "inconclusive" and r.strict
                                  else "")
    lines = [f"## ragdiag gate: {verdict}", "",
             f"`{_code(r.candidate.config)}` ({_md(r.candidate.source)}) against the baseline "
             f"`{_code(r.baseline.config)}` ({_md(r.baseline.source)}): {r.baseline.questions} questions, "
             f"one-sided α = {r.alpha:g}, margin {100 * r.margin:g} points, cut {_md(r.cut_in_words)}, keep {r.keep}.", "",
             "| check | baseline | candidate | verdict |", "|---|---:|---:|---|"]
    for c in r.checks:
        fmt = (lambda v: f"{v:g}") if c.test is None else (lambda v: f"{pct(v, 1)}")
        lines.append(f"| {_md(c.metric)} | {fmt(c.baseline)} | {fmt(c.candidate)} | {_ICON[c.verdict]} |")
    lines.append("")
    for c in r.checks:  # a check's name, metric and sentence can carry a tag from the data: escaped like the rest
        lines += [f"### {_md(c.name)}: {c.verdict}", "", _md(c.sentence), ""]
        lost, found = _lost_title(c)
        lines += _items(lost, c.lost) + _items(found, c.found)
    lines += ["<details><summary>About this comparison</summary>", ""]
    lines.append("- what changed: " + ("; ".join(_md(c) for c in r.changes) if r.changes else "nothing in the stamps"))
    lines.append(f"- ground truth sha256 `{_code(r.baseline.truth_sha256[:16])}` ({_md(r.baseline.truth_source)})")
    lines.append(f"- model: {_md(r.candidate.model.get('model', '?'))}")
    lines += [f"- {_md(n)}" for n in r.notes]
    lines += ["- exit codes: 0 pass, 1 fail, 3 inconclusive (1 with --strict), 2 could not compare", "",
              "</details>", ""]
    return "\n".join(lines)


def gate_junit(report: GateReport) -> str:
    """The report as JUnit XML: one ``testcase`` per check (see the module notes for the mapping)."""
    r = report
    failures = sum(c.verdict == "fail" or (c.verdict == "inconclusive" and r.strict) for c in r.checks)
    skipped = sum(c.verdict == "inconclusive" and not r.strict for c in r.checks)
    suite = ET.Element("testsuite", name=JUNIT_SUITE, tests=str(len(r.checks)), failures=str(failures),
                       errors="0", skipped=str(skipped))
    for c in r.checks:
        case = ET.SubElement(suite, "testcase", classname=_xml(f"ragdiag.gate.{r.candidate.config}"), name=c.name)
        body = _xml("\n".join(f"{i.id}: {i.text}" + (f" ({i.where})" if i.where else "") for i in c.lost))
        sentence = _xml(c.sentence)
        if c.verdict == "fail" or (c.verdict == "inconclusive" and r.strict):
            el = ET.SubElement(case, "failure", message=sentence, type=c.verdict)
            el.text = body or sentence
        elif c.verdict == "inconclusive":
            ET.SubElement(case, "skipped", message=sentence)
        out = ET.SubElement(case, "system-out")
        out.text = sentence + ("\nlost:\n" + body if body else "")
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
