"""The host list of a case and one host's page, each from a few DuckDB queries over its views.

Host names and other user input only ever reach SQL as parameters; the pieces formatted into
the statements below are constants of this module. Every message a host's page shows is
redacted (:mod:`analyzer.redact`), as in the reports.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import duckdb
import polars as pl
from markupsafe import Markup

from analyzer.case.layout import MATCHES_FILE
from analyzer.case.store import Case
from analyzer.serve.timeline import IS_ERROR, Span, activity, sparkline

if TYPE_CHECKING:
    from analyzer.redact import Redactor

#: Hosts on one page of the host list (a case can have thousands).
PAGE_SIZE: Final = 500
#: Rows of a host's page, and how many of them come before its first error.
ROWS_SHOWN: Final = 200
ROWS_BEFORE_ERROR: Final = 50
#: Signature matches listed on a host's page.
MATCHES_SHOWN: Final = 500
#: Characters of a message shown (folded stack traces can be very long).
MESSAGE_CHARS: Final = 4000
#: Characters read past that, so a secret the cut would halve is whole when redacted.
_REDACT_SLACK: Final = 1024

_STATS: Final = """
WITH stats AS (
    SELECT host::VARCHAR AS host,
           count(*) AS rows,
           count(*) FILTER (WHERE {is_error}) AS errors,
           min(ts) AS first_ts,
           max(ts) AS last_ts,
           min(ts) FILTER (WHERE {is_error}) AS first_error
    FROM rows
    WHERE host IS NOT NULL {only_host}
    GROUP BY 1
), hits AS ({hits})
SELECT s.host, s.rows, s.errors, s.first_ts, s.last_ts, s.first_error, h.matches,
       count(*) OVER () AS total
FROM stats s LEFT JOIN hits h USING (host)
ORDER BY s.host IS NOT DISTINCT FROM $culprit DESC, s.first_error NULLS LAST, s.host
LIMIT $limit OFFSET $offset
"""
_HITS: Final = "SELECT host, count(*) AS matches FROM matches GROUP BY host"
_NO_HITS: Final = "SELECT NULL::VARCHAR AS host, NULL::BIGINT AS matches WHERE false"

_MATCHES: Final = """
SELECT ts, signature, role, path, line, left(message, $read) AS message,
       length(message) > $chars AS cut, count(*) OVER () AS total
FROM matches
WHERE host = $host
ORDER BY ts NULLS LAST, row_id
LIMIT $limit
"""

_ROWS: Final = f"""
WITH h AS (
    SELECT row_number() OVER (ORDER BY ts NULLS LAST, row_id) AS n,
           row_id, file_id, ts, line, severity::VARCHAR AS severity, message
    FROM rows
    WHERE host = $host
), anchor AS (
    SELECT min(n) FILTER (WHERE {IS_ERROR}) AS first_error FROM h
)
SELECT h.n, h.ts, f.path, h.line, h.severity, left(h.message, $read) AS message,
       length(h.message) > $chars AS cut, h.{IS_ERROR} AS error,
       h.n IS NOT DISTINCT FROM a.first_error AS first_error
FROM h CROSS JOIN anchor a LEFT JOIN files f ON f.file_id = h.file_id
WHERE h.n >= greatest(1, coalesce(a.first_error, 1) - $before)
ORDER BY h.n
LIMIT $limit
"""


@dataclass(frozen=True)
class HostLine:
    """One host of the host list."""

    host: str
    rows: int
    errors: int
    first_ts: dt.datetime | None
    last_ts: dt.datetime | None
    first_error: dt.datetime | None
    #: Signature matches on the host's rows; None when the case has not been matched.
    matches: int | None
    sparkline: Markup


@dataclass(frozen=True)
class HostList:
    """One page of the host list: the culprit host first, then by first error, then name."""

    hosts: list[HostLine]
    total: int
    offset: int
    matched: bool


@dataclass(frozen=True)
class HostDetail:
    """One host's page. ``rows`` start ``ROWS_BEFORE_ERROR`` rows before the host's first
    error (``around_error``), or at its first row when it has none."""

    line: HostLine
    matches: list[dict[str, Any]]
    matches_total: int
    rows: list[dict[str, Any]]
    around_error: bool
    matched: bool


def host_list(
    case: Case, *, culprit: str | None, offset: int = 0, limit: int = PAGE_SIZE
) -> HostList:
    """A page of the case's hosts with their counts and sparklines."""
    matched = (case.path / MATCHES_FILE).exists()
    with case.connect() as connection:
        found = _stats(connection, matched, culprit=culprit, offset=offset, limit=limit)
        total = int(found[0]["total"]) if found else _host_count(connection)
        lines = _lines(connection, case, found, matched, width=180, height=24)
    return HostList(lines, total, offset, matched)


