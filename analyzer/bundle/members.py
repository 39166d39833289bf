"""What a bundle consists of: its members (files, archives, links, refused entries), their safe
names, and the limits a walk through it keeps."""

from __future__ import annotations

import hashlib
import os
import re
import tarfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from analyzer import defaults
from analyzer.bundle.archives import MemberCutError
from analyzer.errors import BundleError, ExpansionLimitError
from analyzer.streams import Content, CorruptStreamError, ExpansionBudget, Readable

#: ``file`` is read; ``archive`` is walked (its files follow); ``link`` is listed but read at its
#: target; ``refused`` is unsafe or not a regular file; ``unreadable`` is a directory (or a
#: file) the walk may not list or read; ``damaged`` reports that an archive already listed
#: could not be read past some point; ``collection`` is ``culprit collect``'s own record inside
#: a collected bundle (:data:`COLLECTION_DIR`), listed and never read as a log.
MemberStatus = Literal["file", "link", "refused", "unreadable", "archive", "damaged", "collection"]

#: The folder in which ``culprit collect`` keeps its record of a collection (the plan, each
#: command's result and error output, the Kubernetes objects it listed). Its files are not
#: logs: read as text, a failed command's ``429 Too Many Requests`` would become evidence.
COLLECTION_DIR: Final = "culprit-collect"
COLLECTION_DETAIL: Final = "culprit collect's record of the collection: listed, not read as a log"


_TAR_SUFFIXES: Final = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar.zstd")


_ZIP_SUFFIXES: Final = (".zip",)


@dataclass(frozen=True)
class BundleLimits:
    """Safety limits for reading a bundle.

    Args:
        max_ratio: a compressed stream may expand to at most this multiple of its size.
        floor_bytes: ...but always to at least this many bytes.
        max_total_bytes: cap on all decoded bytes of the bundle; ``None`` means
            ``max_ratio`` times the total input size (and at least ``floor_bytes``).
        max_depth: how deep archives inside archives are opened.
    """

    max_ratio: float = defaults.MAX_EXPANSION_RATIO
    floor_bytes: int = 64 << 20
    max_total_bytes: int | None = None
    max_depth: int = 3


@dataclass(frozen=True)
class FileStamp:
    """What a file on disk looked like when it was listed."""

    size: int
    mtime_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStamp:
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


@dataclass
class Member:
    """One file of the bundle.

    ``open`` returns the member's stored bytes; for members read from a tar stream it is only
    valid until the iteration moves on to the next member.
    """

    path: str
    size: int
    mtime: float | None
    status: MemberStatus
    container: str | None = None
    detail: str | None = None
    opener: Callable[[], Readable] | None = field(default=None, repr=False)
    #: The member is a file on disk (not inside an archive): it counts in the bundle's
    #: content hash.
    on_disk: bool = False
    #: sha256 of an archive, known once the walk through it has finished.
    sha256: str | None = None
    #: Where a plain file (not inside an archive) lies on disk: another process can open it.
    disk_path: Path | None = None
    #: The file on disk as listed (size, mtime, inode): compared after the read, so a file
    #: that shrank or changed meanwhile is not taken for complete.
    stamp: FileStamp | None = None
    #: The expansion budget of the archive the member is in (``None``: the bundle's).
    budget: ExpansionBudget | None = field(default=None, repr=False)

    def open(self) -> Readable:
        """The member's stored bytes as a stream."""
        if self.opener is None:
            raise BundleError(f"member is not readable ({self.status})", path=self.path)
        return GuardedStream(self.opener(), self.path)


def is_collection_record(path: str) -> bool:
    """Whether the bundle path ``path`` lies in a collection record folder (at any depth: a
    folder may hold several collected bundles, a tar may keep the bundle's own name)."""
    return COLLECTION_DIR in path.split("/")[:-1]


def display_name(name: str) -> str:
    """Render an archive or file name safely: undecodable bytes and control characters are
    shown as escapes, so a name with a newline or invalid UTF-8 cannot forge a citation."""
    raw = name.encode("utf-8", "surrogateescape")
    text = raw.decode("utf-8", "backslashreplace")
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def safe_relative(name: str) -> str | None:
    """Return ``name`` as a clean relative POSIX path, or ``None`` if it could escape.

    Absolute paths, drive letters and any ``..`` component are refused outright rather than
    normalized: an archive that contains them was not made by a well-behaved exporter.
    """
    name = name.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def link_target_inside(member_path: str, target: str, *, relative_to_root: bool) -> bool:
    """Whether a link target stays inside the archive (``..`` may not climb above its root)."""
    if target.startswith("/") or re.match(r"^[A-Za-z]:", target):
        return False
    base = [] if relative_to_root else member_path.split("/")[:-1]
    depth = len(base)
    for part in target.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        depth += -1 if part == ".." else 1
        if depth < 0:
            return False
    return True


def archive_kind(name: str) -> Literal["tar", "zip"] | None:
    """``tar`` or ``zip`` when ``name`` looks like an archive culprit opens, else ``None``."""
    lower = name.lower()
    if lower.endswith(_TAR_SUFFIXES):
        return "tar"
    if lower.endswith(_ZIP_SUFFIXES):
        return "zip"
    return None


class GuardedStream:
    """Turns the many ways an archive member read can fail into :class:`CorruptStreamError`."""

    def __init__(self, raw: Readable, path: str) -> None:
        self._raw = raw
        self._path = path
        self._read = 0

    def close(self) -> None:
        close = getattr(self._raw, "close", None)
        if close is not None:
            close()

    def read(self, size: int = -1, /) -> bytes:
        try:
            data = self._raw.read(size)
        except (ExpansionLimitError, MemberCutError):
            raise
        except CorruptStreamError as exc:
            # The archive around this member broke off: say so at the member's own position.
            raise CorruptStreamError(
                f"the archive stream ends inside this member after {self._read:,} bytes "
                f"({exc.message})",
                decoded_bytes=self._read,
                path=self._path,
            ) from None
        except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
            raise CorruptStreamError(
                f"member cannot be read to the end ({exc})",
                decoded_bytes=self._read,
                path=self._path,
            ) from None
        self._read += len(data)
        return data


def content_hash_of(pairs: Sequence[tuple[str, str]]) -> str:
    """Combine (bundle path, sha256) pairs of on-disk files into one bundle content hash."""
    digest = hashlib.sha256()
    for rel, sha in sorted(pairs):
        digest.update(f"{rel}\t{sha}\n".encode())
    return digest.hexdigest()


def content_of(member: Member, budget: ExpansionBudget) -> Content:
    """Open a member's decoded content (gzip/zstd detected from magic bytes)."""
    return Content(member.open(), budget, member.path)
