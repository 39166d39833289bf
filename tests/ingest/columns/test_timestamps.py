"""Timestamp parsing as polars expressions, and the ``--tz`` check."""

from __future__ import annotations

import polars as pl
import pytest

from analyzer.errors import UsageError
from analyzer.ingest.columns.timestamps import (
    UNREPRESENTABLE,
    check_tz,
    epoch_micros,
    epoch_seconds,
    local_time,
    rfc3339,
)


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


@pytest.mark.parametrize(
    "stamp",
    [
        "9999-12-31T23:59:59Z",
        "0001-01-01T00:00:00Z",
        "1677-01-01T00:00:00Z",
        "2262-06-01T00:00:00Z",
        "2600-01-01 00:00:00 UTC",
        "+10000-01-01T00:00:00Z",
        "-0001-01-01T00:00:00Z",
    ],
)
def test_stamps_beyond_int64_nanoseconds_do_not_wrap(stamp: str) -> None:
    """polars wrapped these around (9999 -> 1816, 2600 -> 2015); they are now the
    out-of-range marker, whatever the zone they are read in."""
    assert pl.select(rfc3339(pl.lit(stamp))).item() == UNREPRESENTABLE
    local = stamp[:19].replace("T", " ")
    for tz in ("UTC", "+05:30", "Europe/Zurich"):
        moved = pl.select(local_time(pl.lit(local), "%Y-%m-%d %H:%M:%S%.f", tz)).item()
        assert moved is None or moved.year < 1970, (local, tz, moved)


def test_epoch_numbers_beyond_int64_nanoseconds_do_not_wrap() -> None:
    seconds = pl.select(epoch_seconds(pl.lit(pl.Series(["99999999999.5", "1731424090.5"]))))
    assert seconds.to_series().to_list()[0] == UNREPRESENTABLE
    assert seconds.to_series().dt.epoch("ns").to_list()[1] == 1731424090_500000000
    micros = pl.Series(["99999999999999999", "-9223372036854775808", "1731424090500000"])
    parsed = pl.select(epoch_micros(pl.lit(micros))).to_series()
    assert parsed.to_list()[:2] == [UNREPRESENTABLE, UNREPRESENTABLE]
    assert parsed.dt.epoch("ns").to_list()[2] == 1731424090_500000000


def test_check_tz() -> None:
    assert check_tz(None) == "UTC"
    assert check_tz("+05:30") == "+05:30"
    assert check_tz("Europe/Zurich") == "Europe/Zurich"
    with pytest.raises(UsageError, match="Mars/Olympus"):
        check_tz("Mars/Olympus")
