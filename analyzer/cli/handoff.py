"""``culprit handoff``: pack a case's verdict and evidence for another machine, verify a
packed one, or make a key to sign them with."""

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
            help="A case or bundle to pack; `verify FILE` to check a handoff archive; "
            "`keygen OUT` to write a signing key pair (OUT, OUT.pub).",
            metavar="CASE_OR_BUNDLE... | verify FILE | keygen OUT",
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
    sign: Annotated[
        Path | None,
        typer.Option(
            "--sign",
            help="Sign the manifest with this Ed25519 private key (PEM, OpenSSH or raw).",
        ),
    ] = None,
    trusted_key: options.TrustedKeys = None,
    sha256: options.HandoffSha256 = None,
) -> None:
    """Pack a case's verdict and the rows behind it for another (air-gapped) machine, redacted,
    with a manifest of sha256s (signed with --sign); `culprit analyze FILE -o DIR` verifies
    and re-diagnoses it there.

    Example: culprit handoff /tmp/case -o incident.handoff.tar.zst --sign team.key
    """
    from analyzer import api

    screen = console()
    # `verify` and `keygen` are the first word of the arguments, not sub-commands: as a
    # group, `handoff` could not also take the case or bundle to pack as its own arguments.
    checking = trusted_key or sha256 is not None
    if target[0] == "verify":
        if len(target) != 2:
            raise UsageError(
                "usage: culprit handoff verify FILE [--trusted-key PUB] [--sha256 HEX]"
            )
        verified = api.verify_handoff(target[1], tuple(trusted_key or ()), sha256)
        screen.print(f"{target[1]}: {verified.summary()}", markup=False)
        if verified.sha256 is not None:
            screen.print(f"sha256 {verified.sha256}", markup=False)
        for note in verified.repacked:
            screen.print(f"note: the archive was repacked: {note}", markup=False)
        return
    if checking:
        raise UsageError("--trusted-key and --sha256 go with `culprit handoff verify FILE`")
    if target[0] == "keygen":
        if len(target) != 2:
            raise UsageError("usage: culprit handoff keygen OUT")
        private, public, fingerprint = api.handoff_keygen(target[1])
        screen.print(
            f"wrote {private} (private: keep it, sign with --sign) and {public} (public: give it "
            f"to receivers for --trusted-key); fingerprint {fingerprint}",
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
        sign=sign,
    )
    screen.print(
        f"{result.path}: case {result.case_id}, {result.members} members, {result.rows:,} rows, "
        f"{result.bytes / 2**20:,.1f} MiB",
        markup=False,
    )
    signed = f"signed by {result.signed_by}" if result.signed_by else "unsigned"
    screen.print(f"sha256 {result.sha256} ({signed})", markup=False)
    if not result.reproduces:
        screen.print(
            "warning: re-diagnosing the packed evidence does not give the same verdict; the "
            "packed findings.json and report.md are the case's own",
            style="yellow",
            markup=False,
        )
