"""Tests for the shareable report (ragdiag/report/, ragdiag/svg.py, ``python -m ragdiag report``).

Plumbing tests build an Evaluation of a tiny hand-made corpus with a FAKE
bag-of-words encoder, so they run in a second; the numbers in the report must
be the library's (``summary.json``, ``sweep_table``, ``pairwise``). One CLI run
loads the real model and is marked ``model``.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from ragdiag.cli.parser import main
from ragdiag.corpus import Corpus, make_document
from ragdiag.encoder.protocols import EncoderStamp
from ragdiag.evaluation import Config
from ragdiag.evaluate import evaluate
from ragdiag.report.sections import PairRow
from ragdiag.report.build import build_report, default_config
from ragdiag.report.render import write_report
from ragdiag.defaults import PRIMARY_K
from ragdiag.compare.comparisons import compare, compare_in_family, family
from ragdiag.threshold.gate import sweep_table
from ragdiag.export import write_outputs
from ragdiag.retrieval.bm25 import tokenize
from ragdiag.threshold.gate import bluffs_at, gate_inputs_for
from ragdiag.threshold.rates import rate_rows

REPO = Path(__file__).resolve().parent.parent
SCRIPT = "<script>alert(1)</script>"
CUT = 0.55
KEEP = 2


class BagOfWords:
    """A FAKE encoder for plumbing tests only: crc32-hashed bag of words, L2-normalised.

    One whitespace word = one "token" (+2 specials); the window is wide enough
    that nothing is truncated. Deterministic across processes.
    """

    max_seq_length = 10_000

    def __init__(self, dim: int = 4096):
        self.dim = dim
        self.stamp = EncoderStamp(model="FAKE-bag-of-words", weights_sha256="ab" * 32, dim=dim,
                                  max_seq_length=self.max_seq_length, pooling="none", normalize=True,
                                  precision="fp32")

    def count_tokens(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([len(t.split()) + 2 for t in texts], dtype=np.int64)

    def window_ends(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([len(t) for t in texts], dtype=np.int64)

    def encode(self, texts: Sequence[str], *, progress=None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for tok in tokenize(text):
                out[i, zlib.crc32(tok.encode()) % self.dim] += 1.0
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out


# Eight one-section documents. In the first five the needle starts just before character 512, so blind
# 512-character chunking (A) cuts it in two; boundary chunking (C) keeps its paragraph whole. With
# fewer than 20 chunks per strategy, every whole needle is in the top 20: at R@20, C wins every query
# of the five destroyed questions against A (10 queries, +10/-0, p = 0.002, Holm p over 6 pairs 0.012),
# and dense vs bm25 tie everywhere (p = 1). Document "zebras" puts <script> in a heading, the needle
# and an ood query (which bluffs: it shares "script alert 1 zebras" with that chunk).
TOPICS = [("zebras", "riverbanks", "dry"), ("volcanoes", "magma", "eruptive"), ("glaciers", "moraines", "cold"),
          ("penguins", "krill", "winter"), ("ferns", "spores", "wet"), ("comets", "ice", "perihelion"),
          ("corals", "polyps", "warm"), ("tides", "moon", "spring")]


def _document(i: int, topic: str, key: str, season: str) -> tuple[str, str]:
    title = f"## {SCRIPT} {topic} basics" if i == 0 else f"## {topic.capitalize()} basics"
    head = f"# {topic.capitalize()} notes\n\n{title}\n\n"
    needle = (f"Observers confirmed that {topic} {SCRIPT if i == 0 else ''} depend on {key} "
              f"during the {season} season.").replace("  ", " ")
    target = 495 - len(head) if i < 5 else 150
    words, j = [], 0
    while len(" ".join(words)) < target:
        words.append(f"{topic}{j % 7}field" if j % 3 else f"note{j}")
        j += 1
    filler = " ".join(words)
    text = f"{head}{filler}.\n\n{needle}\n"
    start = text.index(needle)
    if i < 5:
        assert start < 512 < start + len(needle), (topic, start)
    else:
        assert start + len(needle) < 512
    return text, needle


def _fixture():
    docs, questions = [], []
    for i, (topic, key, season) in enumerate(TOPICS):
        text, needle = _document(i, topic, key, season)
        docs.append(make_document(topic, text, path=f"{topic}.md"))
        questions.append({"id": f"q{i + 1}", "needle": needle,
                          "queries": {"course": f"What do {topic} depend on during the {season} season?",
                                      "ticket": f"{topic} {key} problem"}})
    truth = {"questions": questions,
             "ood": [{"id": "o1", "kind": "near", "query": f"{SCRIPT} zebras"},
                     {"id": "o2", "kind": "far", "query": "quantum chromodynamics lattice gauge"}]}
    return Corpus(root="tiny-report", documents=tuple(docs), name="tiny-report"), truth


@pytest.fixture(scope="module")
def ev():
    from ragdiag.truth import parse_truth

    corpus, raw = _fixture()
    truth = parse_truth(raw, corpus, source="tiny-report.truth.json")
    return evaluate(corpus, truth, encoder=BagOfWords(), strategies="A,C", retrievers="dense,bm25")


@pytest.fixture(scope="module")
def report(ev):
    return build_report(ev, config="C/dense", cut=CUT, keep=KEEP)


@pytest.fixture(scope="module")
def html_text(report):
    return report.to_html()


@pytest.fixture(scope="module")
def md_text(report):
    return report.to_markdown()


@pytest.fixture(scope="module")
def summary(ev, tmp_path_factory):
    out = tmp_path_factory.mktemp("summary")
    write_outputs(ev, out)
    return json.loads((out / "summary.json").read_text())


def table_rows(html_text: str, table_id: str) -> list[list[str]]:
    """The body cells of ``<table id=...>`` as text."""
    m = re.search(rf'<table id="{table_id}">.*?<tbody>(.*?)</tbody></table>', html_text, re.S)
    assert m, f"no table {table_id}"
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(1), re.S)]


def md_rows(md: str, first_cell: str) -> list[list[str]]:
    out = []
    for line in md.splitlines():
        if line.startswith("| ") and line.split("|")[1].strip().replace("\\", "") == first_cell:
            out.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return out


def test_fixture_has_what_the_report_must_show(report):
    assert report.destroyed_counts == {"A": 5, "C": 0}
    assert report.bluffs and report.bluffs[0].query_id == "o1"
    assert 0 < report.sweep_row.answered < report.n_in and report.sweep_row.refused > 0


def test_html_is_self_contained(html_text):
    assert html_text.startswith("<!DOCTYPE html>")
    assert "http://" not in html_text and "https://" not in html_text
    lowered = html_text.lower()
    for bad in ("<script", "<link", "@import", "url(", "<iframe", "<img", " src=", " href="):
        assert bad not in lowered, bad
    assert lowered.count("<svg") == 2  # the recall chart and the trade-off curve


def test_untrusted_text_is_escaped(html_text, md_text):
    escaped = html.escape(SCRIPT)
    assert SCRIPT not in html_text and escaped in html_text
    assert html_text.count(escaped) >= 3  # in a destroyed needle, its section title, the bluffing ood query
    assert not re.search(r"(?<!\\)<", md_text)  # every < of corpus or query text is backslash-escaped
    assert r"\<script\>alert(1)\</script\>" in md_text


def test_recall_numbers_are_those_of_summary_json(summary, html_text, md_text):
    rows = {r[0]: r for r in table_rows(html_text, "recall-table")}
    md = {r[0]: r for r in (md_rows(md_text, c)[0] for c in rows)}
    assert list(rows) == [r["config"] for r in summary["summary"]] == ["A/dense", "A/bm25", "C/dense", "C/bm25"]
    for r in summary["summary"]:
        expected = f"{r['R@20']:.3f} [{r['R@20_low']:.3f}, {r['R@20_high']:.3f}]"
        assert rows[r["config"]][4] == expected and md[r["config"]][4].replace("\\", "") == expected
        assert int(rows[r["config"]][6]) == r["destroyed"] == int(md[r["config"]][6])
        assert rows[r["config"]][5] == f"{r['MRR']:.3f}"
    # A destroys 5 needles = 10 queries: R@20 of A is 6/16, of C 16/16
    assert rows["A/dense"][4].startswith("0.375 ") and rows["C/dense"][4].startswith("1.000 ")
    assert summary["destroyed"]["A"] and not summary["destroyed"]["C"]


def test_sweep_row_and_bluffs_are_the_librarys(ev, report, html_text, md_text):
    expected = sweep_table(ev, "C/dense", keep=KEEP, cuts=[CUT]).row(CUT)
    s = report.sweep_row
    assert (s.cut, s.answered, s.kept_wrong, s.refused, s.lost, s.bluffs) == tuple(
        getattr(expected, key) for key in ("cut", "answered", "kept_wrong", "refused", "lost", "bluffs"))
    assert dict(s.bluffs_by_kind) == {"near": expected.bluffs_by_kind["near"], "far": expected.bluffs_by_kind["far"]}
    cells = table_rows(html_text, "tradeoff")
    rates = rate_rows(gate_inputs_for(ev, "C/dense", keep=KEEP), [CUT])[0]

    def cell(key):  # the count with its rate and 95% interval, as the report writes it
        c = rates.outcome(key)
        assert c.count == getattr(expected, key)
        return f"{c.count} ({100 * c.rate:.0f}% [{100 * c.low:.0f}, {100 * c.high:.0f}])"

    want = [f"{CUT:g}", cell("answered"), cell("kept_wrong"), cell("refused"), str(expected.lost), cell("bluffs")]
    assert cells == [want]
    assert [[c.replace("\\", "") for c in row] for row in md_rows(md_text, f"{CUT:g}")] == [want]  # md escapes [ ]
    bluffs = bluffs_at(ev.result("C/dense"), ev.queries, cut=CUT, keep=KEEP)
    assert len(bluffs) == expected.bluffs == len(table_rows(html_text, "bluffs-table"))
    first = table_rows(html_text, "bluffs-table")[0]
    chunk = ev.indexes["C"].chunks[bluffs[0].kept[0][0]]
    assert first[:4] == ["o1", "near", f"{SCRIPT} zebras", chunk.id]
    assert first[5] == f"{bluffs[0].kept[0][1]:.3f}"
    # the curve holds the same counts at the chosen cut
    i = report.curve.cuts.index(CUT)
    assert report.curve.answered[i] == expected.answered and report.curve.bluffs[i] == expected.bluffs


def test_destroyed_needles_are_listed_with_the_cut(summary, html_text, md_text):
    rows = table_rows(html_text, "destroyed-table")
    listed = {(r[0], r[1], r[2]) for r in rows}
    assert listed == {("A", d["question_id"], d["doc_id"]) for d in summary["destroyed"]["A"]}
    for d, r in zip(summary["destroyed"]["A"], rows):
        assert f"offset {d['cuts'][0]}" in r[5] and f"after character {d['cuts'][0] - d['start']} " in r[5]
        assert "✂" in r[4]
    assert "A: 5 of 8, C: 0 of 8" in html_text and "A: 5 of 8, C: 0 of 8" in md_text.replace("\\", "")


def test_phrasings_are_not_independent_queries(ev):
    # C finds both phrasings of the 5 questions A destroys: per query +10/-0 (sign test p = 0.002), but per
    # question +5/-0 with d = 2 each: 2 of the 32 sign patterns reach |10|, p = 0.0625
    c = compare(ev, "C/dense", "A/dense", k=20)
    assert (c.test.wins, c.test.losses, c.test.ties) == (5, 0, 3)
    assert c.test.p == 2 / 32
    assert c.status == "descriptive"  # R@20 is not the primary k
    assert "descriptive only (p = 0.062)" in c.verdict


def test_comparisons_survivors_and_plain_sentences(ev, report, html_text, md_text):
    fam = family(ev, k=report.k)
    assert report.k == PRIMARY_K
    assert len(report.pairs) == len(fam) == 6
    surviving = {(c.a.label, c.b.label) for c in fam if c.status == "different"}
    assert {(p.a, p.b) for p in report.survivors} == surviving
    for c in fam:  # every pair carries the library's verdict words
        (p,) = [p for p in report.pairs if (p.a, p.b) == (c.a.label, c.b.label)]
        assert p.verdict == c.verdict and p.p_holm == c.p_holm
    if surviving:
        rows = table_rows(html_text, "survivors")
        assert len(rows) == len(surviving)
    rest = [c for c in fam if c.status != "different"]
    assert rest
    for c in rest:  # the ones that are not shown different get the library's sentence, in both formats
        assert html.escape(c.verdict) in html_text and c.verdict in md_text.replace("\\", "")
    nq = fam[0].test.n_questions
    assert f"6 pairs of configurations were tested at R@{PRIMARY_K} on the same {nq} questions" in html_text
    assert "indistinguishable" not in html_text and "indistinguishable" not in md_text
    # always the verdict of the chosen configuration against its best competitor, Holm within all pairs
    expected = compare_in_family(ev, "C/dense", report.competitor, k=report.k)
    assert report.headline == expected.verdict and html.escape(report.headline) in html_text
    assert report.headline_power == expected.power and expected.power in md_text.replace("\\", "")


def test_a_long_family_is_counted_not_listed(report):
    many = tuple(PairRow(f"X{i}", f"Y{i}", 20, 1, 1, 14, 1.0, 1.0, f"X{i} vs Y{i}: not shown different", "not shown different")
                 for i in range(30))
    big = dataclasses.replace(report, comparison=dataclasses.replace(report.comparison, pairs=(*report.pairs, *many)))
    md = big.to_markdown()
    assert "36 pairs of configurations were tested" in md and "are not shown different" in md
    assert "X3 vs Y3" not in md and "X3 vs Y3" not in big.to_html()


def test_zero_bluffs_shows_the_upper_bound(ev):
    r = build_report(ev, config="C/dense", cut=0.01, keep=KEEP)
    assert r.sweep_row.bluffs == 0
    md = r.to_markdown().replace("\\", "")
    assert "0 of 2 out-of-domain queries bluff: the rate could still be up to 84.2% (95% upper bound)" in md
    assert "No out-of-domain query gets a source" not in md
    assert "dense model" in md  # the distance the gate uses is named


def test_the_cut_chooser_is_in_the_report(ev, report, md_text):
    from ragdiag.defaults import DEFAULT_MAX_BLUFF
    from ragdiag.threshold.choice import Goal, cut_choice

    choice = cut_choice(gate_inputs_for(ev, "C/dense", keep=KEEP), Goal(max_bluff=DEFAULT_MAX_BLUFF))
    assert report.choice == choice.as_json()
    md = md_text.replace("\\", "")
    assert f"Suggested cut for a bluff rate of at most {100 * DEFAULT_MAX_BLUFF:.0f}%" in md
    assert "cross-validation grouped by question" in md
    # 2 ood queries cannot certify 5%: the report says so
    assert "cannot certify a bluff rate of 5.0% with 2 out-of-domain queries" in md


def test_provenance_stamps(report, summary, html_text, md_text):
    for text in (html_text, md_text.replace("\\", "")):
        assert summary["corpus"]["sha256"] in text
        assert "FAKE-bag-of-words" in text and "abababababab..." in text
        assert summary["versions"]["torch"] in text and summary["versions"]["transformers"] in text
        assert report.generated in text
    assert "tiny-report.truth.json" in html_text


def test_only_one_configuration_has_no_competitor(ev):
    ev1 = dataclasses.replace(ev, results={Config("C", "dense"): ev.results[Config("C", "dense")]})
    r = build_report(ev1, config=Config("C", "dense"), cut=CUT)
    assert r.competitor is None and r.pairs == () and "only configuration" in r.headline
    assert "nothing to compare" in r.to_markdown() and r.to_html().count("<svg") == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"config": "E/hybrid", "cut": 0.6}, "E/hybrid was not evaluated"),
    ({"config": "C/dense", "cut": 0.0}, "cut must be"),
    ({"config": "C/dense", "cut": 0.6, "keep": 0}, "keep must be"),
    ({"config": "C-dense", "cut": 0.6}, "STRATEGY/RETRIEVER"),
])
def test_build_report_rejects_bad_input(ev, kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_report(ev, **kwargs)


def test_default_config_is_a_fixed_rule(ev):
    assert default_config(ev) == Config("A", "dense")  # no E/hybrid, no hybrid: the first evaluated


def test_write_report_writes_html_and_markdown_beside(report, tmp_path):
    paths = write_report(report, tmp_path / "sub" / "r.html")
    assert paths == [str(tmp_path / "sub" / "r.html"), str(tmp_path / "sub" / "r.md")]
    assert Path(paths[1]).read_text(encoding="utf-8") == report.to_markdown()
    with pytest.raises(ValueError, match="HTML file"):
        write_report(report, tmp_path / "r.md")


def test_report_bad_config_exits_2_before_loading_anything(tiny_folder, tmp_path, capsys):
    code = main(["report", "--config", "E-hybrid", "--corpus", str(tiny_folder), "--no-cache",
                 "--out", str(tmp_path / "r.html")])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: ") and "'E-hybrid'" in err and "STRATEGY/RETRIEVER" in err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.model
def test_python_m_ragdiag_report_writes_both_files(tiny_folder, tmp_path):
    from ragdiag.encoder.resolve import ModelUnavailable, resolve_model_dir

    try:
        resolve_model_dir(None)
    except ModelUnavailable as exc:
        pytest.skip(str(exc))
    out = tmp_path / "tmp" / "report.html"
    proc = subprocess.run([sys.executable, "-m", "ragdiag", "report", "--corpus", str(tiny_folder), "--no-cache",
                           "--strategies", "C", "--retrievers", "dense,bm25,hybrid", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    md = out.with_suffix(".md")
    assert out.is_file() and md.is_file()
    assert f"wrote {out}" in proc.stdout and f"wrote {md}" in proc.stdout
    text = out.read_text(encoding="utf-8")
    assert "C/hybrid on tiny" in text and "<svg" in text and "sentence-transformers/all-MiniLM-L6-v2" in text
    assert "| C/hybrid |" in md.read_text(encoding="utf-8")
