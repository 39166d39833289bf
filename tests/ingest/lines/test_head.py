"""Decisions from a file head: whether parsing its lines could date any of them."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from analyzer.ingest.lines.head import any_dated
from analyzer.ingest.lines.parse import parse_lines

ANCHOR = dt.date(2026, 11, 30)


@pytest.mark.parametrize(
    ("lines", "dated"),
    [
        (["Nov 29 18:00:00.123456 node-1 kubelet[812]: I1129 18:00:00.123 1 a.go:1] x"], False),
        (["I1129 18:00:00.123456    11 main.py:10] step 1"], False),
        (["E0000 00:00:1732212345.123456    11 cuda_dnn.cc:8310] early"], True),
        (["2026-11-29 18:00:00.123456: I external/tsl/x.cc:1] tsl"], True),
        (["2026-11-29T18:00:00.123456789Z stderr F I1129 18:00:00.123456 1 a.py:1] cri"], True),
        ([], False),
    ],
)
def test_any_dated_says_whether_parsing_could_date_a_line(lines: list[str], dated: bool) -> None:
    assert any_dated(lines) is dated
    if lines:
        parsed = parse_lines(pl.Series(lines), anchor=ANCHOR)
        found = parsed.filter(pl.col("ts_quality").is_in(["exact", "inferred_tz"]))["ts"]
        assert (found.drop_nulls().len() > 0) is dated
