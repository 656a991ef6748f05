"""One way to say a number: every percentage and every cut a person reads is written by ``ragdiag.core.words``.

Walks the f-strings of ``ragdiag/``, ``ui/`` and ``app_pages/`` with :mod:`ast` and fails on a number formatted by hand
where a function of ``core/words.py`` writes it: a percent format spec (``{x:.0%}``), a share times 100 printed as a
percentage or a range of them (``{100 * x:.1f}%``, ``{100 * lo:.0f}–{100 * hi:.0f}%``), a difference in
points with its sign (``{100 * d:+.0f}``), a cut with a format spec
(``{cut:.3f}``: :func:`~ragdiag.core.words.cut_text` rounds a cut down, so that typing it back gives the same
rates). And no name means two things: ``pct`` and ``points`` are defined at most once.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("ragdiag", "ui", "app_pages")
#: Where the formats are defined: the words themselves, and the cut's own text (``core/gate.py``'s ``cut_text``).
HOME = {"ragdiag/core/words.py", "ragdiag/core/gate.py"}
#: What truly must differ, as (file, the f-string field's source). Each is machine-readable or printed exactly on
#: purpose, and must not change:
ALLOWED = {
    # ``gate`` prints an in-sample cut that sits on an off-topic query's distance with 4 decimals, exactly, and
    # says so: rounding it down to 3 would move it past that distance
    ("ragdiag/cli/gate.py", "choice.cut"),
    # the dot chart's hover text in the caller's own units (x_format: points of a difference, a latency)
    ("ragdiag/core/svg.py", "x_format(d.low)"),
}
#: A field naming an interval's lower end (``low``, ``lo``, ``x.low``, ``c['low']``, ``median_low_ms`` not: a latency).
LOW = re.compile(r"(?:^|[^\w])(?:low|lo)\b|\['low'\]")


def _is_hundred(node: ast.AST) -> bool:
    """``100 * x``, ``x * 100`` or ``100 * x / y``: a share turned into percent by hand."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _is_hundred(node.left)
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
            and any(isinstance(s, ast.Constant) and s.value == 100 for s in (node.left, node.right)))


def _spec(value: ast.FormattedValue) -> str:
    if value.format_spec is None:
        return ""
    return "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in value.format_spec.values)


def _next_text(parts: list, i: int) -> str:
    nxt = parts[i + 1] if i + 1 < len(parts) else None
    return nxt.value if isinstance(nxt, ast.Constant) and isinstance(nxt.value, str) else ""


def _prev_text(parts: list, i: int) -> str:
    prev = parts[i - 1] if i > 0 else None
    return prev.value if isinstance(prev, ast.Constant) and isinstance(prev.value, str) else ""


def by_hand(source: str) -> list[tuple[int, str, str]]:
    """Each number formatted by hand in ``source``: ``(line, field source, why)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.JoinedStr):
            continue
        parts = node.values
        for i, part in enumerate(parts):
            if not isinstance(part, ast.FormattedValue):
                continue
            spec, text = _spec(part), ast.unparse(part.value)
            if spec.endswith("%"):
                found.append((part.value.lineno, text, f"percent format spec :{spec}"))
            elif _is_hundred(part.value) and spec[-1:] in ("f", "g") and _next_text(parts, i)[:1] in ("%", "–"):
                found.append((part.value.lineno, text, f"a percentage by hand :{spec}"))
            elif _is_hundred(part.value) and spec.startswith("+"):
                found.append((part.value.lineno, text, f"a difference in points by hand :{spec}"))
            elif "cut" in text.lower() and spec and spec[-1:] in ("f", "g", "e"):
                found.append((part.value.lineno, text, f"a cut by hand :{spec} (cut_text)"))
            elif (_prev_text(parts, i).endswith("[") and not text.endswith("start")  # "[start, end)": offsets
                  and (LOW.search(text) or _next_text(parts, i).startswith(","))):
                found.append((part.value.lineno, text, f"an interval in brackets by hand :{spec} (rate_text, "
                                                       f"difference_text, value_interval)"))
    return found


def _files():
    for folder in FOLDERS:
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_the_detector_sees_each_shape():
    """The walk itself, on hand-written lines: each shape found once, the words' own calls and other numbers not."""
    src = '\n'.join([
        'a = f"{x:.0%}"', 'b = f"{share:.1%} of the corpus"', 'c = f"{100 * x:.1f}%"',
        'd = f"({100 * lo:.0f}–{100 * hi:.0f}%)"', 'e = f"{100 * n / max(q, 1):.0f}%"', 'f = f"cut {cut:.3f}"',
        'g = f"at {rec.runner_up_cut:.3f}"', 'h = f"cut {c[\'cut\']:g}"',
        # not by hand: the words' functions, a distance, a count, a goal's points; then a signed difference by hand
        'i = f"{pct(x)} {cut_text(cut)} {d:.3f} {n:,} {100 * m:g} points"',
        'j = f"{100 * d:+.1f} points"'])
    found = [(line, why.split(" :")[0]) for line, _, why in by_hand(src)]
    assert found == [(1, "percent format spec"), (2, "percent format spec"), (3, "a percentage by hand"),
                     (4, "a percentage by hand"), (4, "a percentage by hand"), (5, "a percentage by hand"),
                     (6, "a cut by hand"), (7, "a cut by hand"), (8, "a cut by hand"),
                     (10, "a difference in points by hand")]


