"""Reading members inside archives: zip members charged to the expansion budget, tar members
read to the last decodable byte, and zips nested in a stream spooled to a seekable file."""

from __future__ import annotations

import hashlib
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Final, Self

from analyzer.errors import BundleError
from analyzer.streams import Content, CorruptStreamError, ExpansionBudget, Readable

_SPOOL_LIMIT: Final = 64 << 20
_MEMBER_READ: Final = 1 << 20
#: A block of zeros: the archive's end marker (tarfile's name; not in its type stubs).
_END_MARKER: Final[type[Exception]] = tarfile.EOFHeaderError  # type: ignore[attr-defined]
#: A header that is not one (garbage, or a damaged block).
_BAD_HEADER: Final[type[Exception]] = tarfile.InvalidHeaderError  # type: ignore[attr-defined]


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


class MemberCutError(CorruptStreamError):
    """The archive breaks off inside a member; already phrased for the member (its path and
    how many of its bytes were read), so nothing rewrites it on the way up."""


class TarSource:
    """A tar's decoded stream as :mod:`tarfile` reads it.

    Damage in the compressed stream ends it like a normal end of data, and is kept to be
    reported: raised through tarfile it dropped what tarfile had gathered for the read it was
    in (up to a whole member read, 16 MiB), so a ``.tar.gz`` cut at 60 % gave 1 % of its
    lines.
    """

    def __init__(self, content: Content) -> None:
        self.content = content
        self.failure: CorruptStreamError | None = None
        #: The stream has ended (damage or a plain end of file).
        self.ended = False
        #: Decoded bytes handed to tarfile.
        self.position = 0
        #: Why tarfile stopped reading member headers (``EOFHeaderError`` at a proper end).
        self.end: tarfile.HeaderError | None = None

    def read(self, size: int = -1, /) -> bytes:
        if self.ended:
            return b""
        try:
            data = self.content.read(size)
        except CorruptStreamError as exc:
            self.failure, self.ended = exc, True
            return b""
        if not data and size != 0:
            self.ended = True
        self.position += len(data)
        return data

    def headers(self) -> type[tarfile.TarInfo]:
        """A ``tarinfo`` class for :func:`tarfile.open` that notes why the headers ended
        (tarfile takes a cut or garbage header after the first for the end of the archive)."""
        source = self

        class Headers(tarfile.TarInfo):
            @classmethod
            def fromtarfile(cls, tarfile_: tarfile.TarFile) -> Self:
                try:
                    return super().fromtarfile(tarfile_)
                except tarfile.HeaderError as exc:
                    source.end = exc
                    raise

        return Headers

    def damage(self, last: tarfile.TarInfo | None, last_path: str | None) -> str | None:
        """What was lost, when the archive did not end properly; ``None`` when it did."""
        if self.failure is None and isinstance(self.end, _END_MARKER):
            return None
        reached = self.position
        cause = f": {self.failure.message}" if self.failure is not None else ""
        if last is not None and last.offset_data + last.size > reached:
            got = max(0, reached - last.offset_data)
            where = (
                f"it is cut off inside {last_path} after {got:,} of its {last.size:,} bytes "
                f"({last.size - got:,} bytes lost){cause}"
            )
        elif self.failure is not None or self.ended:
            after = f"after {last_path}" if last_path is not None else "before its first member"
            where = f"it is cut off {after}{cause}"
        elif isinstance(self.end, _BAD_HEADER):
            where = f"a damaged member header at decoded byte {reached - 512:,} ({self.end})"
        else:
            where = f"it ends without the end-of-archive marker ({self.end})"
        return (
            f"{where}; whatever followed is lost (nothing is known of the archive beyond "
            f"decoded byte {reached:,})"
        )


class TarMemberStream:
    """One member of a tar read as a stream, to its last available byte.

    tarfile's own reader raises "unexpected end of data" for a member cut short and drops the
    bytes of that read; this one hands out every byte there is, then raises
    :class:`MemberCutError` saying how many of the member's bytes are missing.
    """

    def __init__(
        self,
        tar: tarfile.TarFile,
        info: tarfile.TarInfo,
        source: TarSource,
        path: str,
        *,
        soft: bool = False,
    ) -> None:
        assert tar.fileobj is not None
        self._stream = tar.fileobj
        self._info = info
        self._source = source
        self._path = path
        #: End quietly where the member is cut: it is an archive, whose own reader then
        #: finds its stream cut and recovers what is before (the outer archive reports the
        #: cut). Raising would drop what its decoder holds.
        self._soft = soft
        self._done = 0

    def read(self, size: int = -1, /) -> bytes:
        if size < 0:
            pieces = []
            try:
                while piece := self._read(_MEMBER_READ):
                    pieces.append(piece)
            except MemberCutError:
                if not pieces:
                    raise  # otherwise on the next read, after these bytes
            return b"".join(pieces)
        return self._read(size)

    def _read(self, size: int) -> bytes:
        left = self._info.size - self._done
        if left <= 0 or size == 0:
            return b""
        # At most 1 MiB a call: tarfile joins and slices what it reads, three copies of a
        # 16 MiB read at once; callers read on until they have what they want.
        want = min(size, left, _MEMBER_READ)
        where = self._info.offset_data + self._done
        if self._stream.tell() != where:
            self._stream.seek(where)  # forward only: a stream that moved on raises
        data = self._stream.read(want) if self._stream.tell() == where else b""
        self._done += len(data)
        if not data and self._soft:
            return b""
        if not data:
            cause = self._source.failure
            raise MemberCutError(
                f"the archive breaks off inside this member after {self._done:,} of its "
                f"{self._info.size:,} bytes ({self._info.size - self._done:,} bytes lost"
                + (f"; {cause.message})" if cause is not None else "; the file ends there)"),
                decoded_bytes=self._done,
                path=self._path,
            )
        return data

    def close(self) -> None:
        return None


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
