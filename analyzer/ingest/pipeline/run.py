"""Drive a bundle through the readers into a case writer.

For each bundle member, in bundle order: plain files on disk are read in groups (runs of
files up to 32 MiB together, a larger one alone), here or in worker processes
(:mod:`analyzer.ingest.pipeline.workers`), each group's rows into part files of its own
(:mod:`analyzer.case.parts`); members inside archives are read here; refused and
damaged members, and directories or files that cannot be read, are listed in the inventory
with a quarantine entry. The per-file reading is
:mod:`analyzer.ingest.pipeline.files`. Problems with one file are recorded and the next file
goes on; only a bundle-wide cap stops the run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from analyzer.bundle import Bundle, Member, archive_kind
from analyzer.case.inputs import Issue, ReadOptions
from analyzer.case.writer import CaseWriter
from analyzer.errors import ExpansionLimitError
from analyzer.ingest.pipeline.files import (
    BATCH_BYTES,
    BATCH_FILES,
    FileJob,
    read_file,
    read_files,
)
from analyzer.ingest.pipeline.progress import NullProgress, Progress
from analyzer.ingest.pipeline.workers import MIN_PARALLEL_BYTES, WorkerPool, hand_over


@dataclass
class IngestRun:
    """Runs one bundle into one writer."""

    bundle: Bundle
    writer: CaseWriter
    options: ReadOptions
    forced_reader: str | None = None
    progress: Progress = field(default_factory=NullProgress)
    #: Worker processes for plain files on disk (1: read everything in this process).
    jobs: int = 1
    #: Which members this run reads, given the file id the member gets (every member when
    #: ``None``). A sharded ingest numbers every member of the bundle, so a file has the same
    #: id and row ids in whichever shard reads it, and writes records only for its own.
    owns: Callable[[Member, int], bool] | None = None
    _next_id: int = 0
    _by_path: dict[str, dict[str, Any]] = field(default_factory=dict)
    _ids: dict[str, int] = field(default_factory=dict)

    def run(self) -> None:
        """Ingest every member of the bundle."""
        has_archive = any(p.is_file() and _is_archive(p.name) for p in self.bundle.inputs)
        self.progress.start(None if has_archive else self.bundle.input_bytes)
        archives: list[Member] = []
        pool = self._pool()
        group: list[tuple[Member, dict[str, Any]]] = []
        try:
            for member in self.bundle.members():
                if not self._mine(member):
                    self._skip(member)
                    continue
                if member.status == "file" and member.disk_path is not None:
                    # Plain files on disk go in groups (read in a worker when there is a
                    # pool): runs of files up to BATCH_BYTES together, a larger one alone. A
                    # group's rows are a unit of part files: groups of medium files, not a
                    # file each, keep a bundle of thousands of them to a few hundred parts.
                    alone = member.size >= BATCH_BYTES
                    if group and (alone or _group_full(group)):
                        self._dispatch(pool, group)
                        group = []
                    group.append((member, self._new_record(member, "read")))
                    if alone:
                        self._dispatch(pool, group)
                        group = []
                    continue
                # Everything else is done here, after the files before it, to keep bundle order.
                self._dispatch(pool, group)
                group = []
                self._drain(pool)
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
            self._dispatch(pool, group)
            self._drain(pool)
        finally:
            if pool is not None:
                pool.close()
        for archive in archives:
            # sha256 of an archive is only known once its walk is complete.
            record = self._by_path.get(archive.path)
            if record is not None and archive.sha256 is not None:
                record["sha256"] = archive.sha256

    def _mine(self, member: Member) -> bool:
        if self.owns is None:
            return True
        file_id = self._next_id
        if member.status == "damaged":
            file_id = self._ids.get(member.path, file_id)
        return self.owns(member, file_id)

    def _skip(self, member: Member) -> None:
        """Number a member another shard reads, exactly as reading it would."""
        if member.status == "damaged" and member.path in self._ids:
            return
        self._ids.setdefault(member.path, self._next_id)
        self._next_id += 1

    def _pool(self) -> WorkerPool | None:
        """A worker pool when there is enough on disk to be worth one."""
        if not _parallel([size for _, size in self.bundle.plain_file_sizes()], self.jobs):
            return None
        return WorkerPool(self.jobs, self.writer.rows_dir)

    def _dispatch(
        self, pool: WorkerPool | None, group: list[tuple[Member, dict[str, Any]]]
    ) -> None:
        """Read a group of plain files, its rows into a unit of their own: here, or submitted
        to the pool (the same unit either way, so the case does not depend on the pool)."""
        if not group:
            return
        if pool is None:
            self.progress.file(group[0][0].path)
            items = [(self._job(m), m.open, record) for m, record in group]
            self.writer.start_unit()
            read_files(items, self.bundle.budget, self.writer, self.progress)
            self.writer.end_unit()
            return
        while pool.full():
            self._take(pool)
        pool.submit(
            [(self._job(m), m.disk_path, record) for m, record in group],
            self.bundle.budget,
            self.writer.new_unit(),
        )

    def _job(self, member: Member) -> FileJob:
        return FileJob(
            member.path,
            member.mtime,
            self.options,
            self.forced_reader,
            disk_path=member.disk_path,
            stamp=member.stamp,
        )

    def _drain(self, pool: WorkerPool | None) -> None:
        """Take every group in flight, oldest first."""
        while pool is not None and len(pool):
            self._take(pool)

    def _take(self, pool: WorkerPool) -> None:
        """Hand the oldest group in flight to the case writer."""
        records, read = pool.next_result()
        self.progress.file(records[0]["path"])
        for record, returned in zip(records, read.records, strict=True):
            record.update(returned)
        hand_over(read, self.writer)
        self.progress.advance(sum(record["bytes"] or 0 for record in records))
        if read.bundle_limit is not None:
            raise ExpansionLimitError(read.bundle_limit, path=records[-1]["path"], scope="bundle")
        self.bundle.budget.add_decoded(read.decoded, records[-1]["path"])

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
            "out_of_range": 0,
            "ts_min": None,
            "ts_max": None,
            "year_from": None,
            "detail": member.detail,
        }
        self._ids.setdefault(member.path, self._next_id)
        self._next_id += 1
        self._by_path.setdefault(member.path, record)
        self.writer.add_file(record)
        return record

    def _list_only(self, member: Member) -> None:
        record = self._new_record(member, member.status)
        if member.status in ("refused", "unreadable"):
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
        if member.opener is None:  # pragma: no cover - "file" members always have one
            raise AssertionError(member.path)
        read_file(
            self._job(member),
            member.open,
            record,
            member.budget or self.bundle.budget,
            self.writer,
            self.progress,
        )


def _parallel(sizes: list[int], jobs: int) -> bool:
    """Whether worker processes read plain files of these sizes: one file is read by one
    process either way, and a small bundle costs more to start workers for than it saves."""
    return jobs >= 2 and len(sizes) >= 2 and sum(sizes) >= MIN_PARALLEL_BYTES


def _group_full(group: list[tuple[Member, dict[str, Any]]]) -> bool:
    return len(group) >= BATCH_FILES or sum(m.size for m, _ in group) >= BATCH_BYTES


def _mtime(value: float | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        return dt.datetime.fromtimestamp(int(value), tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _is_archive(name: str) -> bool:
    return archive_kind(name) is not None
