"""Timestamp parsing as polars expressions, and the ``--tz`` check."""

from __future__ import annotations

import polars as pl
import pytest

from analyzer.errors import UsageError
from analyzer.ingest.columns.timestamps import check_tz, epoch_seconds, rfc3339


def test_timestamp_helpers() -> None:
    frame = pl.DataFrame(
        {
            "t": [
                "2026-11-29T18:35:15.123891042Z",
                "2022-06-01T14:05:30Z",
                "2026-11-29 18:35:15.123891 UTC",
                "2026-11-29T18:35:15+0800",
                "29/11/2026 18:35",
            ]
        }
    )
    parsed = frame.select(rfc3339(pl.col("t")).dt.epoch("ns")).to_series().to_list()
    assert parsed == [
        1795977315123891042,
        1654092330000000000,
        1795977315123891000,
        1795948515000000000,
        None,
    ]
    epoch = pl.select(epoch_seconds(pl.lit("1731424090.5")).dt.epoch("ns")).item()
    assert epoch == 1731424090_500000000


def test_check_tz() -> None:
    assert check_tz(None) == "UTC"
    assert check_tz("+05:30") == "+05:30"
    assert check_tz("Europe/Zurich") == "Europe/Zurich"
    with pytest.raises(UsageError, match="Mars/Olympus"):
        check_tz("Mars/Olympus")
