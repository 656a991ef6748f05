"""A shareable report of one run: one self-contained HTML file and its Markdown twin.

:func:`build_report` gathers the numbers from the library (``summary_rows``,
``summary_document``, ``pairwise``/``compare``, ``sweep_table``, ``bluffs_at``,
``chunking_rows``) into a frozen :class:`Report`; :meth:`Report.to_html` and
:meth:`Report.to_markdown` only format them, so a figure in the report is the
figure the CLI prints and ``summary.json`` holds.

The HTML needs no network to open: styles are inline, charts are inline SVG
(:mod:`ragdiag.svg`), there are no scripts, links, fonts or images to fetch.
Corpus and query text are untrusted: every piece of it is escaped
(``html.escape`` in the HTML; Markdown-significant characters backslash-escaped
in the Markdown), never injected raw.
"""

from __future__ import annotations

import datetime as _dt
import html
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from .evaluate import Config, Evaluation
from .rows import RateCell, RateRow, SummaryRow, SweepRow, summary_rows
from .metrics import KS
from .results import chunking_rows, compare, family, gate_inputs_for, summary_document, sweep_table
from .svg import IntervalSeries, Line, interval_chart, line_chart
from .threshold import DEFAULT_KEEP, GATE_DISTANCE, Goal, bluffs_at, cut_choice, default_cuts, rate_rows

__all__ = ["ALPHA", "PairRow", "DestroyedNeedle", "BluffRow", "Report", "build_report", "default_config",
           "write_report"]

from .defaults import ALPHA, DEFAULT_MAX_BLUFF, PREFERRED_CONFIGS, PRIMARY_K
LIST_ALL_UP_TO = 6  # at most this many indistinguishable pairs get a sentence each; more are counted


