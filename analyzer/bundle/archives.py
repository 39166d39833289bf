"""Reading members inside archives: zip members charged to the expansion budget, tar members,
and zips nested in a stream spooled to a seekable file."""

from __future__ import annotations

import hashlib
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Final

from analyzer.errors import BundleError
from analyzer.streams import ExpansionBudget, Readable

_SPOOL_LIMIT: Final = 64 << 20


def zip_open(
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


def tar_extract(tar: tarfile.TarFile, info: tarfile.TarInfo) -> Readable:
    handle = tar.extractfile(info)
    if handle is None:
        raise BundleError("tar member has no content", path=info.name)
    return handle


class Seekable:
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


def zip_mtime(info: zipfile.ZipInfo) -> float | None:
    import datetime as dt

    try:
        return dt.datetime(*info.date_time, tzinfo=dt.UTC).timestamp()
    except ValueError:
        return None
