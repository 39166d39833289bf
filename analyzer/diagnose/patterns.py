"""The case's log templates as the spatial, temporal and lead rules read them: one row per
template × host of one attempt. The tables (:mod:`analyzer.signatures.templates`) are made
here (:func:`make_patterns`), the first time a case is analyzed, and kept in the case: they
depend on its rows alone, which never change once written."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import polars as pl

from analyzer.case.layout import TEMPLATE_HOSTS_FILE, TEMPLATE_ROWS_FILE, TEMPLATES_FILE
from analyzer.case.store import Case
from analyzer.errors import CaseError
from analyzer.signatures.matching import row_files
from analyzer.signatures.templates import (
    BUCKET_S,
    span_columns,
    templates_current,
    write_templates,
)

#: A template the case logs in more time buckets than this, on more than a few hosts, is
#: routine (a benign error retried all run long): never rare, never a failure's first line.
ROUTINE_BUCKETS: Final = 3


def rare_limit(hosts: int) -> int:
    """A template logged by at most this many of ``hosts`` is rare on them."""
    return max(1, hosts // 8)


@dataclass(frozen=True)
class Patterns:
    """``templates``: template_id, template, rows, hosts, buckets, first_row, first_ts, error;
    ``cells``: template_id, host, bucket, rows, first_row, last_row, first_ts, last_ts;
    ``rows``: the template of every row (row_id, template_id, ts, host), scanned lazily."""

    templates: pl.DataFrame
    cells: pl.DataFrame
    rows: pl.LazyFrame

    def within(self, start: int | None, end: int | None) -> pl.DataFrame:
        """One row per template × host of the rows in [start, end] (ns; every row when the
        attempt has no time): rows, first/last row and time, the template's text, its error
        flag, and whether it is routine in the case (:data:`ROUTINE_BUCKETS`)."""
        per_host = self._spans(start, end)
        hosts = int(self.templates.select(pl.col("hosts").max()).item() or 0)
        routine = (pl.col("buckets") > ROUTINE_BUCKETS) & (pl.col("hosts") > rare_limit(hosts))
        return per_host.join(
            self.templates.select(
                "template_id", "template", "error", "error_rank", routine.alias("routine")
            ),
            on="template_id",
        ).sort("first_row")

    def _spans(self, start: int | None, end: int | None) -> pl.DataFrame:
        """Rows, first/last row and time per template × host of the rows in [start, end].

        Summed from the cells of the time buckets wholly inside the span, and from the rows
        of the (at most two) buckets it cuts: a few hundred thousand cells and rows instead
        of every row of the case (20 M at 4,096 hosts)."""
        if start is None or end is None:
            return self.rows.group_by("template_id", "host").agg(*span_columns()).collect()
        width = BUCKET_S * 1_000_000_000
        first_whole = -(-start // width) * width  # the first bucket that starts in the span
        last_whole = (end + 1) // width * width - width  # the last that ends in it
        bucket = pl.col("bucket").dt.epoch("ns")
        whole = self.cells.filter(bucket.is_between(first_whole, last_whole)).select(
            "template_id", "host", "rows", "first_row", "last_row", "first_ts", "last_ts"
        )
        stamp = pl.col("ts").dt.epoch("ns")
        cut = (
            self.rows.filter(
                stamp.is_between(start, end)
                & ((stamp < first_whole) | (stamp >= last_whole + width))
            )
            .group_by("template_id", "host")
            .agg(*span_columns())
            .collect()
        )
        return (
            pl.concat([whole, cut.select(whole.columns).cast(whole.schema)])
            .group_by("template_id", "host")
            .agg(
                pl.col("rows").sum(),
                pl.col("first_row").min(),
                pl.col("last_row").max(),
                pl.col("first_ts").min(),
                pl.col("last_ts").max(),
            )
        )


def make_patterns(case: Case) -> bool:
    """Write the template tables of ``case`` when missing or stale; whether the case holds
    them now (not when its directory cannot be written: :func:`load_patterns` then makes
    them in a scratch directory)."""
    if templates_current(case):
        return True
    try:
        write_templates(row_files(case), case.path)
    except CaseError:
        return False
    return True


def load_patterns(case: Case) -> Patterns:
    """The template tables of ``case``, made now when missing or stale (kept in memory only
    when the case directory cannot be written)."""
    if not make_patterns(case):
        with tempfile.TemporaryDirectory() as scratch:
            write_templates(row_files(case), Path(scratch))
            return _read(Path(scratch), in_memory=True)
    return _read(case.path)


def _read(directory: Path, *, in_memory: bool = False) -> Patterns:
    rows = pl.scan_parquet(directory / TEMPLATE_ROWS_FILE)
    return Patterns(
        pl.read_parquet(directory / TEMPLATES_FILE),
        pl.read_parquet(directory / TEMPLATE_HOSTS_FILE),
        rows.collect().lazy() if in_memory else rows,
    )


def baseline_templates(case: Case) -> frozenset[str]:
    """Every template text ``case`` (a healthy run's) logged."""
    return frozenset(load_patterns(case).templates["template"].to_list())
