"""Parsing the prefixes of a column of lines: what the vectorized shortcuts must keep."""

from __future__ import annotations

import itertools

import polars as pl
import pytest

from analyzer.ingest.columns import timestamps as tsp
from analyzer.ingest.lines.parse import _local

_PARTS = {
    "year": ["2026", "2024", "1677", "2300", "999", "10000", "+2026"],
    "day": ["01", "29", "30", "31", "00", "7"],
    "clock": ["10:00:00", "23:59:60", "24:00:00", "23:60:00", "9:05:01"],
    "fraction": ["", ".", ".123", ".123456", ".123456789", ".1234567", ".12", ",123"],
}


def _stamps(layout: str) -> pl.Series:
    values = [
        layout.format(year=y, day=d, clock=c, fraction=f)
        for y, d, c, f in itertools.product(*_PARTS.values())
    ]
    return pl.Series([*values, None, "", " 2026-01-01 10:00:00"], dtype=pl.String)


@pytest.mark.parametrize(
    ("fmt", "layout"),
    [
        ("%Y%m%d %H:%M:%S%.f", "{year}02{day} {clock}{fraction}"),
        ("%Y-%m-%d %H:%M:%S%.f", "{year}-02-{day} {clock}{fraction}"),
        ("%Y%b %d %H:%M:%S%.f", "{year}Feb {day} {clock}{fraction}"),
    ],
)
@pytest.mark.parametrize("tz", ["UTC", "+08:00", "America/New_York"])
def test_local_stamps_read_as_the_format_alone_reads_them(fmt: str, layout: str, tz: str) -> None:
    """Fixed-length fractions go first (faster); every stamp gets what ``%.f`` gives it,
    however its fraction, date or time is written, and in whatever order the rows come."""
    text = _stamps(layout)
    expected = pl.select(tsp.local_time(pl.lit(text), fmt, tz)).to_series()
    assert _local(text, fmt, tz).equals(expected)
    reordered = text.reverse()
    assert _local(reordered, fmt, tz).equals(expected.reverse())
    assert expected.is_not_null().sum() > 10
