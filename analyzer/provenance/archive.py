"""Handoff archives by content: which input is one, and its members.

An archive is a handoff when it holds a ``MANIFEST.json`` at its root (or one of culprit's
manifests anywhere), whatever its name, member order, tar dialect (ustar, pax, GNU) or
compression (zstd, gzip, none): renaming or repacking a handoff must not turn it into a raw
bundle that is analyzed without verification. culprit's own handoffs also start with a zstd
*skippable frame* naming the format, so even one cut short before its first block is
recognized (zstd and GNU tar skip that frame).

Reading a handoff (:func:`decode`, :func:`members_of`) is strict where reading a bundle is
lenient: a zstd frame without a checksum or cut short, a gzip stream whose CRC or length is
wrong, bytes after the end, a member that is not a plain file or is named twice are refused.
"""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Final, Literal

import zstandard

from analyzer.errors import AnalyzerError, HandoffError
from analyzer.provenance.layout import FORMAT, MANIFEST
from analyzer.streams import GZIP_MAGIC, ZSTD_MAGIC, Content, ExpansionBudget

Compression = Literal["zstd", "gzip", "none"]

#: The payload of the skippable frame that starts culprit's own handoffs.
MARKER_PAYLOAD: Final = f"{FORMAT}\n".encode()
_SKIPPABLE_MAGIC: Final = 0x184D2A50
#: A zstd skippable frame: magic (0x184D2A50..5F), payload size, payload (RFC 8878 3.1.2).
MARKER: Final = struct.pack("<II", _SKIPPABLE_MAGIC, len(MARKER_PAYLOAD)) + MARKER_PAYLOAD
ZIP_MAGIC: Final = b"PK\x03\x04"
#: A handoff is at most this many bytes, and decodes to at most as many bytes of tar (it is
#: small by design).
MAX_TAR_BYTES: Final = 4 << 30
#: A member larger than this is refused.
MAX_MEMBER_BYTES: Final = 1 << 30
#: A manifest found below the root is read (to see whether it is culprit's) up to this size.
_MAX_SNIFFED_MANIFEST: Final = 16 << 20
#: The two zero blocks that end a tar stream.
_TAR_END: Final = 1024
#: Compressed bytes fed to a decoder at a time: bounds what one step can expand to.
_FEED: Final = 1 << 12
_SNIFF_ERRORS: Final = (
    OSError,
    EOFError,
    tarfile.TarError,
    zipfile.BadZipFile,
    zstandard.ZstdError,
    AnalyzerError,
)


def _skippable(head: bytes) -> bool:
    return len(head) >= 4 and struct.unpack("<I", head[:4])[0] & 0xFFFFFFF0 == _SKIPPABLE_MAGIC


def compression_of(head: bytes) -> Compression:
    """The compression a stream starting with ``head`` uses (by magic bytes)."""
    if head.startswith(ZSTD_MAGIC) or _skippable(head):
        return "zstd"
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    return "none"


def _clean(name: str) -> str:
    """A member name without leading ``./`` (``tar -C dir .`` writes them)."""
    while name.startswith("./"):
        name = name[2:]
    return name


def _names_culprit_manifest(data: bytes) -> bool:
    return b'"format"' in data and FORMAT.rsplit("/", 1)[0].encode() in data


# -- recognition ------------------------------------------------------------------------------


def is_handoff(path: Path, budget: ExpansionBudget | None = None) -> bool:
    """Whether the local input ``path`` is a handoff: an archive (or an unpacked directory)
    holding ``MANIFEST.json`` at its root, or culprit's manifest below it. Reads tar headers
    only (a raw bundle's archive is decoded once, within ``budget``'s caps); an input that
    cannot be read or decoded is not a handoff (the bundle reader reports it)."""
    if path.is_dir():
        manifest = path / MANIFEST
        try:
            return manifest.is_file() and _names_culprit_manifest(
                manifest.read_bytes()[:_MAX_SNIFFED_MANIFEST]
            )
        except OSError:
            return False
    if not path.is_file():
        return False
    try:
        with path.open("rb") as raw:
            head = raw.read(len(MARKER))
            # All of culprit's frame, or a file cut inside it.
            if len(head) >= 4 and MARKER.startswith(head):
                return True
            # By its first bytes: an end-of-zip record can sit at the end of a tar too.
            if head.startswith(ZIP_MAGIC):
                return _zip_holds_manifest(raw)
            raw.seek(0)
            if compression_of(head) == "none":
                with tarfile.open(fileobj=raw, mode="r:") as archive:
                    return _tar_holds_manifest(archive)
            content = Content(raw, budget or ExpansionBudget(), str(path))
            with tarfile.open(fileobj=content, mode="r|") as archive:  # type: ignore[call-overload]
                return _tar_holds_manifest(archive)
    except _SNIFF_ERRORS:
        return False