# ---------------------------------------------------------------------------
# structured data
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PairRow:
    """One paired comparison of the family: ``a`` against ``b`` at R@k, raw and Holm-adjusted p."""

    a: str
    b: str
    k: int
    wins: int
    losses: int
    ties: int
    p: float
    p_holm: float
    verdict: str = ""  # Comparison.verdict: the one rule and words (ragdiag.compare.verdict)
    status: str = ""  # "different", "not shown different" or "descriptive"

    @property
    def survives(self) -> bool:
        """Shown different after Holm correction within the family (adjusted p < ``ALPHA``, primary k)."""
        return self.status == "different" if self.status else self.p_holm < ALPHA

    @property
    def n(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def better(self) -> str:
        return self.a if self.wins >= self.losses else self.b

    @property
    def worse(self) -> str:
        return self.b if self.wins >= self.losses else self.a

    def sentence(self) -> str:
        return f"{self.verdict} (+{self.wins}/-{self.losses} questions, raw p = {_p(self.p)})."


@dataclass(frozen=True)
class DestroyedNeedle:
    """A needle no chunk of ``strategy`` holds whole; ``cuts`` are document offsets inside it."""

    strategy: str
    question_id: str
    doc_id: str
    section: str
    start: int
    end: int
    cuts: tuple[int, ...]
    needle: str

    def cut_groups(self) -> list[tuple[int, ...]]:
        """The cuts, one group per place: a chunk end and the next chunk's start with only
        whitespace between them (trimmed away by the chunker) are one cut."""
        groups: list[list[int]] = []
        for c in self.cuts:
            if groups and not self.needle[groups[-1][-1] - self.start:c - self.start].strip():
                groups[-1].append(c)
            else:
                groups.append([c])
        return [tuple(g) for g in groups]

    @property
    def where(self) -> str:
        """Where the cut(s) fell: characters of the needle before each cut, and the document offsets."""
        groups = self.cut_groups()
        rel = ", ".join(str(g[0] - self.start) for g in groups)
        offsets = ", ".join("/".join(map(str, g)) for g in groups)
        return f"after character {rel} of {self.end - self.start} (document offset {offsets})"

    def pieces(self) -> list[str]:
        """The needle split at each cut."""
        bounds = [0, *(g[0] - self.start for g in self.cut_groups()), len(self.needle)]
        return [self.needle[a:b] for a, b in zip(bounds, bounds[1:])]


@dataclass(frozen=True)
class BluffRow:
    """An out-of-domain query that still gets sources at the cut, with its closest kept chunk."""

    query_id: str
    kind: str
    text: str
    chunk_id: str
    doc_id: str
    section: str
    distance: float
    kept: int


@dataclass(frozen=True)
class Report:
    """Everything the report shows, computed by the library; ``to_html``/``to_markdown`` only format it."""

    config: Config
    cut: float
    keep: int
    k: int
    generated: str
    provenance: dict
    rows: tuple[SummaryRow, ...]  # summary_rows(ev)
    chart_configs: tuple[str, ...]
    pairs: tuple[PairRow, ...]  # the whole family, Holm over all of it
    competitor: str | None
    headline: str  # Comparison.verdict of the chosen config against its best competitor
    n_in: int
    n_ood: int
    n_questions: int
    destroyed: tuple[DestroyedNeedle, ...]
    destroyed_counts: dict  # strategy -> destroyed needles (zeros included)
    sweep_row: SweepRow  # SweepTable.row(cut)
    curve: dict  # cuts, answered, kept_wrong, refused, bluffs (tuples)
    bluffs: tuple[BluffRow, ...]
    chunking: tuple[dict, ...]
    ranking: tuple[dict, ...]  # per configuration: seconds, ms per query
    timings: dict
    unavailable: dict = field(default_factory=dict)
    diag: object | None = None  # ragdiag.report_diag.DiagSections: funnel, hubs, cost
    notes: tuple[str, ...] = ()  # Evaluation.notes: e.g. queries BM25 cannot match
    rates: RateRow | None = None  # threshold.rate_rows at the cut
    ood_kinds: dict = field(default_factory=dict)  # ood kind -> queries
    choice: dict = field(default_factory=dict)  # threshold.CutChoice.as_json() for the default goal
    headline_power: str = ""  # the questions needed to detect the headline difference (compare.power_words)

    # -- derived ------------------------------------------------------------

    @property
    def row(self) -> SummaryRow:
        """The summary row of the chosen configuration."""
        return next(r for r in self.rows if r.config == self.config.label)

    @property
    def survivors(self) -> tuple[PairRow, ...]:
        return tuple(sorted((p for p in self.pairs if p.survives), key=lambda p: (p.p_holm, p.better, p.worse)))

    @property
    def indistinguishable(self) -> tuple[PairRow, ...]:
        return tuple(p for p in self.pairs if not p.survives)

    def family_sentence(self) -> str:
        m, s = len(self.pairs), len(self.survivors)
        if m == 0:
            return "Only one configuration was evaluated: there is nothing to compare."
        rest = m - s
        nq = self.pairs[0].n
        head = (f"{m} pair{'s' if m != 1 else ''} of configurations were tested at R@{self.k} on the same "
                f"{nq} questions ({self.n_in} queries; exact two-sided sign-flip test over questions, Holm "
                f"correction over all {m}).")
        if s == 0:
            return head + f" None survives the correction: all {m} are not shown different on these {nq} questions."
        return head + (f" {s} survive{'s' if s == 1 else ''}; the other {rest} "
                       f"{'is' if rest == 1 else 'are'} not shown different on these {nq} questions."
                       if rest else f" All {m} survive.")

    def _cut_text(self) -> str:
        return f"{self.cut:g}"

    def _chart_series(self) -> list[IntervalSeries]:
        out = []
        for label in self.chart_configs:
            r = next(x for x in self.rows if x.config == label)
            ivs = [r.recall[k] for k in KS]
            out.append(IntervalSeries(label, [i.estimate for i in ivs], [i.low for i in ivs], [i.high for i in ivs]))
        return out

    def recall_svg(self) -> str:
        return interval_chart([f"R@{k}" for k in KS], self._chart_series(),
                              label=f"Recall at k with 95% intervals over questions: {', '.join(self.chart_configs)}",
                              y_label="recall", width=960, height=300)

    def curve_svg(self) -> str:
        c = self.curve
        n_in, n_ood = max(self.n_in, 1), self.n_ood
        lines = [
            Line(f"answered (of {self.n_in})", [v / n_in for v in c["answered"]]),
            Line(f"kept but wrong (of {self.n_in})", [v / n_in for v in c["kept_wrong"]]),
            Line(f"refused (of {self.n_in})", [v / n_in for v in c["refused"]]),
        ]
        if n_ood:
            lines.append(Line(f"bluffs (of {n_ood})", [v / n_ood for v in c["bluffs"]]))
        r = self.sweep_row
        mark = f"cut {self._cut_text()}: {r.answered} answered, {_plural(r.bluffs, 'bluff')}"
        return line_chart(c["cuts"], lines, label=f"Abstention trade-off of {self.config.label} (keep {self.keep})",
                          x_label="cut (cosine distance)", y_label="share of queries", marker=self.cut,
                          marker_label=mark, width=960, height=340)

    def to_html(self) -> str:
        return _render_html(self)

    def to_markdown(self) -> str:
        return _render_markdown(self)


# ---------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------


def default_config(ev: Evaluation) -> Config:
    """The configuration a report is about when none is named: the first of ``PREFERRED_CONFIGS``
    evaluated, else the first hybrid configuration, else the first evaluated one (a fixed rule, not the best scorer)."""
    if not ev.results:
        raise ValueError("nothing was evaluated")
    for label in PREFERRED_CONFIGS:
        if Config.parse(label) in ev.results:
            return Config.parse(label)
    return next((c for c in ev.results if c.retriever == "hybrid"), next(iter(ev.results)))


def _competitor(rows: Sequence[SummaryRow], chosen: str, k: int) -> str | None:
    """The best other configuration: highest R@k (R@20 when k is not a table column), then MRR, then name."""
    key = k if k in KS else 20
    others = [r for r in rows if r.config != chosen]
    if not others:
        return None

    def score(r):
        est, mrr = r.recall[key].estimate, r.mrr.estimate
        return (-(est if est == est else -1.0), -(mrr if mrr == mrr else -1.0), r.config)

    return min(others, key=score).config


def build_report(ev: Evaluation, *, config: Config | str, cut: float, keep: int = DEFAULT_KEEP,
                 k: int = PRIMARY_K, costs=None, machine: dict | None = None) -> Report:
    """Gather the report of ``ev`` about ``config`` with the abstention gate at ``cut`` (keep ``keep``).

    Paired comparisons are at R@``k`` (default the primary k) over every pair of evaluated
    configurations, Holm-corrected over that family. The funnel, hub and cost
    sections come from :func:`ragdiag.report_diag.diag_sections` (``costs``:
    :func:`ragdiag.cost.costs` rows when measured). Raises ``ValueError`` for a
    configuration that was not evaluated, a cut outside (0, 2] or a bad ``keep``.
    """
    cfg = Config.parse(config) if isinstance(config, str) else config
    if cfg not in ev.results:
        reason = ev.unavailable.get(cfg.retriever)
        known = ", ".join(c.label for c in ev.results)
        raise ValueError(f"{cfg.label} was not evaluated" + (f" ({reason})" if reason else f"; evaluated: {known}"))
    cut = float(cut)
    if not 0.0 < cut <= 2.0:
        raise ValueError(f"cut must be a cosine distance in (0, 2], got {cut}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")

    doc = summary_document(ev)
    provenance = {key: doc[key] for key in ("ragdiag_version", "pipeline_version", "model", "versions", "corpus",
                                            "truth", "diagnosis_k")}
    kinds: dict[str, int] = {}
    for o in ev.truth.ood:
        kinds[o.kind] = kinds.get(o.kind, 0) + 1
    provenance["truth"] = {**provenance["truth"], "phrasings": list(ev.truth.phrasings), "ood_kinds": kinds}
    provenance["normalisation_error"] = doc["normalisation_error"]

    rows = tuple(summary_rows(ev))
    fam = family(ev, k=k)
    pairs = tuple(PairRow(c.a.label, c.b.label, k, c.test.wins, c.test.losses, c.test.ties, c.test.p, c.p_holm,
                          c.verdict, c.status) for c in fam)
    competitor = _competitor(rows, cfg.label, k)
    if competitor is None:
        headline = f"{cfg.label} is the only configuration evaluated: there is no competitor to compare it with."
        headline_power = ""
    else:  # the same rule and words as the dashboard and the CLI: Holm within the family shown (all pairs)
        ccfg = Config.parse(competitor)
        pair = next(c for c in fam if {c.a, c.b} == {cfg, ccfg})
        if pair.a != cfg:
            pair = replace(compare(ev, cfg, ccfg, k=k), p_holm=pair.p_holm, family=pair.family,
                           family_name=pair.family_name)
        headline = pair.verdict
        headline_power = pair.power

    destroyed, counts = [], {}
    for name, idx in ev.indexes.items():
        counts[name] = len(idx.report.destroyed)
        for d in idx.report.destroyed:
            q = ev.truth.question(d.question_id)
            destroyed.append(DestroyedNeedle(name, d.question_id, d.doc_id, q.section, d.start, d.end,
                                             tuple(int(c) for c in d.cuts), q.needle))

    row = sweep_table(ev, cfg, keep=keep, cuts=[cut]).row(cut)
    inputs = gate_inputs_for(ev, cfg, keep=keep)
    rates = rate_rows(inputs, [cut])[0]
    choice = cut_choice(inputs, Goal(max_bluff=DEFAULT_MAX_BLUFF)).as_json()
    cuts = default_cuts()
    if cut > cuts[-1]:
        cuts = np.round(np.arange(0.0, cut + 0.0025, 0.005), 6)
    table = sweep_table(ev, cfg, keep=keep, cuts=cuts)
    curve = {"cuts": tuple(float(c) for c in table.cuts), "answered": tuple(int(v) for v in table.answered),
             "kept_wrong": tuple(int(v) for v in table.kept_wrong), "refused": tuple(int(v) for v in table.refused),
             "bluffs": tuple(int(v) for v in table.bluffs)}

    res = ev.result(cfg)
    chunks = ev.indexes[cfg.strategy].chunks
    bluffs = []
    for b in bluffs_at(res, ev.queries, cut=cut, keep=keep):
        pos, dist = b.kept[0]
        c = chunks[pos]
        q = ev.queries[ev.query_index(b.query_id)]
        bluffs.append(BluffRow(b.query_id, b.kind or "", q.text, c.id, c.doc_id, c.section or c.header, float(dist),
                               len(b.kept)))

    chunking = []
    for r in chunking_rows(ev):
        r = r.cells()
        r["index_seconds"] = ev.timings.get(f"index_{r['strategy']}")
        chunking.append(r)
    nq = max(len(ev.queries), 1)
    ranking = tuple({"config": c.label, "seconds": r.seconds, "ms_per_query": 1000.0 * r.seconds / nq}
                    for c, r in ev.results.items())

    return Report(
        config=cfg,
        cut=cut,
        keep=keep,
        k=k,
        generated=_dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        provenance=provenance,
        rows=rows,
        chart_configs=(cfg.label,) + ((competitor,) if competitor else ()),
        pairs=pairs,
        competitor=competitor,
        headline=headline,
        n_in=table.n_in,
        n_ood=table.n_ood,
        n_questions=len(ev.truth.questions),
        destroyed=tuple(destroyed),
        destroyed_counts=counts,
        sweep_row=row,
        curve=curve,
        bluffs=tuple(bluffs),
        chunking=tuple(chunking),
        ranking=ranking,
        timings={key: float(v) for key, v in ev.timings.items()},
        unavailable=dict(ev.unavailable),
        diag=_diag_sections(ev, cfg, cut=cut, keep=keep, costs=costs, machine=machine),
        notes=tuple(getattr(ev, "notes", {}).values()),
        rates=rates,
        ood_kinds=dict(table.n_by_kind),
        choice=choice,
        headline_power=headline_power,
    )


def _diag_sections(ev, cfg, **kw):
    from .report_diag import diag_sections

    return diag_sections(ev, cfg, **kw)


MARKDOWN_SIGNATURE = "# ragdiag retrieval report:"


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


def write_report(report: Report, out: str | Path, *, md: str | Path | None = None) -> list[str]:
    """Write ``out`` (HTML) and the Markdown (``md``, default: beside it, see :func:`markdown_twin`)."""
    out = Path(out)
    md = markdown_twin(out, md)
    out.parent.mkdir(parents=True, exist_ok=True)
    md.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report.to_html(), encoding="utf-8")
    md.write_text(report.to_markdown(), encoding="utf-8")
    return [str(out), str(md)]


