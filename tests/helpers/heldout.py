"""The held-out corpus of the regression gate's tests (:func:`make_heldout`): six short documents, none from the
bundled corpus; in three of them the needle paragraph straddles character 512, so blind 512-character cuts
(strategy A) destroy those answers while paragraph cuts (C) keep them whole. And :func:`run`, the CLI in process."""

from __future__ import annotations

import json
from pathlib import Path

from ragdiag.cli.parser import main

TOPICS = {
    # doc id: (filler words, needle, course phrasing, ticket phrasing, straddles 512)
    "beekeeping": ("hive comb wax frame smoker", "Queen bees lay roughly two thousand eggs each summer day.",
                   "how many eggs does a queen bee lay", "queen laying rate", True),
    "lighthouses": ("lamp tower coast keeper lens", "Fresnel lenses bend lighthouse beams across twenty miles.",
                    "how far do fresnel lenses bend beams", "lighthouse beam range", True),
    "pottery": ("clay wheel glaze kiln slip", "Stoneware vitrifies when fired above twelve hundred degrees.",
                "when does stoneware vitrify", "firing temperature stoneware", True),
    "sailing": ("mast hull keel tack jib", "Catamarans resist capsizing thanks to their twin hulls.",
                "why do catamarans resist capsizing", "catamaran stability", False),
    "orchids": ("petal bloom stem root pot", "Phalaenopsis orchids rebloom after a cool autumn rest.",
                "when do phalaenopsis orchids rebloom", "orchid flowering again", False),
    "glaciers": ("ice snow valley moraine firn", "Firn compacts into glacial ice over several decades.",
                 "how long does firn take to become ice", "firn compaction time", False),
}
OOD = [("o1", "near", "how do bees make honey wax candles"), ("o2", "far", "renew a passport abroad"),
       ("o3", "far", "bake sourdough bread crust")]


def _doc(doc_id: str, filler: str, needle: str, straddle: bool) -> str:
    words = filler.split()
    head = f"# {doc_id.title()}\n\n## Notes\n\n"
    para = " ".join(words[i % len(words)] for i in range(60)) + "."
    text = head + para + "\n\n"
    if straddle:  # pad so that the needle paragraph starts 30 characters before 512
        pad = 512 - 30 - len(text) - 2
        text += (" ".join(words[i % len(words)] for i in range(200)))[:pad].rstrip() + ".\n\n"
    return text + needle + "\n\n" + para + "\n"


def make_heldout(base: Path, *, questions=None) -> tuple[Path, Path]:
    """Write the held-out corpus and its truth under ``base``; return (folder, truth path)."""
    folder = base / "heldout"
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, (filler, needle, _, _, straddle) in TOPICS.items():
        (folder / f"{doc_id}.md").write_text(_doc(doc_id, filler, needle, straddle), encoding="utf-8")
    qs = [{"id": f"q{i + 1}", "needle": needle, "queries": {"course": course, "ticket": ticket}}
          for i, (_, (_, needle, course, ticket, _)) in enumerate(TOPICS.items())]
    truth = {"questions": qs if questions is None else questions(qs),
             "ood": [{"id": i, "kind": k, "query": q} for i, k, q in OOD]}
    path = base / "heldout.truth.json"
    path.write_text(json.dumps(truth, indent=1), encoding="utf-8")
    return folder, path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def heldout_run(base: Path, capsys, retrievers: str) -> dict:
    """An `eval --out` folder (``base/run``) of the held-out corpus written under ``base``, strategies A and C: the
    paths (``folder``, ``truth``, ``out``, ``tmp``: ``base``)."""
    folder, truth = make_heldout(base)
    out = base / "run"
    code, _, err = run(capsys, "eval", "--corpus", folder, "--truth", truth, "--no-cache", "--strategies", "A,C",
                       "--retrievers", retrievers, "--out", out)
    assert code == 0, err
    return {"folder": folder, "truth": truth, "out": out, "tmp": base}
