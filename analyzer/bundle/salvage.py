"""A zip whose central directory is missing (cut off, or its end damaged): its members found
from their local headers, in the order they are stored.

zipfile reads a zip from its end, so a zip cut anywhere was refused whole. Every member whose
local header and data are intact is still there; this module finds them, reads them (a member
cut short gives what it holds, then says how much is missing) and says where the scan had to
stop, so the rest can be reported as lost.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass
from typing import IO, Final

from analyzer.bundle.archives import MemberCutError
from analyzer.streams import (
    CorruptStreamError,
    DeflateDecoder,
    ExpansionBudget,
    HashingReader,
    PlainReader,
)

_LOCAL: Final = b"PK\x03\x04"
#: A central directory entry, the end record, zip64's end record: the members are over.
_ENDS: Final = (b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06")
_DESCRIPTOR: Final = b"PK\x07\x08"
_HEADER: Final = struct.Struct("<4sHHHHHIIIHH")
_STORED: Final = zipfile.ZIP_STORED
_DEFLATED: Final = zipfile.ZIP_DEFLATED
_BLOCK: Final = 1 << 16
_OUTPUT: Final = 1 << 20


@dataclass
class Salvaged:
    """One member found from its local header."""

    info: zipfile.ZipInfo
    data_offset: int
    #: Compressed bytes of the member present in the file.
    available: int
    #: The file ends inside the member's data.
    cut: bool


@dataclass
class Scan:
    """What a scan of the local headers found."""

    members: list[Salvaged]
    #: Why the scan stopped short of a central directory (``None``: it reached one).
    stop: str | None
    #: Byte of the file the scan reached.
    reached: int

    def detail(self) -> str:
        """The damage, for the archive's inventory entry."""
        found = len(self.members)
        head = (
            f"the zip has no readable central directory; {found:,} "
            f"member{'s' if found != 1 else ''} read from their local headers"
        )
        if self.stop is None:
            return f"{head}, all of them intact (only the directory at its end is damaged)"
        return (
            f"{head}; {self.stop}; whatever followed is lost (nothing is known of the archive "
            f"beyond byte {self.reached:,})"
        )


def scan(handle: IO[bytes], budget: ExpansionBudget) -> Scan:
    """The members of a zip from its local headers (``handle`` is seekable)."""
    size = handle.seek(0, 2)
    members: list[Salvaged] = []
    position = 0
    while True:
        handle.seek(position)
        head = handle.read(_HEADER.size)
        if head[:4] in _ENDS:
            return Scan(members, None, position)
        if not head:
            return Scan(members, "the file ends after the last member, before its directory", size)
        if head[:4] != _LOCAL:
            return Scan(members, f"no member header at byte {position:,}", position)
        if len(head) < _HEADER.size:
            return Scan(members, _header_cut(position), size)
        _, _, flags, method, mtime, mdate, crc, csize, usize, name_len, extra_len = _HEADER.unpack(
            head
        )
        tail = handle.read(name_len + extra_len)
        if len(tail) < name_len + extra_len:
            return Scan(members, _header_cut(position), size)
        name = tail[:name_len].decode("utf-8" if flags & 0x800 else "cp437", "replace")
        csize, usize = _zip64_sizes(tail[name_len:], csize, usize)
        info = zipfile.ZipInfo(name, _dos_time(mdate, mtime))
        info.flag_bits, info.compress_type, info.header_offset = flags, method, position
        info.CRC, info.compress_size, info.file_size = crc, csize, usize
        data = position + _HEADER.size + name_len + extra_len
        if flags & 0x8:
            # Sizes and CRC follow the data: only a deflate stream says where it ends.
            found = _delimit(handle, info, data, size, budget)
            if isinstance(found, str):
                return Scan(members, found, data)
            if found is None:
                members.append(Salvaged(info, data, size - data, cut=True))
                return Scan(members, _cut_note(name, size - data, None), size)
            position = found
        else:
            if data + csize > size:
                members.append(Salvaged(info, data, max(0, size - data), cut=True))
                return Scan(members, _cut_note(name, max(0, size - data), csize), size)
            position = data + csize
        members.append(Salvaged(info, data, info.compress_size, cut=False))


