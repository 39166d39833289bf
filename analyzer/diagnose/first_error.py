"""The first real error of an attempt: the row where the failure started, not its cascade.

Candidates are the attempt's matches of one role (roots; secondaries only when there is no
root at all). Clocks of different hosts disagree by up to ``tolerance`` (a default of 2 s, or
the larger skew measured between hosts), so the earliest candidate does not decide alone:

1. every candidate row within ``tolerance`` of the earliest one is *simultaneous* (times
   corrected by each host's measured clock offset where one was measured);
2. of each host only its own earliest row counts (one host's clock orders its own rows);
3. among those, the highest signature precedence wins, then the earlier time, then the
   row's position in the case;
4. on the winning row, the signature with the highest precedence names the error.

Rows with no time at all (a pasted traceback, ``print`` output, a file whose lines carry no
stamp) still have an order: their position in their file. When no candidate of the role has a
time, each file's first candidate row (by position) stands for that file, and among those the
highest precedence wins, then the earlier file. A file's position order is as good a clock as
one host's stamps: what a program wrote first, it did first.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

#: Roots at or below this precedence are catch-alls ("a traceback", "an exception line"):
#: they say that something raised, not what it means.
CATCH_ALL_PRECEDENCE = -50


def yield_to_specific(evidence: pl.DataFrame) -> pl.DataFrame:
    """``evidence`` where a catch-all root (precedence <= :data:`CATCH_ALL_PRECEDENCE`) is
    made context on a row that a specific signature (precedence >= 0) reads as a consequence
    or as information: the specific reading of the record wins over the catch-all's guess that
    it states a cause."""
    if evidence.height == 0:
        return evidence
    specific = (pl.col("role") != "root") & (pl.col("precedence") >= 0)
    explained = specific.any().over("row_id")
    generic_root = (pl.col("role") == "root") & (pl.col("precedence") <= CATCH_ALL_PRECEDENCE)
    return evidence.with_columns(
        pl.when(generic_root & explained)
        .then(pl.lit("context"))
        .otherwise(pl.col("role"))
        .alias("role")
    )


@dataclass(frozen=True)
class Winner:
    #: The winning match (one row of the evidence frame, as a dict).
    row: dict[str, object]
    #: Rows of other hosts that were simultaneous candidates (shown as context/conflict).
    rivals: pl.DataFrame
    #: How many candidates of the role the attempt had in all.
    candidates: int


def pick(evidence: pl.DataFrame, role: str, tolerance_ns: int) -> Winner | None:
    """The first error of ``role`` in one attempt's ``evidence`` (None when there is none).

    Times are compared as ``rank_ts`` (the time corrected by the host's measured clock
    offset, :mod:`analyzer.diagnose.skew`) when the frame has it, else as ``ts``.
    """
    evidence = _with_rank(evidence)
    of_role = evidence.filter(pl.col("role") == role)
    candidates = of_role.filter(pl.col("rank_ts").is_not_null())
    if candidates.height == 0:
        return _by_position(of_role)
    earliest = candidates["rank_ts"].min()
    window = candidates.filter(
        pl.col("rank_ts") <= pl.lit(earliest) + pl.duration(nanoseconds=tolerance_ns)
    )
    on_rows = window.filter(pl.col("row_id").is_in(_earliest_of_each(window, ["host"])))
    best = _ranked(on_rows).row(0, named=True)
    best.pop("_row_precedence")
    best.pop("rank_ts")
    rivals = on_rows.filter(
        (pl.col("row_id") != best["row_id"]) & pl.col("host").ne_missing(best["host"])
    )
    return Winner(row=best, rivals=rivals, candidates=candidates["row_id"].n_unique())


def host_firsts(evidence: pl.DataFrame, role: str) -> pl.DataFrame:
    """Each host's own first error of ``role``: the rule above within one host, so the
    host of an attempt's first error gets that very row. A host's earliest timed candidate
    row (step 2), named by its highest-precedence signature (step 4); a host whose candidates
    have no time at all, by position (each of its files' first candidate row, then the
    highest precedence, then the earlier file). One row per host that has a candidate:
    the evidence columns of the winning match (``rank_ts`` included)."""
    evidence = _with_rank(evidence)
    of_role = evidence.filter((pl.col("role") == role) & pl.col("host").is_not_null())
    timed = of_role.filter(pl.col("rank_ts").is_not_null())
    untimed = of_role.filter(~pl.col("host").is_in(timed["host"].unique().implode()))
    chosen = pl.concat(
        [
            timed.filter(pl.col("row_id").is_in(_earliest_of_each(timed, ["host"]))),
            untimed.filter(pl.col("row_id").is_in(_first_of_each(untimed, ["host", "file_id"]))),
        ]
    )
    return _ranked(chosen).group_by("host", maintain_order=True).first().drop("_row_precedence")


def _with_rank(evidence: pl.DataFrame) -> pl.DataFrame:
    if "rank_ts" in evidence.columns:
        return evidence
    return evidence.with_columns(pl.col("ts").alias("rank_ts"))


def _earliest_of_each(frame: pl.DataFrame, keys: list[str]) -> pl.Series:
    """Row ids of each group's earliest row by corrected time, then position (step 2: one
    host's clock orders its own rows); as a one-element list column for ``is_in``."""
    return (
        frame.sort("rank_ts", "row_id")
        .group_by(keys, maintain_order=True)
        .agg(pl.col("row_id").first())
        .get_column("row_id")
        .implode()
    )


def _first_of_each(frame: pl.DataFrame, keys: list[str]) -> pl.Series:
    """Row ids of each group's first row by position (row ids follow the file's lines)."""
    return (
        frame.sort("row_id")
        .group_by(keys, maintain_order=True)
        .agg(pl.col("row_id").first())
        .get_column("row_id")
        .implode()
    )


def _ranked(rows: pl.DataFrame) -> pl.DataFrame:
    """Steps 3 and 4: the highest row precedence first, then the earlier time, then the
    earlier position; on one row, its signatures by precedence (the first names it)."""
    return rows.with_columns(
        pl.col("precedence").max().over("row_id").alias("_row_precedence")
    ).sort(
        ["_row_precedence", "rank_ts", "row_id", "precedence", "signature"],
        descending=[True, False, False, True, False],
        nulls_last=True,
    )


def _by_position(candidates: pl.DataFrame) -> Winner | None:
    """The first error among candidates that have no time: each file's first row (row ids
    follow the file's lines), then the highest precedence, then the earlier file."""
    if candidates.height == 0:
        return None
    on_rows = candidates.filter(pl.col("row_id").is_in(_first_of_each(candidates, ["file_id"])))
    best = _ranked(on_rows).row(0, named=True)
    best.pop("_row_precedence")
    best.pop("rank_ts", None)
    rivals = on_rows.filter(pl.col("file_id") != best["file_id"])
    return Winner(row=best, rivals=rivals, candidates=candidates["row_id"].n_unique())
