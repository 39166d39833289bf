"""Line framing: split decoded bytes into chunks of lines with provenance.

Framing works on large chunks with numpy so no Python code runs per line. Each chunk knows the
1-based line number and the byte offset (in the decoded file) of every line, which is what
lets a row be traced back to its exact input bytes.

Line ends are decided once per file, from its first 64 KiB (:func:`line_ends`). Normally
``\\n`` ends a line and ``\\r\\n`` loses its ``\\r``; a lone ``\\r`` stays inside its line,
because progress bars (tqdm) write one to redraw a line in place. A file whose lone ``\\r``
are its line ends (old Mac OS, some Windows tools) is split on them as well, with universal
newlines: ``\\r\\n``, ``\\r`` and ``\\n`` each end a line. Every lone ``\\r`` of such a file is
read as a ``\\n`` (same length, so offsets are unchanged) before the usual framing.
"""

from __future__ import annotations

import codecs
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from analyzer.ingest.base import ReadContext
from analyzer.ingest.blocks import (
    IntArray,
    decoded_blocks,
    invalid_utf8_spans,
    spans_to_strings,
)
from analyzer.streams import Readable

_NEWLINE: Final = 10
_CR: Final = 13
#: How much of the start of a file decides its line ends.
LINE_END_WINDOW: Final = 64 << 10
#: With some ``\n`` in the window, lone ``\r`` must be this many times as many to be the
#: line ends.
_CR_MAJORITY: Final = 10

LineEnds = Literal["lf", "cr"]


def line_ends(head: bytes) -> LineEnds:
    """How a file whose text starts with ``head`` ends its lines: ``lf`` (``\\n``; a lone
    ``\\r`` stays in its line) or ``cr`` (universal newlines: a lone ``\\r`` ends a line too).

    ``cr`` when the first 64 KiB hold a lone ``\\r`` and no ``\\n`` at all, or lone ``\\r``
    outnumber ``\\n`` ten to one without the mark of a progress bar: tqdm starts every redraw
    with ``\\r``, so its output has ``\\r`` right after a ``\\n`` (or first in the file), where
    a file with ``\\r`` line ends never does.
    """
    window = head[:LINE_END_WINDOW]
    returns = window.count(b"\r")
    if not returns:
        return "lf"
    lone = returns - window.count(b"\r\n")
    newlines = window.count(b"\n")
    if lone == 0:
        return "lf"
    if newlines == 0:
        return "cr"
    if lone >= _CR_MAJORITY * newlines and b"\n\r" not in window and window[:1] != b"\r":
        return "cr"
    return "lf"


def _read_ahead(blocks: Iterator[tuple[bytes, int]], into: list[tuple[bytes, int]]) -> None:
    """Read blocks into ``into`` until they hold :data:`LINE_END_WINDOW` bytes or the end."""
    seen = 0
    while seen < LINE_END_WINDOW:
        block = next(blocks, None)
        if block is None:
            return
        into.append(block)
        seen += len(block[0])


def _handed_over(blocks: list[tuple[bytes, int]]) -> Iterator[tuple[bytes, int]]:
    """The blocks of a list, each let go of as it is handed over (a block is up to
    ``chunk_bytes``: the list must not keep the first one alive for the whole file)."""
    while blocks:
        yield blocks.pop(0)


def _lone_cr_as_newline(blocks: Iterable[tuple[bytes, int]]) -> Iterator[tuple[bytes, int]]:
    """The blocks with every ``\\r`` not followed by ``\\n`` replaced by ``\\n``.

    A block that ends in ``\\r`` keeps it for the next block, which may start with the
    ``\\n`` of a ``\\r\\n``.
    """
    carry = b""
    for block, skipped in blocks:
        data = carry + block if carry else block
        carry = b""
        if data.endswith(b"\r"):
            carry, data = b"\r", data[:-1]
        buf = np.frombuffer(data, dtype=np.uint8)
        returns = np.flatnonzero(buf == _CR)
        if returns.size:
            # A ``\r`` last in ``data`` is followed by the carried ``\r``, not by ``\n``.
            after = np.minimum(returns + 1, len(buf) - 1)
            lone = returns[(returns + 1 == len(buf)) | (buf[after] != _NEWLINE)]
            if lone.size:
                edited = bytearray(data)
                np.frombuffer(edited, dtype=np.uint8)[lone] = _NEWLINE
                data = bytes(edited)
        yield data, skipped
    if carry:
        yield b"\n", 0