# ---------------------------------------------------------------------------
# formatting helpers
# ---------------------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _p(p: float) -> str:
    return f"{p:.3g}"


def _f3(x) -> str:
    return "n/a" if x is None or x != x else f"{x:.3f}"


def _pct(x) -> str:
    return "n/a" if x is None or x != x else f"{100 * x:.1f}%"


def _int(x) -> str:
    return f"{int(x):,}"


def _secs(x) -> str:
    if x is None:
        return "n/a"
    return f"{x:.2f} s" if x >= 0.1 else f"{1000 * x:.1f} ms"


_TIMING_NAMES = {"embed_queries": "embedding the queries", "total": "whole evaluation"}


def _timing_name(key: str) -> str:
    if key.startswith("index_"):
        return f"indexing strategy {key[6:]} (chunk, audit, embed)"
    return _TIMING_NAMES.get(key, key.replace("_", " "))


class _Raw(str):
    """Markup we built ourselves from escaped pieces: the table helpers do not escape it again."""


def _h(text) -> str:
    return text if isinstance(text, _Raw) else html.escape(str(text), quote=True)


_MD_SPECIAL = set("\\`*_[]<>|~$&#!")


def _m(text) -> str:
    """Untrusted text for a Markdown table cell or line: one line, Markdown/HTML characters escaped."""
    s = " ".join(str(text).split())
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in s)


