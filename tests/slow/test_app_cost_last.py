"""The Cost page shows its last measurement before "Measure now", and says when there is none (FAKE encoder)."""

from __future__ import annotations

import pytest

from apptest import fake_tiny, open_page, run, texts  # noqa: F401  (fixture)

pytestmark = pytest.mark.slow  # measures every configuration once (about 15 s on 2 cores)


def _app(page: str, **params):
    return open_page(page, timeout=120, **params)


def _table(at):
    frames = [d.value.data if hasattr(d.value, "data") else d.value for d in at.dataframe]
    return next(f for f in frames if "configuration" in f.columns)


def test_cost_shows_the_last_measurement_and_says_when_there_is_none(fake_tiny):
    at = _app("app_pages/cost.py", sample="2")
    none = [i.value for i in at.info]
    assert any(v.startswith("No measurement of these documents and questions yet.") for v in none), none
    assert any("times each of the 6 configurations on 2 queries, one at a time" in v for v in none)
    assert not at.dataframe
    assert not list((fake_tiny["cache"] / "measurements").glob("cost-*.json"))

    at.toggle(key="measure").set_value(True)
    run(at)
    measured = _table(at)
    assert "Measured now:" in texts(at)
    assert len(list((fake_tiny["cache"] / "measurements").glob("cost-*.json"))) == 1  # kept in the cache folder

    later = _app("app_pages/cost.py", sample="2")  # a new session, "Measure now" off: the same table, said as such
    assert not later.toggle(key="measure").value
    assert not later.info
    shown = texts(later).replace("\\", "")
    assert "Last measurement:" in shown and "2 queries timed per configuration" in shown
    assert "Turn on “Measure now” to time again." in shown
    assert _table(later).equals(measured)

    moved = _app("app_pages/cost.py", sample="2", cut="0.5")  # the context's cut moved since: said, not re-priced
    assert "and price the prompts at the context's cut 0.500" in texts(moved).replace("\\", "")
