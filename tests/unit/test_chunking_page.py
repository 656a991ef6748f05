"""The Chunking page's size chart stays drawable however many chunks a corpus has (Altair refuses data of more
than 5,000 rows): the chart is drawn from one row per strategy, whose quartiles are numpy's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ui.charts import chunk_size_chart
from ui.frames import size_summary


def _sizes(n_per_strategy: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"strategy": np.repeat(["A", "E"], n_per_strategy),
                         "chars": rng.integers(20, 2000, size=2 * n_per_strategy)})


@pytest.mark.parametrize("n", [1, 3, 2543, 6000])  # 2 × 2,543 = 5,086: the bundled corpus's count that failed
def test_the_size_chart_draws_any_number_of_chunks_from_one_row_per_strategy(n):
    sizes = _sizes(n)
    summary = size_summary(sizes)
    spec = chunk_size_chart(summary).to_dict()  # raises MaxRowsError over 5,000 rows of data
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) == 2
    for row in rows:
        chars = sizes.loc[sizes["strategy"] == row["strategy"], "chars"].to_numpy()
        expected = [chars.min(), *np.percentile(chars, [25, 50, 75]), chars.max()]
        assert [row[k] for k in ("min", "p25", "median", "p75", "max")] == pytest.approx(expected)


def test_the_raw_chunks_would_overflow_altair():
    """The failure the summary avoids (so the test above tests something): 5,086 raw rows are refused."""
    import altair as alt

    with pytest.raises(alt.MaxRowsError):
        alt.Chart(_sizes(2543)).mark_boxplot().encode(x="chars:Q", y="strategy:N").to_dict()
