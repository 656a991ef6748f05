"""Tests for ragdiag.index.chunking: strategies A..F on tiny hand-checked documents, and invariants."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ragdiag.index.chunking import (
    STRATEGIES,
    Destroyed,
    Strategy,
    chunk_corpus,
    chunk_document,
    destroyed_needles,
    parse_strategies,
)
from ragdiag.documents.corpus import make_document


def strat(name: str, size: int, overlap: int = 64) -> Strategy:
    return replace(STRATEGIES[name], size=size, overlap_chars=overlap)


def spans(doc, strategy):
    return [(c.start, c.end, c.content) for c in chunk_document(doc, strategy)]


# ---------------------------------------------------------------------------
# A tiny two-section document, chunked by every strategy at size 20, overlap 8
# ---------------------------------------------------------------------------

CATS = "# Cats\n\nCats purr. They nap a lot.\n\n## Food\n\nFish is good. Milk is not.\n"
#       0         1         2         3         4         5         6         7
#       0123456 7 8901234567890123456789012345 6 7 890123 4 5 6789012345678901234567890 1
# sections: "" [0, 36)  "Food" [36, 72) (heading line "## Food\n" ends at 44)

# Blind: windows [0,20) [20,40) [40,60) [60,72); the last one trims its "\n".
A_CATS = [
    (0, 20, "# Cats\n\nCats purr. T"),
    (20, 40, "hey nap a lot.\n\n## F"),
    (40, 60, "ood\n\nFish is good. M"),
    (60, 71, "ilk is not."),
]
# Blind + overlap 8: 20-8=12 is a space -> 13; 40-8=32 't'; 60-8=52 is a space -> 53.
B_CATS = [
    (0, 20, "# Cats\n\nCats purr. T"),
    (13, 40, "purr. They nap a lot.\n\n## F"),
    (32, 60, "t.\n\n## Food\n\nFish is good. M"),
    (53, 71, "good. Milk is not."),
]
# Boundaries: paragraphs "# Cats" [0,6), "Cats purr. They nap a lot." [8,34) is 26 > 20 so it
# splits into sentences [8,18) [19,34); packing [0,6)+[8,18) = 18 <= 20, +[19,34) = 34 > 20.
# Section Food: "## Food" [36,43), then [45,58) [59,71); 58-36 = 22 > 20, 71-45 = 26 > 20.
C_CATS = [
    (0, 18, "# Cats\n\nCats purr."),
    (19, 34, "They nap a lot."),
    (36, 43, "## Food"),
    (45, 58, "Fish is good."),
    (59, 71, "Milk is not."),
]
# Boundaries + overlap 8: 18-8=10 't'; 34-8=26 'p'; 43-8=35 is "\n" -> 36; 58-8=50 'i'.
D_CATS = [
    (0, 18, "# Cats\n\nCats purr."),
    (10, 34, "ts purr. They nap a lot."),
    (26, 43, "p a lot.\n\n## Food"),
    (36, 58, "## Food\n\nFish is good."),
    (50, 71, "is good. Milk is not."),
]

CATS_TABLE = {"A": A_CATS, "B": B_CATS, "C": C_CATS, "D": D_CATS, "E": C_CATS, "F": D_CATS}


@pytest.mark.parametrize("name", "ABCDEF")
def test_cats_spans(name):
    doc = make_document("cats", CATS)
    assert [(s.title, s.start, s.end) for s in doc.sections] == [("", 0, 36), ("Food", 36, 72)]
    assert spans(doc, strat(name, 20, 8)) == CATS_TABLE[name]


# A chunk belongs to the section of its own (non-copied) start.
CATS_SECTIONS = {
    "A": ["", "", "Food", "Food"],
    "B": ["", "", "Food", "Food"],
    "C": ["", "", "Food", "Food", "Food"],
    "D": ["", "", "Food", "Food", "Food"],
}


@pytest.mark.parametrize("name", "ABCD")
def test_cats_sections_and_plain_embed_text(name):
    chunks = chunk_document(make_document("cats", CATS), strat(name, 20, 8))
    assert [c.section for c in chunks] == CATS_SECTIONS[name]
    assert [c.header for c in chunks] == ["Cats > Food" if s else "Cats" for s in CATS_SECTIONS[name]]
    for i, c in enumerate(chunks):
        assert c.embed_text == c.content
        assert c.header_prefix_len == 0
        assert c.id == f"{name}:cats:{i:04d}"
        assert c.doc_id == "cats"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "E",
            [
                "[Cats]\n# Cats\n\nCats purr.",
                "[Cats]\nThey nap a lot.",
                "[Cats > Food]\n## Food",
                "[Cats > Food]\nFish is good.",
                "[Cats > Food]\nMilk is not.",
            ],
        ),
        (
            "F",
            [
                "[Cats]\n# Cats\n\nCats purr.",
                "[Cats]\nts purr. They nap a lot.",
                "[Cats > Food]\np a lot.\n\n## Food",  # section of its own start (36), not of the copied tail
                "[Cats > Food]\n## Food\n\nFish is good.",
                "[Cats > Food]\nis good. Milk is not.",
            ],
        ),
    ],
)
def test_cats_header_embed_text(name, expected):
    doc = make_document("cats", CATS)
    chunks = chunk_document(doc, strat(name, 20, 8))
    assert [c.embed_text for c in chunks] == expected
    for c in chunks:
        prefix = f"[{doc.title} > {c.section}]\n" if c.section else f"[{doc.title}]\n"
        assert c.embed_text == prefix + c.content
        assert c.header_prefix_len == len(prefix)
        assert not c.content.startswith("[")  # the quote never carries the header
        assert doc.text[c.start : c.end] == c.content


# ---------------------------------------------------------------------------
# Smaller hand-checked cases
# ---------------------------------------------------------------------------

SMALL_CASES = {
    # window [0,16) ends with a space -> (0,15); window [16,22) starts with one -> (17,22)
    "blind trims, offsets follow": ("0123456789abcde  fghij", "A", 16, 4, [(0, 15, "0123456789abcde"), (17, 22, "fghij")]),
    # overlap from 15-4 = 11
    "blind overlap from previous end": (
        "0123456789abcde  fghij",
        "B",
        16,
        4,
        [(0, 15, "0123456789abcde"), (11, 22, "bcde  fghij")],
    ),
    # the all-space window [16,32) yields no chunk; "y" sits in window [32,33)
    "blind drops blank windows": ("x" * 16 + " " * 16 + "y", "A", 16, 4, [(0, 16, "x" * 16), (32, 33, "y")]),
    # a sentence of 29 chars, no full stop: cut at the last whitespace before 20 (text[19] is a space)
    "long sentence cut at last space": (
        "aaaa bbbb cccc dddd eeee ffff",
        "C",
        20,
        4,
        [(0, 19, "aaaa bbbb cccc dddd"), (20, 29, "eeee ffff")],
    ),
    # no whitespace at all: hard cuts at the limit
    "hard cut without whitespace": ("x" * 45, "C", 20, 4, [(0, 20, "x" * 20), (20, 40, "x" * 20), (40, 45, "x" * 5)]),
    # sentence end after a closing quote; "Then he left the room." is 22 > 20: cut after "the " (33)
    "sentence end with closing quote": (
        'He said "stop." Then he left the room.',
        "C",
        20,
        4,
        [(0, 15, 'He said "stop."'), (16, 32, "Then he left the"), (33, 38, "room.")],
    ),
    # the chunking.py doctest: whole paragraphs packed up to the size, per section
    "paragraphs packed per section": (
        "# T\n\nOne. Two.\n\n## S\n\nThree.\n",
        "C",
        512,
        64,
        [(0, 14, "# T\n\nOne. Two."), (16, 28, "## S\n\nThree.")],
    ),
    # a paragraph that fits is never cut, even with sentences inside
    "paragraph that fits stays whole": (
        "One. Two. Three.\n\nFour.",
        "C",
        16,
        4,
        [(0, 16, "One. Two. Three."), (18, 23, "Four.")],
    ),
    # "Alpha beta gamma dd" (19 > 16, no sentence end) is cut after "beta " (text[10] is a space);
    # overlap 6: 10-6 = 4 'a'; 19-6 = 13 'm', copied across the section line into "## S"
    "boundary overlap copies previous tail": (
        "Alpha beta gamma dd\n\n## S\n\nx",
        "D",
        16,
        6,
        [(0, 10, "Alpha beta"), (4, 19, "a beta gamma dd"), (13, 28, "mma dd\n\n## S\n\nx")],
    ),
    # CRLF: blank line "\r\n\r\n" separates paragraphs; the "## B" line still splits
    "CRLF paragraphs and sections": (
        "# T\r\n\r\nabc\r\n## B\r\n\r\nxyz\r\n",
        "C",
        16,
        4,
        [(0, 10, "# T\r\n\r\nabc"), (12, 23, "## B\r\n\r\nxyz")],
    ),
}


@pytest.mark.parametrize(("text", "name", "size", "overlap", "expected"), SMALL_CASES.values(), ids=SMALL_CASES.keys())
def test_small_cases(text, name, size, overlap, expected):
    assert spans(make_document("d", text), strat(name, size, overlap)) == expected


def test_blind_cuts_count_from_document_start_not_section_start():
    # 10 chars of preamble, then a section: the cut stays at 16, not 16 after "## S".
    doc = make_document("d", "aaaaaaaaa\n## S bbbbbbbbbbbbbbbbbbbb\n")
    assert [(c.start, c.end) for c in chunk_document(doc, strat("A", 16))] == [(0, 16), (16, 32), (32, 35)]


def test_chunk_corpus_is_documents_in_order(corpus):
    chunks = chunk_corpus(corpus, STRATEGIES["C"])
    assert [c.doc_id for c in chunks] == sorted((c.doc_id for c in chunks), key=[d.id for d in corpus.documents].index)
    assert len({c.id for c in chunks}) == len(chunks)


# ---------------------------------------------------------------------------
# Destroyed needles
# ---------------------------------------------------------------------------

# Needles on CATS: (start, end, strategy, size, overlap, expected cuts or None when contained)
NEEDLE_CASES = {
    # [13,25) "purr. They n" straddles the blind cut at 20
    "straddles a blind cut": (13, 25, "A", 20, 8, (20,)),
    "inside one blind window": (8, 18, "A", 20, 8, None),
    # with overlap 8 the second chunk starts at 13: holds [13,25) and the 6-char [17,23)
    "overlap saves the straddler": (13, 25, "B", 20, 8, None),
    "shorter than the overlap is held": (17, 23, "B", 20, 8, None),
    # [10,25) is 15 > 8: chunk 0 ends at 20, chunk 1 starts at 13 -> both cuts fall inside
    "longer than the overlap is still cut": (10, 25, "B", 20, 8, (13, 20)),
    # boundaries split the 26-char paragraph [8,34) between its sentences (18 | 19)
    "sentence split inside a long paragraph": (8, 34, "C", 20, 8, (18, 19)),
    "a whole sentence survives boundaries": (19, 34, "C", 20, 8, None),
    # chunk [10,34) of D holds the paragraph's second half plus the copied "ts purr. "
    "boundary overlap holds the straddler": (10, 30, "D", 20, 8, None),
}


@pytest.mark.parametrize(
    ("start", "end", "name", "size", "overlap", "cuts"), NEEDLE_CASES.values(), ids=NEEDLE_CASES.keys()
)
def test_destroyed_needles(start, end, name, size, overlap, cuts):
    chunks = chunk_document(make_document("cats", CATS), strat(name, size, overlap))
    got = destroyed_needles(chunks, [("q1", "cats", start, end)])
    if cuts is None:
        assert got == []
        assert [c for c in chunks if c.contains(start, end)]
    else:
        assert got == [Destroyed("q1", "cats", start, end, cuts)]
        assert not [c for c in chunks if c.contains(start, end)]


def test_needle_in_a_document_without_chunks_is_destroyed_without_cuts():
    chunks = chunk_document(make_document("cats", CATS), STRATEGIES["C"])
    assert destroyed_needles(chunks, [("q9", "dogs", 0, 50)]) == [Destroyed("q9", "dogs", 0, 50, ())]


def test_destroyed_keeps_needle_order_and_skips_held_ones():
    chunks = chunk_document(make_document("cats", CATS), strat("A", 20, 8))
    needles = [("q2", "cats", 35, 45), ("q1", "cats", 0, 5), ("q3", "cats", 13, 25)]
    assert [d.question_id for d in destroyed_needles(chunks, needles)] == ["q2", "q3"]


# ---------------------------------------------------------------------------
# Strategy configuration
# ---------------------------------------------------------------------------

PARSE_OK = [
    (None, "ABCDEF"),
    ("A,C,E", "ACE"),
    (" a , c ", "AC"),
    ("B,b,A", "BA"),  # duplicates dropped, order kept
    (["f", "D"], "FD"),
    ("A,,C,", "AC"),
]


@pytest.mark.parametrize(("spec", "names"), PARSE_OK)
def test_parse_strategies(spec, names):
    assert [s.name for s in parse_strategies(spec)] == list(names)


@pytest.mark.parametrize(
    ("spec", "message"),
    [("Z", "unknown strategy Z"), ("A,X,Y", "unknown strategy X, Y"), ("", r"\(none\)"), (",,", r"\(none\)"), ([], r"\(none\)")],
)
def test_parse_strategies_errors(spec, message):
    with pytest.raises(ValueError, match=message) as info:
        parse_strategies(spec)
    assert "choose from A,B,C,D,E,F" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"boundaries": True, "header": False, "overlap": False, "size": 15}, "at least 16 characters, got 15"),
        ({"boundaries": False, "header": False, "overlap": True, "size": 100, "overlap_chars": 0}, "got 0"),
        ({"boundaries": False, "header": False, "overlap": True, "size": 100, "overlap_chars": 100}, "size-1 \\(99\\)"),
        ({"boundaries": False, "header": False, "overlap": True, "size": 100, "overlap_chars": -5}, "got -5"),
    ],
)
def test_strategy_validation(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Strategy("X", **kwargs)


def test_overlap_chars_unchecked_without_overlap():
    s = Strategy("X", boundaries=True, header=False, overlap=False, size=16, overlap_chars=0)
    assert s.params()["overlap_chars"] == 0


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("A", "blind 512"),
        ("B", "blind 512 + overlap 64"),
        ("C", "boundaries"),
        ("D", "boundaries + overlap 64"),
        ("E", "boundaries + header"),
        ("F", "boundaries + header + overlap 64"),
    ],
)
def test_defaults_and_descriptions(name, description):
    s = STRATEGIES[name]
    assert (s.size, s.overlap_chars) == (512, 64)
    assert s.description == description
    assert s.params() == {
        "name": name,
        "boundaries": s.boundaries,
        "header": s.header,
        "overlap": s.overlap,
        "size": 512,
        "overlap_chars": 64 if s.overlap else 0,
    }


# ---------------------------------------------------------------------------
# Properties on generated Markdown
# ---------------------------------------------------------------------------

_PLAIN = ["alpha", "beta", "gamma", "naïve", "Straße", "数据", "🙂", "x", "e.g.", "C#", "#", "##", "`code`", "—", "[a]"]
_word = st.one_of(
    st.sampled_from(_PLAIN),
    st.text(st.characters(exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=8),
)
_space = st.sampled_from([" ", " ", " ", "\t", "\xa0", "  "])
_end = st.sampled_from([".", "!", "?", '."', ".)", "", ":"])


@st.composite
def _sentence(draw, max_words=8, end=True):
    sep = draw(_space)
    text = sep.join(draw(st.lists(_word, min_size=1, max_size=max_words)))
    return text + (draw(_end) if end else "")


@st.composite
def _paragraph(draw, nl):
    sentences = draw(st.lists(_sentence(), min_size=1, max_size=4))
    return draw(st.sampled_from([" ", nl])).join(sentences)  # a single newline stays inside the paragraph


@st.composite
def _code(draw, nl):
    fence = draw(st.sampled_from(["```", "~~~", "````"]))
    inner = ["# comment", "## not a heading", "x = 1  # note", "", "    indented"]
    if fence != "```":
        inner.append("```")  # a ``` line inside a ~~~ or ```` fence does not close it
    lines = draw(st.lists(st.sampled_from(inner), max_size=5))
    return nl.join([fence + draw(st.sampled_from(["", "python"])), *lines, fence])


@st.composite
def markdown(draw):
    """A Markdown document: optional "# " title, "## " sections, paragraphs, fences, long runs."""
    nl = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    blocks = []
    if draw(st.booleans()):
        blocks.append("# " + draw(_sentence(max_words=3, end=False)))
    kinds = ["heading", "heading", "para", "para", "para", "code", "empty", "long_para", "long_sentence", "long_word"]
    for kind in draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=8)):
        if kind == "heading":
            blocks.append("## " + draw(_sentence(max_words=3, end=False)))
        elif kind == "para":
            blocks.append(draw(_paragraph(nl)))
        elif kind == "code":
            blocks.append(draw(_code(nl)))
        elif kind == "empty":  # an empty section: a heading straight after a heading
            blocks.append("## Empty" + nl + "## " + draw(_sentence(max_words=2, end=False)))
        elif kind == "long_para":  # sentences well past the size in one paragraph
            blocks.append(" ".join([draw(_sentence())] * 6 + [draw(_sentence())] * 6))
        elif kind == "long_sentence":  # one sentence longer than the size
            blocks.append(" ".join([draw(_sentence(end=False))] * 12) + ".")
        else:  # one word longer than the size: cut hard at the limit
            blocks.append("y" * draw(st.integers(121, 300)))
    seps = st.sampled_from([nl * 2, nl * 2, nl, nl * 3, nl + "  " + nl])
    text = draw(st.sampled_from(["", "", " ", nl, "\t" + nl])) + "".join(b + draw(seps) for b in blocks)
    assume(text.strip())
    return text


PLAIN_OF = {"A": "A", "B": "A", "C": "C", "D": "C", "E": "E", "F": "E"}
OVERLAP = 16


def _first_nonspace(text: str, i: int) -> int:
    while text[i].isspace():
        i += 1
    return i


def check_invariants(doc, name: str, size: int) -> None:
    text = doc.text
    strategy = strat(name, size, OVERLAP)
    chunks = chunk_document(doc, strategy)
    # the same cuts without overlap: an overlap chunk is its base chunk plus the copied tail
    base = chunk_document(doc, strat(PLAIN_OF[name], size, OVERLAP))
    assert chunks and len(base) == len(chunks)
    covered = bytearray(len(text))
    prev = prev_base = None
    for c, b in zip(chunks, base):
        assert text[c.start : c.end] == c.content
        assert c.content and c.content == c.content.strip()
        assert b.end - b.start <= size
        assert (c.end, c.section, c.header) == (b.end, b.section, b.header)
        assert c.header == (f"{doc.title} > {c.section}" if c.section else doc.title)
        assert c.embed_text == (f"[{c.header}]\n{c.content}" if strategy.header else c.content)
        covered[c.start : c.end] = b"\1" * (c.end - c.start)
        if not strategy.overlap or prev is None:
            assert (c.start, c.end) == (b.start, b.end)
        else:
            # starts at the copied tail: `overlap` before the previous end, trimmed
            assert c.start == _first_nonspace(text, max(prev.end - OVERLAP, 0))
            # at most size + overlap, not counting the whitespace between the previous
            # chunk and this one's own text (the quote must stay the text at the locator)
            gap = text[prev_base.end : b.start]
            assert not gap.strip()
            assert c.end - c.start - len(gap) <= size + OVERLAP
        if strategy.boundaries and not strategy.overlap:
            # a boundary chunk never crosses a section line
            assert doc.section_at(c.start) is doc.section_at(c.end - 1)
        if not strategy.boundaries and not strategy.overlap:
            # blind cuts every `size` characters, counted from the start of the document
            assert c.start // size == (c.end - 1) // size
        if not strategy.overlap:
            assert c.section == doc.section_at(c.start).title
        if prev is not None:
            assert prev.start <= c.start and prev.end < c.end
            if not strategy.overlap:
                assert prev.end <= c.start
        prev, prev_base = c, b
    missed = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert missed == []


@settings(max_examples=150, deadline=None)
@given(text=markdown(), size=st.integers(60, 120))
def test_chunk_invariants_all_strategies(text, size):
    doc = make_document("gen", text)
    for name in "ABCDEF":
        check_invariants(doc, name, size)


@settings(max_examples=100, deadline=None)
@given(text=markdown(), size=st.integers(60, 120), data=st.data())
def test_blind_overlap_holds_every_needle_shorter_than_the_overlap(text, size, data):
    doc = make_document("gen", text)
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, min(start + OVERLAP, len(text))))
    assume(not text[start].isspace() and not text[end - 1].isspace())
    chunks = chunk_document(doc, strat("B", size, OVERLAP))
    assert destroyed_needles(chunks, [("q", "gen", start, end)]) == []


@settings(max_examples=100, deadline=None)
@given(text=markdown(), size=st.integers(60, 120))
def test_boundaries_keep_a_section_that_fits_whole(text, size):
    doc = make_document("gen", text)
    chunks = chunk_document(doc, strat("C", size, OVERLAP))
    for section in doc.sections:
        body = text[section.start : section.end]
        if body.strip() and len(body.strip()) <= size:
            start = section.start + len(body) - len(body.lstrip())
            end = section.end - (len(body) - len(body.rstrip()))
            assert [(c.start, c.end) for c in chunks if section.start <= c.start < section.end] == [(start, end)]
