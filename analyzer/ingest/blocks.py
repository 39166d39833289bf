"""Decoded content in blocks, and byte spans of a block as Arrow strings.

What the line framing (:mod:`analyzer.ingest.lines.framing`) and the JSON array framing
(:mod:`analyzer.ingest.json.array`) share: both read a decoded stream in large blocks, find the
byte spans of their records with numpy, and turn the spans into strings without running Python
code per record.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from analyzer.ingest.base import ReadContext
from analyzer.ingest.decoding import TextContent
from analyzer.streams import CorruptStreamError, Readable

BOM: Final = b"\xef\xbb\xbf"

IntArray = npt.NDArray[np.int64]


def spans_to_strings(
    data: bytes, starts: IntArray, ends: IntArray, *, exact: bool, trim: str = "\r\n"
) -> pa.Array:
    """Arrow strings for the byte spans ``data[starts[i]:ends[i]]`` (valid UTF-8 assumed).

    Spans normally follow each other with only ``trim`` characters in between (line
    terminators, JSON separators): then each string runs to the next span's start and the
    separators are trimmed off, without copying the data. ``exact`` packs the spans into a new
    buffer instead, for spans that were cut short. Either way a span loses the ``trim``
    characters at its end, so a string does not depend on the path its block took.
    """
    count = len(starts)
    if count == 0:
        return pa.array([], pa.large_string())
    if not exact:
        offsets = np.empty(count + 1, dtype=np.int64)
        offsets[:-1] = starts - starts[0]
        offsets[-1] = ends[-1] - starts[0]
        payload = data[int(starts[0]) : int(ends[-1])]
        array = pa.LargeStringArray.from_buffers(
            count, pa.py_buffer(offsets), pa.py_buffer(payload)
        )
        return pc.utf8_rtrim(array, characters=trim)
    buf = np.frombuffer(data, dtype=np.uint8)
    marks = np.zeros(len(buf) + 1, dtype=np.int8)
    marks[starts] += 1
    marks[ends] -= 1
    keep = np.cumsum(marks[:-1], dtype=np.int8).view(np.bool_)
    offsets = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    packed = buf[keep]
    array = pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(packed))
    # The same text as the trimmed path gives: a span's own trailing ``trim`` characters go too
    # (``abc\r\r\n`` reads ``abc`` whichever path its block takes).
    return pc.utf8_rtrim(array, characters=trim)


def invalid_utf8_spans(data: bytes, starts: IntArray, ends: IntArray) -> IntArray:
    """Indices of the spans (lines, JSON elements) that are not valid UTF-8 (usually none:
    one fast check decides)."""
    try:
        codecs.utf_8_decode(data, "strict", True)
    except UnicodeDecodeError:
        pass
    else:
        return np.empty(0, dtype=np.int64)
    bad: list[int] = []
    view = memoryview(data)
    position = 0
    while position < len(data):
        try:
            codecs.utf_8_decode(view[position:], "strict", True)
            break
        except UnicodeDecodeError as exc:
            where = position + exc.start
            index = int(np.searchsorted(starts, where, side="right")) - 1
            if index >= 0 and where < ends[index]:
                bad.append(index)
            if index + 1 >= len(starts):
                break
            position = int(starts[index + 1])
    return np.asarray(bad, dtype=np.int64)


def decoded_blocks(
    stream: Readable, ctx: ReadContext, size: int, where: Callable[[], tuple[int, int]]
) -> Iterator[tuple[bytes, int]]:
    """Blocks of decoded content, each with the number of bytes skipped before it (NUL bytes
    and a UTF-8 BOM at the very start: offsets stay those of the file).

    A stream that breaks off ends the blocks; a file-level quarantine entry records the
    damage at ``where()`` (line, offset of the reader's position).
    """
    first = True
    while True:
        # A read may return less than asked (a file's sniffed head comes first): fill the
        # block, so a small file is one block and pays a reader's per-chunk work once.
        parts: list[bytes] = []
        total = 0
        broken: CorruptStreamError | None = None
        while total < size:
            try:
                more = stream.read(size - total)
            except CorruptStreamError as exc:
                broken = exc
                break
            if not more:
                break
            parts.append(more)
            total += len(more)
        block = b"".join(parts)
        if block:
            skipped = 0
            if first:
                first = False
                if isinstance(stream, TextContent):
                    skipped = stream.skipped
                if block.startswith(BOM):
                    block, skipped = block[len(BOM) :], skipped + len(BOM)
            yield block, skipped
        if broken is not None:
            line, offset = where()
            ctx.file_issue(broken.message, line=line, offset=offset)
            return
        if total < size:
            return
