"""Parsing the prefixes of a column of lines: what the vectorized shortcuts must keep."""

from __future__ import annotations

import datetime as dt
import itertools

import polars as pl
import pytest

from analyzer.ingest.columns import timestamps as tsp
from analyzer.ingest.lines.parse import _local, parse_lines

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


def test_wrappers_are_peeled_in_order_and_only_where_lines_have_them() -> None:
    """A wrapper no line of the column has is skipped; the others are peeled in their order
    (kubectl prefix, timestamp with CRI framing, process, rank) from the lines that have
    them."""
    lines = pl.Series(
        [
            "[pod/p-0/c] 2026-11-29T17:40:00.1Z stderr F [rank3]: "
            "I1129 17:40:00.050537 1 train.py:1] step",
            "(pid=5, ip=10.0.0.1) hello",
            "[rank1]: plain",
            "plain",
        ]
    )
    rows = parse_lines(lines, anchor=dt.date(2026, 11, 30))
    assert rows["pod"].to_list() == ["p-0", None, None, None]
    assert rows["container"].to_list() == ["c", None, None, None]
    assert rows["stream"].to_list() == ["stderr", None, None, None]
    assert rows["cri_tag"].to_list() == ["F", None, None, None]
    assert rows["rank"].to_list() == [3, None, 1, None]
    assert rows["host"].to_list() == [None, "10.0.0.1", None, None]
    assert rows["message"].to_list() == ["step", "hello", "plain", "plain"]
    assert rows["grammar"].to_list() == ["absl", None, None, None]
    assert rows["ts_quality"].to_list() == ["exact", None, None, None]
    assert str(rows["payload_ts"][0]) == "2026-11-29 17:40:00.050537+00:00"
    only_rank = parse_lines(pl.Series(["[rank2]: x", "y"]), anchor=dt.date(2026, 11, 30))
    assert only_rank["rank"].to_list() == [2, None]
    assert only_rank["rank"].dtype == pl.Int32
    assert only_rank["pod"].dtype == pl.String
