"""``culprit signatures list | show | lint | test``: the signature catalogue.

Listings go to stdout, one item a line (for grep and scripts); counts and verdicts go to
stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from analyzer.cli import options
from analyzer.cli.exits import EXIT_FAILED
from analyzer.cli.render import console

if TYPE_CHECKING:
    from analyzer.replay.precision import Precision


def signatures_list(
    extra: options.ExtraSignatures = None,
    family: Annotated[str | None, typer.Option(help="Only this family.")] = None,
    role: Annotated[str | None, typer.Option(help="Only this role.")] = None,
) -> None:
    """One line per signature: code, role, scope, culprit rule, name and title."""
    from analyzer import api

    catalogue = api.signatures(extra or [])
    chosen = [
        s
        for s in catalogue.signatures
        if (family is None or s.family == family) and (role is None or s.role == role)
    ]
    for s in chosen:
        preview = " (preview)" if s.status == "preview" else ""
        sys.stdout.write(
            f"{s.code:<14} {s.role:<9} {s.scope:<14} {s.culprit:<16} {s.name}: {s.title}{preview}\n"
        )
    sys.stderr.write(f"culprit: {len(chosen)} of {len(catalogue)} signatures\n")


def signatures_show(
    key: Annotated[str, typer.Argument(help="A signature code or name.")],
    extra: options.ExtraSignatures = None,
) -> None:
    """Print a signature's file and where its knowledge page is."""
    from analyzer import api
    from analyzer.signatures.catalog import KNOWLEDGE_DIR

    entry = api.signatures(extra or []).find(key)
    sys.stdout.write(f"# {entry.path}\n")
    sys.stdout.write(entry.path.read_text(encoding="utf-8"))
    page = KNOWLEDGE_DIR / f"{entry.signature.knowledge}.md"
    sys.stdout.write(f"\n# knowledge: {page}\n")


def signatures_lint(extra: options.ExtraSignatures = None) -> None:
    """Check every signature file and knowledge page; list every problem with file:line.
    Exit 1 when there is any."""
    from analyzer import api

    problems = api.lint_signatures(extra or [])
    for problem in problems:
        sys.stdout.write(f"{problem}\n")
    if problems:
        sys.stderr.write(f"culprit: {len(problems)} problem(s)\n")
        raise typer.Exit(EXIT_FAILED)
    sys.stderr.write(f"culprit: {len(api.signatures(extra or []))} signatures, no problems\n")


def signatures_test(
    files: Annotated[
        list[Path] | None, typer.Argument(help="Signature files (default: the catalogue).")
    ] = None,
    line: Annotated[
        str | None, typer.Option("--line", help="Show which signatures match this line.")
    ] = None,
    source: Annotated[
        str | None, typer.Option(help="With --line: only signatures of this source.")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            help="Count each signature's matches on INFO lines and on other classes' excerpts "
            "of this real-log corpus (fixtures/real)."
        ),
    ] = None,
    extra: options.ExtraSignatures = None,
) -> None:
    """Run signature examples through every backend, match one line (--line), or measure
    each signature's precision on a corpus of published logs (--corpus)."""
    from analyzer import api

    if corpus is not None:
        _print_precision(api.signature_precision(corpus))
        return
    if line is not None:
        matches = api.match_line(line, extra or [], source=source)
        for found in matches:
            captures = json.dumps(found.captures, ensure_ascii=False)
            sys.stdout.write(f"{found.code}\t{found.name}\t{found.role}\t{captures}\n")
        if not matches:
            sys.stderr.write("culprit: no signature matches\n")
            raise typer.Exit(EXIT_FAILED)
        return
    count, problems = api.check_signatures(files or [], extra or [])
    for problem in problems:
        sys.stdout.write(f"{problem}\n")
    if problems:
        sys.stderr.write(f"culprit: {len(problems)} problem(s) in {count} signature(s)\n")
        raise typer.Exit(EXIT_FAILED)
    sys.stderr.write(f"culprit: {count} signature(s), every example passes\n")


def _print_precision(rows: list[Precision]) -> None:
    """One row per signature that matched, then the root signatures' false-alarm totals."""
    from rich.table import Table

    table = Table(title="signature precision on the corpus")
    for column in (
        "signature",
        "role",
        "class",
        "rows",
        "excerpts",
        "INFO rows",
        "other class",
        "unknown",
    ):
        table.add_column(
            column, justify="left" if column in ("signature", "role", "class") else "right"
        )
    for row in rows:
        table.add_row(
            row.code,
            row.role,
            row.failure_class,
            str(row.rows),
            str(row.excerpts),
            str(row.quiet_rows),
            str(row.other_class),
            str(row.unknown),
        )
    screen = console()
    screen.print(table)
    roots = [r for r in rows if r.role == "root"]
    screen.print(
        f"{len(rows)} signature(s) matched; root signatures: "
        f"{sum(r.quiet_rows for r in roots)} INFO-line match(es), "
        f"{sum(r.other_class for r in roots)} match(es) in excerpts of another class",
        markup=False,
    )