def _header_cut(position: int) -> str:
    return f"it is cut off inside the header of a member at byte {position:,}"


def _cut_note(name: str, available: int, total: int | None) -> str:
    if total is None:
        return f"it is cut off inside {name} after {available:,} of its compressed bytes"
    return (
        f"it is cut off inside {name} after {available:,} of its {total:,} compressed bytes "
        f"({total - available:,} lost)"
    )


def _delimit(
    handle: IO[bytes], info: zipfile.ZipInfo, data: int, size: int, budget: ExpansionBudget
) -> int | str | None:
    """Find where a member whose sizes follow its data ends: the offset after its data
    descriptor (sizes and CRC filled into ``info``), ``None`` when the file ends inside it, or
    why it cannot be delimited."""
    if info.compress_type == _STORED:
        return _delimit_stored(handle, info, data)
    if info.compress_type != _DEFLATED:
        return (
            f"{info.filename} keeps its size after its data and is neither stored nor "
            "deflated: it cannot be delimited without the central directory"
        )
    inflater = zlib.decompressobj(wbits=-15)
    fed = produced = 0
    crc = 0
    handle.seek(data)
    try:
        while not inflater.eof:
            chunk = handle.read(_BLOCK)
            if not chunk:
                return None
            fed += len(chunk)
            pending = chunk
            while pending and not inflater.eof:
                out = inflater.decompress(pending, _OUTPUT)
                produced += len(out)
                crc = zlib.crc32(out, crc)
                if produced > max(budget.floor_bytes, int(fed * budget.max_ratio)):
                    return (
                        f"{info.filename} expands more than {budget.max_ratio:g}x (a likely zip "
                        "bomb) and keeps its size after its data: the members after it cannot "
                        "be found without the central directory"
                    )
                pending = inflater.unconsumed_tail
    except zlib.error as exc:
        return f"{info.filename} is damaged ({exc}): the members after it cannot be found"
    used = fed - len(inflater.unused_data)
    end = data + used
    handle.seek(end)
    descriptor = handle.read(24)
    if descriptor.startswith(_DESCRIPTOR):
        descriptor, end = descriptor[4:], end + 4
    # 32-bit sizes unless they do not match what was found (then zip64's 64-bit ones).
    wide = len(descriptor) >= 20 and struct.unpack_from("<I", descriptor, 4)[0] != used % (1 << 32)
    length = 20 if wide else 12
    if len(descriptor) < length:
        return None
    info.CRC = struct.unpack_from("<I", descriptor)[0]
    info.compress_size, info.file_size = used, produced
    if crc != info.CRC:
        return f"{info.filename} does not match its CRC: the members after it cannot be found"
    return end + length


def _delimit_stored(handle: IO[bytes], info: zipfile.ZipInfo, data: int) -> int | None:
    """Where a stored member whose sizes follow its data ends: at the first data descriptor
    (with its signature) whose sizes equal its distance from the data and whose CRC matches;
    ``None`` when the file ends before one."""
    position = data
    carry = b""
    while True:
        handle.seek(position)
        block = handle.read(_OUTPUT)
        if not block:
            return None
        window = carry + block
        base = position - len(carry)
        found = window.find(_DESCRIPTOR)
        while found >= 0:
            at = base + found
            fields = _descriptor_at(handle, at)
            length = at - data
            if (
                fields is not None
                and fields[1] == fields[2] == length
                and _crc_of(handle, data, length) == fields[0]
            ):
                info.CRC, info.compress_size, info.file_size = fields[0], length, length
                return at + 16
            found = window.find(_DESCRIPTOR, found + 1)
        carry = window[-3:]
        position += len(block)


def _descriptor_at(handle: IO[bytes], at: int) -> tuple[int, int, int] | None:
    handle.seek(at + 4)
    body = handle.read(12)
    if len(body) < 12:
        return None
    crc, csize, usize = struct.unpack("<III", body)
    return crc, csize, usize


