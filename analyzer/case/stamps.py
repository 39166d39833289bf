"""Times a case cannot place: found once every row is written, marked ``out_of_range``.

A row's time is out of range when it lies outside the years a case accepts
(:data:`analyzer.schema.TS_EARLIEST` .. :data:`analyzer.schema.TS_LATEST`; the parsers give
such a time to a stamp nanoseconds cannot hold, :mod:`analyzer.ingest.columns.timestamps`),
or when it lies days away from the rest of its file: a file's rows, in time order, are cut
into stretches wherever two of them are more than ``outlier_days`` apart; the stretch that
holds the file's median row is the file's time, and rows of every other stretch are out of
range (a clock reset to 1970 at boot, a placeholder date, one mistyped stamp).

Why here and not per chunk as a file is read: the rule needs all of a file's rows, which a
streamed file, a worker or a shard only has together once the case is committed. Year-less
stamps are moved to the bundle's year first (:func:`shifted_ts`), so the rule sees the times
the case will keep.

An out-of-range row keeps its line, offset, message and everything else; its ``ts`` becomes
null. Null, not clamped: every sort, join and time window of the case already treats a null
time as "no time", whereas any clamped value would sort among real rows (or at an edge) and
could open an attempt or be taken for the first error.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from analyzer.schema import TS_EARLIEST, TS_LATEST

_DAY_NS: Final = 86_400 * 1_000_000_000
_EARLIEST_NS: Final = int(TS_EARLIEST.timestamp()) * 1_000_000_000
_LATEST_NS: Final = int(TS_LATEST.timestamp()) * 1_000_000_000
#: Quality values whose time moves with the year shift of their file.
_MOVABLE: Final = ("inferred_year", "inherited")
#: The columns of :func:`file_ranges`' result.
RANGES_SCHEMA: Final = pl.Schema(
    {"file_id": pl.Int32(), "lo": pl.Int64(), "hi": pl.Int64(), "out_of_range": pl.Int64()}
)


def shifted_ts(shifts: dict[int, int]) -> pl.Expr:
    """``ts`` with the year-less stamps of each file moved by its years in ``shifts``
    (file_id -> years)."""
    if not shifts:
        return pl.col("ts")
    years = pl.col("file_id").replace_strict(shifts, default=0, return_dtype=pl.Int64)
    movable = pl.col("ts_quality").cast(pl.String).is_in(_MOVABLE)
    return (
        pl.when(movable & (years != 0))
        .then(pl.col("ts").dt.offset_by(pl.concat_str([years.cast(pl.String), pl.lit("y")])))
        .otherwise(pl.col("ts"))
    )


def file_ranges(rows: pl.LazyFrame, outlier_days: int) -> pl.DataFrame:
    """Per file with out-of-range rows: ``lo`` and ``hi`` (ns), the times its rows may have
    (null when none may), and ``out_of_range``, how many of its rows lie outside them.

    ``rows`` holds ``file_id`` and ``ts`` (as the case keeps it) of every row. Only a
    histogram of (file, day) comes into memory, whatever the size of the case.
    """
    t = pl.col("ts").dt.epoch("ns")
    inside = (t >= _EARLIEST_NS) & (t < _LATEST_NS)
    histogram = (
        rows.filter(pl.col("ts").is_not_null())
        .select(pl.col("file_id"), pl.when(inside).then(t // _DAY_NS).alias("day"), t.alias("t"))
        .group_by("file_id", "day")
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("t").min().alias("lo"),
            pl.col("t").max().alias("hi"),
        )
        .collect(engine="streaming")  # only the groups are held, not the rows' columns
    )
    timed = histogram.group_by("file_id").agg(pl.col("n").sum().alias("timed"))
    days = histogram.filter(pl.col("day").is_not_null()).sort("file_id", "day")
    gap = pl.col("day") - pl.col("day").shift(1).over("file_id")
    days = days.with_columns(
        (gap > outlier_days).fill_null(False).cum_sum().over("file_id").alias("stretch"),
        (pl.col("n").cum_sum().over("file_id") - pl.col("n")).alias("before"),
        (pl.col("n").sum().over("file_id") // 2).alias("median"),
    )
    # The stretch of the file's median row (0-based position total // 2 in time order).
    main = days.filter(
        (pl.col("before") <= pl.col("median")) & (pl.col("median") < pl.col("before") + pl.col("n"))
    ).select("file_id", pl.col("stretch").alias("main"))
    kept = (
        days.join(main, on="file_id")
        .filter(pl.col("stretch") == pl.col("main"))
        .group_by("file_id")
        .agg(pl.col("lo").min(), pl.col("hi").max(), pl.col("n").sum().alias("kept"))
    )
    return (
        timed.join(kept, on="file_id", how="left")
        .select(
            pl.col("file_id").cast(pl.Int32),
            pl.col("lo"),
            pl.col("hi"),
            (pl.col("timed") - pl.col("kept").fill_null(0)).alias("out_of_range"),
        )
        .filter(pl.col("out_of_range") > 0)
        .sort("file_id")
        .cast(RANGES_SCHEMA)
    )


def mark(rows: pl.DataFrame, ranges: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (canonical columns) with the times outside their file's range in ``ranges``
    made null and marked ``out_of_range``."""
    if ranges.height == 0:
        return rows
    t = pl.col("ts").dt.epoch("ns")
    outside = (
        pl.col("ts").is_not_null()
        & pl.col("out_of_range").is_not_null()
        & (pl.col("lo").is_null() | (t < pl.col("lo")) | (t > pl.col("hi")))
    )
    return (
        rows.join(ranges, on="file_id", how="left", maintain_order="left")
        .with_columns(outside.alias("_outside"))
        .with_columns(
            pl.when(pl.col("_outside")).then(None).otherwise(pl.col("ts")).alias("ts"),
            pl.when(pl.col("_outside"))
            .then(pl.lit("out_of_range"))
            .otherwise(pl.col("ts_quality").cast(pl.String))
            .cast(pl.Categorical)
            .alias("ts_quality"),
        )
        .select(rows.columns)
    )
