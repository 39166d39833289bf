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
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from analyzer.ingest.base import ReadContext
from analyzer.ingest.blocks import decoded_blocks, invalid_utf8_spans, spans_to_strings
from analyzer.ingest.json.resync import RESYNC_WINDOW, Layout, Resync, first_key
from analyzer.ingest.json.structure import (
    IS_CLOSE,
    IS_OPEN,
    Fault,
    ScanState,
    Tokens,
    first_fault,
    scan,
    tokens,
)
from analyzer.streams import Readable

__all__ = ["ElementChunk", "ScanState", "iter_elements", "scan"]

_NEWLINE: Final = 10
_WHITESPACE: Final = b" \t\r\n"
_SEPARATORS: Final = b" \t\r\n,[]"
_INSIGNIFICANT: Final = np.frombuffer(_SEPARATORS, dtype=np.uint8)
_TRIM: Final = " \t\r\n,"
_BRACKETS: Final = np.frombuffer(b"[]", dtype=np.uint8)
IntArray = npt.NDArray[np.int64]


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
    is not a separator, elements cut off by the end of the file or larger than the cap, and
    malformed elements are counted and quarantined here.
    """
    framer = _Framer(ctx, objects)
    for block, skipped in decoded_blocks(stream, ctx, ctx.options.chunk_bytes, framer.position):
        framer.pending_offset += skipped
        yield from framer.feed(block)
    yield from framer.finish()


#: After this many faults in one file its structure is no longer checked (the elements are
#: still cut by depth): a hostile file of nothing but stray brackets must not cost a scan each.
MAX_FAULTS: Final = 1000
#: After a fault the rest of a block is framed in windows this large at first (doubling while
#: no fault recurs), so that a fault costs a scan of a window, not of the whole block.
_FAULT_WINDOW: Final = 4 << 10


@dataclass
class _Framer:
    """The state of one stream's framing between blocks."""

    ctx: ReadContext
    objects: bool
    cap: int = 0
    pending: bytes = b""  # unparsed bytes, starting at a point outside any element
    pending_offset: int = 0
    pending_line: int = 1
    depth: int = 0
    skipping: _Skip | None = None
    resync: Resync | None = None
    faults: int = 0
    window: int | None = None
    #: How the elements' lines start (``b"  "`` in gcloud's output), or None for a compact
    #: array; learned from the first element whose line is in view.
    indent: bytes | None = None
    learned: bool = False
    #: Where the array ends is not known: an object came after it had closed and was read as
    #: an element (the file may end without another ``]``, as when objects were pasted after
    #: an array), or a malformed element ran to the end of the file (its ``]`` with it).
    unsure_end: bool = False
    #: Bytes still to frame: the block, or after a fault the rest of it, cut in windows.
    queue: deque[bytes | memoryview] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.cap = max(self.ctx.options.max_line_bytes, 1 << 20) * 4
        # Top-level objects are scanned as if inside one array that never closes.
        self.depth = self.outside

    @property
    def outside(self) -> int:
        return 1 if self.objects else 0

    def position(self) -> tuple[int, int]:
        return self.pending_line, self.pending_offset + len(self.pending)

    def feed(self, block: bytes, *, final: bool = False) -> Iterator[ElementChunk]:
        """Frame one block of the stream (``final``: the last, which may be empty)."""
        self.queue.append(block)
        while self.queue:
            piece = self._next_piece()
            if self.skipping is not None:
                used = self.skipping.feed(piece)
                if used is None:
                    continue
                self.skipping.drop(self.ctx, self.cap)
                self.pending_offset = self.skipping.offset + self.skipping.length
                self.pending_line = self.skipping.line + self.skipping.newlines
                piece = piece[used:]
                self.depth = 1
                self.skipping = None
            if self.resync is not None:
                found = self.resync.feed(piece)
                if found is None:
                    continue
                piece, self.pending_offset, self.pending_line = found
                self.resync.drop(self.ctx, self.pending_line)
                self.depth = 1
                self.resync = None
            yield from self._frame(self.pending + piece, final=final and not self.queue)

    def _next_piece(self) -> bytes:
        head = self.queue[0]
        if self.window is None or len(head) <= self.window:
            self.queue.popleft()
            return head if isinstance(head, bytes) else bytes(head)
        rest = memoryview(head)
        self.queue[0] = rest[self.window :]
        return bytes(rest[: self.window])

    def _frame(self, data: bytes, *, final: bool) -> Iterator[ElementChunk]:
        """Frame ``data`` (the carried bytes and a new piece): elements out, the rest carried.
        ``final``: nothing follows ``data``."""
        tok = tokens(data, self.depth)
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == _NEWLINE)
        fault = None
        if self.faults < MAX_FAULTS:
            fault = first_fault(data, tok, newlines, objects=self.objects)
        if fault is not None:
            yield from self._repair(data, tok, newlines, fault, final=final)
            return
        if self.window is not None:
            self.window = None if self.window >= self.ctx.options.chunk_bytes else self.window * 2
        found = _elements(data, tok.positions, tok.chars, tok.depth, tok.end.depth)
        yield from self._emit(data, newlines, found)
        self._advance(data, newlines, found.resume, found.resume_depth)
        if len(self.pending) > self.cap:
            state = ScanState(tok.end.depth, tok.end.in_string, tok.end.escaped)
            self.skipping = _Skip(
                self.pending_offset,
                self.pending_line,
                self.pending[:4096],
                len(self.pending),
                self.pending.count(b"\n"),
                state,
            )
            self.pending = b""

    def _repair(
        self, data: bytes, tok: Tokens, newlines: IntArray, fault: Fault, *, final: bool
    ) -> Iterator[ElementChunk]:
        """Read the elements before a fault, quarantine what is at fault, and put the rest
        back in the queue to be framed from the next element on (or, while the next element
        is not in sight, carry the malformed one until it is)."""
        cut = fault.start
        before = tok.positions < cut
        found = _elements(
            data, tok.positions[before], tok.chars[before], tok.depth[before], 1, cut=cut
        )
        yield from self._emit(data, newlines, found)
        line = self.pending_line + int(np.searchsorted(newlines, fault.position))
        if fault.kind == "stray":
            self.ctx.counts.records += 1
            self.ctx.drop(
                line,
                self.pending_offset + fault.position,
                f"{fault.what}: not part of any element",
                data[fault.position : fault.position + 1],
            )
            depth = int(tok.depth[np.searchsorted(tok.positions, fault.position)])
            self._advance(data, newlines, fault.position + 1, depth)
        elif fault.kind == "reopen":
            self.unsure_end = True
            self._advance(data, newlines, fault.position, 1)
        elif not self._malformed(data, newlines, fault, line, final=final):
            # Waiting for more of the stream: take it in growing windows.
            self.window = _FAULT_WINDOW if self.window is None else self.window * 2
            return
        self.faults += 1
        rest = self.pending
        self.pending = b""
        self.window = _FAULT_WINDOW
        if rest:
            self.queue.appendleft(rest)

    def _malformed(
        self, data: bytes, newlines: IntArray, fault: Fault, line: int, *, final: bool
    ) -> bool:
        """Quarantine the element at fault up to the next element's start, or follow it into
        the blocks to come; False when it is carried instead, to be judged with more data."""
        start = fault.start
        layout = Layout(self.indent, first_key(data, start))
        # Decided once the data reaches far enough past the fault, whatever the block size.
        complete = final or len(data) - fault.position >= RESYNC_WINDOW
        resume = layout.next_start(data, start, fault.position, complete=complete)
        if resume is None and not complete and len(data) - start <= self.cap:
            self._advance(data, newlines, start, 1)
            return False
        start_line = self.pending_line + int(np.searchsorted(newlines, start))
        offset = self.pending_offset + start
        reason = f"malformed JSON element: {fault.what} at line {line}"
        if resume is None and not final:
            # No element starts at or after the fault within the data: the blocks to come
            # are searched from where this search stopped.
            floor = max(start + 1, fault.position, len(data) - RESYNC_WINDOW)
            self.resync = Resync(
                offset,
                start_line,
                data[start : start + 4096],
                reason,
                layout,
                data[floor:],
                self.pending_offset + floor,
                self.pending_line + int(np.searchsorted(newlines, floor)),
            )
            self._advance(data, newlines, len(data), 1)
            return True
        end = len(data) if resume is None else resume
        if resume is None:
            reason += "; the file ends before another element starts"
            self.unsure_end = True
        else:
            next_line = self.pending_line + int(np.searchsorted(newlines, resume))
            reason += f"; read again from the next element, line {next_line}"
        self.ctx.counts.records += 1
        self.ctx.drop(start_line, offset, reason, data[start : min(end, start + 4096)])
        self._advance(data, newlines, end, 1)
        return True

    def _emit(self, data: bytes, newlines: IntArray, found: _Found) -> Iterator[ElementChunk]:
        """The complete elements and the junk between them, counted and quarantined."""
        ctx = self.ctx
        if found.starts.size:
            if not self.learned:
                self._learn(data, found.starts[:2])
            lines = (self.pending_line + np.searchsorted(newlines, found.starts)).astype(np.int32)
            texts = _texts(data, found, lines, self.pending_offset, ctx)
            ctx.counts.records += len(found.starts)
            yield ElementChunk(texts, lines, found.starts + self.pending_offset)
        for lo, hi in found.junk:
            ctx.counts.records += 1
            text = data[lo:hi].strip(_WHITESPACE)
            at = lo + data[lo:hi].find(text[:1])
            ctx.drop(
                self.pending_line + int(np.searchsorted(newlines, at)),
                self.pending_offset + at,
                "data outside the JSON array's elements (not an object)",
                text[:4096],
            )

    def _learn(self, data: bytes, starts: IntArray) -> None:
        """Learn the elements' indentation from an element whose line start is in view (the
        first of a file, or one after another)."""
        for start in starts.tolist():
            line_start = data.rfind(b"\n", 0, start) + 1
            if line_start == 0 and self.pending_offset > 0:
                continue
            self.learned = True
            lead = data[line_start:start]
            self.indent = lead if not lead.strip(b" \t") else None
            return

    def _advance(self, data: bytes, newlines: IntArray, resume: int, depth: int) -> None:
        """Carry ``data[resume:]`` as the pending bytes, at nesting ``depth``."""
        self.pending_line += int(np.searchsorted(newlines, resume))
        self.pending_offset += resume
        self.pending = data[resume:]
        self.depth = depth

    def finish(self) -> Iterator[ElementChunk]:
        """The end of the stream: judge what is still pending."""
        ctx = self.ctx
        if self.pending and self.skipping is None and self.resync is None:
            yield from self.feed(b"", final=True)
        if self.skipping is not None:
            ctx.counts.records += 1
            ctx.drop(
                self.skipping.line,
                self.skipping.offset,
                f"JSON element starting here is larger than {self.cap:,} bytes and the file "
                "ends inside it (truncated export?)",
                self.skipping.head,
            )
            return
        if self.resync is not None:
            self.resync.drop(ctx, None)
            return
        pending, outside = self.pending, self.outside
        tail_state = ScanState(depth=self.depth)
        scan(pending, tail_state)
        text = pending.strip(_WHITESPACE)
        if text.translate(None, _SEPARATORS):
            lead = len(pending) - len(pending.lstrip(_WHITESPACE))
            ctx.counts.records += 1
            ctx.drop(
                self.pending_line + pending[:lead].count(b"\n"),
                self.pending_offset + lead,
                "JSON element starting here is not closed: the file ends inside it "
                "(truncated export?)"
                if tail_state.depth > outside
                else "data after the end of the JSON array",
                text[:4096],
            )
        elif tail_state.depth > outside and not self.unsure_end:
            ctx.file_issue(
                "the JSON array is not closed: the file ends early (truncated export?)",
                line=self.pending_line + pending.count(b"\n"),
                offset=self.pending_offset + len(pending),
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
    *,
    cut: int | None = None,
) -> _Found:
    """Complete array elements in ``data`` and where the next scan resumes.

    Elements open at depth 1 (inside a top-level array) and close when the depth returns to 1,
    so opens and closes alternate and pair up in order. An element still open at the end of
    ``data`` is where the next scan resumes. With ``cut`` (a fault there, no element open
    before it; ``positions`` end before it) the gap up to the cut is judged too.
    """
    opens = positions[IS_OPEN[chars] & (depth == 1)]
    closes = positions[IS_CLOSE[chars] & (depth == 2)]
    complete = len(closes)
    if cut is not None:
        complete = min(complete, len(opens))
        starts = opens[:complete].astype(np.int64)
        ends = (closes[:complete] + 1).astype(np.int64)
        gap_lo = np.concatenate([[0], ends]).astype(np.int64)
        gap_hi = np.concatenate([starts, [cut]]).astype(np.int64)
        junk, irregular = _junk(data, gap_lo, gap_hi)
        return _Found(starts, ends, junk, cut, final_depth, irregular)
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
        closes = np.flatnonzero(IS_CLOSE[chars] & (depth == 2))
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