def host_detail(case: Case, host: str, redact: Redactor) -> HostDetail | None:
    """Everything the host's page shows, messages redacted by ``redact``; None when no row
    names the host."""
    matched = (case.path / MATCHES_FILE).exists()
    with case.connect() as connection:
        found = _stats(connection, matched, host=host)
        if not found:
            return None
        line = _lines(connection, case, found, matched, width=960, height=120)[0]
        matches: list[dict[str, Any]] = []
        if matched:
            matches = _records(
                connection.execute(
                    _MATCHES,
                    {
                        "host": host,
                        "chars": MESSAGE_CHARS,
                        "read": MESSAGE_CHARS + _REDACT_SLACK,
                        "limit": MATCHES_SHOWN,
                    },
                )
            )
        rows = _records(
            connection.execute(
                _ROWS,
                {
                    "host": host,
                    "chars": MESSAGE_CHARS,
                    "read": MESSAGE_CHARS + _REDACT_SLACK,
                    "before": ROWS_BEFORE_ERROR,
                    "limit": ROWS_SHOWN,
                },
            )
        )
    total = int(matches[0]["total"]) if matches else 0
    return HostDetail(
        line, _redacted(matches, redact), total, _redacted(rows, redact), line.errors > 0, matched
    )


def _redacted(records: list[dict[str, Any]], redact: Redactor) -> list[dict[str, Any]]:
    """``records`` with their ``message`` redacted (all of them in one column pass), then cut
    to :data:`MESSAGE_CHARS`."""
    if not records:
        return records
    messages = redact.series(pl.Series([r["message"] for r in records], dtype=pl.String))
    return [
        {**r, "message": m[:MESSAGE_CHARS]}
        for r, m in zip(records, messages.to_list(), strict=True)
    ]


def _stats(
    connection: duckdb.DuckDBPyConnection,
    matched: bool,
    *,
    host: str | None = None,
    culprit: str | None = None,
    offset: int = 0,
    limit: int = 1,
) -> list[dict[str, Any]]:
    sql = _STATS.format(
        is_error=IS_ERROR,
        only_host="" if host is None else "AND host = $host",
        hits=_HITS if matched else _NO_HITS,
    )
    parameters: dict[str, Any] = {"culprit": culprit, "limit": limit, "offset": offset}
    if host is not None:
        parameters["host"] = host
    return _records(connection.execute(sql, parameters))


def _host_count(connection: duckdb.DuckDBPyConnection) -> int:
    found = connection.execute("SELECT count(DISTINCT host) FROM rows").fetchone()
    return int(found[0]) if found is not None else 0


def _lines(
    connection: duckdb.DuckDBPyConnection,
    case: Case,
    found: list[dict[str, Any]],
    matched: bool,
    *,
    width: int,
    height: int,
) -> list[HostLine]:
    """Attach each host's sparkline, from one bucket query over all of them."""
    span = Span.of(case.meta.first_ts, case.meta.last_ts)
    names = [str(record["host"]) for record in found]
    counts = activity(connection, names, span) if span is not None else None
    lines = []
    for i, record in enumerate(found):
        drawn = (
            sparkline(counts.rows[i], counts.errors[i], width=width, height=height)
            if counts is not None
            else Markup("")
        )
        hits = record["matches"]
        lines.append(
            HostLine(
                host=names[i],
                rows=int(record["rows"]),
                errors=int(record["errors"]),
                first_ts=record["first_ts"],
                last_ts=record["last_ts"],
                first_error=record["first_error"],
                matches=(int(hits) if hits is not None else 0) if matched else None,
                sparkline=drawn,
            )
        )
    return lines


def _records(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
