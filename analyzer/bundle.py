"""Walk a bundle safely: directories, archives and single files, without extracting to disk.

A bundle is one or more inputs: a directory, a ``.tar`` (optionally ``.gz``/``.zst``), a
``.zip``, or a single log file (optionally ``.gz``/``.zst``). :meth:`Bundle.members` yields every
file in them as a :class:`Member` with its bundle-relative path. Members that would escape the
bundle (``../``, absolute names, links pointing outside) or that are not regular files are
yielded with ``status="refused"`` and a reason, never opened and never silently skipped.
Archives nested inside the bundle are walked too, up to a depth limit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Final, Literal

from analyzer import defaults
from analyzer.errors import BundleError, ExpansionLimitError
from analyzer.streams import Content, CorruptStreamError, ExpansionBudget, Readable

#: ``file`` is read; ``archive`` is walked (its files follow); ``link`` is listed but read at its
#: target; ``refused`` is unsafe or not a regular file; ``damaged`` reports that an archive
#: already listed could not be read past some point.
MemberStatus = Literal["file", "link", "refused", "archive", "damaged"]

_TAR_SUFFIXES: Final = (".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar.zstd")
_ZIP_SUFFIXES: Final = (".zip",)
_SPOOL_LIMIT: Final = 64 << 20


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

    def open(self) -> Readable:
        """The member's stored bytes as a stream."""
        if self.opener is None:
            raise BundleError(f"member is not readable ({self.status})", path=self.path)
        return _GuardedStream(self.opener(), self.path)


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


def _link_target_inside(member_path: str, target: str, *, relative_to_root: bool) -> bool:
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


class _GuardedStream:
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
        except ExpansionLimitError:
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


