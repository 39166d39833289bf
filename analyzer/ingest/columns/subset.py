"""Columns computed only on the rows that need them.

Most derived fields apply to few rows (the logrus fields to logrus lines, a return code to
the platform's lines), but a polars expression under ``when(mask)`` still runs on every row.
:func:`on_rows` runs it on the rows of the mask alone and spreads the result back.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl


def on_rows(frame: pl.DataFrame, mask: pl.Expr, exprs: Sequence[pl.Expr]) -> list[pl.Series]:
    """``frame.select(exprs)`` evaluated on the rows where ``mask`` is true only, null on
    the others (a null mask counts as false).

    The expressions must work row by row (no windows, sorts or aggregations), or their
    results would depend on which rows are left out. They run lazily, so a subexpression
    they share is computed once.
    """
    # with_columns, not select: a literal mask is spread over every row.
    hit = frame.with_columns(mask.fill_null(False).alias("_on_rows")).get_column("_on_rows")
    part = frame.lazy().filter(hit).select(exprs).collect()
    if part.height == frame.height:
        return part.get_columns()
    # Where each row's value sits in ``part``; null (a null value) for the rows left out.
    where = pl.select(
        pl.when(pl.lit(hit)).then(pl.lit(hit).cast(pl.UInt32).cum_sum() - 1)
    ).to_series()
    return [column.gather(where) for column in part.get_columns()]
