"""``culprit diff``: what a failed run logged that a healthy run of the same job did not."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from analyzer.cli.render import console

if TYPE_CHECKING:
    from analyzer.api import DiffResult

#: Templates shown by default (the command line's own: the library returns them all).
DEFAULT_TOP = 20


def diff(
    baseline: Annotated[
        Path, typer.Argument(help="The healthy run: a case, an analysis output or a bundle.")
    ],
    failed: Annotated[
        Path, typer.Argument(help="The failed run: a case, an analysis output or a bundle.")
    ],
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="Where bundles are ingested (OUT/baseline, OUT/failed)."),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the diff as JSON instead of a table.")
    ] = False,
    top: Annotated[
        int, typer.Option(help="Show at most this many templates.", min=1)
    ] = DEFAULT_TOP,
) -> None:
    """List the log templates the failed run logged and the baseline did not (earliest first),
    then those whose rate changed most, each with the row where the failed run first logged
    it; nothing below the baseline's own noise floor.

    Example: culprit diff healthy/case failed/case
    """
    from analyzer import api

    result = api.diff(baseline, failed, out)
    if json_out:
        sys.stdout.write(json.dumps(as_json(result, top), indent=2) + "\n")
        return
    _print(result, top)


def as_json(result: DiffResult, top: int) -> dict[str, object]:
    return {
        "rule": result.rule,
        "baseline": str(result.baseline),
        "failed": str(result.failed),
        "new_floor": result.new_floor,
        "fold_floor": result.fold_floor,
        "entries": [
            {
                "kind": e.kind,
                "template": e.template,
                "rows": e.rows,
                "expected": e.expected,
                "hosts": e.hosts,
                "first_ts": None if e.first_ts is None else e.first_ts.isoformat(),
                "first_host": e.first_host,
                "citation": {"path": e.path, "line": e.line, "row_id": e.row_id},
                "error": e.error,
            }
            for e in result.entries[:top]
        ],
    }


def _print(result: DiffResult, top: int) -> None:
    from rich.table import Table

    from analyzer.flows.diff import NOTHING, fold_text

    screen = console()
    screen.print(
        f"noise floor of the baseline: a new template needs more than {result.new_floor} "
        f"row(s); a rate must change {result.fold_floor:g}x or more (at least 4x)",
        markup=False,
    )
    if not result.entries:
        screen.print(NOTHING, markup=False)
        return
    table = Table(title=f"culprit diff ({result.rule}, inferred)")
    for column in ("#", "kind", "rows", "hosts", "first", "where", "template"):
        table.add_column(column)
    for index, entry in enumerate(result.entries[:top], start=1):
        table.add_row(
            str(index),
            fold_text(entry),
            str(entry.rows),
            str(entry.hosts),
            "" if entry.first_ts is None else entry.first_ts.strftime("%H:%M:%S.%f")[:-3],
            f"{entry.path}:{entry.line}",
            entry.template[:100],
        )
    screen.print(table)