class Bundle:
    """The inputs of one ingest run.

    Args:
        inputs: directories, archives or single files.
        limits: safety limits; see :class:`BundleLimits`.

    Raises:
        BundleError: an input does not exist or is not a file or directory.
    """

    def __init__(self, inputs: Sequence[Path], limits: BundleLimits | None = None) -> None:
        if not inputs:
            raise BundleError("no input given")
        self.inputs = [Path(p) for p in inputs]
        self.limits = limits or BundleLimits()
        for path in self.inputs:
            if not path.exists():
                raise BundleError("no such file or directory", path=str(path))
            if not (path.is_dir() or path.is_file()):
                raise BundleError("not a file or directory", path=str(path))
        self.input_bytes = sum(_tree_size(p) for p in self.inputs)
        total = self.limits.max_total_bytes
        if total is None:
            total = max(self.limits.floor_bytes, int(self.input_bytes * self.limits.max_ratio))
        self.budget = ExpansionBudget(
            max_ratio=self.limits.max_ratio,
            floor_bytes=self.limits.floor_bytes,
            max_total_bytes=total,
        )
        self._prefixes = _input_prefixes(self.inputs)

    def members(self) -> Iterator[Member]:
        """Every file of every input, in a deterministic order."""
        for path, prefix in zip(self.inputs, self._prefixes, strict=True):
            if path.is_dir():
                yield from self._walk_directory(path, prefix)
            else:
                yield from self._disk_file(path, prefix or display_name(path.name))

    def fingerprint(self) -> str:
        """A cheap identity of the inputs from names, sizes and modification times."""
        listing: list[object] = []
        for path in self.inputs:
            if path.is_dir():
                for file in sorted(_iter_tree(path)):
                    st = file.lstat()
                    listing.append([str(file.relative_to(path)), st.st_size, st.st_mtime_ns])
            else:
                st = path.stat()
                listing.append([str(path.resolve()), st.st_size, st.st_mtime_ns])
        return hashlib.sha256(json.dumps(listing).encode()).hexdigest()

    def content_hash(self) -> str:
        """sha256 over the content of every regular input file, by bundle path.

        Equal to :func:`content_hash_of` over the ``on_disk`` members of an ingest of the same
        bundle, so a case can tell whether a bundle changed without ingesting it again.
        """
        return content_hash_of([(rel, _hash_file(file)) for rel, file in self._disk_files()])

    def plain_files(self) -> tuple[int, int]:
        """How many regular files on disk are not archives, and their bytes (what worker
        processes can read)."""
        sizes = [size for _, size in self.plain_file_sizes()]
        return len(sizes), sum(sizes)

    def plain_file_sizes(self) -> list[tuple[str, int]]:
        """Bundle path and size of every regular file on disk that is read as a file (not
        walked as an archive), in bundle order."""
        return [
            (rel, file.stat().st_size)
            for rel, file in self._disk_files()
            if not (archive_kind(file.name) and self.limits.max_depth >= 1)
        ]

    def disk_files(self) -> list[tuple[str, Path]]:
        """Bundle path and location of every regular file on disk (archives too)."""
        return list(self._disk_files())

    def _disk_files(self) -> Iterator[tuple[str, Path]]:
        for path, prefix in zip(self.inputs, self._prefixes, strict=True):
            if not path.is_dir():
                yield prefix or display_name(path.name), path
                continue
            for file in sorted(_iter_tree(path)):
                st = file.lstat()
                if stat.S_ISREG(st.st_mode):
                    yield _join(prefix, _relative(file, path)), file

    # -- directories -------------------------------------------------------------------------

    def _walk_directory(self, root: Path, prefix: str) -> Iterator[Member]:
        real_root = os.path.realpath(root)
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames.sort()
            for name in sorted(filenames) + sorted(d for d in dirnames if _is_link(dirpath, d)):
                full = Path(dirpath) / name
                rel = _join(prefix, _relative(full, root))
                st = full.lstat()
                if stat.S_ISLNK(st.st_mode):
                    yield _directory_link(full, rel, real_root)
                elif not stat.S_ISREG(st.st_mode):
                    yield Member(rel, 0, None, "refused", detail="not a regular file")
                else:
                    yield from self._disk_file(full, rel)

    def _disk_file(self, path: Path, rel: str) -> Iterator[Member]:
        st = path.stat()
        if archive_kind(path.name) and self.limits.max_depth >= 1:
            archive = Member(rel, st.st_size, st.st_mtime, "archive", on_disk=True)
            yield archive
            yield from self._walk_archive(
                archive,
                _file_opener(path),
                rel,
                kind=archive_kind(path.name),
                depth=1,
                on_disk=path,
            )
            return
        yield Member(
            rel,
            st.st_size,
            st.st_mtime,
            "file",
            opener=_file_opener(path),
            on_disk=True,
            disk_path=path,
        )

    # -- archives ----------------------------------------------------------------------------

    def _walk_archive(
        self,
        archive: Member,
        opener: Callable[[], Readable],
        prefix: str,
        *,
        kind: Literal["tar", "zip"] | None,
        depth: int,
        on_disk: Path | None = None,
    ) -> Iterator[Member]:
        # A single archive given as the only input has no prefix: its members are the bundle.
        inner = "" if len(self.inputs) == 1 and on_disk in self.inputs else prefix
        detail: str | None = None
        try:
            if kind == "zip":
                yield from self._walk_zip(archive, opener, inner, depth, on_disk)
            else:
                yield from self._walk_tar(archive, opener, inner, depth)
        except ExpansionLimitError as exc:
            if exc.scope == "bundle":
                raise
            detail = exc.message
        except (CorruptStreamError, tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
            reason = exc.message if isinstance(exc, CorruptStreamError) else str(exc)
            detail = f"archive cannot be read on: {reason}"
        if detail is not None:
            if on_disk is not None and archive.sha256 is None:
                archive.sha256 = _hash_file(on_disk)
            yield Member(archive.path, 0, None, "damaged", detail=detail)

    def _walk_tar(
        self, archive: Member, opener: Callable[[], Readable], prefix: str, depth: int
    ) -> Iterator[Member]:
        content = Content(opener(), self.budget, archive.path)
        try:
            with tarfile.open(fileobj=content, mode="r|") as tar:  # type: ignore[call-overload]
                for info in tar:
                    yield from self._tar_member(tar, info, prefix, depth)
            archive.sha256 = content.finish()
        finally:
            content.close()

    def _tar_member(
        self, tar: tarfile.TarFile, info: tarfile.TarInfo, prefix: str, depth: int
    ) -> Iterator[Member]:
        clean = safe_relative(info.name)
        shown = display_name(info.name)
        if info.isdir():
            return
        if clean is None:
            yield Member(
                _join(prefix, shown), 0, None, "refused", detail="member path escapes the bundle"
            )
            return
        rel = _join(prefix, display_name(clean))
        if info.issym() or info.islnk():
            inside = _link_target_inside(clean, info.linkname, relative_to_root=info.islnk())
            if not inside:
                yield Member(rel, 0, None, "refused", detail="link points outside the bundle")
            else:
                target = display_name(info.linkname)
                yield Member(rel, 0, None, "link", detail=f"link to {target} (read there)")
            return
        if not info.isfile():
            yield Member(rel, 0, None, "refused", detail="not a regular file")
            return
        if archive_kind(clean) and depth < self.limits.max_depth:
            nested = Member(rel, info.size, float(info.mtime), "archive")
            yield nested
            yield from self._walk_archive(
                nested,
                partial(_tar_extract, tar, info),
                rel,
                kind=archive_kind(clean),
                depth=depth + 1,
            )
            return
        yield Member(
            rel, info.size, float(info.mtime), "file", opener=partial(_tar_extract, tar, info)
        )

    def _walk_zip(
        self,
        archive: Member,
        opener: Callable[[], Readable],
        prefix: str,
        depth: int,
        on_disk: Path | None,
    ) -> Iterator[Member]:
        spool = _Seekable(opener, on_disk)
        with spool as handle, zipfile.ZipFile(handle) as zipped:
            archive.sha256 = spool.sha256
            for info in sorted(zipped.infolist(), key=lambda i: i.filename):
                yield from self._zip_member(zipped, info, prefix, depth)

    def _zip_member(
        self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, prefix: str, depth: int
    ) -> Iterator[Member]:
        if info.is_dir():
            return
        clean = safe_relative(info.filename)
        if clean is None:
            shown = _join(prefix, display_name(info.filename))
            yield Member(shown, 0, None, "refused", detail="member path escapes the bundle")
            return
        rel = _join(prefix, display_name(clean))
        mtime = _zip_mtime(info)
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            target = archive.read(info).decode("utf-8", "replace")
            if _link_target_inside(clean, target, relative_to_root=False):
                yield Member(rel, 0, None, "link", detail=f"link to {display_name(target)}")
            else:
                yield Member(rel, 0, None, "refused", detail="link points outside the bundle")
            return
        if info.flag_bits & 0x1:
            yield Member(rel, info.file_size, mtime, "refused", detail="member is encrypted")
            return
        allowed = max(self.limits.floor_bytes, int(info.compress_size * self.limits.max_ratio))
        if info.file_size > allowed:
            yield Member(
                rel,
                info.file_size,
                mtime,
                "refused",
                detail=(
                    f"declared size {info.file_size:,} bytes is more than "
                    f"{self.limits.max_ratio:g}x its compressed size {info.compress_size:,}; "
                    "refusing a likely zip bomb (raise --max-expansion to allow it)"
                ),
            )
            return
        if archive_kind(clean) and depth < self.limits.max_depth:
            nested = Member(rel, info.file_size, mtime, "archive")
            yield nested
            yield from self._walk_archive(
                nested,
                partial(_zip_open, archive, info, self.budget, rel),
                rel,
                kind=archive_kind(clean),
                depth=depth + 1,
            )
            return
        yield Member(
            rel,
            info.file_size,
            mtime,
            "file",
            opener=partial(_zip_open, archive, info, self.budget, rel),
        )


def _directory_link(full: Path, rel: str, real_root: str) -> Member:
    target = os.path.realpath(full)
    if os.path.commonpath([target, real_root]) != real_root:
        return Member(rel, 0, None, "refused", detail="symlink points outside the bundle")
    shown = display_name(os.path.relpath(target, real_root))
    return Member(rel, 0, None, "link", detail=f"link to {shown} (read there)")


def _relative(file: Path, root: Path) -> str:
    return display_name(str(file.relative_to(root)).replace(os.sep, "/"))


def content_hash_of(pairs: Sequence[tuple[str, str]]) -> str:
    """Combine (bundle path, sha256) pairs of on-disk files into one bundle content hash."""
    digest = hashlib.sha256()
    for rel, sha in sorted(pairs):
        digest.update(f"{rel}\t{sha}\n".encode())
    return digest.hexdigest()


def _zip_open(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: ExpansionBudget, path: str
) -> Readable:
    return _Charged(archive.open(info), budget, info.compress_size, path)


class _Charged:
    """Charges bytes that zipfile inflated to the bundle's expansion budget."""

    def __init__(self, raw: IO[bytes], budget: ExpansionBudget, compressed: int, path: str) -> None:
        self._raw = raw
        self._budget = budget
        self._compressed = compressed
        self._path = path
        self._decoded = 0

    def read(self, size: int = -1, /) -> bytes:
        data = self._raw.read(size)
        self._decoded += len(data)
        self._budget.charge(
            compressed=self._compressed, decoded=self._decoded, added=len(data), path=self._path
        )
        return data

    def close(self) -> None:
        self._raw.close()


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(partial(handle.read, 1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tar_extract(tar: tarfile.TarFile, info: tarfile.TarInfo) -> Readable:
    handle = tar.extractfile(info)
    if handle is None:
        raise BundleError("tar member has no content", path=info.name)
    return handle


class _Seekable:
    """A seekable handle for a zip archive: the file itself, or a spooled copy of a stream.

    zipfile needs random access; a zip nested inside a tar stream is copied to a spooled
    temporary file (memory up to 64 MiB, then disk) because there is no other way to read it.
    The archive's sha256 is computed on the way.
    """

    def __init__(self, opener: Callable[[], Readable], on_disk: Path | None) -> None:
        self._opener = opener
        self._on_disk = on_disk
        self._handle: IO[bytes] | None = None
        self.sha256: str | None = None

    def __enter__(self) -> IO[bytes]:
        digest = hashlib.sha256()
        if self._on_disk is not None:
            handle: IO[bytes] = open(self._on_disk, "rb")
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        else:
            handle = tempfile.SpooledTemporaryFile(max_size=_SPOOL_LIMIT)
            source = self._opener()
            for block in iter(lambda: source.read(1 << 20), b""):
                digest.update(block)
                handle.write(block)
        handle.seek(0)
        self._handle = handle
        self.sha256 = digest.hexdigest()
        return handle

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.close()


def _zip_mtime(info: zipfile.ZipInfo) -> float | None:
    import datetime as dt

    try:
        return dt.datetime(*info.date_time, tzinfo=dt.UTC).timestamp()
    except ValueError:
        return None


def _file_opener(path: Path) -> Callable[[], Readable]:
    return lambda: open(path, "rb")


def _join(prefix: str, rel: str) -> str:
    return f"{prefix}/{rel}" if prefix else rel


def _is_link(dirpath: str, name: str) -> bool:
    return (Path(dirpath) / name).is_symlink()


def _iter_tree(root: Path) -> Iterator[Path]:
    for dirpath, _dirs, files in os.walk(root, followlinks=False):
        for name in files:
            yield Path(dirpath) / name


def _tree_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for file in _iter_tree(path):
        try:
            st = file.lstat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            total += st.st_size
    return total


def _input_prefixes(inputs: Sequence[Path]) -> list[str]:
    """Bundle-relative prefix of each input: none for one input, the input's name for several."""
    if len(inputs) == 1:
        return [""]
    used: set[str] = set()
    prefixes = []
    for path in inputs:
        base = display_name(path.resolve().name or "input")
        name, number = base, 1
        while name in used:
            number += 1
            name = f"{base}~{number}"
        used.add(name)
        prefixes.append(name)
    return prefixes


def content_of(member: Member, budget: ExpansionBudget) -> Content:
    """Open a member's decoded content (gzip/zstd detected from magic bytes)."""
    return Content(member.open(), budget, member.path)


__all__ = [
    "Bundle",
    "BundleLimits",
    "Member",
    "archive_kind",
    "content_hash_of",
    "content_of",
    "display_name",
    "safe_relative",
]
