"""The base of every line-oriented reader.

A :class:`LineReader` streams a file in chunks of lines, parses each line's prefix with the
reader's grammars, folds multi-line records into the row of their header line (carrying an
unfinished record over to the next chunk), and builds canonical rows. Readers differ only in
their grammars, their ``sniff`` and hooks: :meth:`LineReader.hints` (what the file as a
whole says: the year, the zone, the host), :meth:`LineReader.adjust` (what the folding rules
see) and :meth:`LineReader.finish` (columns only that format can derive).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar, TypeVar

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.columns.timestamps import check_tz
from analyzer.ingest.lines import grammars
from analyzer.ingest.lines.folding import mark_records
from analyzer.ingest.lines.framing import LineChunk, iter_line_chunks, merge_chunks, take_lines
from analyzer.ingest.lines.grammars import Grammar
from analyzer.ingest.lines.head import head_lines, looks_binary, share_recognized
from analyzer.ingest.lines.hints import FileHints, path_host, path_pod, year_anchor
from analyzer.ingest.lines.parse import parse_lines_lazy
from analyzer.ingest.lines.records import build_records, constant_hints
from analyzer.streams import Content

_T = TypeVar("_T")


class LineReader:
    """Base of the line-oriented readers (see module docstring)."""

    name: ClassVar[str]
    source: ClassVar[str]
    grammars: ClassVar[tuple[Grammar, ...]] = grammars.GRAMMARS

    def sniff(self, head: bytes, path: str) -> float:
        """Share of head lines this reader's grammars recognize, scaled to at most 0.6."""
        if not head or looks_binary(head):
            return 0.0
        lines = head_lines(head)
        if not lines:
            return 0.05
        return 0.05 + 0.55 * share_recognized(lines, self.grammars)

    def hints(self, head: bytes, ctx: ReadContext) -> FileHints:
        """What the file says as a whole: the year anchor, the zone, and a node or pod name
        the bundle path gives."""
        tz = check_tz(ctx.options.tz)
        return FileHints(
            year_anchor(head, ctx, tz, self.grammars),
            tz,
            host=path_host(ctx.path),
            pod=path_pod(ctx.path),
        )

    def adjust(self, lines: pl.LazyFrame) -> pl.LazyFrame:
        """Format-specific changes to parsed lines before they are folded into records.

        A reader may also add ``fold_message``/``fold_level``: what the folding rules should
        see instead of the line's message and level (they are dropped afterwards).
        """
        return lines

    def finish(self, rows: pl.DataFrame, hints: FileHints) -> pl.DataFrame:
        """Format-specific columns; rows arrive in canonical form (plus ``attrs``)."""
        return rows

    def can_batch(self, head: bytes) -> bool:
        """Whether this file, when small, may be read together with others of this reader
        (:meth:`read_batch`): ``finish`` must then work on rows of several files at once."""
        return False

    def read_batch(
        self, files: Sequence[tuple[bytes, LineChunk, ReadContext]]
    ) -> list[pl.DataFrame]:
        """Read several small whole files (head, all their lines, context) in one pass.

        A bundle holds thousands of node logs of a few hundred lines each, and a query's
        fixed cost is paid per query, not per line: one pass over all of them costs about
        what one file cost alone. Files never fold into each other (each starts a fold
        segment) and keep their own hints; the result is one frame per file, the rows
        :meth:`read` would have yielded for it.
        """
        hints = [self.hints(head, ctx) for head, _, ctx in files]
        if len(files) > 1 and any(h.tz != hints[0].tz or h.extra for h in hints):
            # Zones and extra fields are literals of the whole pass: such files go one by one.
            return [frame for item in files for frame in self.read_batch([item])]
        count = len(files)
        sizes = np.array([len(chunk) for _, chunk, _ in files], dtype=np.int64)
        texts: list[pl.Series] = []
        repairs: list[np.ndarray] = []
        for _, chunk, _ in files:
            text, repaired = chunk.text()
            texts.append(text)
            repairs.append(repaired)
        text = pl.concat(texts)
        if any(b"\x1b" in chunk.data for _, chunk, _ in files):
            text = text.str.replace_all(grammars.ANSI_ESCAPE, "")
        owner = _series(np.repeat(np.arange(count, dtype=np.int32), sizes), "batch_file")
        firsts = np.zeros(int(sizes.sum()), dtype=np.bool_)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        firsts[starts[sizes > 0]] = True
        anchors = pl.Series([h.anchor for h in hints], dtype=pl.Date).gather(owner)
        parsed = parse_lines_lazy(
            text, anchor=anchors, tz=hints[0].tz, grammars=self.grammars
        ).with_columns(
            text=text,
            line=_series(np.concatenate([c.line_numbers for _, c, _ in files])),
            offset=_series(np.concatenate([c.offsets for _, c, _ in files])),
            fold_break=_series(firsts),
            batch_file=owner,
            batch_anchor=anchors,
        )
        marked = mark_records(
            self.adjust(parsed),
            max_lines=files[0][2].options.max_record_lines,
            max_bytes=files[0][2].options.max_record_bytes,
        ).collect()
        marked = marked.drop("fold_message", "fold_level", "fold_break", strict=False)

        def per_file(name: str, dtype: pl.DataType) -> pl.Expr:
            return pl.col("batch_file").replace_strict(
                list(range(count)),
                [getattr(h, name) for h in hints],
                default=None,
                return_dtype=dtype,
            )

        rows = build_records(marked.lazy(), None, self.source, self.name, per_file, {}).collect()
        rows = self.finish(rows, hints[0])
        blank = marked.group_by("batch_file").agg(pl.col("is_blank").sum()).sort("batch_file")
        blanks = dict(zip(blank["batch_file"].to_list(), blank["is_blank"].to_list(), strict=True))
        frames = rows.drop("attrs", "batch_anchor", strict=False).partition_by(
            "batch_file", maintain_order=True, as_dict=True, include_key=False
        )
        out: list[pl.DataFrame] = []
        for index, (_, chunk, ctx) in enumerate(files):
            frame = frames.get(
                (index,), rows.clear().drop("attrs", "batch_anchor", "batch_file", strict=False)
            )
            _note_repairs(chunk, repairs[index], len(chunk), ctx)
            blank_lines = int(blanks.get(index, 0))
            ctx.counts.records += len(chunk)
            ctx.counts.blank += blank_lines
            ctx.counts.rows += frame.height
            ctx.counts.folded += len(chunk) - blank_lines - frame.height
            out.append(frame)
        return out

    def read(self, content: Content, ctx: ReadContext) -> Iterator[pl.DataFrame]:
        """Stream the file as folded records."""
        hints = self.hints(content.head(SNIFF_BYTES), ctx)
        carry: LineChunk | None = None
        last_ts: object = None
        for chunk, is_last in _with_last(iter_line_chunks(content, ctx)):
            if carry is not None:
                chunk = merge_chunks(carry, chunk)
                carry = None
            if len(chunk) == 0:
                continue
            text, repaired = chunk.text()
            if b"\x1b" in chunk.data:
                text = text.str.replace_all(grammars.ANSI_ESCAPE, "")
            marked = self._mark(chunk, text, hints, ctx)
            keep = marked.height
            if not is_last:
                # The last record may go on in the next chunk: carry it over (the record caps
                # bound how much can be carried).
                starts = np.flatnonzero((marked["is_header"] | marked["is_split"]).to_numpy())
                keep = int(starts[-1]) if starts.size else 0
                carry = take_lines(chunk, keep)
                if keep == 0:
                    continue
                marked = marked.head(keep)
            _note_repairs(chunk, repaired, keep, ctx)
            records = build_records(
                marked.lazy(), last_ts, self.source, self.name, constant_hints(hints), hints.extra
            )
            rows = self.finish(records.collect(), hints).drop("batch_file")
            seen = rows["ts"].drop_nulls()
            if seen.len():
                last_ts = seen[-1]
            blank = int(marked["is_blank"].sum())
            ctx.counts.records += marked.height
            ctx.counts.blank += blank
            ctx.counts.rows += rows.height
            ctx.counts.folded += marked.height - blank - rows.height
            if rows.height:
                yield rows.drop("attrs")

    def _mark(
        self, chunk: LineChunk, text: pl.Series, hints: FileHints, ctx: ReadContext
    ) -> pl.DataFrame:
        parsed = parse_lines_lazy(
            text, anchor=hints.anchor, tz=hints.tz, grammars=self.grammars
        ).with_columns(
            text=text,
            line=_series(chunk.line_numbers),
            offset=_series(chunk.offsets),
            batch_file=pl.lit(0, dtype=pl.Int32),
        )
        marked = mark_records(
            self.adjust(parsed),
            max_lines=ctx.options.max_record_lines,
            max_bytes=ctx.options.max_record_bytes,
        ).collect()
        return marked.drop("fold_message", "fold_level", strict=False)