def _tar_holds_manifest(archive: tarfile.TarFile) -> bool:
    for info in archive:
        name = _clean(info.name)
        if name == MANIFEST:
            return True
        if PurePosixPath(name).name == MANIFEST and info.isfile():
            if info.size > _MAX_SNIFFED_MANIFEST:
                continue
            handle = archive.extractfile(info)
            if handle is not None and _names_culprit_manifest(handle.read()):
                return True
    return False


def _zip_holds_manifest(raw: IO[bytes]) -> bool:
    raw.seek(0)
    with zipfile.ZipFile(raw) as archive:
        for info in archive.infolist():
            name = _clean(info.filename)
            if name == MANIFEST:
                return True
            if (
                PurePosixPath(name).name == MANIFEST
                and info.file_size <= _MAX_SNIFFED_MANIFEST
                and _names_culprit_manifest(archive.read(info))
            ):
                return True
    return False


# -- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unpacked:
    """The members of a handoff archive, as stored."""

    #: Member name (``./`` dropped) -> bytes.
    members: dict[str, bytes]
    #: Member names in archive order.
    order: list[str]
    compression: Compression
    #: Whether the archive starts with culprit's skippable frame.
    marked: bool
    #: The decoded tar stream.
    tar: bytes


def unpack_archive(blob: bytes, where: str) -> Unpacked:
    """The members of the handoff archive ``blob``.

    Raises:
        HandoffError: not a tar (zip is refused), a truncated or corrupt stream, a missing
            checksum, trailing bytes, an unsafe, non-file or repeated member.
    """
    if blob.startswith((ZIP_MAGIC, b"PK\x05\x06")):
        raise HandoffError("a handoff is a tar archive (zstd, gzip or none), not zip", path=where)
    tar, compression = decode(blob, where)
    members, order = members_of(tar, where)
    return Unpacked(members, order, compression, blob.startswith(MARKER), tar)


def decode(blob: bytes, where: str) -> tuple[bytes, Compression]:
    """The tar stream inside ``blob`` and how it was compressed, every integrity check of
    the compression format enforced."""
    compression = compression_of(blob[:4])
    if compression == "zstd":
        return _zstd(blob, where), compression
    if compression == "gzip":
        return _gzip(blob, where), compression
    if len(blob) > MAX_TAR_BYTES:
        raise HandoffError("the archive is too large for a handoff", path=where)
    return blob, compression


def _zstd(blob: bytes, where: str) -> bytes:
    """Every zstd frame of ``blob``: each must carry a checksum and end where it says."""
    out = io.BytesIO()
    rest = memoryview(blob)
    frame = 0
    while len(rest):
        frame += 1
        if _skippable(bytes(rest[:4])):
            if len(rest) < 8 or len(rest) < 8 + struct.unpack("<I", rest[4:8])[0]:
                raise HandoffError(f"zstd frame {frame} (skippable) is cut short", path=where)
            rest = rest[8 + struct.unpack("<I", rest[4:8])[0] :]
            continue
        if bytes(rest[:4]) != ZSTD_MAGIC:
            raise HandoffError(
                f"{len(rest):,} bytes after the last zstd frame are not zstd", path=where
            )
        try:
            parameters = zstandard.get_frame_parameters(bytes(rest[:18]))
        except zstandard.ZstdError:
            raise HandoffError(
                f"zstd frame {frame} is cut short (in its header)", path=where
            ) from None
        if not parameters.has_checksum:
            raise HandoffError(
                f"zstd frame {frame} carries no checksum (culprit always writes one)", path=where
            )
        rest = _zstd_frame(rest, out, frame, where)
    return out.getvalue()