@dataclass
class LineChunk:
    """A run of complete lines.

    ``data[starts[i]:ends[i]]`` is line ``first_line + i`` without its line terminator
    (``\\n`` or ``\\r\\n``); it begins at byte ``offsets[i]`` of the decoded file. ``oversize``
    maps the index of a line that was cut to ``max_line_bytes`` to its full length.
    """

    data: bytes
    starts: IntArray
    ends: IntArray
    first_line: int
    offsets: IntArray
    oversize: dict[int, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def line_numbers(self) -> npt.NDArray[np.int32]:
        """1-based line number of every line."""
        return np.arange(self.first_line, self.first_line + len(self), dtype=np.int32)

    def text(self) -> tuple[pl.Series, npt.NDArray[np.bool_]]:
        """The lines as a polars string Series, and which lines had invalid UTF-8.

        Invalid bytes are replaced by U+FFFD in those lines only; the caller records them.
        """
        count = len(self)
        repaired = np.zeros(count, dtype=np.bool_)
        if count == 0:
            return pl.Series("text", [], dtype=pl.String), repaired
        bad = invalid_utf8_spans(self.data, self.starts, self.ends)
        if bad.size == 0:
            array = spans_to_strings(self.data, self.starts, self.ends, exact=bool(self.oversize))
            return pl.Series("text", array, dtype=pl.String), repaired
        repaired[bad] = True
        view = memoryview(self.data)
        lines = [
            codecs.decode(view[s:e], "utf-8", "replace")
            for s, e in zip(self.starts.tolist(), self.ends.tolist(), strict=True)
        ]
        return pl.Series("text", lines, dtype=pl.String), repaired

    def raw_line(self, index: int, limit: int = 4096) -> bytes:
        """The bytes of one line (at most ``limit``), for quarantine entries."""
        start = int(self.starts[index])
        return self.data[start : min(int(self.ends[index]), start + limit)]


def iter_line_chunks(
    stream: Readable, ctx: ReadContext, *, chunk_bytes: int | None = None
) -> Iterator[LineChunk]:
    """Split a decoded stream into :class:`LineChunk` s of roughly ``chunk_bytes``.

    A UTF-8 BOM at the start is skipped. ``\\r\\n`` endings lose the ``\\r``; a lone ``\\r``
    stays in the line (progress bars use it), unless lone ``\\r`` are the file's line ends
    (:func:`line_ends`, decided on the first 64 KiB). A line longer than
    ``ctx.options.max_line_bytes`` keeps only its head, so memory stays bounded by the chunk
    size. A stream that breaks off (truncated gzip, damaged archive) ends the iteration after
    its last complete line and adds a file-level quarantine entry saying where it stopped; the
    line it broke off in is quarantined with the bytes it has.
    """
    size = chunk_bytes or ctx.options.chunk_bytes
    max_line = ctx.options.max_line_bytes
    pending = b""  # the unfinished last line so far (never holds a newline)
    pending_offset = 0  # decoded-file offset of pending[0]
    next_line = 1
    giant: _GiantLine | None = None

    # The line ends are decided on the first 64 KiB, however small the blocks: those blocks
    # are read ahead, and a stream that breaks meanwhile stops after them.
    start: list[tuple[bytes, int]] = []

    broken = False

    def where() -> tuple[int, int]:
        # Asked only when the stream breaks off.
        nonlocal broken
        broken = True
        if not start:
            return next_line, pending_offset + len(pending)
        ahead = b"".join(block for block, _ in start)
        ends = ahead.count(b"\n")
        if line_ends(ahead) == "cr":
            ends += ahead.count(b"\r") - ahead.count(b"\r\n")
        return next_line + ends, len(ahead) + sum(skipped for _, skipped in start)

    blocks: Iterator[tuple[bytes, int]] = decoded_blocks(stream, ctx, size, where)
    _read_ahead(blocks, start)
    ahead, start = start, []
    blocks = itertools.chain(_handed_over(ahead), blocks)
    if ahead and line_ends(b"".join(block for block, _ in ahead)) == "cr":
        blocks = _lone_cr_as_newline(blocks)
    for block, skipped in blocks:
        pending_offset += skipped
        if giant is not None:
            cut = block.find(b"\n")
            if cut < 0:
                giant.length += len(block)
                continue
            giant.length += cut
            yield giant.chunk(next_line)
            next_line += 1
            pending_offset = giant.offset + giant.length + 1
            giant = None
            block = block[cut + 1 :]
        last_newline = block.rfind(b"\n")
        if last_newline < 0:
            pending += block
            if len(pending) > max_line:
                cut = char_boundary(pending, 0, max_line)
                giant = _GiantLine(pending[:cut], pending_offset, len(pending))
                pending = b""
            continue
        # One copy of the block's bytes per chunk: the carried tail and the block's complete
        # lines joined, the rest kept as the next tail.
        complete = b"".join((pending, memoryview(block)[: last_newline + 1]))
        pending = block[last_newline + 1 :]
        chunk = _split_lines(complete, next_line, pending_offset, max_line)
        next_line += len(chunk)
        pending_offset += len(complete)
        yield chunk
    if giant is not None:
        yield giant.chunk(next_line)
        next_line += 1
    elif pending and broken:
        # What the damage left of a line is not a record: a row of it would carry a cut
        # message or value as if it were whole.
        ctx.counts.records += 1
        ctx.drop(
            next_line,
            pending_offset,
            f"line cut off by the damage after its first {len(pending):,} bytes",
            pending[:4096],
        )
    elif pending:
        yield _split_lines(
            pending + b"\n", next_line, pending_offset, max_line, virtual_newline=True
        )


@dataclass
class _GiantLine:
    head: bytes
    offset: int
    length: int

    def chunk(self, line: int) -> LineChunk:
        end = len(self.head)
        if end and self.head[end - 1] == _CR:
            end -= 1
        return LineChunk(
            data=self.head,
            starts=np.zeros(1, dtype=np.int64),
            ends=np.array([end], dtype=np.int64),
            first_line=line,
            offsets=np.array([self.offset], dtype=np.int64),
            oversize={0: self.length},
        )


def _split_lines(
    data: bytes, first_line: int, base_offset: int, max_line: int, *, virtual_newline: bool = False
) -> LineChunk:
    """Lines of ``data``, which ends with ``\\n`` (``virtual_newline``: one was appended)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(buf == _NEWLINE).astype(np.int64)
    starts = np.empty(len(newlines), dtype=np.int64)
    starts[0] = 0
    starts[1:] = newlines[:-1] + 1
    ends = newlines.copy()
    has_cr = ends > starts
    has_cr[has_cr] = buf[ends[has_cr] - 1] == _CR
    ends[has_cr] -= 1
    oversize: dict[int, int] = {}
    lengths = ends - starts
    for index in np.flatnonzero(lengths > max_line).tolist():
        oversize[index] = int(lengths[index])
        ends[index] = char_boundary(data, int(starts[index]), int(starts[index]) + max_line)
    if virtual_newline:
        data = data[:-1]
    return LineChunk(data, starts, ends, first_line, starts + base_offset, oversize)


def char_boundary(data: bytes, start: int, cut: int) -> int:
    """``cut`` moved back (at most 3 bytes, never before ``start``) to the start of the UTF-8
    character it falls inside, so a line cut there stays valid UTF-8."""
    end = cut
    while end > max(start, cut - 3) and end < len(data) and data[end] & 0xC0 == 0x80:
        end -= 1
    return end


def merge_chunks(head: LineChunk, tail: LineChunk) -> LineChunk:
    """Concatenate two consecutive chunks (``head`` carried over, ``tail`` just read)."""
    if len(head) == 0:
        return tail
    shift = len(head.data)
    oversize = dict(head.oversize)
    oversize.update({k + len(head): v for k, v in tail.oversize.items()})
    return LineChunk(
        head.data + tail.data,
        np.concatenate([head.starts, tail.starts + shift]),
        np.concatenate([head.ends, tail.ends + shift]),
        head.first_line,
        np.concatenate([head.offsets, tail.offsets]),
        oversize,
    )


def take_lines(chunk: LineChunk, begin: int, end: int | None = None) -> LineChunk:
    """Lines ``begin:end`` of a chunk as a chunk of their own."""
    stop = len(chunk) if end is None else end
    if begin >= stop:
        empty = np.empty(0, np.int64)
        return LineChunk(b"", empty, empty, chunk.first_line + begin, empty)
    lo = int(chunk.starts[begin])
    hi = int(chunk.starts[stop]) if stop < len(chunk) else len(chunk.data)
    oversize = {k - begin: v for k, v in chunk.oversize.items() if begin <= k < stop}
    return LineChunk(
        chunk.data[lo:hi],
        chunk.starts[begin:stop] - lo,
        chunk.ends[begin:stop] - lo,
        chunk.first_line + begin,
        chunk.offsets[begin:stop],
        oversize,
    )
