"""``culprit match`` (the catalogue over a case, or over one shard of it) and ``culprit merge``
(the shards' parts back into one case)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from analyzer import defaults
from analyzer.cli import options
from analyzer.cli.render import console
from analyzer.errors import UsageError


def match(
    case: options.CaseDir,
    backend: options.MatchBackend = defaults.BACKEND,
    signatures: options.ExtraSignatures = None,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Match only shard k/N (k from 0) of the case's row files into a part "
            "directory; `culprit merge` of all N parts writes the case's matches.",
            metavar="k/N",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o", "--out", help="The part directory of --shard (default CASE/parts/match-k-of-N)."
        ),
    ] = None,
) -> None:
    """Match the signature catalogue over every row of a case (writes CASE/matches.parquet;
    then `culprit query CASE "SELECT * FROM matches"` shows each match with its row).

    Example: culprit match /tmp/case
    """
    from analyzer import api

    if shard is not None:
        part = api.match_shard(case, shard, out, backend=backend, signatures=signatures or [])
        console().print(
            f"{case}: shard {part.shard}: {part.matches:,} matches in {part.rows_scanned:,} rows "
            f"of {len(part.row_files)} row files; merge every shard with `culprit merge`"
        )
        return
    if out is not None:
        raise UsageError("-o/--out goes with --shard (without it the matches go into the case)")
    result = api.match(case, backend=backend, signatures=signatures or [])
    rate = result.rows_scanned / result.seconds if result.seconds > 0 else 0.0
    console().print(
        f"{case}: {result.matches:,} matches of {result.matched_signatures:,} signatures in "
        f"{result.rows_scanned:,} rows ({result.signatures:,} signatures, catalogue "
        f"{result.catalogue_digest[:12]}; {result.backend} {result.seconds:.1f} s, "
        f"{rate:,.0f} rows/s)"
    )


def merge(
    parts: Annotated[
        list[Path],
        typer.Argument(help="The directories every shard wrote (all N of one run)."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Ingest parts: the case to write. Match parts: the case they matched.",
        ),
    ],
) -> None:
    """Merge the outputs of `ingest --shard` into a case, or of `match --shard` into the
    case's matches. The parts are left as they were.

    Example: culprit merge parts/ingest-* -o /tmp/case
    """
    from analyzer import api

    started = time.perf_counter()
    result = api.merge(parts, out)
    elapsed = time.perf_counter() - started
    if result.kind == "ingest":
        counts = result.meta.counts
        what = f"{counts.files:,} files, {counts.rows:,} rows ({counts.duplicates:,} duplicates)"
    else:
        what = f"{result.matches:,} matches"
    console().print(f"{out}: {result.parts} {result.kind} parts merged: {what} in {elapsed:.1f} s")
