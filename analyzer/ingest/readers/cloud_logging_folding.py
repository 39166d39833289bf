"""Fold the multi-line records of Cloud Logging container entries (formats.md §1.5, §5.3 rule 5).

GKE makes every line a container writes its own LogEntry, so a Python traceback, an absl
``=== Source Location Trace: ===`` block or an XLA ``Total hbm usage`` table arrive as one
entry per line, interleaved with other pods' entries (and newest first in a gcloud array).
Container text entries (``textPayload`` of ``k8s_container``/``container`` resources, or of
stdout/stderr logs without a resource type) are folded like the lines of a text file: per
stream — resource type, namespace, pod, container, ``logName`` and a torchrun ``[rankN]:``
prefix — in ``(timestamp, insertId)`` order, a stream's entry starts a record when it is more
than 1 s after the stream's previous entry, and otherwise
:func:`analyzer.ingest.lines.folding.mark_records` decides with the text reader's rules and
caps. A folded row is its first entry's row (line, offset, timestamp, insertId, severity,
labels, ``extra``) with the entries' messages joined by newlines, and ``lines`` /
``exception`` (/ ``continues_record`` for a record cut at the caps) in ``extra``; the other
entries count as ``folded``, blank text entries as ``blank``. Events, audit records,
``jsonPayload`` entries, node logs and entries without a valid ``timestamp`` never fold.

Folding works on one chunk of entries at a time (``ReadOptions.chunk_bytes``, 16 MiB of the
file by default): a record whose entries straddle a chunk boundary stays split in two rows
there (the second piece starts with whatever entry comes first in it). An entry that repeats
an earlier entry of the same chunk (same ``logName``, ``timestamp`` and ``insertId``) is not
folded: it stays a row of its own carrying the de-duplication key of the row its first copy
went into, so the case writer still drops it as a duplicate of that row. Copies in other files
are caught when both files fold the copy the same way (same header entry); a copy whose
record is cut differently (another chunk boundary, only part of a traceback exported) is not.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from analyzer.ingest.base import ReadContext
from analyzer.ingest.lines.folding import EXCEPTION_LINE, mark_records

#: Entries of one stream further apart than this never fold together (formats.md §5.3 rule 5).
FOLD_GAP_NS: Final = 1_000_000_000


def fold_entries(frame: pl.DataFrame, ctx: ReadContext) -> pl.DataFrame:
    """Fold the multi-line records of container text entries into the row of their first
    entry (see module docstring); every other row passes through.

    ``frame`` holds one row per entry with ``_foldable`` marking container text entries and
    ``_dk_a``/``_dk_b`` their de-duplication key. Returns the rows in file order, with
    ``in_message`` of a folded row holding the joined messages and ``_lines``, ``_exception``
    and ``_split`` describing it (null/false for other rows). Counts ``folded`` and ``blank``
    entries in ``ctx.counts``.

    The decisions are made on a narrow frame of the columns folding needs (sorting and
    filtering the wide frame of every extracted field would cost more than the folding); the
    wide frame is filtered once at the end.
    """
    if not frame["_foldable"].any():
        return frame.with_columns(
            pl.lit(None, dtype=pl.UInt32).alias("_lines"),
            pl.lit(None, dtype=pl.String).alias("_exception"),
            pl.lit(False).alias("_split"),
        )
    frame = frame.with_row_index("_i")
    narrow = frame.select(
        "_i",
        "_foldable",
        "_ts",
        "insert_id",
        "_dk_a",
        "_dk_b",
        "_message",
        "in_message",
        "in_grammar",
        "in_level",
        "in_cri_tag",
        pl.struct("rtype", "r_namespace", "r_pod", "r_container", "log_name", "in_rank")
        .hash(seed=3)
        .alias("_stream"),
    )
    candidates = narrow.filter(pl.col("_foldable"))
    # A repeated entry (same logName, timestamp, insertId) does not take part in folding.
    repeated = pl.col("insert_id").is_not_null() & ~pl.struct("_dk_a", "_dk_b").is_first_distinct()
    candidates = candidates.with_columns(repeated.alias("_repeat"))
    copies = candidates.filter(pl.col("_repeat"))
    # Streams in (timestamp, insertId) order; a record starts at each stream's first entry and
    # wherever the stream was silent for more than FOLD_GAP_NS.
    entries = candidates.filter(~pl.col("_repeat")).sort("_stream", "_ts", "insert_id", "_i")
    gap = pl.col("_ts").diff().dt.total_nanoseconds()
    brk = ((pl.col("_stream") != pl.col("_stream").shift(1)) | (gap > FOLD_GAP_NS)).fill_null(True)
    entries = entries.with_columns(brk.alias("_break")).with_columns(
        (pl.col("_break") & pl.col("_break").shift(-1).fill_null(True)).alias("_alone")
    )
    is_blank = pl.col("in_message").str.strip_chars().str.len_bytes() == 0
    # Per entry: whether its row is kept, and for a folded row its joined message (``_joined``),
    # line count and exception line; ``_split`` marks a piece of a record cut at the caps.
    results = [
        narrow.filter(~pl.col("_foldable")).select("_i", pl.lit(True).alias("_keep")),
        # Entries alone in their stretch of a stream are records of one line (or blank): only
        # the others go through the folding rules.
        entries.filter(pl.col("_alone")).select("_i", (~is_blank).alias("_keep")),
    ]
    together = entries.filter(~pl.col("_alone"))
    blank = entries.filter(pl.col("_alone")).select(is_blank.sum()).item()
    folded = 0
    record_keys: pl.DataFrame | None = None
    if together.height:
        marked = mark_records(
            together.lazy().select(
                pl.col("_message").alias("text"),
                pl.col("in_message").alias("message"),
                pl.col("in_grammar").alias("grammar"),
                pl.col("in_level").alias("level"),
                pl.col("in_cri_tag").alias("cri_tag"),
                pl.col("_break").alias("fold_break"),
            ),
            max_lines=ctx.options.max_record_lines,
            max_bytes=ctx.options.max_record_bytes,
        ).select(
            pl.col("record").alias("_record"),
            pl.col("is_header").alias("_header"),
            pl.col("is_split").alias("_split"),
            pl.col("is_blank").fill_null(False).alias("_blank"),
            pl.col("joins_previous").alias("_joins"),
        )
        together = pl.concat([together, marked.collect()], how="horizontal")
        blank += int(together["_blank"].sum())
        record = pl.col("_record")
        multi = (record == record.shift(-1)).fill_null(False) | (
            record == record.shift(1)
        ).fill_null(False)
        starts = pl.col("_header") | pl.col("_split")
        together = together.with_columns(
            multi.alias("_multi"), (starts & record.is_not_null()).alias("_keep")
        )
        lines = together.filter(pl.col("_multi"))
        piece = (
            pl.when(starts | pl.col("_joins"))
            .then(pl.col("in_message"))
            .otherwise(pl.concat_str([pl.lit("\n"), pl.col("in_message")]))
        )
        joined = lines.group_by("_record", maintain_order=True).agg(
            piece.str.join("").alias("_joined"),
            pl.len().alias("_lines"),
            pl.when(pl.col("in_message").str.contains(EXCEPTION_LINE) & ~pl.col("_header"))
            .then(pl.col("in_message"))
            .drop_nulls()
            .last()
            .alias("_exception"),
        )
        heads = lines.filter(starts).select("_i", "_keep", "_split")
        assert heads.height == joined.height
        results += [
            together.filter(~(pl.col("_multi") & starts)).select("_i", "_keep", "_split"),
            pl.concat([heads, joined.drop("_record")], how="horizontal"),
        ]
        kept = together.filter(record.is_not_null())
        folded = kept.height - kept["_record"].n_unique()
        if copies.height:
            # Which row each entry went into: the key and position of its record's first entry.
            record_keys = kept.select(
                "_dk_a",
                "_dk_b",
                *[
                    pl.when(starts).then(pl.col(c)).forward_fill().alias(f"_kept{c}")
                    for c in ("_dk_a", "_dk_b", "_i")
                ],
            )
    if copies.height:
        blank += copies.select(is_blank.sum()).item()
        copies = copies.select("_i", "_dk_a", "_dk_b", (~is_blank).alias("_keep"))
        if record_keys is not None:
            # A copy of an entry folded into a record carries that record's key and comes
            # after it, so the case writer keeps the record and drops the copy.
            copies = copies.join(
                record_keys, on=["_dk_a", "_dk_b"], how="left", maintain_order="left"
            ).select(
                "_i",
                "_keep",
                pl.col("_kept_dk_a").alias("_copy_a"),
                pl.col("_kept_dk_b").alias("_copy_b"),
                pl.when(pl.col("_kept_i") > pl.col("_i")).then(pl.col("_kept_i")).alias("_after"),
            )
        results.append(copies.drop("_dk_a", "_dk_b", strict=False))
    ctx.counts.folded += folded
    ctx.counts.blank += blank
    decided = pl.concat(results, how="diagonal_relaxed").sort("_i")
    assert decided.height == frame.height
    frame = frame.hstack(decided.drop("_i").get_columns())
    for name, dtype in (
        ("_joined", pl.String),
        ("_lines", pl.UInt32),
        ("_exception", pl.String),
        ("_split", pl.Boolean),
        ("_copy_a", pl.UInt64),
        ("_copy_b", pl.UInt64),
        ("_after", pl.UInt32),
    ):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype=dtype).alias(name))
    if not frame["_keep"].all():
        frame = frame.filter(pl.col("_keep"))
    frame = frame.with_columns(
        pl.coalesce("_joined", "in_message").alias("in_message"),
        pl.coalesce("_copy_a", "_dk_a").alias("_dk_a"),
        pl.coalesce("_copy_b", "_dk_b").alias("_dk_b"),
        pl.col("_split").fill_null(False),
    )
    if frame["_after"].is_not_null().any():
        # A copy placed before the row its first copy went into (a newest-first file) moves
        # right after it.
        moved = pl.coalesce("_after", "_i").cast(pl.Int64) * 2 + pl.col("_after").is_not_null()
        frame = frame.sort(moved)
    return frame.drop("_i", "_keep", "_joined", "_copy_a", "_copy_b", "_after")