def test_the_detector_sees_an_interval_in_brackets():
    """The bracket shapes of an interval are found: a rate's ("36 (56% [44, 68])", "0.55 [0.42, 0.67]",
    "10.0% [2.1%, 26.5%]"), a signed difference's ("+0.031 [-0.012, +0.074]") and a latency's; a bracketed word
    is not."""
    src = '\n'.join([
        'a = f"{count} ({pct(c.rate)} [{100 * c.low:.0f}, {100 * c.high:.0f}])"',
        'b = f"{iv.estimate:.2f} [{iv.low:.2f}, {iv.high:.2f}]"',
        'c = f"{pct(iv.estimate, 1)} [{pct(iv.low, 1)}, {pct(iv.high, 1)}]"',
        'd = f"{pct(c[\'rate\'])} [{100 * c[\'low\']:.0f}, {100 * c[\'high\']:.0f}]"',
        'e = f"{float(est):.3f} [{float(lo):.3f}, {float(hi):.3f}]"',
        'f = f"{d[\'estimate\']:+.3f} [{d[\'low\']:+.3f}, {d[\'high\']:+.3f}]"',
        'g = f"{c.median_ms:.1f} [{c.median_low_ms:.1f}, {c.median_high_ms:.1f}]"',
        'h = f"{rate_text(cell)} [{below}]"', 'i = f"{doc} [{d.start}, {d.end})"'])
    found = sorted({line for line, _, why in by_hand(src) if why.startswith("an interval in brackets")})
    assert found == [1, 2, 3, 4, 5, 6, 7]


def test_no_percentage_or_cut_is_formatted_by_hand():
    """Outside ``core/words.py`` (and the cut's own ``cut_text``), every percentage and cut goes through the words."""
    bad, used = [], set()
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        if rel in HOME:
            continue
        for line, text, why in by_hand(path.read_text(encoding="utf-8")):
            if (rel, text) in ALLOWED:
                used.add((rel, text))
                continue
            bad.append(f"{rel}:{line}: {{{text}}}: {why}")
    assert not bad, "format these with ragdiag.core.words (pct, pct_span, interval, rate_text, cut_text):\n" + \
        "\n".join(bad)
    assert used == ALLOWED, f"allowlist entries that no longer match anything: {sorted(ALLOWED - used)}"


def test_pct_and_points_are_defined_once():
    """No homonyms: ``pct`` (a share as a percentage) is defined in ``core/words.py`` alone, ``points`` nowhere
    twice; ``ui.fmt`` hands on the library's functions rather than defining its own of the same name."""
    defined: dict[str, list[str]] = {"pct": [], "points": []}
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in defined:
                defined[node.name].append(path.relative_to(ROOT).as_posix())
    assert defined["pct"] == ["ragdiag/core/words.py"], defined
    assert len(defined["points"]) <= 1, defined

    import ui.fmt
    from ragdiag.core import words

    assert ui.fmt.pct is words.pct and ui.fmt.interval is words.interval


def test_one_writer_says_ship():
    """The recommendation's headline ("Ship ... at strictness 0.524") is written by ``core.words.ship_headline``
    alone: the Summary, Compare (``Recommendation.sentence``), the CLI and the report call it."""
    writers = []
    for path in _files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings say "Ship" as a verb
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and id(node) not in docs and isinstance(node.value, str)
                    and node.value.startswith("Ship ")):
                writers.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(writers)) == ["ragdiag/core/words.py"], writers

    from ragdiag.core.words import ship_headline

    assert ship_headline("E/hybrid", 0.52499) == "Ship E/hybrid at strictness 0.524"  # rounded down, as cut_text
    assert ship_headline("E/hybrid", 0.5, how="score >= 2") == "Ship E/hybrid, score >= 2"
