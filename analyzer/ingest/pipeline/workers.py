"""Read bundle files in worker processes, and hand their output back in bundle order.

Ingest is CPU-bound (JSON extraction, grammar regexes, folding) and one Python process keeps
about one core busy, so plain files on disk are read by a pool of worker processes, a group
of files per task (a large file alone, or a run of small ones). A worker runs exactly what the
serial path runs (:func:`analyzer.ingest.pipeline.files.read_files`) into a :class:`_Spool`: rows
go to a zstd-compressed Arrow IPC stream in the case's staging directory (or in ``--scratch``),
and the small things (aliases, de-duplication keys, quarantine entries, the inventory records)
come back with the result.
The parent replays each group's spool into the case writer strictly in submission order, so
a case is the same row for row whatever the number of workers.

Workers are spawned, not forked: the parent already runs polars' and DuckDB's thread pools,
which must not be copied into a child mid-flight.
"""

from __future__ import annotations

import ctypes
import errno
import multiprocessing
import os
import shutil
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
from analyzer.errors import ExpansionLimitError
from analyzer.ingest.pipeline.files import FileJob, read_files
from analyzer.ingest.pipeline.progress import NullProgress
from analyzer.streams import ExpansionBudget

#: Groups of files read ahead of the oldest unfinished one, at most: results wait in bundle
#: order, so a long file at the head must not stop the other workers for lack of work.
READ_AHEAD_GROUPS: Final = 256
#: ...and at most this many bytes of them (their rows wait on disk until their turn).
READ_AHEAD_BYTES: Final = 2 << 30
#: Below this many bytes of plain files, starting workers (about a second of imports each)
#: costs more than it saves.
MIN_PARALLEL_BYTES: Final = 32 << 20
#: Spooled rows are compressed: uncompressed Arrow took as much scratch as the bundle itself
#: (1.1 to 1.8 times the bytes read), and zstd costs the workers less CPU than writing all of
#: that did (docs/reliability.md).
_SPOOL_OPTIONS: Final = pa.ipc.IpcWriteOptions(
    compression="zstd" if pa.Codec.is_available("zstd") else None
)
#: Spool bytes per byte of plain file read, at most: measured peaks were 0.05 (Cloud Logging
#: JSON, a generated incident) to 0.21 (ModelArts worker logs) of the bundle, and a spool
#: holding a whole bundle is about its case, at most 0.26 (docs/reliability.md).
SPOOL_RATIO: Final = 0.3


def default_jobs() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class Spooled:
    """One file read by a worker: everything the case writer needs, in the order it came."""

    records: list[dict[str, Any]]
    rows: Path | None
    keys: list[pl.DataFrame] = field(default_factory=list)
    aliases: list[pl.DataFrame] = field(default_factory=list)
    issues: list[tuple[int, str, list[Issue]]] = field(default_factory=list)
    decoded: int = 0
    #: Set when the bundle-wide expansion cap was crossed inside the worker.
    bundle_limit: str | None = None


