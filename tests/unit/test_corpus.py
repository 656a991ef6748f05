"""Tests for ragdiag.documents.corpus: loading, canonical text, titles and sections."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragdiag.documents.corpus import DEFAULT_CORPUS, Section, load_corpus, make_document, split_sections
from ragdiag.documents.walk import CorpusError

FAST = settings(max_examples=150, deadline=None)


# ---------------------------------------------------------------------------
# split_sections: hand-checked offsets
# ---------------------------------------------------------------------------

# (text, [(title, start, end, heading_end), ...]); offsets counted line by line in the comment.
SPLIT_CASES = {
    # "# T\n" 0-4 | "intro\n" 4-10 | "## A\n" 10-15 | "x\n" 15-17
    "preamble then one section": ("# T\nintro\n## A\nx\n", [("", 0, 10, 0), ("A", 10, 17, 15)]),
    # no preamble section when the text starts with "## "
    "starts with a section": ("## A\nx", [("A", 0, 6, 5)]),
    "no headings at all": ("plain\ntext", [("", 0, 10, 0)]),
    # "# T\n" 0-4 | "```\n" 4-8 | "## not\n" 8-15 | "```\n" 15-19 | "## Real\n" 19-27 | "body\n" 27-32
    "## inside a ``` fence does not split": (
        "# T\n```\n## not\n```\n## Real\nbody\n",
        [("", 0, 19, 0), ("Real", 19, 32, 27)],
    ),
    # "~~~\n" 0-4 | "```\n" 4-8 | "## no\n" 8-14 | "```\n" 14-18 | "~~~\n" 18-22 | "## Yes\n" 22-29
    "``` lines inside a ~~~ fence neither close it nor split": (
        "~~~\n```\n## no\n```\n~~~\n## Yes\n",
        [("", 0, 22, 0), ("Yes", 22, 29, 29)],
    ),
    # "````\n" 0-5 | "```\n" 5-9 (too short to close) | "## no\n" 9-15 | "````\n" 15-20 | "## Yes\n" 20-27
    "a shorter fence does not close a longer one": (
        "````\n```\n## no\n````\n## Yes\n",
        [("", 0, 20, 0), ("Yes", 20, 27, 27)],
    ),
    "an unclosed fence runs to the end": ("```\n## no\n", [("", 0, 10, 0)]),
    # "# T\r\n" 0-5 | "intro\r\n" 5-12 | "## A\r\n" 12-18 | "x\r\n" 18-21
    "CRLF line endings": ("# T\r\nintro\r\n## A\r\nx\r\n", [("", 0, 12, 0), ("A", 12, 21, 18)]),
    # "## A\n" 0-5 | "### B\n" 5-11 | "x\n" 11-13: level 3 does not split
    "### does not split": ("## A\n### B\nx\n", [("A", 0, 13, 5)]),
    "##A without a space is not a heading": ("x\n##A\ny\n", [("", 0, 8, 0)]),
    # "## Done ##\n" 0-11 | "## C#\n" 11-17
    "closing #s are dropped, a # in the title is kept": ("## Done ##\n## C#\n", [("Done", 0, 11, 11), ("C#", 11, 17, 17)]),
    # a form feed is not a Markdown line ending: "## b" is mid-line
    "form feed does not start a line": ("a\x0c## b\nc\n", [("", 0, 9, 0)]),
    # "a\n" 0-2 | "## B\n" 2-7 | "## C\n" 7-12: an empty section is still a section
    "empty sections": ("a\n## B\n## C\n", [("", 0, 2, 0), ("B", 2, 7, 7), ("C", 7, 12, 12)]),
}


@pytest.mark.parametrize(("text", "expected"), SPLIT_CASES.values(), ids=SPLIT_CASES.keys())
def test_split_sections_offsets(text, expected):
    sections = split_sections(text)
    assert [(s.title, s.start, s.end, s.heading_end) for s in sections] == expected
    assert "".join(text[s.start : s.end] for s in sections) == text


def test_split_sections_doctest_shape():
    assert split_sections("# T\nintro\n## A\nx\n") == (Section("", 0, 10, 0), Section("A", 10, 17, 15))


# ---------------------------------------------------------------------------
# Titles and headers
# ---------------------------------------------------------------------------

TITLE_CASES = [
    ("# Title\n\ntext\n", "Title"),
    ("intro\n# Later Title\n", "Later Title"),
    ("## only a section\ntext\n", "doc"),  # no "# " line: the id
    ("no heading at all", "doc"),
    ("#hashtag\ntext\n", "doc"),  # not a heading: no space
    ("```\n# in a fence\n```\n# Real\n", "Real"),
    ("# C#\n", "C#"),
    ("# Closed #\n", "Closed"),
    ("# T\r\nx\r\n", "T"),
]


@pytest.mark.parametrize(("text", "title"), TITLE_CASES)
def test_title_is_first_h1_else_id(text, title):
    assert make_document("doc", text).title == title


def test_explicit_title_wins():
    assert make_document("doc", "# T\n", title="Given").title == "Given"


def test_header_of_preamble_is_title_alone():
    doc = make_document("d", "# Guide\nintro\n## Setup\nx\n")
    pre, setup = doc.sections
    assert doc.header(pre) == "Guide"
    assert doc.header(setup) == "Guide > Setup"


@pytest.mark.parametrize(("offset", "title"), [(0, ""), (13, ""), (14, "Setup"), (22, "Setup"), (999, "Setup")])
def test_section_at(offset, title):
    # "# Guide\n" 0-8 | "intro\n" 8-14 | "## Setup\n" 14-23 | "x\n" 23-25
    doc = make_document("d", "# Guide\nintro\n## Setup\nx\n")
    assert doc.section_at(offset).title == title


def test_heading_spans_all_levels_outside_fences():
    # "# A\n" 0-4 | "```\n" 4-8 | "## no\n" 8-14 | "```\n" 14-18 | "### C\n" 18-24 | "text\n" 24-29
    doc = make_document("d", "# A\n```\n## no\n```\n### C\ntext\n")
    assert doc.heading_spans() == [(0, 4), (18, 24)]


def test_make_document_rejects_empty_text():
    with pytest.raises(ValueError, match="no text"):
        make_document("d", "  \n ")


# ---------------------------------------------------------------------------
# Property: sections tile the text
# ---------------------------------------------------------------------------

_LINES = st.sampled_from(
    ["# Title", "## Sec", "## ", "### sub", "text line", "", "```", "~~~", "````", "  ## indented", "## C# ##", "x\x0c## ff"]
)


@FAST
@given(lines=st.lists(_LINES, max_size=25), newline=st.sampled_from(["\n", "\r\n", "\r"]), tail=st.booleans())
def test_sections_tile_text(lines, newline, tail):
    text = newline.join(lines) + (newline if tail else "")
    sections = split_sections(text)
    if not text:
        return
    assert sections[0].start == 0 and sections[-1].end == len(text)
    for a, b in zip(sections, sections[1:]):
        assert a.end == b.start
    assert "".join(text[s.start : s.end] for s in sections) == text
    for s in sections:
        assert s.start <= s.heading_end <= s.end
        if s.heading_end > s.start:
            assert text.startswith("## ", s.start)


# ---------------------------------------------------------------------------
# load_corpus on small folders
# ---------------------------------------------------------------------------


def _write(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def test_load_folder_ids_titles_kinds(tmp_path):
    root = _write(
        tmp_path,
        {
            "guide.md": b"# The Guide\n\nintro\n\n## One\n\nbody\n",
            "notes.txt": b"plain notes, no heading\n",
            "sub/deep.md": b"# Deep\ntext\n",
            ".hidden.md": b"# Hidden\n",
            ".git/config.md": b"# also hidden\n",
        },
    )
    corpus = load_corpus(root)
    assert [(d.id, d.title, d.kind, d.path) for d in corpus.documents] == [
        ("guide", "The Guide", "markdown", "guide.md"),
        ("notes", "notes", "text", "notes.txt"),
        ("sub/deep", "Deep", "markdown", "sub/deep.md"),
    ]
    assert corpus.failures == ()
    assert corpus.name == tmp_path.name
    assert "sub/deep" in corpus and "hidden" not in corpus
    assert corpus.document("guide").sections[1].title == "One"
    with pytest.raises(KeyError, match="nope"):
        corpus.document("nope")


def test_text_is_the_file_text_exactly_crlf_included(tmp_path):
    raw = b"# T\r\n\r\nintro\r\n## A\r\n\r\nbody \t\r\n\r\n"
    corpus = load_corpus(_write(tmp_path, {"crlf.md": raw}))
    doc = corpus.document("crlf")
    assert doc.text == raw.decode("utf-8")
    assert "\r\n" in doc.text
    # "# T\r\n" 0-5 | "\r\n" 5-7 | "intro\r\n" 7-14 | "## A\r\n" 14-20 | ...
    assert [(s.title, s.start, s.end, s.heading_end) for s in doc.sections] == [("", 0, 14, 0), ("A", 14, len(raw), 20)]


FAILURES = [
    ("latin1.md", "café".encode("latin-1"), "not UTF-8"),
    ("empty.md", b"", "empty file"),
    ("blank.txt", b"  \n\t\n", "empty file"),
    ("nul.md", b"# T\n\x00\x01binary", "binary content (NUL bytes)"),
    ("image.xyz", b"\x89PNG whatever", "unsupported type '.xyz'"),
    ("noext", b"text", "unsupported type '(no extension)'"),
]


@pytest.mark.parametrize(("name", "data", "reason"), FAILURES, ids=[f[0] for f in FAILURES])
def test_bad_file_is_reported_and_the_rest_loads(tmp_path, name, data, reason):
    corpus = load_corpus(_write(tmp_path, {"good.md": b"# Good\ntext\n", name: data}))
    assert [d.id for d in corpus.documents] == ["good"]
    assert len(corpus.failures) == 1
    failure = corpus.failures[0]
    assert failure.path == name
    assert reason in failure.reason


def test_not_utf8_reason_names_the_byte(tmp_path):
    corpus = load_corpus(_write(tmp_path, {"good.md": b"ok", "bad.md": b"ab\xe9cd"}))
    assert corpus.failures[0].reason.startswith("not UTF-8 (invalid byte 0xe9 at byte 2)")


def test_duplicate_id_is_a_failure(tmp_path):
    corpus = load_corpus(_write(tmp_path, {"a.md": b"# A\n", "a.txt": b"also a\n"}))
    assert [d.path for d in corpus.documents] == ["a.md"]
    assert [(f.path, f.reason) for f in corpus.failures] == [("a.txt", "duplicate document id 'a' (also a.md)")]


def test_utf8_bom_is_not_part_of_the_text(tmp_path):
    corpus = load_corpus(_write(tmp_path, {"bom.md": "\ufeff# T\nx\n".encode("utf-8")}))
    assert corpus.document("bom").text == "# T\nx\n"
    assert corpus.document("bom").title == "T"


def test_nothing_loadable_raises_with_reasons(tmp_path):
    _write(tmp_path, {"empty.md": b"", "bad.md": b"\xff\xfe"})
    with pytest.raises(CorpusError, match=r"nothing could be loaded.*bad\.md: not UTF-8.*empty\.md: empty file"):
        load_corpus(tmp_path)


def test_empty_folder_raises(tmp_path):
    with pytest.raises(CorpusError, match="no supported files"):
        load_corpus(tmp_path)


def test_missing_folder_raises(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        load_corpus(tmp_path / "missing")


def test_file_instead_of_folder_raises(tmp_path):
    path = tmp_path / "a.md"
    path.write_text("# A\n")
    with pytest.raises(CorpusError, match="is not a folder"):
        load_corpus(path)


def test_too_large_file_is_a_failure(tmp_path):
    corpus = load_corpus(_write(tmp_path, {"small.md": b"ok", "big.md": b"x" * 100}), max_bytes=50)
    assert [(f.path, f.reason) for f in corpus.failures] == [("big.md", "too large (100 bytes; limit 50; set RAGDIAG_MAX_FILE_BYTES to raise it)")]


def test_sha256_is_order_independent_and_content_sensitive(tmp_path):
    a = load_corpus(_write(tmp_path / "a", {"x.md": b"one", "y.md": b"two"}))
    b = load_corpus(_write(tmp_path / "b", {"y.md": b"two", "x.md": b"one"}))
    c = load_corpus(_write(tmp_path / "c", {"x.md": b"one", "y.md": b"two!"}))
    assert a.sha256 == b.sha256 != c.sha256


# ---------------------------------------------------------------------------
# The bundled corpus
# ---------------------------------------------------------------------------


def test_bundled_corpus_shape(corpus):
    assert len(corpus.documents) == 14
    assert corpus.n_chars == 357_191
    assert corpus.n_sections == 115
    assert corpus.failures == ()
    assert load_corpus().sha256 == corpus.sha256  # None means the bundled folder


def test_bundled_texts_are_the_files_byte_for_byte(corpus):
    files = sorted(DEFAULT_CORPUS.glob("*.md"))
    assert [d.id for d in corpus.documents] == [p.stem for p in files]
    for doc, path in zip(corpus.documents, files):
        assert doc.text.encode("utf-8") == path.read_bytes(), doc.id


def test_bundled_sections_tile_every_document(corpus):
    for doc in corpus.documents:
        assert "".join(doc.text[s.start : s.end] for s in doc.sections) == doc.text
        assert doc.title != doc.id  # every bundled file has a "# " title
        for s in doc.sections:
            if s.title:
                assert doc.text[s.start : s.heading_end].startswith("## ")