_NUM = ' class="num"'


def _html_table(headers: Sequence[str], rows: Sequence[Sequence], *, numeric: Sequence[int] = (),
                row_class: Sequence[str] | None = None, table_id: str = "") -> str:
    num = set(numeric)
    tid = f' id="{_h(table_id)}"' if table_id else ""
    out = [f"<table{tid}><thead><tr>"]
    out += [f"<th{_NUM if i in num else ''}>{_h(h)}</th>" for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for ri, r in enumerate(rows):
        cls = row_class[ri] if row_class and row_class[ri] else ""
        out.append(f'<tr class="{cls}">' if cls else "<tr>")
        out += [f"<td{_NUM if i in num else ''}>{_h(v)}</td>" for i, v in enumerate(r)]
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _md_table(headers: Sequence[str], rows: Sequence[Sequence], *, numeric: Sequence[int] = ()) -> str:
    num = set(numeric)
    lines = ["| " + " | ".join(_m(h) for h in headers) + " |",
             "|" + "|".join("---:" if i in num else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(_m(v) for v in r) + " |" for r in rows]
    return "\n".join(lines)


def _kv_html(pairs: Sequence[tuple[str, object]]) -> str:
    return "<dl class=\"kv\">" + "".join(f"<dt>{_h(k)}</dt><dd>{_h(v)}</dd>" for k, v in pairs) + "</dl>"


# ---------------------------------------------------------------------------
# the sections, once, for both formats
# ---------------------------------------------------------------------------


def _provenance_pairs(r: Report) -> tuple[list, list, list]:
    p = r.provenance
    c, t, m, v = p["corpus"], p["truth"], p["model"], p["versions"]
    failures = c.get("failures") or []
    corpus = [
        ("corpus", c["root"]),
        ("sha256", c["sha256"]),
        ("documents", _int(c["documents"])),
        ("characters", _int(c["characters"])),
        ("## sections", _int(c["sections"])),
        ("failed files", "; ".join(f"{f['path']}: {f['reason']}" for f in failures) if failures else "none"),
    ]
    kinds = ", ".join(f"{n} {kind}" for kind, n in t.get("ood_kinds", {}).items())
    truth = [
        ("ground truth", t.get("source") or "n/a"),
        ("questions", _int(t["questions"])),
        ("phrasings", ", ".join(t.get("phrasings", [])) or "n/a"),
        ("answerable queries", _int(t["in_domain_queries"])),
        ("out-of-domain queries", f"{_int(t['ood_queries'])}" + (f" ({kinds})" if kinds else "")),
    ]
    weights = str(m.get("weights_sha256") or "")
    norm = p.get("normalisation_error") or {}
    model = [
        ("model", m.get("model", "n/a")),
        ("weights sha256", (weights[:12] + "...") if weights else "n/a"),
        ("dimensions", m.get("dim", "n/a")),
        ("max sequence length", m.get("max_seq_length", "n/a")),
        ("precision", m.get("precision", "n/a")),
        ("pooling", f"{m.get('pooling', 'n/a')}, normalised: {m.get('normalize', 'n/a')}"),
        ("max |L2²/2 - cosine|", f"{max(norm.values()):.1e}" if norm else "n/a"),
        ("pipeline version", p["pipeline_version"]),
        ("ragdiag", p["ragdiag_version"]),
        ("torch", v.get("torch", "n/a")),
        ("transformers", v.get("transformers", "n/a")),
        ("sentence-transformers", v.get("sentence_transformers", "n/a")),
        ("numpy / python", f"{v.get('numpy', '?')} / {v.get('python', '?')}"),
        ("generated", r.generated),
    ]
    return corpus, truth, model


def _interval_html(iv) -> _Raw:
    return _Raw(f'{_h(_f3(iv.estimate))} <span class="ci">[{iv.low:.3f}, {iv.high:.3f}]</span>')


def _recall_table(r: Report, *, as_html: bool = False) -> tuple[list[str], list[list], list[int], list[str]]:
    headers = ["configuration", *(f"R@{k} [95% CI]" for k in KS), "MRR", "destroyed", "chunks"]
    rows, classes = [], []
    cell = _interval_html if as_html else str
    for row in r.rows:
        rows.append([row.config, *(cell(row.recall[k]) for k in KS), _f3(row.mrr.estimate), row.destroyed,
                     _int(row.chunks)])
        classes.append("chosen" if row.config == r.config.label else "")
    return headers, rows, list(range(1, len(headers))), classes


def _survivor_table(r: Report) -> tuple[list[str], list[list]]:
    headers = ["better", "worse", "wins", "losses", "ties", "p", "Holm p"]
    rows = [[p.better, p.worse, max(p.wins, p.losses), min(p.wins, p.losses), p.ties, _p(p.p), _p(p.p_holm)]
            for p in r.survivors]
    return headers, rows


def _headline_pair(r: Report) -> PairRow | None:
    if not r.competitor:
        return None
    pair = {r.config.label, r.competitor}
    return next((p for p in r.pairs if {p.a, p.b} == pair), None)


def _headline_note(r: Report) -> str:
    p = _headline_pair(r)
    if p is None:
        return ""
    verdict = "survives" if p.survives else "does not survive"
    return (f"Counted as one of the {len(r.pairs)} pairs of the family, this comparison {verdict} Holm correction "
            f"(Holm p = {_p(p.p_holm)}).")


def _rate_text(cell: RateCell | None, count: int) -> str:
    if not cell or cell.rate is None:
        return str(count)
    return f"{count} ({100 * cell.rate:.0f}% [{100 * cell.low:.0f}, {100 * cell.high:.0f}])"


def _sweep_cells(r: Report) -> tuple[list[str], list]:
    s, c = r.sweep_row, r.rates
    headers = ["cut", "answered", "kept but wrong", "refused", "lost", "bluffs"]
    c = c.outcomes() if c else {}
    return headers, [f"{s.cut:g}", _rate_text(c.get("answered"), s.answered),
                     _rate_text(c.get("kept_wrong"), s.kept_wrong), _rate_text(c.get("refused"), s.refused),
                     s.lost, _rate_text(c.get("bluffs"), s.bluffs)]


def _choice_words(r: Report) -> str:
    """The cut chooser for the default goal: the rule, in sample vs cross-validated, and the conformal cut."""
    c = r.choice
    if not c:
        return ""

    def rates(cells):
        return ", ".join(f"{name.replace('_', ' ')} {cells[name]['count']} ({100 * cells[name]['rate']:.0f}% "
                         f"[{100 * cells[name]['low']:.0f}, {100 * cells[name]['high']:.0f}])"
                         for name in ("answered", "bluffs"))

    cv = c["cross_validation"]
    head = f"Suggested cut for a bluff rate of at most {100 * c['goal']['max_bluff']:.0f}% ({c['rule']}): "
    if c["cut"] is None:
        text = head + "no cut reaches it on this set."
    else:
        text = (head + f"{c['cut']:.4f}; in sample {rates(c['in_sample'])}; on queries it was not chosen on "
                f"({cv['folds']}-fold cross-validation grouped by question, seed {cv['seed']}) "
                f"{rates(c['cross_validated'])}.")
    conformal = (f" Conformal cut {c['conformal_cut']:.4f} ({c['conformal']})." if c["conformal_cut"] is not None
                 else f" Conformal: {c['conformal']}.")
    return text + conformal


def _bluff_words(r: Report) -> str:
    """Bluffs at the cut in words; at 0 the upper bound, never a bare success message."""
    from .compare import upper_bound_words

    s = r.sweep_row
    parts = [upper_bound_words(s.bluffs, r.n_ood, "out-of-domain queries bluff")]
    parts += [upper_bound_words(s.bluffs_by_kind.get(kind, 0), n, f"{kind} ones")
              for kind, n in r.ood_kinds.items() if n]
    return "; ".join(parts) + "."


def _bluff_table(r: Report) -> tuple[list[str], list[list]]:
    headers = ["query", "kind", "query text", "closest chunk", "document / section", "distance", "chunks kept"]
    rows = [[b.query_id, b.kind, b.text, b.chunk_id, f"{b.doc_id} / {b.section}", f"{b.distance:.3f}", b.kept]
            for b in r.bluffs]
    return headers, rows


def _chunking_table(r: Report) -> tuple[list[str], list[list]]:
    headers = ["strategy", "chunking", "chunks", "embedded tokens", "header tokens", "header share",
               "truncated chunks", "characters lost", "indexing time"]
    rows = [[c["strategy"], c["description"], _int(c["chunks"]), _int(c["embedded_tokens"]),
             _int(c["header_tokens"]), _pct(c["header_share"]), _int(c["truncated"]), _int(c["chars_lost"]),
             _secs(c.get("index_seconds"))] for c in r.chunking]
    return headers, rows


def _timing_rows(r: Report) -> list[list]:
    rows = [[_timing_name(k), _secs(v), ""] for k, v in r.timings.items() if not k.startswith("index_")]
    rows += [[f"ranking {x['config']} ({r.n_in + r.n_ood} queries)", _secs(x["seconds"]),
              f"{x['ms_per_query']:.2f} ms"] for x in r.ranking]
    return rows


MEANS = {
    "provenance": ("Every number below holds for exactly this corpus, ground truth and model: a different "
                   "corpus hash, model or pipeline version means a different experiment."),
    "recall": ("R@k is the share of answerable queries whose needle (the sentence that answers it) is whole in a "
               "chunk of the top k (success@k, the hit rate); intervals are 95% Wilson on the effective number of "
               "questions (phrasings of a question are correlated, so they count as less than independent queries). "
               "Overlapping intervals do not make two "
               "configurations equal: the paired comparisons below decide."),
    "comparisons": ("Each pair is compared on the same questions, the unit of the test (the phrasings of a "
                    "question fail together, so they are not independent): a question's difference is its hits at "
                    "R@{k} summed over its phrasings, and the exact sign-flip test asks whether the signs could be "
                    "coin flips. Holm correction keeps the chance of any false difference in the whole family "
                    "under 5%. 'Not shown different' means these questions cannot tell the two apart, not that "
                    "they are equal: the interval of the difference says how large a difference is still possible."),
    "destroyed": ("A destroyed needle is cut in two by the chunker: no chunk holds the answer whole, so no "
                  "retriever can find it, whatever its quality. It looks exactly like a bad retriever; overlap "
                  "or boundary-aware cuts fix it."),
    "cut": ("The gate keeps at most {keep} chunks closer than the cut. Answered: a kept chunk holds the needle. "
            "Kept but wrong: sources are given, none holds the answer. Refused: nothing kept, the user gets NO "
            "ANSWER. Lost = kept but wrong + refused. Bluffs: out-of-domain queries that still get sources. "
            "Where to stand is a product decision; the bluff column is the price of answering more."),
    "bluffs": ("These queries are not covered by the corpus, yet at this cut they get sources: a model would "
               "answer them from unrelated text. The closest ones are the most dangerous."),
    "costs": ("Header tokens are paid on every chunk. A truncated chunk is longer than the encoder window: the "
              "text past it is silently never embedded. Timings are those of this run on this machine."),
}


# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------

_CSS = """
:root{--fg:#111827;--muted:#6b7280;--line:#e5e7eb;--accent:#0072B2;--soft:#f8fafc}
*{box-sizing:border-box}
body{margin:0;background:#eef0f3;color:var(--fg);
 font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1100px;margin:0 auto;padding:36px 48px 48px;background:#fff;min-height:100vh}
header{border-bottom:3px solid var(--accent);padding-bottom:14px;margin-bottom:18px}
.eyebrow{text-transform:uppercase;letter-spacing:.08em;font-size:12px;color:var(--accent);font-weight:700;margin:0}
h1{font-size:27px;line-height:1.25;margin:4px 0 6px}
h2{font-size:19px;margin:34px 0 6px;padding-top:14px;border-top:1px solid var(--line)}
h3{font-size:15px;margin:18px 0 6px;color:#374151}
.meta{color:var(--muted);margin:0;font-size:14px}
.means{color:#1f2937;background:#f0f6fb;border-left:3px solid var(--accent);padding:8px 12px;margin:8px 0 14px;
 font-size:14px;border-radius:0 6px 6px 0}
.means b{color:var(--accent)}
.cards{display:grid;grid-template-columns:repeat(4,1fr);gap:12px;margin:16px 0 10px}
.card{border:1px solid var(--line);border-radius:10px;padding:12px 14px;background:var(--soft)}
.card .l{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.05em}
.card .v{font-size:26px;font-weight:700;line-height:1.2;margin-top:2px;font-variant-numeric:tabular-nums}
.card .s{color:var(--muted);font-size:13px}
.verdict{font-size:16px;font-weight:600;margin:12px 0 2px}
.note{color:var(--muted);font-size:13.5px;margin:2px 0 8px}
table{border-collapse:collapse;width:100%;font-size:13.5px;font-variant-numeric:tabular-nums;margin:6px 0 10px}
th{text-align:left;font-weight:600;color:#374151;border-bottom:2px solid #d1d5db;padding:6px 9px;
 background:#fafafa;vertical-align:bottom}
td{border-bottom:1px solid var(--line);padding:5px 9px;vertical-align:top}
th.num,td.num{text-align:right;white-space:nowrap}
tbody tr:nth-child(even) td{background:#fbfbfc}
tr.chosen td{background:#fff7e0 !important;font-weight:600}
.tradeoff table{width:auto;min-width:55%}
.tradeoff td{font-size:16px;font-weight:600}
.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.cut{color:#c62828;font-weight:700;padding:0 2px}
.quote{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;word-break:break-word}
.cols{display:grid;grid-template-columns:repeat(3,1fr);gap:22px}
dl.kv{display:grid;grid-template-columns:minmax(70px,max-content) minmax(0,1fr);gap:3px 12px;margin:0;
 font-size:13.5px}
dl.kv dt{color:var(--muted)}
dl.kv dd{margin:0;overflow-wrap:anywhere;font-variant-numeric:tabular-nums}
.ci{color:var(--muted);font-size:12px}
figure{margin:10px 0 6px;padding:12px;border:1px solid var(--line);border-radius:10px;text-align:center}
figcaption{text-align:left}
figcaption{color:var(--muted);font-size:13px;margin-top:4px}
ul.sentences{margin:6px 0;padding-left:20px}
footer{margin-top:36px;padding-top:12px;border-top:1px solid var(--line);color:var(--muted);font-size:12.5px}
@media (max-width:800px){main{padding:20px}.cards,.cols{grid-template-columns:1fr 1fr}}
@media print{body{background:#fff}main{padding:0;max-width:none}section{break-inside:avoid-page}}
"""


def _means(text: str) -> str:
    return f'<p class="means"><b>What this means.</b> {_h(text)}</p>'


def _card(label: str, value: str, sub: str) -> str:
    return (f'<div class="card"><div class="l">{_h(label)}</div><div class="v">{_h(value)}</div>'
            f'<div class="s">{_h(sub)}</div></div>')


def _render_html(r: Report) -> str:
    cfg = r.config.label
    corpus_name = r.provenance["corpus"]["root"]
    row = r.row
    r20 = row.recall[20]
    s = r.sweep_row
    destroyed_here = r.destroyed_counts.get(r.config.strategy, 0)
    parts: list[str] = []
    add = parts.append
    add("<!DOCTYPE html>")
    add('<html lang="en"><head><meta charset="utf-8">')
    add('<meta name="viewport" content="width=device-width, initial-scale=1">')
    add(f"<title>{_h(f'ragdiag report: {cfg} on {corpus_name}')}</title>")
    add(f"<style>{_CSS}</style></head><body><main>")

    add('<header><p class="eyebrow">ragdiag retrieval report</p>')
    add(f"<h1>{_h(cfg)} on {_h(corpus_name)}</h1>")
    add(f'<p class="meta">{_h(r.n_in)} answerable queries ({_h(r.n_questions)} questions), {_h(r.n_ood)} '
        f'out-of-domain; gate: keep {_h(r.keep)} chunks under cut {_h(r._cut_text())}; generated {_h(r.generated)}'
        "</p></header>")

    add('<section id="summary">')
    add('<div class="cards">')
    add(_card(f"R@20 of {cfg}", f"{r20.estimate:.3f}", f"95% CI [{r20.low:.3f}, {r20.high:.3f}]"))
    add(_card(f"destroyed by {r.config.strategy}", f"{destroyed_here} of {r.n_questions}",
              "needles no chunk holds whole"))
    add(_card(f"answered at cut {r._cut_text()}", f"{s.answered} of {r.n_in}",
              f"{s.kept_wrong} kept but wrong, {s.refused} refused"))
    add(_card(f"bluffs at cut {r._cut_text()}", f"{s.bluffs} of {r.n_ood}",
              "out-of-domain queries given sources"))
    add("</div>")
    add(f'<p class="verdict">{_h(r.headline)}</p>')
    if _headline_note(r):
        add(f'<p class="note">{_h(_headline_note(r))}</p>')
    add("</section>")

    corpus, truth, model = _provenance_pairs(r)
    add('<section id="provenance"><h2>Corpus, ground truth and model</h2>')
    add(_means(MEANS["provenance"]))
    add('<div class="cols">')
    add("<div><h3>Corpus</h3>" + _kv_html(corpus) + "</div>")
    add("<div><h3>Ground truth</h3>" + _kv_html(truth) + "</div>")
    add("<div><h3>Model and software</h3>" + _kv_html(model) + "</div>")
    add("</div></section>")

    headers, rows, numeric, classes = _recall_table(r, as_html=True)
    add('<section id="recall"><h2>Recall by configuration</h2>')
    add(_means(MEANS["recall"]))
    add(_html_table(headers, rows, numeric=numeric, row_class=classes, table_id="recall-table"))
    add(f'<p class="note">{_h(r.n_in)} answerable queries per configuration; the highlighted row is {_h(cfg)}. '
        "Destroyed counts needles (questions), not queries.</p>")
    for name, reason in r.unavailable.items():
        add(f'<p class="note">Not evaluated: {_h(name)} ({_h(reason)}).</p>')
    for note in r.notes:
        add(f'<p class="note">Note: {_h(note)}.</p>')
    add(f"<figure>{r.recall_svg()}<figcaption>Recall at k with 95% intervals over questions: "
        f"{_h(' and '.join(r.chart_configs))}"
        f"{' (its best competitor by R@' + _h(r.k if r.k in KS else 20) + ')' if r.competitor else ''}."
        "</figcaption></figure>")
    add("</section>")

    add('<section id="comparisons"><h2>Paired comparisons</h2>')
    add(_means(MEANS["comparisons"].format(k=r.k)))
    add(f'<p class="verdict">{_h(r.headline)}</p>')
    if _headline_note(r):
        add(f'<p class="note">{_h(_headline_note(r))}</p>')
    if r.headline_power:
        add(f'<p class="note">{_h(r.headline_power)}</p>')
    add(f"<p>{_h(r.family_sentence())}</p>")
    if r.survivors:
        h, rr = _survivor_table(r)
        add("<h3>Differences that survive Holm correction</h3>")
        add(_html_table(h, rr, numeric=range(2, 7), table_id="survivors"))
    rest = r.indistinguishable
    if rest and len(rest) <= LIST_ALL_UP_TO:
        add('<ul class="sentences">' + "".join(f"<li>{_h(p.sentence())}</li>" for p in rest) + "</ul>")
    add("</section>")

    add('<section id="destroyed"><h2>Destroyed needles</h2>')
    add(_means(MEANS["destroyed"]))
    counts = ", ".join(f"{name}: {n} of {r.n_questions}" for name, n in r.destroyed_counts.items())
    add(f"<p>Needles destroyed per strategy: {_h(counts)}.</p>")
    if r.destroyed:
        drows = []
        for d in r.destroyed:
            quote = '<span class="cut" title="cut">&#9986;</span>'.join(_h(p) for p in d.pieces())
            drows.append([d.strategy, d.question_id, d.doc_id, d.section, _Raw(f'<span class="quote">{quote}</span>'),
                          d.where])
        add(_html_table(["strategy", "question", "document", "section", "needle (✂ = cut)", "where the cut fell"],
                        drows, table_id="destroyed-table"))
    add("</section>")

    headers, cells = _sweep_cells(r)
    add(f'<section id="cut"><h2>Abstention at cut {_h(r._cut_text())}</h2>')
    add(_means(MEANS["cut"].format(keep=r.keep)))
    add('<div class="tradeoff">' + _html_table(headers, [cells], numeric=range(6), table_id="tradeoff") + "</div>")
    add(f'<p class="note">Of {_h(r.n_in)} answerable queries {_h(s.answered)} are answered and {_h(s.lost)} '
        f'lost; {_h(_bluff_words(r))} Distance: {_h(GATE_DISTANCE)}. Rates: 95% intervals (answerable: over '
        f'questions; at 0 events the exact upper bound).</p>')
    if r.choice:
        add(f'<p class="note">{_h(_choice_words(r))}</p>')
    add(f"<figure>{r.curve_svg()}<figcaption>Share of answerable queries answered, kept but wrong and refused, "
        f"and share of out-of-domain queries that bluff, for every cut of {_h(cfg)} (keep {_h(r.keep)}); the "
        "dashed vertical line is the chosen cut.</figcaption></figure>")
    add("</section>")

    add(f'<section id="bluffs"><h2>Bluffing out-of-domain queries at cut {_h(r._cut_text())}</h2>')
    add(_means(MEANS["bluffs"]))
    if r.bluffs:
        add(_html_table(*_bluff_table(r), numeric=(5, 6), table_id="bluffs-table"))
    elif r.n_ood:
        add(f"<p>{_h(_bluff_words(r))}</p>")
    else:
        add("<p>The ground truth has no out-of-domain queries, so bluffing cannot be measured: add some.</p>")
    add("</section>")

    add('<section id="costs"><h2>Costs</h2>')
    add(_means(MEANS["costs"]))
    h, rows = _chunking_table(r)
    add(_html_table(h, rows, numeric=range(2, 9), table_id="costs-table"))
    add("<h3>Timings</h3>")
    add(_html_table(["step", "time", "per query"], _timing_rows(r), numeric=(1, 2), table_id="timings"))
    add("</section>")

    if r.diag is not None:
        add(r.diag.to_html())

    add(f"<footer>Generated by ragdiag {_h(r.provenance['ragdiag_version'])} (pipeline "
        f"{_h(r.provenance['pipeline_version'])}) on {_h(r.generated)}. This file is self-contained: it loads "
        "nothing from the network. Corpus and query text are shown escaped, as typed.</footer>")
    add("</main></body></html>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------


def _render_markdown(r: Report) -> str:
    cfg = r.config.label
    row = r.row
    r20 = row.recall[20]
    s = r.sweep_row
    out: list[str] = []
    add = out.append
    add(f"# ragdiag retrieval report: {_m(cfg)} on {_m(r.provenance['corpus']['root'])}")
    add("")
    add(f"{r.n_in} answerable queries ({r.n_questions} questions), {r.n_ood} out-of-domain; gate: keep {r.keep} "
        f"chunks under cut {r._cut_text()}; generated {r.generated}. Charts are in the HTML version of this report.")
    add("")
    add("## Summary")
    add("")
    add(f"- R@20 of {_m(cfg)}: {r20} (95% interval over questions)")
    add(f"- Destroyed by strategy {_m(r.config.strategy)}: {r.destroyed_counts.get(r.config.strategy, 0)} of "
        f"{r.n_questions} needles")
    add(f"- At cut {r._cut_text()}: {s.answered} of {r.n_in} answered, {s.kept_wrong} kept but wrong, "
        f"{s.refused} refused; {s.bluffs} of {r.n_ood} out-of-domain queries bluff")
    add(f"- {_m(r.headline)}")
    add("")

    corpus, truth, model = _provenance_pairs(r)
    add("## Corpus, ground truth and model")
    add("")
    add(f"_What this means:_ {MEANS['provenance']}")
    add("")
    add(_md_table(["item", "value"], corpus + truth + model))
    add("")

    headers, rows, numeric, _ = _recall_table(r)
    add("## Recall by configuration")
    add("")
    add(f"_What this means:_ {MEANS['recall']}")
    add("")
    add(_md_table(headers, rows, numeric=numeric))
    add("")
    add(f"{r.n_in} answerable queries per configuration; the report is about {_m(cfg)}. Destroyed counts needles "
        "(questions), not queries.")
    for name, reason in r.unavailable.items():
        add(f"Not evaluated: {_m(name)} ({_m(reason)}).")
    for note in r.notes:
        add(f"Note: {_m(note)}.")
    add("")

    add("## Paired comparisons")
    add("")
    add(f"_What this means:_ {MEANS['comparisons'].format(k=r.k)}")
    add("")
    add(f"**{_m(r.headline)}**")
    if _headline_note(r):
        add(_m(_headline_note(r)))
    if r.headline_power:
        add("")
        add(_m(r.headline_power))
    add("")
    add(_m(r.family_sentence()))
    add("")
    if r.survivors:
        h, rr = _survivor_table(r)
        add(_md_table(h, rr, numeric=range(2, 7)))
        add("")
    rest = r.indistinguishable
    if rest and len(rest) <= LIST_ALL_UP_TO:
        out.extend(f"- {_m(p.sentence())}" for p in rest)
        add("")

    add("## Destroyed needles")
    add("")
    add(f"_What this means:_ {MEANS['destroyed']}")
    add("")
    counts = ", ".join(f"{name}: {n} of {r.n_questions}" for name, n in r.destroyed_counts.items())
    add(f"Needles destroyed per strategy: {_m(counts)}.")
    add("")
    if r.destroyed:
        add(_md_table(["strategy", "question", "document", "section", "needle (✂ = cut)", "where the cut fell"],
                      [[d.strategy, d.question_id, d.doc_id, d.section, " ✂ ".join(d.pieces()), d.where]
                       for d in r.destroyed]))
        add("")

    headers, cells = _sweep_cells(r)
    add(f"## Abstention at cut {r._cut_text()}")
    add("")
    add(f"_What this means:_ {MEANS['cut'].format(keep=r.keep)}")
    add("")
    add(_md_table(headers, [cells], numeric=range(6)))
    add("")
    add(f"Of {r.n_in} answerable queries {s.answered} are answered and {s.lost} lost; {_m(_bluff_words(r))} "
        f"Distance: {_m(GATE_DISTANCE)}. (The trade-off curve over all cuts is in the HTML version.)")
    if r.choice:
        add("")
        add(_m(_choice_words(r)))
    add("")

    add(f"## Bluffing out-of-domain queries at cut {r._cut_text()}")
    add("")
    add(f"_What this means:_ {MEANS['bluffs']}")
    add("")
    if r.bluffs:
        add(_md_table(*_bluff_table(r), numeric=(5, 6)))
    elif r.n_ood:
        add(_m(_bluff_words(r)))
    else:
        add("The ground truth has no out-of-domain queries, so bluffing cannot be measured: add some.")
    add("")

    add("## Costs")
    add("")
    add(f"_What this means:_ {MEANS['costs']}")
    add("")
    h, rows = _chunking_table(r)
    add(_md_table(h, rows, numeric=range(2, 9)))
    add("")
    add(_md_table(["step", "time", "per query"], _timing_rows(r), numeric=(1, 2)))
    add("")
    if r.diag is not None:
        add(r.diag.to_markdown())
    add(f"_Generated by ragdiag {r.provenance['ragdiag_version']} (pipeline {r.provenance['pipeline_version']}) "
        f"on {r.generated}._")
    return "\n".join(out) + "\n"