class _Spool:
    """A sink that keeps a file's output for the parent (rows on disk, the rest in memory)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer: pa.ipc.RecordBatchStreamWriter | None = None
        self.keys: list[pl.DataFrame] = []
        self.aliases: list[pl.DataFrame] = []
        self.issues: list[tuple[int, str, list[Issue]]] = []

    def add_rows(self, table: pa.Table, dedup_keys: pl.DataFrame | None = None) -> None:
        if self._writer is None:
            self._writer = pa.ipc.new_stream(self.path, table.schema, options=_SPOOL_OPTIONS)
        self._writer.write_table(table)
        if dedup_keys is not None and dedup_keys.height:
            self.keys.append(dedup_keys)

    def add_aliases(self, found: pl.DataFrame) -> None:
        self.aliases.append(found)

    def add_issues(self, file_id: int, path: str, issues: Iterable[Issue]) -> None:
        listed = list(issues)
        if listed:
            self.issues.append((file_id, path, listed))

    def close(self) -> Path | None:
        if self._writer is None:
            return None
        self._writer.close()
        return self.path


def _open_binary(path: Path) -> BinaryIO:
    return path.open("rb")


def _read_in_worker(
    items: list[tuple[FileJob, Path, dict[str, Any]]],
    caps: tuple[float, int, int | None],
    spool: Path,
) -> Spooled:
    max_ratio, floor_bytes, max_total = caps
    budget = ExpansionBudget(
        max_ratio=max_ratio, floor_bytes=floor_bytes, max_total_bytes=max_total
    )
    sink = _Spool(spool)
    limit: str | None = None
    files = [(job, partial(_open_binary, path), record) for job, path, record in items]
    try:
        read_files(files, budget, sink, NullProgress())
    except ExpansionLimitError as exc:  # only the bundle-wide cap escapes read_files
        limit = exc.message
    rows = sink.close()
    records = [record for _, _, record in items]
    return Spooled(records, rows, sink.keys, sink.aliases, sink.issues, budget.total_decoded, limit)


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
        spool_dir: where workers put rows until the parent takes them (inside the case's
            staging directory, so an aborted ingest removes them with it).
    """

    def __init__(self, jobs: int, spool_dir: Path) -> None:
        self._dir = spool_dir
        spool_dir.mkdir(parents=True, exist_ok=True)
        self._pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )
        self._pending: deque[tuple[Future[Spooled], int, list[dict[str, Any]]]] = deque()
        self._pending_bytes = 0
        self._count = 0

    def submit(
        self, items: list[tuple[FileJob, Path | None, dict[str, Any]]], budget: ExpansionBudget
    ) -> None:
        """Read a group of plain files (job, where on disk, inventory record) in a worker."""
        caps = (budget.max_ratio, budget.floor_bytes, budget.max_total_bytes)
        spool = self._dir / f"{self._count:08d}.arrow"
        self._count += 1
        on_disk = [(job, path, record) for job, path, record in items if path is not None]
        assert len(on_disk) == len(items), "only files on disk go to workers"
        future = self._pool.submit(_read_in_worker, on_disk, caps, spool)
        size = sum(int(record.get("bytes") or 0) for _, _, record in items)
        self._pending.append((future, size, [record for _, _, record in items]))
        self._pending_bytes += size

    def __len__(self) -> int:
        return len(self._pending)

    def full(self) -> bool:
        """Whether enough is read ahead: take the oldest result before submitting more."""
        return len(self._pending) >= READ_AHEAD_GROUPS or self._pending_bytes >= READ_AHEAD_BYTES

    def next_result(self) -> tuple[list[dict[str, Any]], Spooled]:
        """The oldest submitted group's inventory records (as submitted) and result (waits)."""
        future, size, records = self._pending.popleft()
        self._pending_bytes -= size
        try:
            return records, future.result()
        except OSError as exc:
            # A worker writes nothing but its spool: say so, for the message naming the
            # directory that filled up.
            if exc.errno in (errno.ENOSPC, errno.EDQUOT) and not exc.filename:
                exc.filename = str(self._dir)
            raise

    def close(self) -> None:
        for future, _, _ in self._pending:
            future.cancel()
        self._pending.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._dir, ignore_errors=True)


def replay(spooled: Spooled, writer: Any) -> None:
    """Hand one spooled file to the case writer, then delete its spool."""
    for found in spooled.aliases:
        writer.add_aliases(found)
    keys = pl.concat(spooled.keys) if spooled.keys else None
    if spooled.rows is not None:
        # Read into memory (not mapped): the writer keeps the tables after the spool is gone.
        with pa.OSFile(str(spooled.rows)) as source:
            # A stream, not the IPC file format: batches may replace dictionaries.
            for index, batch in enumerate(pa.ipc.open_stream(source)):
                writer.add_rows(pa.Table.from_batches([batch]), keys if index == 0 else None)
        spooled.rows.unlink()
    for file_id, path, issues in spooled.issues:
        writer.add_issues(file_id, path, issues)
