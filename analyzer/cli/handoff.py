"""``culprit handoff``: pack a case's verdict and evidence for another machine, or verify a
packed one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from analyzer import defaults
from analyzer.cli import options
from analyzer.cli.render import console
from analyzer.errors import UsageError


def handoff(
    target: Annotated[
        list[str],
        typer.Argument(
            help="A case or bundle to pack; or `verify FILE` to check a handoff archive.",
            metavar="CASE_OR_BUNDLE... | verify FILE",
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="The handoff archive to write (.tar.zst).")
    ] = None,
    case_id: Annotated[
        str | None, typer.Option(help="An id for the case (default: the bundle id's start).")
    ] = None,
    context: options.HandoffContext = defaults.HANDOFF_CONTEXT,
    signatures: Annotated[
        list[Path] | None,
        typer.Option("--signatures", help="An extra signature folder (packed too); repeatable."),
    ] = None,
) -> None:
    """Pack a case's verdict and the rows behind it for another (air-gapped) machine, redacted,
    with a manifest of sha256s; `culprit analyze FILE -o DIR` re-diagnoses it there.

    Example: culprit handoff /tmp/case -o incident.handoff.tar.zst
    """
    from analyzer import api

    screen = console()
    # `verify` is the first word of the arguments, not a sub-command: as a group, `handoff`
    # could not also take the case or bundle to pack as its own arguments.
    if target[0] == "verify":
        if len(target) != 2:
            raise UsageError("usage: culprit handoff verify FILE")
        manifest = api.verify_handoff(target[1])
        screen.print(
            f"{target[1]}: verified {len(manifest['members'])} members against MANIFEST.json "
            f"(case {manifest['case_id']}, culprit {manifest['tool_version']})",
            markup=False,
        )
        return
    if out is None:
        raise UsageError("handoff needs -o FILE.tar.zst")
    result = api.handoff(
        target,
        out,
        case_id=case_id,
        context=context,
        settings=api.settings(signatures=tuple(signatures or ())),
    )
    screen.print(
        f"{result.path}: case {result.case_id}, {result.members} members, {result.rows:,} rows, "
        f"{result.bytes / 2**20:,.1f} MiB",
        markup=False,
    )
    if not result.reproduces:
        screen.print(
            "warning: re-diagnosing the packed evidence does not give the same verdict; the "
            "packed findings.json and report.md are the case's own",
            style="yellow",
            markup=False,
        )
