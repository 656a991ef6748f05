"""The tiny hand-made corpus of the plumbing tests: two documents and four questions (``conftest.py`` makes them
the ``tiny_corpus``, ``tiny_truth`` and ``tiny_eval`` fixtures)."""

from pathlib import Path

# Two documents; strategy C cuts them into 8 chunks (positions in comments).
#  0 "# Animal Notes"                       animal notes
#  1 "## Zebras ... morning."               zebras x2, graze quietly near riverbanks every single morning
#  2 "## Volcanoes ... eruption."           volcanoes volcanic ash covers northern plateaus after each eruption
#  3 "## Long ... Glaciers carve deep valleys."   (tundra x38 first: P1, 294 chars)
#  4 "Rivers later fill those valleys. delta..."  (P2 cannot be packed with P1: together > 512 chars)
#  5 "## Antarctica krill x40 Penguins huddle ..." (50 words: past a 40-token window, the needle is unread)
#  6 "# Plant Notes"                        plant notes
#  7 "## Ferns ... fronds."                 ferns x2, reproduce through spores released beneath fronds
TINY_DOCS = {
    "animals": (
        "# Animal Notes\n\n"
        "## Zebras\n\n"
        "Zebras graze quietly near riverbanks every single morning.\n\n"
        "## Volcanoes\n\n"
        "Volcanic ash covers northern plateaus after each eruption.\n\n"
        "## Long\n\n"
        + "tundra " * 38 + "Glaciers carve deep valleys.\n\n"
        "Rivers later fill those valleys. " + "delta " * 43 + "delta.\n\n"
        "## Antarctica\n\n"
        + "krill " * 40 + "Penguins huddle together to survive antarctic winter storms.\n"
    ),
    "plants": (
        "# Plant Notes\n\n"
        "## Ferns\n\n"
        "Ferns reproduce through spores released beneath fronds.\n"
    ),
}

TINY_TRUTH = {
    "questions": [
        {"id": "q1", "needle": "Zebras graze quietly near riverbanks every single morning.",
         "queries": {"course": "Where do zebras graze?", "ticket": "volcanic ferns"}},
        {"id": "q2", "needle": "Volcanic ash covers northern plateaus after each eruption.",
         "queries": {"course": "volcanic ash eruption", "ticket": "what covers plateaus after eruption"}},
        {"id": "q3", "needle": "Glaciers carve deep valleys.\n\nRivers later fill those valleys.",
         "queries": {"course": "Do glaciers carve valleys?", "ticket": "why are valleys deep"}},
        {"id": "q4", "needle": "Penguins huddle together to survive antarctic winter storms.",
         "queries": {"course": "penguins huddle in storms", "ticket": "krill"}},
    ],
    "ood": [
        {"id": "o1", "kind": "near", "query": "what do zebras drink"},
        {"id": "o2", "kind": "far", "query": "quantum chromodynamics"},
    ],
}


def write_tiny_kb(base: Path, truth_text: str) -> Path:
    """The tiny corpus's documents in ``base/kb`` and ``truth_text`` beside it as its ground truth
    (``base/kb.truth.json``, where the CLI looks for it): the folder."""
    folder = base / "kb"
    folder.mkdir()
    for doc_id, text in TINY_DOCS.items():
        (folder / f"{doc_id}.md").write_text(text, encoding="utf-8")
    (base / "kb.truth.json").write_text(truth_text, encoding="utf-8")
    return folder