def _crc_of(handle: IO[bytes], start: int, length: int) -> int:
    crc = 0
    handle.seek(start)
    while length > 0:
        block = handle.read(min(_OUTPUT, length))
        if not block:
            break
        crc = zlib.crc32(block, crc)
        length -= len(block)
    return crc


def _zip64_sizes(extra: bytes, csize: int, usize: int) -> tuple[int, int]:
    """The sizes a zip64 extra field gives for those the header marks as 0xFFFFFFFF."""
    offset = 0
    while offset + 4 <= len(extra):
        kind, length = struct.unpack_from("<HH", extra, offset)
        body = extra[offset + 4 : offset + 4 + length]
        if kind == 0x0001:
            values = list(struct.unpack_from(f"<{len(body) // 8}Q", body))
            if usize == 0xFFFFFFFF and values:
                usize = values.pop(0)
            if csize == 0xFFFFFFFF and values:
                csize = values.pop(0)
            break
        offset += 4 + length
    return csize, usize


def _dos_time(date: int, time: int) -> tuple[int, int, int, int, int, int]:
    return (
        (date >> 9) + 1980,
        (date >> 5) & 0xF,
        date & 0x1F,
        time >> 11,
        (time >> 5) & 0x3F,
        (time & 0x1F) * 2,
    )


class _Slice:
    """Bytes ``[start, start + length)`` of a shared seekable handle."""

    def __init__(self, handle: IO[bytes], start: int, length: int) -> None:
        self._handle = handle
        self._start = start
        self._length = length
        self._done = 0

    def read(self, size: int = -1, /) -> bytes:
        left = self._length - self._done
        want = left if size < 0 else min(size, left)
        if want <= 0:
            return b""
        # Other members and the scan move the handle between reads.
        self._handle.seek(self._start + self._done)
        data = self._handle.read(want)
        self._done += len(data)
        return data


class SalvagedMember:
    """A member found from its local header, read as a stream: every byte its data holds,
    checked against its CRC when it is complete, charged to the expansion budget."""

    def __init__(
        self, handle: IO[bytes], entry: Salvaged, budget: ExpansionBudget, path: str
    ) -> None:
        self._entry = entry
        self._path = path
        stored = HashingReader(_Slice(handle, entry.data_offset, entry.available))
        self._decoder: DeflateDecoder | PlainReader
        if entry.info.compress_type == _DEFLATED:
            self._decoder = DeflateDecoder(stored, stored, budget, path)
        else:
            self._decoder = PlainReader(stored, stored)
        self._crc = 0
        self._done = 0

    def read(self, size: int = -1, /) -> bytes:
        try:
            data = self._decoder.read(size)
        except CorruptStreamError as exc:
            if self._entry.cut:
                raise self._cut() from None
            raise CorruptStreamError(
                f"the member's data is damaged ({exc.message})",
                decoded_bytes=self._done,
                path=self._path,
            ) from None
        if data:
            self._crc = zlib.crc32(data, self._crc)
            self._done += len(data)
            return data
        if self._entry.cut:
            raise self._cut()
        if size != 0 and self._crc != self._entry.info.CRC:
            raise CorruptStreamError(
                "the member does not match its CRC: its data is damaged",
                decoded_bytes=self._done,
                path=self._path,
            )
        return data

    def _cut(self) -> MemberCutError:
        info = self._entry.info
        total = info.compress_size if not info.flag_bits & 0x8 else None
        of = f"of its {total:,} " if total is not None else "of its "
        lost = f" ({total - self._entry.available:,} lost)" if total is not None else ""
        size = f" of its {info.file_size:,}" if total is not None else ""
        return MemberCutError(
            f"the zip breaks off inside this member after {self._entry.available:,} {of}"
            f"compressed bytes{lost}; {self._done:,}{size} bytes decoded from them",
            decoded_bytes=self._done,
            path=self._path,
        )

    def close(self) -> None:
        return None


def supported(entry: Salvaged) -> bool:
    """Whether the member's compression can be read here (stored or deflated: what logs use)."""
    return entry.info.compress_type in (_STORED, _DEFLATED)
