"""Bundles in object storage (``gs://``, ``s3://``, ``file://``…), read through pyarrow's
file systems.

Readers work on local files, so a remote bundle is mirrored into a scratch directory first.
A shard fetches only what it reads: every file of the listing is created locally with its
size and modification time but no content (a sparse file), so the bundle's walk, file ids
and shard deal are exactly those of the whole bundle; then the shard's own plain files and
every archive (which each shard walks to number its members) are downloaded over them.
Credentials are pyarrow's: the environment's Application Default Credentials for ``gs://``,
the AWS variables and config files for ``s3://``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

import pyarrow as pa
import pyarrow.fs as pafs

from analyzer.bundle import Bundle, BundleLimits, archive_kind
from analyzer.case.layout import InputInfo
from analyzer.case.meta import input_infos
from analyzer.errors import BundleError

_COPY_CHUNK: Final = 8 << 20


def is_url(text: str) -> bool:
    """Whether an input names a location in a file system other than this one's paths."""
    return "://" in text


@dataclass(frozen=True, order=True)
class RemoteFile:
    """One file of a remote input: its path under the input, size and modification time."""

    relative: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class RemoteInput:
    """A remote input and its listing."""

    url: str
    filesystem: pafs.FileSystem
    root: str
    is_directory: bool
    files: tuple[RemoteFile, ...]

    @property
    def name(self) -> str:
        return PurePosixPath(self.root.rstrip("/")).name or "input"

    def remote_path(self, file: RemoteFile) -> str:
        return f"{self.root.rstrip('/')}/{file.relative}" if self.is_directory else self.root


def list_input(url: str) -> RemoteInput:
    """List a remote file or directory.

    Raises:
        BundleError: the URL's file system is unknown or unreachable, or nothing is there.
    """
    try:
        filesystem, root = pafs.FileSystem.from_uri(url)
        info = filesystem.get_file_info(root)
        if info.type == pafs.FileType.NotFound:
            raise BundleError("no such file or directory", path=url)
        if info.type == pafs.FileType.File:
            files = (RemoteFile(PurePosixPath(root).name, info.size or 0, _mtime(info)),)
            return RemoteInput(url, filesystem, root, False, files)
        found = filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise BundleError(f"cannot list it: {exc}", path=url) from None
    prefix = root.rstrip("/") + "/"
    listed = sorted(
        RemoteFile(entry.path[len(prefix) :], entry.size or 0, _mtime(entry))
        for entry in found
        if entry.type == pafs.FileType.File and entry.path.startswith(prefix)
    )
    return RemoteInput(url, filesystem, root, True, tuple(listed))


def _mtime(info: pafs.FileInfo) -> int:
    return int(info.mtime_ns) if info.mtime_ns is not None else 0


def url_fingerprint(inputs: Sequence[RemoteInput | Path]) -> str:
    """Identity of a bundle with remote inputs, from names, sizes and modification times."""
    listing: list[object] = []
    for item in inputs:
        if isinstance(item, Path):
            listing.append([str(item.resolve()), Bundle([item]).fingerprint()])
        else:
            listing.append([item.url, [[f.relative, f.size, f.mtime_ns] for f in item.files]])
    return hashlib.sha256(json.dumps(listing).encode()).hexdigest()


@dataclass(frozen=True)
class Prepared:
    """A bundle ready to be read from local paths, and how ``case.json`` names it."""

    bundle: Bundle
    inputs: list[InputInfo]
    fingerprint: str


#: Given the mirrored bundle, the bundle paths of the plain files to download (``None``: all).
Wanted = Callable[[Bundle], Collection[str]] | None


def identify(inputs: Sequence[str], limits: BundleLimits) -> tuple[Bundle | None, str]:
    """The local bundle (``None`` when any input is remote) and the bundle's fingerprint,
    without reading or downloading any content.

    Raises:
        BundleError: an input is missing or cannot be listed.
    """
    if not any(is_url(text) for text in inputs):
        bundle = Bundle([Path(p) for p in inputs], limits)
        return bundle, bundle.fingerprint()
    listed = [list_input(text) if is_url(text) else Path(text) for text in inputs]
    for item in listed:
        if isinstance(item, Path) and not item.exists():
            raise BundleError("no such file or directory", path=str(item))
    return None, url_fingerprint(listed)


@contextlib.contextmanager
def localize(
    inputs: Sequence[str], limits: BundleLimits, wanted: Wanted = None, scratch: Path | None = None
) -> Iterator[Prepared]:
    """The bundle of ``inputs`` on local paths: remote inputs are mirrored into a scratch
    directory (removed afterwards; made inside ``scratch``, else the system's temporary
    directory) with the plain files ``wanted`` and every archive.

    Raises:
        BundleError: an input is missing, or a remote file cannot be read.
    """
    if not any(is_url(text) for text in inputs):
        bundle = Bundle([Path(p) for p in inputs], limits)
        yield Prepared(bundle, input_infos(bundle), bundle.fingerprint())
        return
    listed = [list_input(text) if is_url(text) else Path(text) for text in inputs]
    mirror = Path(tempfile.mkdtemp(prefix="culprit-mirror-", dir=scratch))
    try:
        local: list[Path] = []
        sources: dict[Path, tuple[RemoteInput, RemoteFile]] = {}
        for index, item in enumerate(listed):
            if isinstance(item, Path):
                local.append(item)
                continue
            # The input's own name, as the bundle paths of several inputs start with it.
            root = mirror / str(index) / item.name
            for file in item.files:
                target = root / file.relative if item.is_directory else root
                _placeholder(target, file)
                sources[target] = (item, file)
            local.append(root)
        bundle = Bundle(local, limits)
        plain = dict(bundle.disk_files())
        fetch = set(plain) if wanted is None else set(wanted(bundle))
        for rel, path in plain.items():
            if path in sources and (rel in fetch or archive_kind(path.name)):
                _download(*sources[path], path)
        infos = [
            InputInfo(
                path=item.url,
                kind="directory" if item.is_directory else "file",
                bytes=sum(f.size for f in item.files),
            )
            if isinstance(item, RemoteInput)
            else input_infos(Bundle([item], limits))[0]
            for item in listed
        ]
        yield Prepared(bundle, infos, url_fingerprint(listed))
    finally:
        shutil.rmtree(mirror, ignore_errors=True)


def _placeholder(target: Path, file: RemoteFile) -> None:
    """A file of the right size and time and no content (sparse where the disk allows)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as handle:
        handle.truncate(file.size)
    os.utime(target, ns=(file.mtime_ns, file.mtime_ns))


def _download(item: RemoteInput, file: RemoteFile, target: Path) -> None:
    source = item.remote_path(file)
    try:
        # compression=None: the bytes as stored (pyarrow would inflate a .gz by its name).
        stream = item.filesystem.open_input_stream(source, compression=None)
        with stream, target.open("wb") as sink:
            while chunk := stream.read(_COPY_CHUNK):
                sink.write(chunk)
    except (OSError, pa.ArrowException) as exc:
        raise BundleError(f"cannot download it: {exc}", path=_shown(item, file)) from None
    if target.stat().st_size != file.size:
        raise BundleError("changed while the bundle was being read", path=_shown(item, file))
    os.utime(target, ns=(file.mtime_ns, file.mtime_ns))


def _shown(item: RemoteInput, file: RemoteFile) -> str:
    return f"{item.url.rstrip('/')}/{file.relative}" if item.is_directory else item.url