def _zstd_frame(rest: memoryview, out: io.BytesIO, frame: int, where: str) -> memoryview:
    """Decode one frame from the start of ``rest`` into ``out``; what follows it."""
    decoder = zstandard.ZstdDecompressor().decompressobj()
    offset = 0
    try:
        while not decoder.eof and offset < len(rest):
            out.write(decoder.decompress(bytes(rest[offset : offset + _FEED])))
            offset += _FEED
            _cap(out, where)
    except zstandard.ZstdError as exc:
        raise HandoffError(f"zstd frame {frame} is corrupt: {exc}", path=where) from None
    if not decoder.eof:
        raise HandoffError(
            f"zstd frame {frame} is cut short (truncated, or its checksum is missing)", path=where
        )
    return rest[min(offset, len(rest)) - len(decoder.unused_data) :]


def _gzip(blob: bytes, where: str) -> bytes:
    """Every gzip member of ``blob``, each checked against its CRC-32 and length."""
    out = io.BytesIO()
    rest = blob
    while rest:
        if not rest.startswith(GZIP_MAGIC):
            raise HandoffError(
                f"{len(rest):,} bytes after the last gzip member are not gzip", path=where
            )
        decoder = zlib.decompressobj(wbits=31)
        pending = rest
        try:
            while not decoder.eof:
                piece = decoder.decompress(pending, _FEED * 32)
                out.write(piece)
                _cap(out, where)
                pending = decoder.unconsumed_tail
                if not piece and not pending:
                    break
        except zlib.error as exc:
            raise HandoffError(f"the gzip stream is corrupt: {exc}", path=where) from None
        if not decoder.eof:
            raise HandoffError("the gzip stream is cut short", path=where)
        rest = decoder.unused_data
    return out.getvalue()


def _cap(out: io.BytesIO, where: str) -> None:
    if out.tell() > MAX_TAR_BYTES:
        raise HandoffError(
            f"the archive decodes to more than {MAX_TAR_BYTES:,} bytes (not a handoff)",
            path=where,
        )


def members_of(tar: bytes, where: str) -> tuple[dict[str, bytes], list[str]]:
    """Every member of the tar stream ``tar`` (any dialect), directories aside."""
    members: dict[str, bytes] = {}
    order: list[str] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as archive:
            for info, data in _files(archive, where):
                name = _clean(info.name)
                if name in members:
                    raise HandoffError(f"member {name} appears twice", path=where)
                members[name] = data
                order.append(name)
            end = archive.offset
    except (tarfile.TarError, EOFError) as exc:
        raise HandoffError(f"the tar stream is cut short or corrupt: {exc}", path=where) from None
    if not members:
        raise HandoffError("the archive holds no member", path=where)
    # tarfile stops quietly at a zero block, a cut or garbage: the two zero blocks that end
    # a tar must be there, and nothing but zeros after them.
    if len(tar) < end + _TAR_END or tar[end:].strip(b"\0"):
        raise HandoffError(
            "the tar stream is cut short or has bytes after its last member", path=where
        )
    return members, order


def _files(archive: tarfile.TarFile, where: str) -> Iterator[tuple[tarfile.TarInfo, bytes]]:
    for info in archive:
        name = _clean(info.name)
        if info.isdir():
            continue
        pure = PurePosixPath(name)
        if not name or pure.is_absolute() or ".." in pure.parts:
            raise HandoffError(f"member {info.name!r} is named outside the archive", path=where)
        if not info.isfile():
            raise HandoffError(f"member {name} is not a plain file", path=where)
        if info.size > MAX_MEMBER_BYTES:
            raise HandoffError(f"member {name} is too large", path=where)
        handle = archive.extractfile(info)
        data = handle.read() if handle is not None else b""
        if len(data) != info.size:
            raise HandoffError(f"member {name} is cut short", path=where)
        yield info, data


def read_tree(root: Path) -> dict[str, bytes]:
    """The files under an unpacked handoff directory, by posix path relative to it.

    Raises:
        HandoffError: a link or special file, or a file that cannot be read.
    """
    members: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise HandoffError(f"member {name} is not a plain file", path=str(root))
        if path.is_file():
            try:
                members[name] = path.read_bytes()
            except OSError as exc:
                raise HandoffError(f"member {name} cannot be read: {exc}", path=str(root)) from None
    return members
