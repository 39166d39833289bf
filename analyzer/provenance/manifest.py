"""``MANIFEST.json``: what a handoff holds, and the checks of every field it carries against
the members (their names, bytes and sha256, the signature folders)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import PurePosixPath
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer.errors import HandoffError
from analyzer.provenance.layout import (
    FORMAT,
    MANIFEST,
    OPTIONAL,
    REQUIRED,
    SIGNATURES_DIR,
    UNLISTED,
)

_HEX64: Final = r"^[0-9a-f]{64}$"
_FOLDER: Final = re.compile(rf"^{SIGNATURES_DIR}/(0|[1-9][0-9]*)$")


class MemberEntry(BaseModel):
    """One member's size and sha256."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    sha256: Annotated[str, Field(pattern=_HEX64)]
    bytes: Annotated[int, Field(ge=0)]


class Manifest(BaseModel):
    """The manifest of a handoff (``format`` is :data:`FORMAT`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str
    case_id: Annotated[str, Field(min_length=1)]
    tool_version: Annotated[str, Field(min_length=1)]
    bundle_id: Annotated[str, Field(pattern=_HEX64)]
    catalogue_digest: Annotated[str, Field(pattern=_HEX64)]
    signature_folders: list[str]
    members: dict[str, MemberEntry]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entries(members: dict[str, bytes]) -> dict[str, MemberEntry]:
    """The manifest's ``members`` field for ``members``."""
    return {
        name: MemberEntry(sha256=sha256(data), bytes=len(data))
        for name, data in sorted(members.items())
    }


def manifest_bytes(manifest: Manifest) -> bytes:
    """The bytes culprit writes for ``manifest`` (sorted keys, two-space indent)."""
    return json.dumps(manifest.model_dump(), indent=2, sort_keys=True).encode()


def parse_manifest(data: bytes, where: str) -> Manifest:
    """The manifest in ``data``.

    Raises:
        HandoffError: not JSON, a field missing, unknown or of the wrong kind, or another
            format than :data:`FORMAT`.
    """
    try:
        manifest = Manifest.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(the document)"
        raise HandoffError(f"member {MANIFEST}: {field}: {first['msg']}", path=where) from None
    if manifest.format != FORMAT:
        raise HandoffError(
            f"member {MANIFEST}: handoff format {manifest.format!r} is not {FORMAT!r}", path=where
        )
    return manifest


def check_members(manifest: Manifest, members: dict[str, bytes], where: str) -> None:
    """Every member is listed and every listed member is there, with its bytes and sha256;
    the members are those a handoff holds; the signature folders are the ones packed.

    Raises:
        HandoffError: naming the first member (in name order) that fails.
    """
    listed, present = set(manifest.members), set(members) - set(UNLISTED)
    for name in sorted(listed - present):
        raise HandoffError(f"member {name} is missing", path=where)
    for name in sorted(present - listed):
        raise HandoffError(f"member {name} is not in the manifest", path=where)
    for name in REQUIRED:
        if name not in listed:
            raise HandoffError(f"member {name} is missing (the manifest omits it)", path=where)
    folders = _check_folders(manifest, where)
    for name in sorted(listed - set(REQUIRED) - set(OPTIONAL)):
        if not any(name.startswith(f"{folder}/") for folder in folders):
            raise HandoffError(f"member {name} is not part of a handoff", path=where)
        if PurePosixPath(name).suffix != ".toml":
            raise HandoffError(f"member {name} is not a signature file (.toml)", path=where)
    for name in sorted(listed):
        data = members[name]
        problem = member_problem(name, manifest.members[name], len(data), sha256(data))
        if problem is not None:
            raise HandoffError(f"member {problem}", path=where)


def member_problem(name: str, entry: MemberEntry, size: int, digest: str) -> str | None:
    """How a member of ``size`` bytes and sha256 ``digest`` differs from its ``entry`` (a
    handoff's member, a collected bundle's file), or ``None`` when it matches."""
    if size != entry.bytes:
        return f"{name} is {size:,} bytes, not the manifest's {entry.bytes:,} (tampered or damaged)"
    if digest != entry.sha256:
        return f"{name} does not match its sha256 in the manifest (tampered or damaged)"
    return None


def _check_folders(manifest: Manifest, where: str) -> list[str]:
    """The signature folders, which must be ``signatures/0`` … ``signatures/<n-1>`` in order
    and hold every member under ``signatures/``."""
    folders = manifest.signature_folders
    expected = [f"{SIGNATURES_DIR}/{n}" for n in range(len(folders))]
    if folders != expected or not all(_FOLDER.match(f) for f in folders):
        raise HandoffError(
            f"member {MANIFEST}: signature_folders {folders} are not {expected}", path=where
        )
    used = {
        "/".join(PurePosixPath(name).parts[:2])
        for name in manifest.members
        if name.startswith(f"{SIGNATURES_DIR}/")
    }
    for folder in sorted(used - set(folders)):
        raise HandoffError(
            f"member {MANIFEST}: folder {folder} is packed but not in signature_folders",
            path=where,
        )
    return folders
