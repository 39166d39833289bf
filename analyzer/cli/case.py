"""``culprit case info`` and ``culprit case hosts``: look at a case."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from analyzer import defaults
from analyzer.cli import options
from analyzer.cli.render import cell, console, print_rows, write_table
from analyzer.errors import UsageError

if TYPE_CHECKING:
    from analyzer.case.info import CaseInfo


def case_info(
    case: options.CaseDir,
    output: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    hosts: options.TopHosts = defaults.TOP_HOSTS,
) -> None:
    """Counts per source, reader, severity and host; quarantine; files not fully read.

    Example: culprit case info /tmp/case
    """
    from analyzer import api

    if output not in ("table", "json"):
        raise UsageError("--format must be table or json")
    info = api.case_info(case, top_hosts=hosts)
    if output == "json":
        typer.echo(info.model_dump_json(indent=2))
        return
    _print_info(info)


def case_hosts(
    case: options.CaseDir,
    output: Annotated[str, typer.Option("--format", help="table, csv or json.")] = "table",
) -> None:
    """Every host of the case with all its aliases and the row that proves each one.

    Example: culprit case hosts /tmp/case
    """
    from analyzer import api

    if output not in ("table", "csv", "json"):
        raise UsageError("--format must be table, csv or json")
    table = api.case_hosts(case)
    if output != "table":
        write_table(table, output, None, table.num_rows)
        return
    _print_hosts(table.to_pylist())


def _print_info(info: CaseInfo) -> None:
    screen = console()
    meta = info.meta
    counts = meta.counts
    screen.print(f"[bold]{info.path}[/bold]  culprit {meta.tool_version}")
    screen.print(
        f"files {counts.files:,} (read {counts.files_read:,}, unrecognized "
        f"{counts.files_unrecognized:,}, refused {counts.files_refused:,}, partial "
        f"{counts.files_partial:,})  records {counts.records:,} -> rows {counts.rows:,}  "
        f"folded {counts.folded:,}  blank {counts.blank:,}  quarantined {counts.quarantined:,}  "
        f"repaired {counts.repaired:,}  duplicates {counts.duplicates:,}"
        + (f"  out-of-range times {counts.out_of_range:,}" if counts.out_of_range else "")
    )
    screen.print(
        f"time range {meta.first_ts or '-'} .. {meta.last_ts or '-'}  hosts {info.hosts:,}"
    )
    print_rows(screen, "Rows by source and reader", info.by_source)
    print_rows(screen, "Rows by severity", info.by_severity)
    print_rows(screen, f"Rows by host ({info.hosts:,} hosts)", info.by_host)
    # Optional sections: print_rows prints nothing for an empty list.
    print_rows(screen, "Quarantine", info.quarantine)
    print_rows(screen, "Files not fully read", info.files_needing_attention)
    print_rows(screen, "Files whose counts do not balance", info.unbalanced_files)
    print_rows(screen, "Rows with out-of-range timestamps", info.out_of_range)


def _print_hosts(rows: list[dict[str, Any]]) -> None:
    """One block per host (its name on the first line only), then the conflicting aliases."""
    from rich.table import Table

    screen = console()
    hosts = sorted({r["host"] for r in rows if not r["conflict"]})
    grid = Table(title=f"{len(hosts):,} hosts", title_justify="left")
    for column in ("host", "kind", "alias", "evidence", "rows"):
        grid.add_column(column, overflow="fold")
    previous = None
    for row in rows:
        if row["conflict"]:
            continue
        shown = row["host"] if row["host"] != previous else ""
        previous = row["host"]
        grid.add_row(shown, row["kind"], row["alias"], row["evidence"], cell(row["rows"]))
    screen.print(grid)
    conflicts = [r for r in rows if r["conflict"]]
    if conflicts:
        screen.print(
            "Conflicts (aliases that rows tie to more than one host; not used):", style="yellow"
        )
        for row in conflicts:
            screen.print(f"  {row['kind']} {row['alias']} -> {row['host']} ({row['evidence']})")
