"""Turn marked lines into canonical rows: one row per record, multi-line records joined.

The folding step (:mod:`analyzer.ingest.lines.folding`) says which lines start a record; this
module takes each record's header fields, joins its lines into one message, fills the file's
hints where a line does not say, carries timestamps forward within a file and writes
``extra``. Most records are one line, so only the lines of multi-line records go through a
group-by.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import polars as pl

from analyzer.hosts import chip_location
from analyzer.ingest.columns.extra import compact_json
from analyzer.ingest.columns.timestamps import NS
from analyzer.ingest.lines.folding import EXCEPTION_LINE, TRACEBACK_HEADER
from analyzer.ingest.lines.hints import FileHints
from analyzer.schema import host_expr, plausible_ts, severity_expr

#: The expression of a :class:`FileHints` field, by name and type: a literal for one file, a
#: lookup by ``batch_file`` for a batch of files.
Hint = Callable[[str, pl.DataType], pl.Expr]


def constant_hints(hints: FileHints) -> Hint:
    """The hints of one file as literals (see :func:`build_records`)."""

    def hint(name: str, dtype: pl.DataType) -> pl.Expr:
        return pl.lit(getattr(hints, name), dtype=dtype)

    return hint


def build_records(
    marked: pl.LazyFrame,
    last_ts: object,
    source: str,
    reader_name: str,
    hint: Hint,
    extra: dict[str, str],
) -> pl.LazyFrame:
    """One row per record: header fields, folded message and extra JSON.

    Most records are one line; only the lines of multi-line records go through a group-by.
    ``source`` and ``reader_name`` are the reader's (a row's ``reader`` is the name and the
    line's grammar family). ``hint(name, dtype)`` is the expression of a :class:`FileHints`
    field (a literal for one file, a lookup by ``batch_file`` for a batch of files); ``extra``
    goes into every row.
    Timestamps are carried forward within a file (``batch_file``), never across files.
    """
    names = marked.collect_schema().names()
    first = [*_FIRST, *(["batch_anchor"] if "batch_anchor" in names else [])]
    lines = marked.filter(pl.col("record").is_not_null())
    record = pl.col("record")
    multi = (record == record.shift(-1)).fill_null(False) | (record == record.shift(1)).fill_null(
        False
    )
    single = lines.filter(~multi).select(
        *first,
        (pl.col("message") == TRACEBACK_HEADER).alias("_traceback"),
        pl.col("message"),
        pl.lit(1, dtype=pl.UInt32).alias("_lines"),
        pl.lit(None, dtype=pl.String).alias("_exception"),
    )
    # Continuation lines keep their text verbatim except for wrappers (kubectl/CRI prefixes,
    # ANSI colours) that are not part of what the program wrote; CRI partial lines join the
    # line before them without a newline.
    starts_piece = pl.col("is_header") | pl.col("is_split")
    piece = (
        pl.when(starts_piece | pl.col("joins_previous"))
        .then(pl.col("message"))
        .otherwise(pl.concat_str([pl.lit("\n"), pl.col("message")]))
    )
    grouped = (
        lines.filter(multi)
        .with_columns(
            piece.alias("_piece"),
            pl.when(pl.col("message").str.contains(EXCEPTION_LINE) & ~pl.col("is_header"))
            .then(pl.col("message"))
            .alias("_exception"),
        )
        .group_by("record", maintain_order=True)
        .agg(
            pl.col(*first).first(),
            (pl.col("message").first() == TRACEBACK_HEADER).alias("_traceback"),
            pl.col("_piece").str.join("").alias("message"),
            pl.len().alias("_lines"),
            pl.col("_exception").drop_nulls().last().alias("_exception"),
        )
        .drop("record")
    )
    records = pl.concat([single, grouped], how="vertical").sort("line")
    filled = pl.col("ts").fill_null(strategy="forward")
    if "batch_anchor" in names:
        filled = filled.over("batch_file")  # a batch of files; one file needs no window
    if last_ts is not None:
        filled = filled.fill_null(pl.lit(last_ts, dtype=NS))
    # A column of its own: the select below uses it twice.
    records = records.with_columns(filled.alias("_filled"))
    filled = pl.col("_filled")
    return records.select(
        pl.col("line").cast(pl.Int32),
        pl.col("offset"),
        pl.lit(source).alias("source"),
        pl.concat_str([pl.lit(f"{reader_name}."), pl.col("family")]).alias("reader"),
        filled.alias("ts"),
        pl.when(pl.col("ts").is_null() & filled.is_not_null())
        .then(pl.lit("inherited"))
        .otherwise(pl.col("ts_quality"))
        .alias("ts_quality"),
        pl.coalesce(
            severity_expr(pl.col("level")),
            pl.when(pl.col("_traceback")).then(pl.lit("ERROR")),
        ).alias("severity"),
        host_expr(pl.coalesce(pl.col("host"), hint("host", pl.String()))).alias("host"),
        pl.coalesce(pl.col("pod"), hint("pod", pl.String())).alias("pod"),
        pl.coalesce(pl.col("container"), hint("container", pl.String())).alias("container"),
        pl.lit(None, dtype=pl.String).alias("namespace"),
        hint("workload", pl.String()).alias("workload"),
        pl.coalesce(pl.col("rank"), hint("worker", pl.Int32())).alias("worker"),
        pl.col("logger"),
        pl.col("message"),
        pl.col("attrs"),
        compact_json(
            [
                ("tid", pl.col("tid"), "token"),
                ("lines", pl.when(pl.col("_lines") > 1).then(pl.col("_lines")), "number"),
                ("exception", pl.col("_exception"), "text"),
                (
                    "payload_ts",
                    pl.when(plausible_ts(pl.col("payload_ts")))
                    .then(pl.col("payload_ts"))
                    .dt.to_string("%Y-%m-%dT%H:%M:%S%.fZ"),
                    "token",
                ),
                ("stream", pl.col("stream"), "token"),
                ("continues_record", pl.when(pl.col("is_split")).then(pl.lit(True)), "bool"),
                ("attrs", pl.col("attrs"), "members"),
                *[(key, pl.lit(value), "text") for key, value in extra.items()],
            ]
        ).alias("extra"),
        chip_location(pl.col("message")).alias("_alias"),
        pl.lit("chip").alias("_alias_kind"),
        pl.col("batch_file"),
        *([pl.col("batch_anchor")] if "batch_anchor" in names else []),
    )


_FIRST: Final = (
    "batch_file",
    "line",
    "offset",
    "ts",
    "ts_quality",
    "level",
    "logger",
    "family",
    "host",
    "pod",
    "container",
    "rank",
    "tid",
    "payload_ts",
    "stream",
    "is_split",
    "attrs",
)
