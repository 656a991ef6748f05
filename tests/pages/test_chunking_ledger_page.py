"""The Chunking page's repair ledger (FAKE encoder: plumbing): one table, each repaired or broken query one click
from the Inspector, the library's ledger at the page's gate."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from apptest import app, environment, frame_with, library, tiny  # noqa: F401 (fixtures and helpers)


@pytest.fixture(scope="module", autouse=True)
def fake_encoder_env():
    with environment({"RAGDIAG_ENCODER": "fakes:fake_encoder"}):
        yield


def test_ledger_frame_has_a_row_per_change_with_its_inspector_link(library):
    from ragdiag.analyses.gate_table import gate_table
    from ragdiag.analyses.ledger import ledger
    from ragdiag.core.gate import Gate
    from ui.ledger_view import ledger_frame

    gate = Gate(keep=4, cut=0.9)
    led = ledger(library, "E/dense", gate, expansions=("neighbours", "section"))
    rungs = dict(zip(*[(t := gate_table(library, "E/dense", gate)).query_ids, t.outcome]))
    df = ledger_frame(led, rungs, {c.label for c in library.results}, {"cut": "0.9"})
    assert set(df["config"]) == {"A/dense", "E+neighbours/dense", "E+section/dense"}
    for r in led.rows:
        mine = df[df["config"] == r.config]
        assert sorted(mine.loc[mine["change"] == "repaired", "query"]) == sorted(r.repaired)
        assert sorted(mine.loc[mine["change"] == "broken", "query"]) == sorted(r.broken)
        assert len(mine) == max(len(r.repaired) + len(r.broken), 1)
    for _, row in df[df["change"] != ""].iterrows():
        params = parse_qs(urlparse(row["inspect"]).query)
        # a retrieval-time row ranks as the baseline: its link opens the baseline's configuration
        want = row["config"] if row["config"] == "A/dense" else "E/dense"
        assert params["q"] == [row["query"]] and params["config"] == [want] and params["cut"] == ["0.9"]
        assert (row["lost at"] != "") == (row["change"] == "repaired")


def test_the_page_shows_the_ledger_against_the_sidebars_configuration(tiny):
    at = app("app_pages/chunking.py", config="E/dense")
    df = frame_with(at, "change")
    assert set(df["config"]) == {"A/dense", "E+neighbours/dense", "E+section/dense"}
    assert any("Repair ledger" in s.value for s in at.subheader)
    assert any(c.value.startswith("E/dense loses") for c in at.caption)
