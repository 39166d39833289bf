"""Whether an infrastructure event concerns the failed workload at all.

A bundle's node journals and GCE/GKE event exports cover more than the job: a preemption of a
node that ran none of the job's pods, or a maintenance event that ended before the attempt's
workload started, is a true row about something else. Such a root is not a candidate for the
attempt's first error (it stays in the case and is listed as set aside); the job's own failure
is. Only decided when the attempt has workload rows that name their host: without them there is
nothing to compare, and every event stays a candidate.
"""

from __future__ import annotations

import polars as pl

from analyzer.diagnose.draft import Context, Said, host_message, said, when, when_message


def unrelated(context: Context, evidence: pl.DataFrame) -> pl.DataFrame:
    """The infrastructure-scoped root rows of ``evidence`` that concern a node where none of
    the attempt's workload ran, or that happened before the attempt's workload started."""
    return unrelated_to(
        evidence,
        workload_hosts=list(context.last_seen),
        workload_start=context.workload_start,
        tolerance_ns=context.tolerance_ns,
    )


def unrelated_to(
    evidence: pl.DataFrame,
    *,
    workload_hosts: list[str],
    workload_start: int | None,
    tolerance_ns: int,
) -> pl.DataFrame:
    """:func:`unrelated` for the attempt whose workload ran on ``workload_hosts`` from
    ``workload_start`` (ns) on."""
    if not workload_hosts:
        return evidence.clear()
    events = evidence.filter((pl.col("role") == "root") & (pl.col("scope") == "infrastructure"))
    if events.height == 0:
        return events
    elsewhere = pl.col("host").is_not_null() & ~pl.col("host").is_in(workload_hosts)
    before = pl.lit(False)
    if workload_start is not None:
        start = workload_start - tolerance_ns
        before = pl.col("ts").is_not_null() & (pl.col("ts").dt.epoch("ns") < start)
    return events.filter(elsewhere | before)


def set_aside(evidence: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """``evidence`` with the matches of ``rows`` made context (no longer candidates)."""
    if rows.height == 0:
        return evidence
    keys = rows.select("row_id", "signature").with_columns(pl.lit(True).alias("_aside"))
    return (
        evidence.join(keys, on=["row_id", "signature"], how="left")
        .with_columns(
            pl.when(pl.col("_aside"))
            .then(pl.lit("context"))
            .otherwise(pl.col("role"))
            .alias("role")
        )
        .drop("_aside")
    )


def notes(context: Context, rows: pl.DataFrame) -> list[Said]:
    """One negative finding per set-aside signature and node."""
    found: list[Said] = []
    hosts = set(context.last_seen)
    if rows.height == 0:
        return found
    for row in rows.unique(["signature", "host"], keep="first", maintain_order=True).iter_rows(
        named=True
    ):
        elsewhere = row["host"] is not None and row["host"] not in hosts
        why = (
            said("why.other_node", "that node ran none of the attempt's workload")
            if elsewhere
            else said("why.before_start", "it happened before the attempt's workload started")
        )
        found.append(
            said(
                "negative.set_aside",
                f"{row['signature']} ({row['title']}) on {row['host'] or 'an unnamed node'} at "
                f"{when(row['ts'])} ({row['path']}:{row['line']}) was not taken as the first "
                f"error: {why.text}.",
                signature=str(row["signature"]),
                title_en=str(row["title"]),
                host=host_message(row["host"], "node.unnamed"),
                time=when_message(row["ts"]),
                citation=f"{row['path']}:{row['line']}",
                why=why.message,
            )
        )
    return found
