"""Stream the elements of a JSON array (``gcloud logging read --format=json``) without parsing it.

A gcloud export is one JSON array that can be gigabytes long, so it is never loaded whole.
A vectorized scanner finds the structural characters outside strings (escape-aware, with its
state carried across blocks), and from them the byte span, line and offset of every top-level
element; parsing the elements is left to the reader. Concatenated arrays work too, and with
``objects=True`` the stream is a sequence of top-level objects instead (one pretty-printed
document, or several pasted one after another, commas between them or not): each object is an
element. An element that never closes (a file cut in half) or grows beyond the size cap is
quarantined with the line where it started.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from analyzer.ingest.base import ReadContext
from analyzer.ingest.blocks import decoded_blocks, invalid_utf8_spans, spans_to_strings
from analyzer.streams import Readable

_QUOTE: Final = 34
_BACKSLASH: Final = 92
_NEWLINE: Final = 10
_OPEN: Final = (123, 91)  # { [
_CLOSE: Final = (125, 93)  # } ]
_COMMA: Final = 44
_STRUCTURAL: Final = np.array([123, 91, 125, 93, 44], dtype=np.uint8)
_WHITESPACE: Final = b" \t\r\n"
_SEPARATORS: Final = b" \t\r\n,[]"
_INSIGNIFICANT: Final = np.frombuffer(_SEPARATORS, dtype=np.uint8)
_TRIM: Final = " \t\r\n,"
_BRACKETS: Final = np.frombuffer(b"[]", dtype=np.uint8)
IntArray = npt.NDArray[np.int64]


@dataclass
class ScanState:
    """Where a scan stands at the end of a block: nesting depth and string state."""

    depth: int = 0
    in_string: bool = False
    escaped: bool = False


def scan(block: bytes, state: ScanState) -> tuple[IntArray, npt.NDArray[np.uint8], IntArray]:
    """Structural characters of ``block`` outside strings.

    Returns their positions, the characters, and the depth *before* each; ``state`` is updated
    to the state after the block.
    """
    buf = np.frombuffer(block, dtype=np.uint8)
    quotes = np.flatnonzero(buf == _QUOTE)
    slashes = np.flatnonzero(buf == _BACKSLASH)
    if state.escaped and len(buf):
        # The block starts with an escaped character: neither a quote nor a backslash there
        # counts.
        quotes = quotes[quotes != 0]
        slashes = slashes[slashes != 0]
    if slashes.size:
        run_start = np.ones(len(slashes), dtype=np.bool_)
        run_start[1:] = slashes[1:] != slashes[:-1] + 1
        first_of_run = np.maximum.accumulate(np.where(run_start, np.arange(len(slashes)), 0))
        before = np.searchsorted(slashes, quotes) - 1
        adjacent = (before >= 0) & (slashes[np.maximum(before, 0)] == quotes - 1)
        run_length = np.where(adjacent, before - first_of_run[np.maximum(before, 0)] + 1, 0)
        quotes = quotes[run_length % 2 == 0]
        ends_escaped = slashes[-1] == len(buf) - 1 and (len(slashes) - first_of_run[-1]) % 2 == 1
    else:
        ends_escaped = False
    structural = np.flatnonzero(np.isin(buf, _STRUCTURAL))
    quotes_before = np.searchsorted(quotes, structural)
    outside = (quotes_before % 2 == 1) == state.in_string
    positions = structural[outside].astype(np.int64)
    chars = buf[positions]
    delta = np.zeros(len(positions), dtype=np.int64)
    delta[np.isin(chars, _OPEN)] = 1
    delta[np.isin(chars, _CLOSE)] = -1
    depth_after = state.depth + np.cumsum(delta)
    depth_before = depth_after - delta
    if len(positions):
        state.depth = int(depth_after[-1])
    state.in_string = state.in_string != (len(quotes) % 2 == 1)
    state.escaped = bool(ends_escaped) and state.in_string
    return positions, chars, depth_before


@dataclass
class ElementChunk:
    """Complete elements found in one stretch of the file."""

    texts: pa.Array  # LargeString, one element each
    lines: npt.NDArray[np.int32]
    offsets: IntArray

    def __len__(self) -> int:
        return len(self.offsets)


def iter_elements(
    stream: Readable, ctx: ReadContext, *, objects: bool = False
) -> Iterator[ElementChunk]:
    """Yield the elements of the JSON arrays in a stream, or with ``objects`` its top-level
    objects (see module docstring).

    Counts one record per element in ``ctx.counts.records``; anything between elements that
    is not a separator, and elements cut off by the end of the file or larger than the cap,
    are counted and quarantined here.
    """
    cap = max(ctx.options.max_line_bytes, 1 << 20) * 4
    pending = b""  # unparsed bytes, starting at a point outside any element
    pending_offset = 0
    pending_line = 1
    # Top-level objects are scanned as if inside one array that never closes.
    outside = 1 if objects else 0
    depth = outside
    skipping: _Skip | None = None

    def position() -> tuple[int, int]:
        return pending_line, pending_offset + len(pending)

    for block, skipped in decoded_blocks(stream, ctx, ctx.options.chunk_bytes, position):
        pending_offset += skipped
        if skipping is not None:
            used = skipping.feed(block)
            if used is None:
                continue
            skipping.drop(ctx, cap)
            pending_offset = skipping.offset + skipping.length
            pending_line = skipping.line + skipping.newlines
            block = block[used:]
            depth = 1
            skipping = None
        data = pending + block
        state = ScanState(depth=depth)
        positions, chars, depth_before = scan(data, state)
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE)
        found = _elements(data, positions, chars, depth_before, state.depth)
        if found.starts.size:
            lines = (pending_line + np.searchsorted(newlines, found.starts)).astype(np.int32)
            texts = _texts(data, found, lines, pending_offset, ctx)
            ctx.counts.records += len(found.starts)
            yield ElementChunk(texts, lines, found.starts + pending_offset)
        for lo, hi in found.junk:
            ctx.counts.records += 1
            text = data[lo:hi].strip(_WHITESPACE)
            at = lo + data[lo:hi].find(text[:1])
            ctx.drop(
                pending_line + int(np.searchsorted(newlines, at)),
                pending_offset + at,
                "data outside the JSON array's elements (not an object)",
                text[:4096],
            )
        pending_line += int(np.searchsorted(newlines, found.resume))
        pending_offset += found.resume
        pending = data[found.resume :]
        depth = found.resume_depth
        if len(pending) > cap:
            skipping = _Skip(
                pending_offset,
                pending_line,
                pending[:4096],
                len(pending),
                pending.count(b"\n"),
                state,
            )
            pending = b""
    if skipping is not None:
        ctx.counts.records += 1
        ctx.drop(
            skipping.line,
            skipping.offset,
            f"JSON element starting here is larger than {cap:,} bytes and the file ends inside "
            "it (truncated export?)",
            skipping.head,
        )
        return
    tail_state = ScanState(depth=depth)
    scan(pending, tail_state)
    text = pending.strip(_WHITESPACE)
    if text.translate(None, _SEPARATORS):
        lead = len(pending) - len(pending.lstrip(_WHITESPACE))
        ctx.counts.records += 1
        ctx.drop(
            pending_line + pending[:lead].count(b"\n"),
            pending_offset + lead,
            "JSON element starting here is not closed: the file ends inside it (truncated export?)"
            if tail_state.depth > outside
            else "data after the end of the JSON array",
            text[:4096],
        )
    elif tail_state.depth > outside:
        ctx.file_issue(
            "the JSON array is not closed: the file ends early (truncated export?)",
            line=pending_line + pending.count(b"\n"),
            offset=pending_offset + len(pending),
        )


def _texts(
    data: bytes, found: _Found, lines: npt.NDArray[np.int32], base: int, ctx: ReadContext
) -> pa.Array:
    """The elements' texts; invalid UTF-8 in an element is replaced by U+FFFD (and noted)."""
    bad = invalid_utf8_spans(data, found.starts, found.ends)
    if bad.size == 0:
        return spans_to_strings(data, found.starts, found.ends, exact=found.irregular, trim=_TRIM)
    view = memoryview(data)
    texts = [
        codecs.decode(view[start:end], "utf-8", "replace")
        for start, end in zip(found.starts.tolist(), found.ends.tolist(), strict=True)
    ]
    for index in bad.tolist():
        ctx.repaired(
            int(lines[index]),
            base + int(found.starts[index]),
            "element is not valid UTF-8; invalid bytes were replaced by U+FFFD",
        )
    return pa.array(texts, pa.large_string())


