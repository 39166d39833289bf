"""Restart attempts: the case's timeline cut where the workload started again.

Signals, strongest first (the first that finds more than one attempt decides):

1. **restart labels**: rows carrying a restart-attempt number (JobSet's
   ``jobset.sigs.k8s.io/restart-attempt`` label, kept in ``rows.attempt``);
2. **pod generations**: a workload's pods are replaced as a set (JobSet recreates every pod):
   a pod first seen after every earlier pod of its workload was last seen opens a generation;
3. **global silence**: no row at all for ``silence`` seconds (a job resubmitted later).

Rows without a label (node journals, audit events, a platform's records) belong to the
attempt that had started when they were written (the latest start at or before their time),
so an infrastructure event between two attempts counts against the one it ended.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import polars as pl

from analyzer import defaults

#: Default length of a global silence that separates two attempts (seconds).
DEFAULT_SILENCE_S = defaults.SILENCE_S


@dataclass(frozen=True)
class Attempt:
    index: int
    #: ns since the epoch (UTC); None when no row of the attempt has a time.
    start: int | None
    end: int | None
    boundary: str
    #: The restart label value, when labels told the attempts apart.
    label: int | None
    hosts: int
    rows: int


def _by_labels(activity: pl.LazyFrame) -> list[tuple[int, int, int | None]]:
    """(start ns, end ns, label) per restart label, in time order."""
    table = (
        activity.filter(pl.col("attempt").is_not_null() & pl.col("ts").is_not_null())
        .group_by("attempt")
        .agg(
            pl.col("ts").min().dt.epoch("ns").alias("start"),
            pl.col("ts").max().dt.epoch("ns").alias("end"),
        )
        .sort("start", "attempt")
        .collect()
    )
    return [(int(s), int(e), int(a)) for a, s, e in table.select("attempt", "start", "end").rows()]


def _by_pod_generations(activity: pl.LazyFrame) -> list[tuple[int, int, int | None]]:
    pods = (
        activity.filter(
            pl.col("pod").is_not_null()
            & pl.col("workload").is_not_null()
            & pl.col("ts").is_not_null()
        )
        .group_by("workload", "pod")
        .agg(
            pl.col("ts").min().dt.epoch("ns").alias("first"),
            pl.col("ts").max().dt.epoch("ns").alias("last"),
        )
        .sort("workload", "first", "pod")
        .with_columns(
            pl.col("last").cum_max().shift(1).over("workload").alias("_before"),
        )
        .with_columns(
            (pl.col("_before").is_not_null() & (pl.col("first") > pl.col("_before")))
            .cum_sum()
            .over("workload")
            .alias("generation")
        )
        .collect()
    )
    if pods.height == 0 or pods["generation"].max() == 0:
        return []
    # Generations of all workloads together: the job restarts as a whole.
    table = (
        pods.group_by("generation")
        .agg(pl.col("first").min().alias("start"), pl.col("last").max().alias("end"))
        .sort("generation")
    )
    return [(int(s), int(e), None) for s, e in table.select("start", "end").rows()]


def _by_silence(activity: pl.LazyFrame, silence_s: float) -> list[tuple[int, int, int | None]]:
    gap = int(silence_s * 1e9)
    times = (
        activity.filter(pl.col("ts").is_not_null())
        .select(pl.col("ts").dt.epoch("ns").unique().sort().alias("t"))
        .with_columns((pl.col("t").diff() > gap).fill_null(False).cum_sum().alias("part"))
        .group_by("part")
        .agg(pl.col("t").min().alias("start"), pl.col("t").max().alias("end"))
        .sort("part")
        .collect()
    )
    if times.height < 2:
        return []
    return [(int(s), int(e), None) for s, e in times.select("start", "end").rows()]


def split(activity: pl.LazyFrame, *, silence_s: float = DEFAULT_SILENCE_S) -> list[Attempt]:
    """The attempts of a case, from its rows' activity columns."""
    signals: tuple[tuple[str, Callable[[], list[tuple[int, int, int | None]]]], ...] = (
        ("restart label", lambda: _by_labels(activity)),
        ("pod generation", lambda: _by_pod_generations(activity)),
        (f"silence of more than {silence_s:g} s", lambda: _by_silence(activity, silence_s)),
    )
    for name, find in signals:
        spans = find()
        if len(spans) > 1 or (name == "restart label" and spans):
            return _finish(activity, spans, name)
    bounds = (
        activity.select(
            pl.col("ts").min().dt.epoch("ns").alias("start"),
            pl.col("ts").max().dt.epoch("ns").alias("end"),
        )
        .collect()
        .row(0)
    )
    start, end = bounds
    return _finish(activity, [(start, end, None)], "the whole case (one attempt)")


def _finish(
    activity: pl.LazyFrame, spans: list[tuple[int, int, int | None]], how: str
) -> list[Attempt]:
    starts = [s for s, _, _ in spans]
    hosts_and_rows = (pl.col("host").drop_nulls().n_unique().alias("hosts"), pl.len().alias("rows"))
    per: dict[int, tuple[int, int]]
    if len(spans) == 1:
        # One attempt holds every row: grouping 20 M rows by a constant cost ten times more.
        hosts, rows = activity.select(hosts_and_rows).collect().row(0)
        per = {0: (int(hosts), int(rows))}
    else:
        counts = assign(activity, starts).group_by("attempt_index").agg(hosts_and_rows).collect()
        per = {int(i): (int(h), int(r)) for i, h, r in counts.rows()}
    attempts = []
    for index, (start, end, label) in enumerate(spans):
        hosts, rows = per.get(index, (0, 0))
        boundary = how if label is None else f"{how} {label}"
        attempts.append(Attempt(index, start, end, boundary, label, hosts, rows))
    return attempts


def assign(frame: pl.LazyFrame, starts: Sequence[int | None]) -> pl.LazyFrame:
    """``frame`` (with ``ts``) plus ``attempt_index``: the latest attempt started at or before
    the row's time (0 before the first start and for rows without a time)."""
    known = [s for s in starts if s is not None]
    if len(known) <= 1:
        return frame.with_columns(pl.lit(0, dtype=pl.Int32).alias("attempt_index"))
    return frame.with_columns(_index(known[1:]))


def _index(breaks: list[int]) -> pl.Expr:
    """How many attempt starts (after the first) lie at or before ``ts``: one comparison
    per attempt, a handful of expressions even for a restart loop."""
    t = pl.col("ts").dt.epoch("ns")
    counted = [(t >= value).fill_null(False).cast(pl.Int32) for value in breaks]
    return pl.sum_horizontal(counted).cast(pl.Int32).alias("attempt_index")


def assign_labelled(frame: pl.LazyFrame, attempts: list[Attempt]) -> pl.LazyFrame:
    """Like :func:`assign`, but a row carrying a restart label belongs to that label's
    attempt whatever its time (a late line of attempt 2 written after attempt 3 started)."""
    by_label = {a.label: a.index for a in attempts if a.label is not None}
    placed = assign(frame, [a.start for a in attempts])
    if not by_label:
        return placed
    return placed.with_columns(
        pl.col("attempt")
        .replace_strict(by_label, default=None, return_dtype=pl.Int32)
        .fill_null(pl.col("attempt_index"))
        .alias("attempt_index")
    )
