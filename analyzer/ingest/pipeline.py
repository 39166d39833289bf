"""Drive a bundle through the readers into a case writer.

For each bundle member: open its decoded content, let the registry pick a reader, stream the
reader's frames, add provenance (``file_id``, ``row_id``), conform them to the canonical schema
and hand them to the case writer together with the reader's quarantine entries. Problems with
one file (a refused member, a truncated stream, a decompression bomb) are recorded in the
inventory and quarantine, and the next file goes on; only a bundle-wide cap stops the run.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Protocol

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from analyzer.bundle import Bundle, Member, archive_kind
from analyzer.case.writer import CaseWriter
from analyzer.errors import ExpansionLimitError
from analyzer.ingest.base import SNIFF_BYTES, Issue, ReadContext, ReadOptions
from analyzer.ingest.detect import choose_reader
from analyzer.schema import conform
from analyzer.streams import Content, CorruptStreamError


class Progress(Protocol):
    """What the pipeline reports while it works (the CLI draws it with rich)."""

    def start(self, total: int | None) -> None:
        """Work begins; ``total`` bytes of input when known."""

    def file(self, path: str) -> None:
        """A new file is being read."""

    def advance(self, stored_bytes: int) -> None:
        """``stored_bytes`` more input bytes were consumed."""


class NullProgress:
    """Reports nothing."""

    def start(self, total: int | None) -> None:
        return None

    def file(self, path: str) -> None:
        return None

    def advance(self, stored_bytes: int) -> None:
        return None


@dataclass
class _FileState:
    first_ts: Any = None
    last_ts: Any = None
    rows: int = 0
    consumed: int = 0


@dataclass
class IngestRun:
    """Runs one bundle into one writer."""

    bundle: Bundle
    writer: CaseWriter
    options: ReadOptions
    forced_reader: str | None = None
    progress: Progress = field(default_factory=NullProgress)
    _next_id: int = 0
    _by_path: dict[str, dict[str, Any]] = field(default_factory=dict)

    def run(self) -> None:
        """Ingest every member of the bundle."""
        has_archive = any(p.is_file() and _is_archive(p.name) for p in self.bundle.inputs)
        self.progress.start(None if has_archive else self.bundle.input_bytes)
        archives: list[Member] = []
        for member in self.bundle.members():
            if member.status == "damaged":
                self._mark_damaged(member)
                continue
            if member.status == "archive":
                archives.append(member)
            if member.status != "file":
                self._list_only(member)
                continue
            self.progress.file(member.path)
            self._read_member(member)
        for archive in archives:
            # sha256 of an archive is only known once its walk is complete.
            record = self._by_path.get(archive.path)
            if record is not None and archive.sha256 is not None:
                record["sha256"] = archive.sha256

    def _new_record(self, member: Member, status: str) -> dict[str, Any]:
        record: dict[str, Any] = {
            "file_id": self._next_id,
            "path": member.path,
            "status": status,
            "reader": None,
            "recognized": None,
            "sniff_score": None,
            "compression": None,
            "bytes": member.size,
            "decoded_bytes": None,
            "sha256": member.sha256,
            "mtime": _mtime(member.mtime),
            "on_disk": member.on_disk,
            "records": 0,
            "rows": 0,
            "folded": 0,
            "blank": 0,
            "quarantined": 0,
            "repaired": 0,
            "duplicates": 0,
            "ts_min": None,
            "ts_max": None,
            "year_from": None,
            "detail": member.detail,
        }
        self._next_id += 1
        self._by_path.setdefault(member.path, record)
        self.writer.add_file(record)
        return record

    def _list_only(self, member: Member) -> None:
        record = self._new_record(member, member.status)
        if member.status == "refused":
            self.writer.add_issues(
                record["file_id"], member.path, [Issue("file", 0, 0, member.detail or "refused")]
            )

    def _mark_damaged(self, member: Member) -> None:
        record = self._by_path.get(member.path)
        if record is None:
            record = self._new_record(member, "damaged")
        record["status"] = "damaged"
        record["detail"] = member.detail
        self.writer.add_issues(
            record["file_id"], member.path, [Issue("file", 0, 0, member.detail or "damaged")]
        )

    def _read_member(self, member: Member) -> None:
        record = self._new_record(member, "read")
        ctx = ReadContext(member.path, self.options, member.mtime)
        state = _FileState()
        try:
            content = Content(member.open(), self.bundle.budget, member.path)
            record["compression"] = content.compression
        except OSError as exc:
            record["status"] = "unreadable"
            self.writer.add_issues(
                record["file_id"], member.path, [Issue("file", 0, 0, f"cannot open: {exc}")]
            )
            return
        try:
            self._read_content(content, record, ctx, state)
            if ctx.incomplete and record["status"] == "read":
                record["status"] = "partial"
            self.writer.add_issues(record["file_id"], member.path, ctx.take_issues())
            try:
                record["sha256"] = content.finish()
            except (OSError, CorruptStreamError, ExpansionLimitError):
                record["sha256"] = None
            self.progress.advance(content.stored.bytes_read - state.consumed)
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

    def _read_content(
        self, content: Content, record: dict[str, Any], ctx: ReadContext, state: _FileState
    ) -> None:
        """Sniff, pick a reader and stream its rows into the writer."""
        file_id = record["file_id"]
        try:
            head = content.head(SNIFF_BYTES)
            record["compression"] = content.compression
            choice = choose_reader(head, ctx.path, self.forced_reader)
            if choice is None:
                record["status"] = "binary"
                ctx.file_issue("binary data (NUL bytes), not a log: not ingested")
                return
            record["reader"] = choice.reader.name if choice.recognized else "unrecognized"
            record["recognized"] = choice.recognized
            record["sniff_score"] = round(choice.score, 3)
            for frame in choice.reader.read(content, ctx):
                self._write(frame, file_id, state)
                self.writer.add_issues(file_id, ctx.path, ctx.take_issues())
                read_now = content.stored.bytes_read
                self.progress.advance(read_now - state.consumed)
                state.consumed = read_now
        except ExpansionLimitError as exc:
            if exc.scope == "bundle":
                raise
            ctx.file_issue(exc.message)
        except CorruptStreamError as exc:
            ctx.file_issue(exc.message)

    def _write(self, frame: pl.DataFrame, file_id: int, state: _FileState) -> None:
        row_ids = pl.int_range(state.rows, state.rows + frame.height, dtype=pl.Int64, eager=True)
        frame = frame.with_columns(
            pl.lit(file_id, dtype=pl.Int32).alias("file_id"),
            (row_ids + (file_id << 32)).alias("row_id"),
        )
        state.rows += frame.height
        if "_alias" in frame.columns:
            named = frame.filter(pl.col("_alias").is_not_null() & pl.col("host").is_not_null())
            if named.height:
                self.writer.add_aliases(
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
        self.writer.add_rows(table, keys)
        # Nanosecond integers: Python datetimes would drop the last three digits.
        bounds = pc.min_max(table.column("ts").cast(pa.int64()))
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if low is not None:
            state.first_ts = low if state.first_ts is None else min(state.first_ts, low)
            state.last_ts = high if state.last_ts is None else max(state.last_ts, high)


def _mtime(value: float | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        return dt.datetime.fromtimestamp(int(value), tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _is_archive(name: str) -> bool:
    return archive_kind(name) is not None
