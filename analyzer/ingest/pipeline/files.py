"""Read files into a sink: open and sniff each, stream it through its reader (or read a run
of small files of one line reader in one pass), add provenance and fill in its inventory record.

This is the per-file work every ingest does, whether in the ingesting process or in a worker
(:mod:`analyzer.ingest.pipeline.workers`): rows get ``file_id`` and ``row_id``, are
conformed to the canonical schema and go to a :class:`Sink` with the reader's quarantine
entries; a problem with one file is noted in its record and quarantine, and only a
bundle-wide cap escapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from analyzer.bundle.members import FileStamp
from analyzer.bundle.tree import changed_since, os_reason
from analyzer.case.inputs import Issue, ReadOptions
from analyzer.errors import ExpansionLimitError
from analyzer.ingest.base import SNIFF_BYTES, ReadContext
from analyzer.ingest.decoding import TextContent
from analyzer.ingest.lines.framing import LineChunk, iter_line_chunks, merge_chunks
from analyzer.ingest.lines.reader import LineReader
from analyzer.ingest.pipeline.progress import Progress
from analyzer.ingest.registry import Choice, choose_reader
from analyzer.schema import conform
from analyzer.streams import CorruptStreamError, ExpansionBudget, Readable


@dataclass
class _FileState:
    first_ts: Any = None
    last_ts: Any = None
    rows: int = 0
    consumed: int = 0


class Sink(Protocol):
    """Where a file's rows, host aliases and quarantine entries go: the case writer, or a
    spool that a worker process hands back to it."""

    def add_rows(self, table: pa.Table, dedup_keys: pl.DataFrame | None = None) -> None:
        """Canonical rows (with provenance) and the de-duplication keys of some of them."""

    def add_aliases(self, found: pl.DataFrame) -> None:
        """Host aliases found inside rows."""

    def add_issues(self, file_id: int, path: str, issues: Iterable[Issue]) -> None:
        """Quarantine entries of one file."""


@dataclass(frozen=True)
class FileJob:
    """What reading one file needs besides its bytes (picklable, for worker processes)."""

    path: str
    mtime: float | None
    options: ReadOptions
    forced_reader: str | None
    #: A file on disk, and how it was when listed: checked again once it is read.
    disk_path: Path | None = None
    stamp: FileStamp | None = None


#: A plain file at most this large may be read whole together with its neighbours, when its
#: reader batches (:meth:`analyzer.ingest.lines.reader.LineReader.read_batch`): node logs of a few
#: hundred lines each otherwise cost a fixed ~0.1 s apiece.
BATCH_FILE_BYTES: Final = 1 << 20
#: A batch holds at most this many files...
BATCH_FILES: Final = 512
#: ...and at most this many bytes.
BATCH_BYTES: Final = 32 << 20

#: One file to read: what it is, how to open it, and its inventory record to fill in.
FileItem = tuple[FileJob, Callable[[], Readable], dict[str, Any]]


@dataclass
class _Open:
    """A file opened and sniffed, not yet read."""

    job: FileJob
    record: dict[str, Any]
    ctx: ReadContext
    content: TextContent
    state: _FileState
    head: bytes = b""
    choice: Choice | None = None
    #: The file was refused while sniffing (binary, damaged head): nothing more to read.
    done: bool = False
    #: Read whole, hashed and closed (:func:`_release`): a batch holds bytes, not open files.
    released: bool = False


def read_file(
    job: FileJob,
    opener: Callable[[], Readable],
    record: dict[str, Any],
    budget: ExpansionBudget,
    sink: Sink,
    progress: Progress,
) -> None:
    """Read one file into ``sink`` and fill in its inventory ``record`` (counts, status,
    time range, compression, sha256)."""
    read_files([(job, opener, record)], budget, sink, progress)


def read_files(
    items: Sequence[FileItem], budget: ExpansionBudget, sink: Sink, progress: Progress
) -> None:
    """Read files in order into ``sink``, filling in their inventory records.

    Consecutive small plain files that one line reader batches are read in one pass; their
    rows still reach the sink file by file, in order.
    """
    batch: list[tuple[_Open, LineChunk]] = []
    current: _Open | None = None
    try:
        batch_bytes = 0
        for job, opener, record in items:
            opened = current = _begin(job, opener, record, budget, sink)
            if opened is None:
                continue
            reader = opened.choice.reader if opened.choice is not None else None
            if (
                not opened.done
                and isinstance(reader, LineReader)
                and opened.content.compression == "none"
                and (record["bytes"] or 0) <= BATCH_FILE_BYTES
                and reader.can_batch(opened.head)
            ):
                if batch and (
                    batch[0][0].choice is None
                    or batch[0][0].choice.reader is not reader
                    or len(batch) >= BATCH_FILES
                    or batch_bytes >= BATCH_BYTES
                ):
                    _read_batch(batch, sink, progress)
                    batch, batch_bytes = [], 0
                chunk = _whole(opened)
                current = None
                if chunk is not None:
                    _release(opened)
                    batch.append((opened, chunk))
                    batch_bytes += len(chunk.data)
                    continue
                _end(opened, sink, progress)
                continue
            if batch:
                _read_batch(batch, sink, progress)
                batch, batch_bytes = [], 0
            if not opened.done:
                _stream(opened, sink, progress)
            current = None
            _end(opened, sink, progress)
        if batch:
            _read_batch(batch, sink, progress)
    except BaseException:
        # Interrupted (or a bundle-wide cap): close what is open; the run is abandoned.
        for opened, _ in batch:
            opened.content.close()
        if current is not None:
            current.content.close()
        raise


def _begin(
    job: FileJob,
    opener: Callable[[], Readable],
    record: dict[str, Any],
    budget: ExpansionBudget,
    sink: Sink,
) -> _Open | None:
    """Open and sniff a file; ``None`` when it cannot even be opened (recorded)."""
    ctx = ReadContext(job.path, job.options, job.mtime)
    try:
        content = TextContent(opener(), budget, job.path)
        record["compression"] = content.compression
    except OSError as exc:
        record["status"] = "unreadable"
        record["detail"] = f"cannot be opened ({os_reason(exc)})"
        sink.add_issues(record["file_id"], job.path, [Issue("file", 0, 0, record["detail"])])
        return None
    opened = _Open(job, record, ctx, content, _FileState())
    try:
        opened.head = content.head(SNIFF_BYTES)
        record["compression"] = content.compression
        opened.choice = choose_reader(opened.head, ctx.path, job.forced_reader)
        if opened.choice is None:
            record["status"] = "binary"
            ctx.file_issue("binary data (NUL bytes), not a log: not ingested")
            opened.done = True
            return opened
        if content.skipped:
            ctx.repaired(
                1,
                0,
                f"{content.skipped:,} NUL bytes at the start of the file skipped (what a log "
                "truncated in place by copytruncate rotation begins with)",
            )
        record["reader"] = opened.choice.reader.name if opened.choice.recognized else "unrecognized"
        record["recognized"] = opened.choice.recognized
        record["sniff_score"] = round(opened.choice.score, 3)
    except ExpansionLimitError as exc:
        if exc.scope == "bundle":
            content.close()
            raise
        ctx.file_issue(exc.message)
        opened.done = True
    except CorruptStreamError as exc:
        ctx.file_issue(exc.message)
        opened.done = True
    return opened


def _stream(opened: _Open, sink: Sink, progress: Progress) -> None:
    """Stream the file's rows through its reader into the sink."""
    assert opened.choice is not None
    ctx, content, state = opened.ctx, opened.content, opened.state
    file_id = opened.record["file_id"]
    try:
        for frame in opened.choice.reader.read(content, ctx):
            _write(frame, file_id, state, sink)
            sink.add_issues(file_id, ctx.path, ctx.take_issues())
            read_now = content.stored.bytes_read
            progress.advance(read_now - state.consumed)
            state.consumed = read_now
    except ExpansionLimitError as exc:
        if exc.scope == "bundle":
            content.close()
            raise
        ctx.file_issue(exc.message)
    except CorruptStreamError as exc:
        ctx.file_issue(exc.message)


