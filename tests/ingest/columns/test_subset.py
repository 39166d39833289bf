"""Columns computed only on the rows a mask selects."""

from __future__ import annotations

import polars as pl

from analyzer.ingest.columns.subset import on_rows


def test_on_rows_computes_where_the_mask_holds_and_leaves_nulls_elsewhere() -> None:
    frame = pl.DataFrame({"text": ["a=1", "b", "a=3", None], "keep": [True, True, None, False]})
    got = on_rows(
        frame,
        pl.col("keep"),
        [
            pl.col("text").str.extract(r"a=(\d+)", 1).cast(pl.Int64).alias("a"),
            pl.col("text").str.to_uppercase().alias("upper"),
        ],
    )
    assert [column.name for column in got] == ["a", "upper"]
    assert got[0].to_list() == [1, None, None, None]
    assert got[0].dtype == pl.Int64
    assert got[1].to_list() == ["A=1", "B", None, None]


def test_on_rows_with_every_row_or_none_or_an_empty_frame() -> None:
    frame = pl.DataFrame({"text": ["x", "y"]})
    upper = [pl.col("text").str.to_uppercase().alias("upper")]
    assert on_rows(frame, pl.lit(True), upper)[0].to_list() == ["X", "Y"]
    assert on_rows(frame, pl.lit(False), upper)[0].to_list() == [None, None]
    assert on_rows(frame.clear(), pl.lit(True), upper)[0].len() == 0
