"""``culprit ingest``: read a bundle into a case directory, or one shard of it into a part."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

import typer

from analyzer import defaults
from analyzer.cli import options
from analyzer.cli.progress import ProgressBar
from analyzer.cli.render import console
from analyzer.errors import UsageError

if TYPE_CHECKING:
    from analyzer.api import IngestResult


def ingest(
    bundle: Annotated[
        list[str],
        typer.Argument(
            help="Directories, archives (.tar, .tar.gz, .tar.zst, .zip) or log files; local "
            "paths or URLs (gs://, s3://, file://)."
        ),
    ],
    out: Annotated[Path, typer.Option("-o", "--out", help="Case directory to write.")],
    year: Annotated[
        int | None, typer.Option(help="Year of timestamps that carry none (klog/absl MMDD).")
    ] = None,
    tz: Annotated[
        str | None,
        typer.Option(help="Zone of local timestamps without an offset (IANA name or +HH:MM)."),
    ] = None,
    reader: Annotated[
        str | None, typer.Option(help="Use this reader for every file instead of detecting.")
    ] = None,
    max_expansion: options.MaxExpansion = defaults.MAX_EXPANSION_RATIO,
    max_bytes: options.MaxTotalBytes = None,
    max_line_bytes: options.MaxLineBytes = defaults.MAX_LINE_BYTES,
    force: Annotated[bool, typer.Option(help="Ingest even if the case is up to date.")] = False,
    jobs: options.ReadJobs = None,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Read only shard k/N (k from 0) of the bundle's files into the part directory "
            "OUT; `culprit merge` of all N parts makes the case.",
            metavar="k/N",
        ),
    ] = None,
    scratch: options.Scratch = None,
    wait: options.Wait = defaults.LOCK_WAIT_S,
    space_check: options.SpaceCheck = defaults.SPACE_CHECK,
    quiet: options.Quiet = False,
) -> None:
    """Ingest a bundle into a case directory.

    Example: culprit ingest incident.tar.zst -o /tmp/case
    """
    from analyzer import api

    read_options = api.ReadOptions(year=year, tz=tz, max_line_bytes=max_line_bytes)
    limits = api.BundleLimits(max_ratio=max_expansion, max_total_bytes=max_bytes)
    started = time.perf_counter()
    if shard is not None:
        if force:
            raise UsageError("--force does not apply to --shard (a part is always written anew)")
        with ProgressBar(enabled=not quiet) as progress:
            part = api.ingest_shard(
                bundle,
                out,
                shard,
                options=read_options,
                limits=limits,
                reader=reader,
                progress=progress,
                jobs=jobs,
                scratch=scratch,
                wait_s=wait,
            )
        console().print(
            f"{out}: shard {part.shard} read in {time.perf_counter() - started:.1f} s; "
            "merge every shard with `culprit merge PARTS... -o CASE`"
        )
        return
    with ProgressBar(enabled=not quiet) as progress:
        result = api.ingest(
            bundle,
            out,
            options=read_options,
            limits=limits,
            reader=reader,
            force=force,
            progress=progress,
            jobs=jobs,
            scratch=scratch,
            wait_s=wait,
            space_check=space_check,
        )
    _print_ingested(out, result, time.perf_counter() - started)


def _print_ingested(out: Path, result: IngestResult, elapsed: float) -> None:
    """What the ingest made of the bundle, and a warning when some of it was not read."""
    screen = console()
    counts = result.meta.counts
    if result.reused:
        screen.print(
            f"{out}: up to date ({counts.rows:,} rows); nothing to do (--force re-ingests)"
        )
        return
    screen.print(
        f"{out}: {counts.files:,} files, {counts.records:,} records -> {counts.rows:,} rows "
        f"({counts.folded:,} folded, {counts.blank:,} blank, {counts.quarantined:,} quarantined, "
        f"{counts.duplicates:,} duplicates) in {elapsed:.1f} s"
    )
    problems = counts.files_refused + counts.files_partial + counts.files_unrecognized
    if problems or counts.quarantined or counts.repaired:
        screen.print(
            f"warning: {counts.files_refused} refused, {counts.files_partial} partly read, "
            f"{counts.files_unrecognized} unrecognized files; {counts.quarantined:,} records "
            f"quarantined, {counts.repaired:,} repaired; see `culprit case info {out}`",
            style="yellow",
        )
    if counts.files_refused + counts.files_partial:
        for line in _problem_files(out):
            screen.print(f"  {line}", style="yellow", markup=False)
    if counts.out_of_range:
        screen.print(
            f"warning: {counts.out_of_range:,} rows have out-of-range timestamps (kept without "
            f"a time; no verdict rests on them); see `culprit case info {out}`",
            style="yellow",
        )


#: The files a warning names, at most (``culprit case info`` lists them all).
_NAMED: Final = 10


def _problem_files(out: Path) -> list[str]:
    """Each file not read, or not read to its end, with why: a count alone hid which file of
    thousands a rotation cut or a permission kept out."""
    from analyzer import api

    table = api.query(
        out,
        "SELECT path, status, coalesce(detail, '') AS detail FROM files "
        "WHERE status NOT IN ('read', 'archive', 'link') ORDER BY file_id "
        f"LIMIT {_NAMED + 1}",
    )
    rows = table.to_pylist()
    lines = [
        f"{r['path']}: {r['status']}" + (f": {r['detail']}" if r["detail"] else "") for r in rows
    ]
    if len(rows) > _NAMED:
        lines[_NAMED:] = ["… and more (culprit case info lists them all)"]
    return lines
