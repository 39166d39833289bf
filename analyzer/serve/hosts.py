"""The host list of a case and one host's page, each from a few DuckDB queries over its views.

A host's *error rows* and *first error* are the diagnosis' (:class:`analyzer.api.HostErrors`):
rows a signature reads as a root cause or a consequence, and the row the first-error rule
picks within the host, so the host of the verdict's first error shows the verdict's very row,
and a root cause logged at INFO counts while an ``ERROR`` line nothing reads as one does
not. A case that is not analyzed has neither (the pages say so).

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
from analyzer.serve.timeline import ERROR_ROWS_TABLE, Span, activity, sparkline

if TYPE_CHECKING:
    from analyzer.api import HostErrors
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
#: Each host's errors as a table (:meth:`HostErrors.by_host`) on the page's connection.
_HOST_ERRORS: Final = "_host_errors"
_HOST_ERRORS_SCHEMA: Final = pl.Schema(
    {
        "host": pl.String(),
        "errors": pl.Int64(),
        "first_row": pl.Int64(),
        "first_ts": pl.Datetime("ns", "UTC"),
        "first_signature": pl.String(),
        "first_attempt": pl.Int64(),
    }
)

_STATS: Final = f"""
WITH stats AS (
    SELECT host::VARCHAR AS host, count(*) AS rows, min(ts) AS first_ts, max(ts) AS last_ts
    FROM rows
    WHERE host IS NOT NULL {{only_host}}
    GROUP BY 1
), hits AS ({{hits}})
SELECT s.host, s.rows, e.errors, s.first_ts, s.last_ts, e.first_ts AS first_error,
       e.first_row, e.first_signature, e.first_attempt, h.matches, count(*) OVER () AS total
FROM stats s LEFT JOIN hits h USING (host) LEFT JOIN {_HOST_ERRORS} e USING (host)
ORDER BY s.host IS NOT DISTINCT FROM $culprit DESC, e.first_row IS NULL, e.first_ts NULLS LAST,
         s.host
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

#: The host's rows in the page's order, numbered: where given rows fall (first errors).
_POSITIONS: Final = """
WITH h AS (
    SELECT row_id, row_number() OVER (ORDER BY ts NULLS LAST, row_id) AS n
    FROM rows
    WHERE host = $host
)
SELECT h.row_id, h.n, f.path, r.line
FROM h JOIN rows r USING (row_id) LEFT JOIN files f ON f.file_id = r.file_id
WHERE list_contains($ids, h.row_id)
"""

_ROWS: Final = f"""
WITH h AS (
    SELECT row_number() OVER (ORDER BY ts NULLS LAST, row_id) AS n,
           row_id, file_id, ts, line, severity::VARCHAR AS severity, message
    FROM rows
    WHERE host = $host
)
SELECT h.n, h.row_id, h.ts, f.path, h.line, h.severity, left(h.message, $read) AS message,
       length(h.message) > $chars AS cut, e.row_id IS NOT NULL AS error,
       h.row_id IS NOT DISTINCT FROM $first_row AS first_error
FROM h LEFT JOIN files f ON f.file_id = h.file_id
     LEFT JOIN {ERROR_ROWS_TABLE} e ON e.row_id = h.row_id
WHERE h.n >= $start
ORDER BY h.n
LIMIT $limit
"""


@dataclass(frozen=True)
class Diagnosis:
    """What the host pages take from the diagnosis: every host's errors (None when the case
    is not analyzed) and the verdict's attempt (a host's first error is looked for there
    first, then in its earliest attempt with one)."""

    errors: HostErrors | None
    attempt: int | None

    @staticmethod
    def none() -> Diagnosis:
        return Diagnosis(None, None)


@dataclass(frozen=True)
class HostLine:
    """One host of the host list. ``errors`` and ``first_error`` are None when the case is
    not analyzed (0 and None when it is and the host has no error row)."""

    host: str
    rows: int
    errors: int | None
    first_ts: dt.datetime | None
    last_ts: dt.datetime | None
    first_error: dt.datetime | None
    #: The row of the host's first error and its signature (None without one).
    first_row: int | None
    first_signature: str | None
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
    analyzed: bool


@dataclass(frozen=True)
class HostDetail:
    """One host's page. ``rows`` are :data:`ROWS_SHOWN` rows in time order from row number
    ``start`` (1-based, of ``line.rows``); ``first_errors`` the host's first error in each
    attempt, each with its row number ``n``, ``path`` and ``line``, the one the page starts
    from marked ``chosen``."""

    line: HostLine
    matches: list[dict[str, Any]]
    matches_total: int
    rows: list[dict[str, Any]]
    start: int
    first_errors: list[dict[str, Any]]
    matched: bool
    analyzed: bool

    @property
    def chosen(self) -> dict[str, Any] | None:
        return next((f for f in self.first_errors if f["chosen"]), None)


