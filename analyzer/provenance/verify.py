"""Verify a handoff, in order: the archive's sha256 (``--sha256``), the compression and tar
stream, the manifest and its signature (``--trusted-key``), every member against the
manifest, every member against its name and the manifest's ids. The first failure is a
:class:`~analyzer.errors.HandoffError` naming the member."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Final

from analyzer.errors import HandoffError, UsageError
from analyzer.provenance.archive import (
    MAX_TAR_BYTES,
    Compression,
    Unpacked,
    read_tree,
    unpack_archive,
)
from analyzer.provenance.contents import Contents, check_contents
from analyzer.provenance.layout import MANIFEST, SIGNATURE
from analyzer.provenance.manifest import Manifest, check_members, parse_manifest
from analyzer.provenance.signing import Signer, check_signature, load_public_key

_HEX64: Final = re.compile(r"^[0-9a-fA-F]{64}$")


@dataclass(frozen=True)
class Trust:
    """What the receiver knows out of band: keys it trusts, the archive's digest."""

    trusted_keys: tuple[Path, ...] = ()
    sha256: str | None = None

    def __post_init__(self) -> None:
        if self.sha256 is not None and not _HEX64.match(self.sha256):
            raise UsageError(f"--sha256 {self.sha256!r} is not 64 hex digits")

    @property
    def given(self) -> bool:
        return bool(self.trusted_keys) or self.sha256 is not None


@dataclass(frozen=True)
class Verification:
    """A verified handoff: its manifest, members and parsed contents, and what was proven."""

    path: str
    manifest: Manifest
    members: dict[str, bytes] = field(repr=False)
    contents: Contents = field(repr=False)
    #: sha256 of the archive file (``None`` for an unpacked directory).
    sha256: str | None
    #: ``directory`` for an unpacked handoff.
    compression: Compression | str
    signer: Signer | None
    #: Ways the archive differs from how culprit packs one (all members still verified).
    repacked: tuple[str, ...]

    def summary(self) -> str:
        """One line: what was verified and what it proves."""
        manifest = self.manifest
        said = (
            f"verified {len(manifest.members)} members against {MANIFEST} (case "
            f"{manifest.case_id}, bundle {manifest.bundle_id[:12]}, culprit "
            f"{manifest.tool_version})"
        )
        if self.signer is None:
            return f"{said}; unsigned: this detects damage, not a rewritten manifest"
        if self.signer.trusted:
            return f"{said}; signed by trusted key {self.signer.fingerprint}"
        return (
            f"{said}; signed by {self.signer.fingerprint} (no --trusted-key given: "
            "that key is not checked)"
        )


def verify_path(path: Path, trust: Trust | None = None) -> Verification:
    """Verify the handoff archive (or unpacked handoff directory) ``path``.

    Raises:
        HandoffError: unreadable, damaged, tampered with, signed by an untrusted key or
            unsigned when keys are trusted, or not the archive ``trust.sha256`` names.
        UsageError: a trusted key cannot be read, or ``--sha256`` is given for a directory.
    """
    trust = trust or Trust()
    where = str(path)
    if path.is_dir():
        if trust.sha256 is not None:
            raise UsageError("--sha256 checks an archive file, not a directory", path=where)
        members = read_tree(path)
        return _verify(where, members, None, "directory", (), trust)
    try:
        if path.stat().st_size > MAX_TAR_BYTES:
            raise HandoffError("the archive is too large for a handoff", path=where)
        blob = path.read_bytes()
    except OSError as exc:
        raise HandoffError(f"cannot read the archive: {exc.strerror or exc}", path=where) from None
    return verify_blob(blob, where, trust)


def verify_blob(blob: bytes, where: str, trust: Trust | None = None) -> Verification:
    """Verify the handoff archive bytes ``blob`` (see :func:`verify_path`)."""
    trust = trust or Trust()
    digest = hashlib.sha256(blob).hexdigest()
    if trust.sha256 is not None and digest != trust.sha256.lower():
        raise HandoffError(
            f"the archive's sha256 is {digest}, not the expected {trust.sha256.lower()}",
            path=where,
        )
    unpacked = unpack_archive(blob, where)
    return _verify(
        where, unpacked.members, digest, unpacked.compression, _repacked(unpacked), trust
    )


def _verify(
    where: str,
    members: dict[str, bytes],
    digest: str | None,
    compression: Compression | str,
    repacked: tuple[str, ...],
    trust: Trust,
) -> Verification:
    keys = [load_public_key(k) for k in trust.trusted_keys]
    if MANIFEST not in members:
        below = sorted(n for n in members if PurePosixPath(n).name == MANIFEST)
        name = below[0] if below else MANIFEST
        raise HandoffError(f"member {name}: a handoff's {MANIFEST} is at its root", path=where)
    raw_manifest = members[MANIFEST]
    signer = None
    if SIGNATURE in members:
        signer = check_signature(members[SIGNATURE], raw_manifest, keys, where)
    elif keys:
        raise HandoffError(
            f"the handoff is unsigned (no {SIGNATURE}) but --trusted-key was given", path=where
        )
    manifest = parse_manifest(raw_manifest, where)
    check_members(manifest, members, where)
    listed = {name: data for name, data in members.items() if name in manifest.members}
    contents = check_contents(manifest, listed, where)
    return Verification(where, manifest, listed, contents, digest, compression, signer, repacked)


def _repacked(unpacked: Unpacked) -> tuple[str, ...]:
    """How an archive whose members verify differs from one culprit packs."""
    notes = []
    if unpacked.compression != "zstd":
        notes.append(f"compression is {unpacked.compression}, not zstd")
    elif not unpacked.marked:
        notes.append("recompressed (no culprit-handoff frame)")
    first = [MANIFEST, SIGNATURE][: 1 + (SIGNATURE in unpacked.members)]
    rest = sorted(set(unpacked.order) - set(first))
    if unpacked.order != first + rest:
        notes.append(f"members are not in culprit's order ({MANIFEST} first, then by name)")
    return tuple(notes)