@dataclass
class _Found:
    starts: IntArray
    ends: IntArray
    junk: list[tuple[int, int]]
    resume: int
    resume_depth: int
    #: Some gap between elements holds more than whitespace and commas (junk, or brackets of
    #: concatenated arrays), so element texts must be cut exactly rather than trimmed.
    irregular: bool


def _elements(
    data: bytes,
    positions: IntArray,
    chars: npt.NDArray[np.uint8],
    depth: IntArray,
    final_depth: int,
) -> _Found:
    """Complete array elements in ``data`` and where the next scan resumes.

    Elements open at depth 1 (inside a top-level array) and close when the depth returns to 1,
    so opens and closes alternate and pair up in order. An element still open at the end of
    ``data`` is where the next scan resumes.
    """
    opens = positions[np.isin(chars, _OPEN) & (depth == 1)]
    closes = positions[np.isin(chars, _CLOSE) & (depth == 2)]
    complete = len(closes)
    starts = opens[:complete].astype(np.int64)
    ends = (closes + 1).astype(np.int64)
    if len(opens) > complete:
        resume, resume_depth = int(opens[complete]), 1
    else:
        resume, resume_depth = len(data), final_depth
    gap_lo = np.concatenate([[0], ends]).astype(np.int64)
    gap_hi = np.concatenate([starts, [resume]]).astype(np.int64)
    if resume == len(data):
        # The tail after the last element may still grow (a scalar cut by the block end);
        # it is carried, and judged at the end of the file.
        gap_lo, gap_hi = gap_lo[:-1], gap_hi[:-1]
        resume = int(ends[-1]) if complete else 0
        resume_depth = 1 if complete else resume_depth
        if not complete:
            resume_depth = _depth_at_start(positions, depth, resume_depth)
    junk, irregular = _junk(data, gap_lo, gap_hi)
    return _Found(starts, ends, junk, resume, resume_depth, irregular)