def _whole(opened: _Open) -> LineChunk | None:
    """All lines of a small plain file as one chunk; ``None`` (noted) if reading failed.

    A read that breaks off part-way is noted by the framing (the file becomes ``partial``) and
    the lines read before the break are kept, as when the file is streamed.
    """
    chunks: list[LineChunk] = []
    try:
        chunks = list(
            iter_line_chunks(opened.content, opened.ctx, chunk_bytes=BATCH_FILE_BYTES * 2)
        )
    except CorruptStreamError as exc:
        opened.ctx.file_issue(exc.message)
        return None
    if not chunks:
        empty = np.empty(0, np.int64)
        return LineChunk(b"", empty, empty, 1, empty)
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole = merge_chunks(whole, chunk)
    return whole


def _release(opened: _Open) -> None:
    """Hash and close a file whose content is read whole: a batch of 512 files must not hold
    512 open files (a limit of 256, macOS's default, failed with EMFILE)."""
    try:
        opened.record["sha256"] = opened.content.finish()
    except (OSError, CorruptStreamError, ExpansionLimitError):
        opened.record["sha256"] = None
    finally:
        opened.content.close()
    opened.released = True


def _read_batch(batch: list[tuple[_Open, LineChunk]], sink: Sink, progress: Progress) -> None:
    """Read a batch of small files of one line reader, then finish each in order."""
    first = batch[0][0].choice
    assert first is not None
    assert isinstance(first.reader, LineReader)
    frames = first.reader.read_batch([(opened.head, chunk, opened.ctx) for opened, chunk in batch])
    for (opened, _), frame in zip(batch, frames, strict=True):
        if frame.height:
            _write(frame, opened.record["file_id"], opened.state, sink)
        _end(opened, sink, progress)


