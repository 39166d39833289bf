"""``culprit query``: SQL (DuckDB) over a case's views."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final

import typer

from analyzer.cli import options
from analyzer.cli.render import write_table
from analyzer.errors import UsageError

#: Rows a table shows before saying how many more there are (a terminal, not a file).
MAX_TABLE_ROWS: Final = 100


def query(
    case: options.CaseDir,
    sql: Annotated[
        str,
        typer.Argument(
            help="SQL over the views rows, files, quarantine, duplicates, hosts and (after "
            "`culprit match`) matches."
        ),
    ],
    output: Annotated[str, typer.Option("--format", help="table, csv, json or parquet.")] = "table",
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Write here instead of stdout.")
    ] = None,
    max_rows: Annotated[int, typer.Option(help="Rows to show in a table.")] = MAX_TABLE_ROWS,
) -> None:
    """Run SQL (DuckDB) over a case.

    Example: culprit query /tmp/case "SELECT host, count(*) FROM rows GROUP BY host"
    """
    from analyzer import api

    if output not in ("table", "csv", "json", "parquet"):
        raise UsageError("--format must be table, csv, json or parquet")
    if output == "parquet" and out is None:
        raise UsageError("--format parquet needs -o FILE")
    write_table(api.query(case, sql), output, out, max_rows)