def _depth_at_start(positions: IntArray, depth: IntArray, fallback: int) -> int:
    return int(depth[0]) if len(positions) else fallback


def _junk(data: bytes, lo: IntArray, hi: IntArray) -> tuple[list[tuple[int, int]], bool]:
    """Gaps between elements holding more than whitespace, commas and brackets, and whether
    any gap holds more than whitespace and commas."""
    lengths = hi - lo
    keep = lengths > 0
    lo, lengths = lo[keep], lengths[keep]
    if not lo.size:
        return [], False
    total = int(lengths.sum())
    base = np.repeat(lo - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    index = np.arange(total, dtype=np.int64) + base
    buf = np.frombuffer(data, dtype=np.uint8)
    gap_bytes = buf[index]
    significant = ~np.isin(gap_bytes, _INSIGNIFICANT)
    gap_of = np.repeat(np.arange(len(lo)), lengths)
    counts = np.bincount(gap_of[significant], minlength=len(lo))
    irregular = bool(significant.any()) or bool(np.isin(gap_bytes, _BRACKETS).any())
    spans = [(int(a), int(a + n)) for a, n in zip(lo[counts > 0], lengths[counts > 0], strict=True)]
    return spans, irregular


@dataclass
class _Skip:
    """An element too large to keep: followed to its end without storing it."""

    offset: int
    line: int
    head: bytes
    length: int
    newlines: int
    state: ScanState

    def feed(self, block: bytes) -> int | None:
        """Bytes of ``block`` up to the end of the element, or None if it goes on."""
        positions, chars, depth = scan(block, self.state)
        closes = np.flatnonzero(np.isin(chars, _CLOSE) & (depth == 2))
        if not closes.size:
            self.length += len(block)
            self.newlines += block.count(b"\n")
            return None
        end = int(positions[closes[0]]) + 1
        self.length += end
        self.newlines += block[:end].count(b"\n")
        return end

    def drop(self, ctx: ReadContext, cap: int) -> None:
        ctx.counts.records += 1
        ctx.drop(
            self.line,
            self.offset,
            f"JSON element is {self.length:,} bytes, more than the {cap:,}-byte cap; not parsed",
            self.head,
        )