def host_list(
    case: Case,
    *,
    culprit: str | None,
    diagnosis: Diagnosis,
    offset: int = 0,
    limit: int = PAGE_SIZE,
) -> HostList:
    """A page of the case's hosts with their counts and sparklines."""
    matched = (case.path / MATCHES_FILE).exists()
    with case.connect() as connection:
        _register(connection, diagnosis, host=None)
        found = _stats(connection, matched, culprit=culprit, offset=offset, limit=limit)
        total = int(found[0]["total"]) if found else _host_count(connection)
        lines = _lines(connection, case, found, diagnosis, matched, width=180, height=24)
    return HostList(lines, total, offset, matched, diagnosis.errors is not None)


def host_detail(
    case: Case,
    host: str,
    redact: Redactor,
    *,
    diagnosis: Diagnosis,
    at: int | None = None,
) -> HostDetail | None:
    """Everything the host's page shows, messages redacted by ``redact``; None when no row
    names the host. The rows start at row number ``at``, or :data:`ROWS_BEFORE_ERROR` rows
    before the host's first error (its first row when it has none)."""
    matched = (case.path / MATCHES_FILE).exists()
    with case.connect() as connection:
        _register(connection, diagnosis, host=host)
        found = _stats(connection, matched, host=host)
        if not found:
            return None
        line = _lines(connection, case, found, diagnosis, matched, width=960, height=120)[0]
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
        firsts = _first_errors(connection, diagnosis, host, line.first_row)
        chosen = next((f["n"] for f in firsts if f["chosen"]), None)
        start = at if at is not None else max(1, (chosen or 1) - ROWS_BEFORE_ERROR)
        rows = _records(
            connection.execute(
                _ROWS,
                {
                    "host": host,
                    "chars": MESSAGE_CHARS,
                    "read": MESSAGE_CHARS + _REDACT_SLACK,
                    "first_row": line.first_row,
                    "start": start,
                    "limit": ROWS_SHOWN,
                },
            )
        )
    total = int(matches[0]["total"]) if matches else 0
    return HostDetail(
        line=line,
        matches=_redacted(matches, redact),
        matches_total=total,
        rows=_redacted(rows, redact),
        start=start,
        first_errors=firsts,
        matched=matched,
        analyzed=diagnosis.errors is not None,
    )


def _register(
    connection: duckdb.DuckDBPyConnection, diagnosis: Diagnosis, *, host: str | None
) -> None:
    """Put the diagnosis' host errors and error rows (of ``host`` alone when given) on the
    connection, empty for a case not analyzed."""
    errors = diagnosis.errors
    if errors is None:
        by_host = pl.DataFrame(schema=_HOST_ERRORS_SCHEMA)
        error_rows = pl.DataFrame(schema={"row_id": pl.Int64})
    else:
        by_host = errors.by_host(diagnosis.attempt).cast(_HOST_ERRORS_SCHEMA)
        error_rows = errors.rows
        if host is not None:
            by_host = by_host.filter(pl.col("host") == host)
            error_rows = error_rows.filter(pl.col("host") == host)
    connection.register(_HOST_ERRORS, by_host.to_arrow())
    connection.register(ERROR_ROWS_TABLE, error_rows.select("row_id").to_arrow())


def _first_errors(
    connection: duckdb.DuckDBPyConnection,
    diagnosis: Diagnosis,
    host: str,
    chosen: int | None,
) -> list[dict[str, Any]]:
    """The host's first error in each attempt, in attempt order, with where it is."""
    if diagnosis.errors is None:
        return []
    firsts = diagnosis.errors.firsts.filter(pl.col("host") == host).sort("attempt")
    if firsts.height == 0:
        return []
    ids = firsts["row_id"].to_list()
    found = _records(connection.execute(_POSITIONS, {"host": host, "ids": ids}))
    where = {r["row_id"]: r for r in found}
    return [
        {**first, **where.get(first["row_id"], {}), "chosen": first["row_id"] == chosen}
        for first in firsts.select("attempt", "row_id", "ts", "signature", "role").to_dicts()
    ]


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
    diagnosis: Diagnosis,
    matched: bool,
    *,
    width: int,
    height: int,
) -> list[HostLine]:
    """Attach each host's sparkline, from one bucket query over all of them."""
    span = Span.of(case.meta.first_ts, case.meta.last_ts)
    names = [str(record["host"]) for record in found]
    counts = activity(connection, names, span) if span is not None else None
    analyzed = diagnosis.errors is not None
    lines = []
    for i, record in enumerate(found):
        drawn = (
            sparkline(counts.rows[i], counts.errors[i], width=width, height=height)
            if counts is not None
            else Markup("")
        )
        hits, errors = record["matches"], record["errors"]
        lines.append(
            HostLine(
                host=names[i],
                rows=int(record["rows"]),
                errors=(int(errors) if errors is not None else 0) if analyzed else None,
                first_ts=record["first_ts"],
                last_ts=record["last_ts"],
                first_error=record["first_error"],
                first_row=record["first_row"],
                first_signature=record["first_signature"],
                matches=(int(hits) if hits is not None else 0) if matched else None,
                sparkline=drawn,
            )
        )
    return lines


def _records(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
