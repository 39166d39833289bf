"""Read bundle files in worker processes, and hand their output back in bundle order.

Ingest is CPU-bound (JSON extraction, grammar regexes, folding) and one Python process keeps
about one core busy, so plain files on disk are read by a pool of worker processes, a group
of files per task (a large file alone, or a run of small ones). A worker runs exactly what the
serial path runs (:func:`analyzer.ingest.pipeline.files.read_files`) into a :class:`_GroupSink`:
rows go straight into the part files of the group's unit in the case's staging directory
(:mod:`analyzer.case.parts`, numbered in bundle order when the group is submitted), and the
small things (aliases, de-duplication keys, quarantine entries, the inventory records, the
parts written) come back with the result. The parent hands each group's result to the case
writer strictly in submission order, so a case is the same file for file whatever the number
of workers. (Workers used to spool their rows for the parent to write: at 1,024 hosts the
parent spent 19 s of a 65 s ingest writing them again, alone.)

Workers are spawned, not forked: the parent already runs polars' and DuckDB's thread pools,
which must not be copied into a child mid-flight.
"""

from __future__ import annotations

import ctypes
import errno
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, Final

import polars as pl
import pyarrow as pa

from analyzer.case.inputs import Issue
from analyzer.case.parts import Part, UnitWriter
from analyzer.errors import ExpansionLimitError
from analyzer.ingest.pipeline.files import FileJob, read_files
from analyzer.ingest.pipeline.progress import NullProgress
from analyzer.streams import ExpansionBudget

#: Groups of files read ahead of the oldest unfinished one, at most: results wait in bundle
#: order, so a long file at the head must not stop the other workers for lack of work.
READ_AHEAD_GROUPS: Final = 256
#: ...and at most this many bytes of them.
READ_AHEAD_BYTES: Final = 2 << 30
#: Below this many bytes of plain files, starting workers (about a second of imports each)
#: costs more than it saves.
MIN_PARALLEL_BYTES: Final = 32 << 20


def default_jobs() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class GroupRead:
    """One group of files read by a worker: everything the case writer needs, in order."""

    records: list[dict[str, Any]]
    parts: list[Part]
    keys: list[pl.DataFrame] = field(default_factory=list)
    aliases: list[pl.DataFrame] = field(default_factory=list)
    issues: list[tuple[int, str, list[Issue]]] = field(default_factory=list)
    decoded: int = 0
    #: Set when the bundle-wide expansion cap was crossed inside the worker.
    bundle_limit: str | None = None


class _GroupSink:
    """A sink that writes a group's rows into its unit's part files and keeps the rest for
    the parent."""

    def __init__(self, unit: UnitWriter) -> None:
        self.unit = unit
        self.keys: list[pl.DataFrame] = []
        self.aliases: list[pl.DataFrame] = []
        self.issues: list[tuple[int, str, list[Issue]]] = []

    def add_rows(self, table: pa.Table, dedup_keys: pl.DataFrame | None = None) -> None:
        self.unit.add(table)
        if dedup_keys is not None and dedup_keys.height:
            self.keys.append(dedup_keys)

    def add_aliases(self, found: pl.DataFrame) -> None:
        self.aliases.append(found)

    def add_issues(self, file_id: int, path: str, issues: Iterable[Issue]) -> None:
        listed = list(issues)
        if listed:
            self.issues.append((file_id, path, listed))


def _open_binary(path: Path) -> BinaryIO:
    return path.open("rb")


def _read_in_worker(
    items: list[tuple[FileJob, Path, dict[str, Any]]],
    caps: tuple[float, int, int | None],
    unit: UnitWriter,
) -> GroupRead:
    max_ratio, floor_bytes, max_total = caps
    budget = ExpansionBudget(
        max_ratio=max_ratio, floor_bytes=floor_bytes, max_total_bytes=max_total
    )
    sink = _GroupSink(unit)
    limit: str | None = None
    files = [(job, partial(_open_binary, path), record) for job, path, record in items]
    try:
        read_files(files, budget, sink, NullProgress())
    except ExpansionLimitError as exc:  # only the bundle-wide cap escapes read_files
        limit = exc.message
    except BaseException:
        unit.abandon()
        raise
    parts = unit.close()
    records = [record for _, _, record in items]
    return GroupRead(
        records, parts, sink.keys, sink.aliases, sink.issues, budget.total_decoded, limit
    )


_PR_SET_PDEATHSIG: Final = 1


def _die_with_parent(parent: int) -> None:
    """Have the kernel kill this worker when the ingest that started it dies (Linux): after a
    SIGKILL of the ingest, its workers would otherwise wait on their pipes forever."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the ingest died before the request took effect
        os._exit(1)


class WorkerPool:
    """Reads files in worker processes; results come back in submission order.

    Args:
        jobs: worker processes.
        rows_dir: where workers write row files (the case's staging directory's, so an
            aborted ingest removes them with it): named when it fills up.
    """

    def __init__(self, jobs: int, rows_dir: Path) -> None:
        self._dir = rows_dir
        self._pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )
        self._pending: deque[tuple[Future[GroupRead], int, list[dict[str, Any]]]] = deque()
        self._pending_bytes = 0

    def submit(
        self,
        items: list[tuple[FileJob, Path | None, dict[str, Any]]],
        budget: ExpansionBudget,
        unit: UnitWriter,
    ) -> None:
        """Read a group of plain files (job, where on disk, inventory record) in a worker,
        their rows into ``unit``."""
        caps = (budget.max_ratio, budget.floor_bytes, budget.max_total_bytes)
        on_disk = [(job, path, record) for job, path, record in items if path is not None]
        assert len(on_disk) == len(items), "only files on disk go to workers"
        future = self._pool.submit(_read_in_worker, on_disk, caps, unit)
        size = sum(int(record.get("bytes") or 0) for _, _, record in items)
        self._pending.append((future, size, [record for _, _, record in items]))
        self._pending_bytes += size

    def __len__(self) -> int:
        return len(self._pending)

    def full(self) -> bool:
        """Whether enough is read ahead: take the oldest result before submitting more."""
        return len(self._pending) >= READ_AHEAD_GROUPS or self._pending_bytes >= READ_AHEAD_BYTES

    def next_result(self) -> tuple[list[dict[str, Any]], GroupRead]:
        """The oldest submitted group's inventory records (as submitted) and result (waits)."""
        future, size, records = self._pending.popleft()
        self._pending_bytes -= size
        try:
            return records, future.result()
        except OSError as exc:
            # A worker writes nothing but row files: say so, for the message naming the
            # directory that filled up.
            if exc.errno in (errno.ENOSPC, errno.EDQUOT) and not exc.filename:
                exc.filename = str(self._dir)
            raise

    def close(self) -> None:
        for future, _, _ in self._pending:
            future.cancel()
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)


def hand_over(read: GroupRead, writer: Any) -> None:
    """Hand one group's result to the case writer."""
    for found in read.aliases:
        writer.add_aliases(found)
    writer.add_parts(read.parts)
    writer.add_dedup_keys(pl.concat(read.keys) if read.keys else None)
    for file_id, path, issues in read.issues:
        writer.add_issues(file_id, path, issues)