def _with_last(items: Iterator[_T]) -> Iterator[tuple[_T, bool]]:
    """Pair every item with whether it is the last one."""
    previous: list[_T] = []
    for item in items:
        if previous:
            yield previous[0], False
        previous = [item]
    if previous:
        yield previous[0], True


def _note_repairs(chunk: LineChunk, repaired: np.ndarray, keep: int, ctx: ReadContext) -> None:
    """Quarantine notes for cut lines and invalid UTF-8 among the first ``keep`` lines."""
    limit = ctx.options.max_line_bytes
    for index, length in sorted(chunk.oversize.items()):
        if index < keep:
            ctx.repaired(
                chunk.first_line + index,
                int(chunk.offsets[index]),
                f"line is {length:,} bytes long; the row keeps its first {limit:,} bytes",
            )
    for index in np.flatnonzero(repaired[:keep]).tolist():
        ctx.repaired(
            chunk.first_line + index,
            int(chunk.offsets[index]),
            "line is not valid UTF-8; invalid bytes were replaced by U+FFFD",
        )


def _series(values: npt.NDArray[np.generic], name: str = "") -> pl.Series:
    """``values`` (numbers or booleans, no nulls) as a Series, over Arrow buffers: polars'
    numpy path, and pyarrow's, import numpy.ma (a hundredth of a second of a small file's
    analysis) to look for a mask."""
    if values.dtype == np.bool_:
        kind = pa.bool_()
        data = pa.py_buffer(np.packbits(values.astype(np.bool_, copy=False), bitorder="little"))
    else:
        kind = pa.from_numpy_dtype(values.dtype)
        data = pa.py_buffer(np.ascontiguousarray(values))
    return pl.Series(name, pa.Array.from_buffers(kind, len(values), [None, data]))
