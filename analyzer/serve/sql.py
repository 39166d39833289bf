"""The SQL box: one read-only SELECT over a case's views, results capped for a web page.

Two locks, because either alone has holes:

* the statement must be exactly one, of type SELECT, as DuckDB's own parser classifies it
  (``duckdb.extract_statements``), which refuses INSERT, COPY, ATTACH, SET, PRAGMA, INSTALL,
  LOAD and a second statement after a ``;``;
* a SELECT can still read any file (``read_csv('/etc/passwd')``, ``glob``) or URL, so the
  connection is confined before the query runs: ``allowed_directories`` is the case
  directory, then ``enable_external_access = false`` and ``lock_configuration = true``. The
  case's views read their Parquet files from inside the allowed directory, so they keep
  working, while any other path fails with DuckDB's permission error and the settings cannot
  be changed back from SQL.

Each query also has its own in-memory database, so DuckDB's ``memory_limit`` and ``threads``
set on it are limits of that one query (:class:`analyzer.serve.queries.QueryLimits`); the
time limit and the cancelling are :mod:`analyzer.serve.queries`'.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import duckdb

from analyzer.case.store import Case
from analyzer.errors import QueryError

DEFAULT_QUERY: Final = "SELECT source, count(*) AS rows FROM rows GROUP BY 1 ORDER BY 2 DESC"
#: Result rows shown in the page.
MAX_ROWS: Final = 1000
#: Characters of one cell shown (``extra`` and folded messages can be megabytes).
MAX_CELL: Final = 2000


@dataclass(frozen=True)
class QueryResult:
    """The first :data:`MAX_ROWS` rows of a query, as display strings."""

    columns: list[str]
    rows: list[list[str | None]]
    truncated: bool


def check_select(sql: str) -> None:
    """Accept exactly one SELECT statement.

    Raises:
        QueryError: no statement, several, a statement of another type, or a syntax error.
    """
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from None
    if not statements:
        raise QueryError("enter a SELECT statement")
    if len(statements) > 1:
        raise QueryError(f"one statement at a time ({len(statements)} given)")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        name = getattr(kind, "name", str(kind))
        raise QueryError(f"only SELECT is allowed here ({name} refused): the case is read-only")


@dataclass(frozen=True)
class Confinement:
    """What one query's database may use: memory (a DuckDB size, ``'1GB'``) and threads."""

    memory: str
    threads: int


#: The connection of a query about to run; raising there cancels it before it starts.
OnConnect = Callable[[duckdb.DuckDBPyConnection], None]


def run_query(
    case: Case,
    sql: str,
    confinement: Confinement,
    *,
    max_rows: int = MAX_ROWS,
    on_connect: OnConnect | None = None,
) -> QueryResult:
    """Run one SELECT over the case's views, confined to the case directory and to
    ``confinement``. ``on_connect`` receives the connection before the query runs (so another
    thread can interrupt it).

    Raises:
        QueryError: the statement is refused, or DuckDB fails (first line of its message).
        duckdb.InterruptException: the connection was interrupted.
    """
    check_select(sql)
    with case.connect() as connection:
        _confine(connection, case, confinement)
        if on_connect is not None:
            on_connect(connection)
        try:
            relation = connection.sql(sql)
            if relation is None:
                raise QueryError("the statement returns no rows")
            columns = list(relation.columns)
            cells = ", ".join(_bounded(i, t.id) for i, t in enumerate(relation.types, start=1))
            fetched = relation.project(cells).limit(max_rows + 1).fetchall()
        except duckdb.InterruptException:
            raise
        except duckdb.OutOfMemoryException as exc:
            raise QueryError(
                f"{_first_line(exc)} (the limit is {confinement.memory} per query: "
                "culprit serve --query-memory)"
            ) from None
        except duckdb.Error as exc:
            raise QueryError(_first_line(exc)) from None
    shown = [[_cell(value) for value in row] for row in fetched[:max_rows]]
    return QueryResult(columns, shown, len(fetched) > max_rows)


def _confine(connection: duckdb.DuckDBPyConnection, case: Case, confinement: Confinement) -> None:
    """Let the connection read only inside the case directory, within its memory and threads,
    for good (see the module docstring). The views must exist already; tests/serve checks
    they still work after."""
    allowed = str(case.path.resolve()).rstrip("/") + "/"
    # UTC so timestamps read the same whatever the server's zone; set before the lock.
    connection.execute("SET TimeZone = 'UTC'")
    # No spilling to a temporary directory: it would be a write outside the case, and the
    # memory limit would only move the problem to the disk.
    connection.execute("SET temp_directory = ''")
    connection.execute(f"SET memory_limit = {_quote(confinement.memory)}")
    connection.execute(f"SET threads = {int(confinement.threads)}")
    connection.execute(f"SET allowed_directories = [{_quote(allowed)}]")
    connection.execute("SET enable_external_access = false")
    connection.execute("SET lock_configuration = true")


#: DuckDB types whose values have a small fixed size; any other value is cut in SQL.
_FIXED_SIZE: Final = frozenset(
    {
        "boolean", "tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint",
        "usmallint", "uinteger", "ubigint", "uhugeint", "float", "double", "decimal", "date",
        "time", "time with time zone", "timestamp", "timestamp with time zone", "timestamp_s",
        "timestamp_ms", "timestamp_ns", "interval", "uuid", "enum",
    }
)  # fmt: skip


def _bounded(position: int, type_id: str) -> str:
    """Column ``position`` of a result, cut to what a cell shows (one character more, so the
    page can mark the cut) by DuckDB, under its memory limit: a megabyte string or a long list
    would otherwise be copied whole into Python objects, where no limit applies."""
    column = f"#{position}"
    if type_id in _FIXED_SIZE:
        return column
    text = column if type_id == "varchar" else f"CAST({column} AS VARCHAR)"
    return f"left({text}, {MAX_CELL + 1})"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _cell(value: Any) -> str | None:
    """A value as the page shows it (None stays None: the template marks NULL)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ")
    elif isinstance(value, bytes | bytearray | memoryview):
        text = bytes(value).decode("utf-8", errors="replace")
    else:
        text = str(value)
    return text if len(text) <= MAX_CELL else text[:MAX_CELL] + "…"
