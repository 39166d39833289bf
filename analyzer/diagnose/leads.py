"""Leads when no signature explains an attempt: the rows to read first, ranked by evidence,
not by frequency (rule ``rare-early-leads``, inferred).

The line that states a new failure is usually rare, early, and logged by the one host that
behaves unlike its peers; the frequent lines are the cascade. So the error-level templates of
the attempt (:func:`analyzer.signatures.templates.error_level`) are ranked:

1. error-level templates that set the top-ranked spatial outlier apart: rare ones
   (:func:`analyzer.diagnose.patterns.rare_limit`, not routine in the case) and those it
   logged before every other host by more than the clock-skew tolerance, earliest first;
2. its other rare templates, whatever their level (a cloud audit record of a preemption
   states no error word), earliest first;
3. the other rare error-level templates, earliest first;
4. the rest of the error-level templates, earliest first.

Within the last two groups, rows that state the error plainly come first
(:func:`analyzer.signatures.templates.error_rank`: an error severity and the words of failure,
then the words alone, then the severity alone, then words under an INFO prefix).

Each lead is the first row of its template (on the outlier host for the first group). With a
baseline (a healthy run of the same job, ``--baseline``), templates the baseline also logged
are never leads: its noise is not this run's failure. :func:`by_frequency` is the order used
before (the most frequent error-line shapes), kept for the measurement in docs/accuracy.md.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

import polars as pl

from analyzer.diagnose.outliers import Outlier, first_by_margin
from analyzer.diagnose.patterns import rare_limit

#: At most this many leads are listed.
TOP_LEADS: Final = 5
#: Leads may come first from this many of the top-ranked outlier hosts.
OUTLIER_HOSTS: Final = 1
RULE: Final = "rare-early-leads"


def rank_leads(
    table: pl.DataFrame,
    outliers: list[Outlier],
    known: Collection[str] = (),
    top: int = TOP_LEADS,
    margin_ns: int = 2_000_000_000,
) -> list[int]:
    """Row ids of the attempt's leads (``table``: one row per template × host of the
    attempt; ``known``: template texts of the baseline; ``margin_ns``: the clock-skew
    tolerance)."""
    if known:
        table = table.filter(~pl.col("template").is_in(list(known)))
    hosts = max(1, table["host"].drop_nulls().n_unique())
    limit = rare_limit(hosts)
    suspects = [o.host for o in outliers[:OUTLIER_HOSTS]]
    marked = table.with_columns(
        pl.coalesce(pl.col("first_ts").dt.epoch("ns"), pl.col("first_row")).alias("first_at"),
        pl.col("host").is_in(suspects).fill_null(False).alias("suspect"),
        pl.col("host").n_unique().over("template_id").alias("spread"),
    )
    ahead = (
        first_by_margin(marked, margin_ns)
        .select("template_id", "host")
        .with_columns(pl.lit(True).alias("ahead"))
    )
    marked = marked.join(ahead, on=["template_id", "host"], how="left", nulls_equal=True)
    rare = (pl.col("spread") <= limit) & ~pl.col("routine")
    group = (
        pl.when(pl.col("suspect") & pl.col("error") & (rare | pl.col("ahead").fill_null(False)))
        .then(0)
        .when(pl.col("suspect") & rare)
        .then(1)
        .when(pl.col("error") & rare)
        .then(2)
        .when(pl.col("error"))
        .then(3)
        .otherwise(None)
    )
    ranked = (
        marked.with_columns(group.alias("group"))
        .filter(pl.col("group").is_not_null())
        # Each template once, at its best group and, there, its earliest row.
        # Beside the outlier host, time decides (its first distinctive line starts the
        # failure); elsewhere the rows that state an error plainly go first.
        .with_columns(
            pl.when(pl.col("group") <= 1).then(0).otherwise(pl.col("error_rank")).alias("plain")
        )
        .sort("group", "plain", "first_at", "first_row", nulls_last=True)
        .unique("template_id", keep="first", maintain_order=True)
    )
    return [int(i) for i in ranked["first_row"].head(top).to_list()]


#: Severities that make a row a lead in the frequency order.
_LEAD_SEVERITIES = ("ERROR", "CRITICAL", "ALERT", "EMERGENCY")
#: Words that make a row a lead whatever its severity, in the frequency order.
_LEAD_WORDS = r"(?i)\b(?:error|errors|fatal|fail|failed|failure|exception|panic|critical|abort)\b"


def by_frequency(
    rows: pl.LazyFrame, start: int | None, end: int | None, top: int = TOP_LEADS
) -> list[int]:
    """The order before this rule: the first row of each of the most frequent error-line
    shapes (numbers folded), from ``rows`` (row_id, ts, severity, message)."""
    if start is not None and end is not None:
        rows = rows.filter(pl.col("ts").dt.epoch("ns").is_between(start, end))
    shapes = (
        rows.filter(
            pl.col("severity").cast(pl.String).is_in(_LEAD_SEVERITIES)
            | pl.col("message").str.contains(_LEAD_WORDS)
        )
        .with_columns(
            pl.col("message")
            .str.slice(0, 200)
            .str.replace_all(r"0x[0-9a-fA-F]+|\d+", "#")
            .alias("shape")
        )
        .group_by("shape")
        .agg(pl.len().alias("count"), pl.col("row_id").min().alias("first"))
        .sort(["count", "first"], descending=[True, False])
        .head(top)
        .collect()
    )
    return [int(i) for i in shapes["first"].to_list()]