def _end(opened: _Open, sink: Sink, progress: Progress) -> None:
    """Close a file: its issues, sha256, status and counts."""
    ctx, content, state, record = opened.ctx, opened.content, opened.state, opened.record
    try:
        if not opened.released:
            try:
                record["sha256"] = content.finish()
            except (OSError, CorruptStreamError, ExpansionLimitError):
                record["sha256"] = None
        job = opened.job
        if job.disk_path is not None and job.stamp is not None:
            change = changed_since(job.disk_path, job.stamp, content.stored.bytes_read)
            if change is not None:
                decoded = content.decoder.decoded_bytes
                ctx.file_issue(change, line=ctx.counts.records, offset=decoded)
        if ctx.incomplete and record["status"] == "read":
            record["status"] = "partial"
            record["detail"] = record.get("detail") or ctx.first_problem
        sink.add_issues(record["file_id"], ctx.path, ctx.take_issues())
        progress.advance(content.stored.bytes_read - state.consumed)
    finally:
        content.close()
    record["decoded_bytes"] = content.decoder.decoded_bytes
    counts = ctx.counts
    record.update(
        records=counts.records,
        rows=counts.rows,
        folded=counts.folded,
        blank=counts.blank,
        quarantined=counts.dropped,
        repaired=counts.repaired,
        ts_min=state.first_ts,
        ts_max=state.last_ts,
        year_from=ctx.year_from,
    )


def _write(frame: pl.DataFrame, file_id: int, state: _FileState, sink: Sink) -> None:
    row_ids = pl.int_range(state.rows, state.rows + frame.height, dtype=pl.Int64, eager=True)
    frame = frame.with_columns(
        pl.lit(file_id, dtype=pl.Int32).alias("file_id"),
        (row_ids + (file_id << 32)).alias("row_id"),
    )
    state.rows += frame.height
    if "_alias" in frame.columns:
        named = frame.filter(pl.col("_alias").is_not_null() & pl.col("host").is_not_null())
        if named.height:
            sink.add_aliases(
                named.select(
                    "row_id",
                    "file_id",
                    "line",
                    pl.col("host").cast(pl.String),
                    pl.col("_alias").alias("alias"),
                    pl.col("_alias_kind").alias("kind"),
                )
            )
    keys = None
    if "_dedup_key" in frame.columns:
        keys = frame.select(pl.col("row_id"), pl.col("_dedup_key").struct.unnest()).drop_nulls()
    table = conform(frame)
    sink.add_rows(table, keys)
    # Nanosecond integers: Python datetimes would drop the last three digits.
    bounds = pc.min_max(table.column("ts").cast(pa.int64()))
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is not None:
        state.first_ts = low if state.first_ts is None else min(state.first_ts, low)
        state.last_ts = high if state.last_ts is None else max(state.last_ts, high)
