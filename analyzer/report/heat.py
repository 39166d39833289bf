"""The host × time heat strip of ``report.html``, aggregated in polars into compact JSON.

One row per host, sorted so the culprits come first and then the hosts whose first error came
earliest; past :data:`SINGLE_ROWS` rows the remaining hosts collapse into groups of hosts that
look alike (the same worst role in every bucket, else the same first-error bucket), each with
its count. A cell's colour is the worst thing its host(s) logged in that time bucket: a root
signature, a secondary one, context or noise, plain activity, or nothing. Each coloured cell
keeps up to :data:`CELL_ROWS` cited rows (worst role first, then earliest), so a click shows
the rows behind it; the page stays small at 4,096 hosts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, Final

import polars as pl

from analyzer.diagnose.evidence import CaseData
from analyzer.diagnose.findings import Findings

#: Hosts shown one per row before the rest collapse into groups.
SINGLE_ROWS: Final = 40
#: At most this many groups; beyond it, hosts group by their first-error bucket.
MAX_GROUPS: Final = 40
BUCKETS: Final = 96
#: Cited rows kept per cell.
CELL_ROWS: Final = 4
#: A quoted message is cut to this many characters in the page (the case has all of it).
MESSAGE_CHARS: Final = 600
#: Cell codes, worst last: none, activity, context/noise, secondary, root.
ROLE_CODES: Final = {"noise": 2, "context": 2, "secondary": 3, "root": 4}
#: The strip of a case with no row that has both a time and a host.
_EMPTY: Final[dict[str, Any]] = {
    "buckets": 0,
    "rows": [],
    "cells": {},
    "evidence": [],
    "markers": [],
}


def _bucket(start_ns: int, width_ns: int) -> pl.Expr:
    return (
        ((pl.col("ts").dt.epoch("ns") - start_ns) // width_ns).clip(0, BUCKETS - 1).cast(pl.Int32)
    )


def heat_strip(data: CaseData, findings: Findings, redact: Callable[[str], str]) -> dict[str, Any]:
    """The strip as JSON-able data: buckets, rows (label, host count, cell codes), each
    cell's cited rows, the evidence they point at, and the markers."""
    meta = data.case.meta
    if meta.first_ts is None or meta.last_ts is None or not data.case.has_rows():
        return _EMPTY
    start_ns = _ns(meta.first_ts)
    width_ns = max((_ns(meta.last_ts) - start_ns) // BUCKETS + 1, 1_000_000_000)
    bucket = _bucket(start_ns, width_ns)
    activity = (
        data.activity()
        .filter(pl.col("host").is_not_null() & pl.col("ts").is_not_null())
        .select(pl.col("host"), bucket.alias("bucket"))
        # Distinct cells first, host names as strings after: casting every row's host cost
        # most of the strip at 4,096 hosts.
        .unique()
        .with_columns(pl.col("host").cast(pl.String), pl.lit(1, dtype=pl.Int8).alias("code"))
        .collect()
    )
    matched = _matched(data, bucket)
    cells = (
        pl.concat([activity, matched.select("host", "bucket", "code")])
        .group_by("host", "bucket")
        .agg(pl.col("code").max())
    )
    if cells.height == 0:  # rows with times, but none names its host
        return _EMPTY
    order = _host_order(cells, matched, findings)
    rows, members = _rows(cells, order)
    cell_rows, evidence = _cell_evidence(matched, members, redact)
    markers = _markers(findings, start_ns, width_ns, members)
    return {
        "start": meta.first_ts.isoformat(),
        "width_s": width_ns / 1e9,
        "edges": [stamp(start_ns + b * width_ns) for b in range(BUCKETS + 1)],
        "ticks": ticks(start_ns, width_ns),
        "buckets": BUCKETS,
        "rows": rows,
        "cells": cell_rows,
        "evidence": evidence,
        "markers": markers,
    }


def _ns(value: dt.datetime) -> int:
    return int(value.timestamp()) * 1_000_000_000 + value.microsecond * 1000


def stamp(ns: int) -> str:
    """A time as every time of the strip is written (UTC, said once by the page)."""
    return (
        dt.datetime.fromtimestamp(ns // 1000 // 1_000_000, tz=dt.UTC)
        + dt.timedelta(microseconds=ns // 1000 % 1_000_000)
    ).strftime("%Y-%m-%d %H:%M:%S.%f")


def _when(value: dt.datetime) -> str:
    return stamp(_ns(value))


#: Tick spacings of the time axis, in seconds: the first that gives at most MAX_TICKS wins.
_STEPS: Final = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800)
_STEPS_DAYS: Final = (21600, 43200, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400)
MAX_TICKS: Final = 8


def ticks(start_ns: int, width_ns: int) -> list[dict[str, Any]]:
    """Ticks at round UTC times (every 5 min, every hour…), each with its position in bucket
    units and one label format for the whole axis (seconds only when the ticks need them,
    the date only when the axis spans more than one day)."""
    span_ns = width_ns * BUCKETS
    step_s = next(
        (s for s in (*_STEPS, *_STEPS_DAYS) if span_ns / (s * 1_000_000_000) <= MAX_TICKS),
        _STEPS_DAYS[-1],
    )
    step_ns = step_s * 1_000_000_000
    first = -(-start_ns // step_ns) * step_ns
    end_ns = start_ns + span_ns
    days = end_ns // 86_400_000_000_000 != start_ns // 86_400_000_000_000
    fmt = "%H:%M:%S" if step_s < 60 else "%H:%M"
    if step_s >= 86400:
        fmt = "%m-%d"
    elif days:
        fmt = "%m-%d " + fmt
    return [
        {
            "x": (at - start_ns) / width_ns,
            "label": dt.datetime.fromtimestamp(at // 1_000_000_000, tz=dt.UTC).strftime(fmt),
        }
        for at in range(first, end_ns + 1, step_ns)
    ]


def _matched(data: CaseData, bucket: pl.Expr) -> pl.DataFrame:
    """Every matched row with a host and a time: its bucket and cell code (noise included)."""
    evidence = data.evidence.filter(pl.col("host").is_not_null() & pl.col("ts").is_not_null())
    return evidence.select(
        "row_id",
        "host",
        "ts",
        "path",
        "line",
        "signature",
        "role",
        "message",
        bucket.alias("bucket"),
        pl.col("role").replace_strict(ROLE_CODES, default=2, return_dtype=pl.Int8).alias("code"),
    )


def _host_order(cells: pl.DataFrame, matched: pl.DataFrame, findings: Findings) -> list[str]:
    """Culprits first (the final verdict's, then other attempts'), then by first error time
    (secondary or root), then hosts without one by name."""
    culprits: list[str] = []
    for verdict in [findings.verdict, *findings.attempts]:
        host = verdict.culprit.host
        if host is not None and host not in culprits:
            culprits.append(host)
    first = matched.filter(pl.col("code") >= 3).group_by("host").agg(pl.col("ts").min())
    hosts = cells.select("host").unique().join(first, on="host", how="left")
    ranked = hosts.sort(["ts", "host"], nulls_last=True)["host"].to_list()
    known = set(ranked)
    return [h for h in culprits if h in known] + [h for h in ranked if h not in culprits]


def _patterns(cells: pl.DataFrame) -> pl.DataFrame:
    """host and its row of cell codes as one string (a digit per bucket)."""
    wide = cells.pivot(on="bucket", index="host", values="code", aggregate_function="max")
    buckets = [str(b) for b in range(BUCKETS)]
    wide = wide.with_columns(
        pl.lit(None, dtype=pl.Int8).alias(b) for b in buckets if b not in wide.columns
    )
    return wide.select(
        "host",
        pl.concat_str([pl.col(b).fill_null(0).cast(pl.String) for b in buckets]).alias("codes"),
    )


def _rows(cells: pl.DataFrame, order: list[str]) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """Rows of the strip: the first hosts alone, the rest grouped; each row's member hosts."""
    ranked = (
        pl.DataFrame({"host": order}, schema={"host": pl.String})
        .with_row_index("rank")
        .join(_patterns(cells), on="host", how="left")
    )
    single = ranked.head(SINGLE_ROWS)
    rows = [
        {"label": host, "hosts": 1, "codes": codes}
        for host, codes in single.select("host", "codes").iter_rows()
    ]
    members = [[host] for host in single["host"].to_list()]
    rest = ranked.slice(SINGLE_ROWS)
    if rest.height == 0:
        return rows, members
    # Hosts are alike when they logged the same roles in the same buckets; plain activity
    # (code 1) differs from host to host and does not count.
    key = pl.col("codes").str.replace_all("1", "0", literal=True)
    if rest.select(key.n_unique()).item() > MAX_GROUPS:
        worst = pl.col("codes").str.split("").list.max()
        key = pl.concat_str([worst, pl.lit("@"), pl.col("codes").str.find(worst, literal=True)])
    groups = (
        rest.with_columns(key.alias("key"))
        .group_by("key")
        .agg(pl.col("host").sort_by("rank"), pl.col("codes"), pl.col("rank").min())
        .sort("rank")
    )
    for hosts, patterns in groups.select("host", "codes").iter_rows():
        label = hosts[0] if len(hosts) == 1 else f"{len(hosts):,} hosts like {hosts[0]}"
        row = {"label": label, "hosts": len(hosts), "codes": _merge(patterns)}
        if len(hosts) > 1:
            row["members"] = hosts
        rows.append(row)
        members.append(hosts)
    return rows, members


def _merge(patterns: list[str]) -> str:
    return "".join(max(column) for column in zip(*patterns, strict=True))


def _cell_evidence(
    matched: pl.DataFrame, members: list[list[str]], redact: Callable[[str], str]
) -> tuple[dict[str, list[int]], list[list[Any]]]:
    """Up to CELL_ROWS cited rows per coloured cell ("row,bucket" -> evidence indexes), and
    the evidence table they index: path, line, host, time, signature, role, message, row id."""
    row_of = pl.DataFrame(
        {"host": [h for hosts in members for h in hosts]},
        schema={"host": pl.String},
    ).with_columns(
        pl.Series("strip_row", [i for i, hosts in enumerate(members) for _ in hosts], pl.Int32)
    )
    chosen = (
        matched.join(row_of, on="host")
        .sort(
            ["strip_row", "bucket", "code", "ts", "row_id"],
            descending=[False, False, True, False, False],
        )
        .group_by("strip_row", "bucket", maintain_order=True)
        .head(CELL_ROWS)
    )
    quoted = chosen.unique("row_id", keep="first", maintain_order=True)
    index = {row_id: i for i, row_id in enumerate(quoted["row_id"].to_list())}
    evidence = [
        [
            path,
            line,
            host,
            _when(ts),
            signature,
            role,
            redact(message)[:MESSAGE_CHARS],
            row_id,
        ]
        for path, line, host, ts, signature, role, message, row_id in quoted.select(
            "path", "line", "host", "ts", "signature", "role", "message", "row_id"
        ).iter_rows()
    ]
    cells: dict[str, list[int]] = {}
    for strip_row, bucket, row_id in chosen.select("strip_row", "bucket", "row_id").iter_rows():
        cells.setdefault(f"{strip_row},{bucket}", []).append(index[row_id])
    return cells, evidence


def _markers(
    findings: Findings, start_ns: int, width_ns: int, members: list[list[str]]
) -> list[dict[str, Any]]:
    """Attempt boundaries (a line at each attempt's start) and each attempt's first error
    (on the row of its host, or of the group that holds it)."""
    row_of_host = {host: i for i, hosts in enumerate(members) for host in hosts}
    markers: list[dict[str, Any]] = []

    def at(value: dt.datetime) -> int:
        return max(0, min(BUCKETS - 1, (_ns(value) - start_ns) // width_ns))

    for verdict in findings.attempts:
        if verdict.start is not None:
            markers.append(
                {"kind": "attempt", "attempt": verdict.attempt, "bucket": at(verdict.start)}
            )
        first = verdict.first_error
        if first is not None and first.ts is not None:
            markers.append(
                {
                    "kind": "first-error",
                    "attempt": verdict.attempt,
                    "bucket": at(first.ts),
                    "row": row_of_host.get(first.host or ""),
                    "path": first.citation.path,
                    "line": first.citation.line,
                    "row_id": first.citation.row_id,
                    "host": first.host,
                    "signature": first.signature,
                    "ts": _when(first.ts),
                    "message": first.message[:MESSAGE_CHARS],
                }
            )
    return markers


#: What a cell code means, in the text alternative of the picture.
CODE_WORDS: Final = ("silent", "logging", "context", "consequence", "root cause")


def summary_rows(strip: dict[str, Any]) -> list[dict[str, Any]]:
    """The strip as a table, one line per row: logging from/to and where its first
    consequence and first root-cause signature fall (bucket bounds), for readers without the
    picture (a screen reader, JavaScript off, a text-only mail)."""
    edges: list[str] = strip.get("edges", [])

    def span(codes: str, wanted: str) -> str | None:
        found = [codes.find(code) for code in wanted if code in codes]
        if not found:
            return None
        first = min(found)
        return f"{edges[first]} – {edges[first + 1]}"

    table = []
    for index, row in enumerate(strip["rows"]):
        codes: str = row["codes"]
        active = [b for b, code in enumerate(codes) if code != "0"]
        table.append(
            {
                "index": index,
                "label": row["label"],
                "hosts": row["hosts"],
                "members": row.get("members", []),
                "from": edges[active[0]] if active else None,
                "to": edges[active[-1] + 1] if active else None,
                "secondary": span(codes, "3"),
                "root": span(codes, "4"),
            }
        )
    return table
