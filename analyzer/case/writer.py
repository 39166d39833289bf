"""Write a case directory atomically.

Everything goes to a hidden temporary directory next to the target; ``commit`` removes
duplicates, writes the inventory and ``case.json`` and only then renames the directory into
place. An ingest that is killed half-way therefore never leaves something that looks like a
complete case (a stale temporary directory is cleaned up by the next run).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from analyzer import defaults
from analyzer.case import stamps
from analyzer.case.inputs import Issue
from analyzer.case.layout import (
    DUPLICATES_FILE,
    DUPLICATES_SCHEMA,
    FILES_FILE,
    FILES_SCHEMA,
    HOSTS_FILE,
    META_FILE,
    PART_ALIASES_FILE,
    PART_KEYS_FILE,
    PART_META_FILE,
    QUARANTINE_FILE,
    QUARANTINE_SCHEMA,
    ROWS_DIR,
    CaseMeta,
)
from analyzer.errors import CaseError
from analyzer.hosts import EVIDENCE_COLUMNS, HostMap, canonical_host, evidence, resolve
from analyzer.schema import CANONICAL_SCHEMA, plausible_ts

ROW_GROUP_ROWS: Final = 131_072
#: A row group is also closed at this many bytes of buffered Arrow data: Cloud Logging rows
#: are kilobytes each, and 128k of them would hold hundreds of MB in memory.
ROW_GROUP_BYTES: Final = 48 << 20
#: ...and at this many buffered record batches: each costs about 25 kB of Arrow structures
#: beyond its data, and a bundle of 100,000 one-line files (a batch each) held 3 GB before its
#: first row group. Batches, not tables: a worker's rows come back one batch per table.
ROW_GROUP_BATCHES: Final = 1024
PART_ROWS: Final = 1_000_000
_ISSUE_BATCH: Final = 65_536
_COMPRESSION: Final = {"compression": "zstd", "compression_level": 1}
#: Free text has no use for column statistics (nothing prunes on it).
_FREE_TEXT: Final = ("message", "extra")
#: How row files are written. Dictionary pages only for the repeated strings: on free text
#: (messages, extra) Parquet builds a dictionary until it overflows and falls back, which
#: cost 40 % of the writing time and left larger files (text rows: 324 -> 191 ms CPU and
#: 11 -> 7 MiB per 500,000 rows). Columns read back alike: the Arrow schema is stored.
_ROW_FILE: Final = {
    **_COMPRESSION,
    "use_dictionary": [f.name for f in CANONICAL_SCHEMA if pa.types.is_dictionary(f.type)],
    "write_statistics": [name for name in CANONICAL_SCHEMA.names if name not in _FREE_TEXT],
}


class CaseWriter:
    """Accumulates rows, issues and the inventory of one ingest, then commits the case.

    Args:
        target: the case directory to create (replaced on commit if it exists).
        part_rows: rows per ``rows/part-*.parquet`` file.
        row_group_rows: rows per Parquet row group.
    """

    def __init__(
        self, target: Path, *, part_rows: int = PART_ROWS, row_group_rows: int = ROW_GROUP_ROWS
    ) -> None:
        self.target = target
        self.staging = target.parent / f".{target.name}.partial"
        self._part_rows = part_rows
        self._group_rows = row_group_rows
        check_replaceable(target)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if self.staging.exists():
                shutil.rmtree(self.staging)  # left over by an interrupted run
            (self.staging / ROWS_DIR).mkdir(parents=True)
        except OSError as exc:
            raise CaseError(f"cannot create the case directory: {exc}", path=str(target)) from None
        self._part_index = -1
        self._part_writer: pq.ParquetWriter | None = None
        self._part_count = 0
        self._part_files: list[set[int]] = []
        self._buffer: list[pa.Table] = []
        self._buffered = 0
        self._buffered_bytes = 0
        self._buffered_batches = 0
        self._keys: list[pl.DataFrame] = []
        self._aliases: list[pl.DataFrame] = []
        self._issues: list[dict[str, Any]] = []
        self._issue_writer: pq.ParquetWriter | None = None
        self.files: list[dict[str, Any]] = []

    # -- rows ---------------------------------------------------------------------------------

    def add_rows(self, table: pa.Table, dedup_keys: pl.DataFrame | None = None) -> None:
        """Append canonical rows; ``dedup_keys`` (row_id, a, b) marks de-duplicable rows."""
        if table.num_rows == 0:
            return
        if self._part_writer is None or self._part_count >= self._part_rows:
            self._roll_part()
        self._buffer.append(table)
        self._buffered += table.num_rows
        self._buffered_bytes += table.nbytes
        self._buffered_batches += table.column(0).num_chunks
        self._part_count += table.num_rows
        file_ids = pc.unique(table.column("file_id")).to_pylist()
        self._part_files[self._part_index].update(file_ids)
        if dedup_keys is not None and dedup_keys.height:
            self._keys.append(dedup_keys)
        if (
            self._buffered >= self._group_rows
            or self._buffered_bytes >= ROW_GROUP_BYTES
            or self._buffered_batches >= ROW_GROUP_BATCHES
        ):
            self._flush_rows()

    def _flush_rows(self) -> None:
        if not self._buffer or self._part_writer is None:
            return
        merged = pa.concat_tables(self._buffer).combine_chunks()
        self._part_writer.write_table(merged, row_group_size=self._group_rows)
        self._buffer, self._buffered, self._buffered_bytes, self._buffered_batches = [], 0, 0, 0

    def _roll_part(self) -> None:
        self._flush_rows()
        if self._part_writer is not None:
            self._part_writer.close()
        self._part_index += 1
        self._part_count = 0
        self._part_files.append(set())
        self._part_writer = pq.ParquetWriter(
            self._part_path(self.staging, self._part_index), CANONICAL_SCHEMA, **_ROW_FILE
        )

    @staticmethod
    def _part_path(root: Path, index: int) -> Path:
        return root / ROWS_DIR / f"part-{index:05d}.parquet"

    def add_aliases(self, found: pl.DataFrame) -> None:
        """Host aliases readers found inside rows (row_id, file_id, line, host, alias, kind)."""
        self._aliases.append(found)

    # -- issues and inventory -----------------------------------------------------------------

    def add_issues(self, file_id: int, path: str, issues: Iterable[Issue]) -> None:
        """Record quarantine entries of one file."""
        for issue in issues:
            self._issues.append(
                {
                    "file_id": file_id,
                    "path": path,
                    "line": issue.line,
                    "offset": issue.offset,
                    "kind": issue.kind,
                    "reason": issue.reason,
                    "raw": issue.raw,
                }
            )
        if len(self._issues) >= _ISSUE_BATCH:
            self._flush_issues()

    def _flush_issues(self) -> None:
        if not self._issues:
            return
        if self._issue_writer is None:
            self._issue_writer = pq.ParquetWriter(
                self.staging / QUARANTINE_FILE, QUARANTINE_SCHEMA, **_COMPRESSION
            )
        table = pa.Table.from_pylist(self._issues, schema=QUARANTINE_SCHEMA)
        self._issue_writer.write_table(table)
        self._issues = []

    def add_file(self, record: dict[str, Any]) -> None:
        """Add (or, for a path already listed, update) an inventory record."""
        self.files.append(record)

    # -- shards -------------------------------------------------------------------------------

    def commit_part(self, meta_json: str) -> None:
        """Write what one shard read, before the bundle-wide steps, and move it into place.

        The rows stay as read (duplicates in, hosts as named); the de-duplication keys and
        host aliases the bundle-wide steps need are kept beside them for the merge
        (:meth:`adopt_part`), which then commits the case as one ingest would.
        """
        self._close_part()
        self._write_issues_and_files()
        if self._keys:
            pl.concat(self._keys).write_parquet(self.staging / PART_KEYS_FILE)
        if self._aliases:
            pl.concat(self._aliases).write_parquet(self.staging / PART_ALIASES_FILE)
        (self.staging / PART_META_FILE).write_text(meta_json)
        self._swap_into_place()

    def adopt_part(self, part: Path, link: bool = True) -> None:
        """Take over the rows, keys, aliases and inventory of one shard's output.

        Row files are hard-linked when the part lies on the same file system (``link``),
        else copied; the part itself is left as it was. Quarantine entries are not taken
        here: the merge orders them across parts first (:meth:`add_issue_table`).
        """
        self._close_part()
        for source in sorted((part / ROWS_DIR).glob("*.parquet")):
            self._part_index = len(self._part_files)
            target = self._part_path(self.staging, self._part_index)
            _link_or_copy(source, target, link)
            ids = pl.read_parquet(target, columns=["file_id"])["file_id"].unique()
            self._part_files.append(set(ids.to_list()))
        if (part / PART_KEYS_FILE).is_file():
            self._keys.append(pl.read_parquet(part / PART_KEYS_FILE))
        if (part / PART_ALIASES_FILE).is_file():
            self._aliases.append(pl.read_parquet(part / PART_ALIASES_FILE))
        files = pl.read_parquet(part / FILES_FILE).with_columns(
            pl.col("ts_min", "ts_max").cast(pl.Int64)
        )
        self.files.extend(files.to_arrow().cast(_RECORD_SCHEMA).to_pylist())

    def add_issue_table(self, table: pa.Table) -> None:
        """Append quarantine entries that are already a table (of QUARANTINE_SCHEMA)."""
        self._flush_issues()
        if self._issue_writer is None:
            self._issue_writer = pq.ParquetWriter(
                self.staging / QUARANTINE_FILE, QUARANTINE_SCHEMA, **_COMPRESSION
            )
        self._issue_writer.write_table(table.cast(QUARANTINE_SCHEMA))

    # -- commit -------------------------------------------------------------------------------

    def commit(self, build_meta: Callable[[list[dict[str, Any]]], CaseMeta]) -> CaseMeta:
        """De-duplicate, write inventory and metadata, and move the case into place.

        ``build_meta`` receives the final inventory records (after de-duplication).
        """
        self._close_part()
        self._finalize_rows()
        self._write_issues_and_files()
        meta = build_meta(self.files)
        (self.staging / META_FILE).write_text(meta.model_dump_json(indent=2) + "\n")
        self._swap_into_place()
        return meta

    def _close_part(self) -> None:
        """Write the buffered rows and close the part file being written."""
        self._flush_rows()
        if self._part_writer is not None:
            self._part_writer.close()
            self._part_writer = None

    def _write_issues_and_files(self) -> None:
        """Finish quarantine.parquet (empty when nothing was quarantined) and write the
        inventory as it stands."""
        self._flush_issues()
        if self._issue_writer is None:
            pq.write_table(QUARANTINE_SCHEMA.empty_table(), self.staging / QUARANTINE_FILE)
        else:
            self._issue_writer.close()
            self._issue_writer = None
        files = pa.Table.from_pylist(self.files, schema=FILES_SCHEMA)
        pq.write_table(files, self.staging / FILES_FILE, **_COMPRESSION)

    def abort(self) -> None:
        """Throw away everything written so far."""
        for writer in (self._part_writer, self._issue_writer):
            if writer is not None:
                with contextlib.suppress(Exception):
                    writer.close()
        shutil.rmtree(self.staging, ignore_errors=True)

    def _swap_into_place(self) -> None:
        """Move the staging directory to the target. An existing case is exchanged with it
        in one step where the system can (Linux), so the target holds a complete case, old or
        new, at every moment; the old one is then removed under the staging name, which the
        next run cleans up if this one is killed first."""
        exists = self.target.is_dir() and not self.target.is_symlink()
        if exists and _exchange(self.staging, self.target):
            shutil.rmtree(self.staging, ignore_errors=True)
            return
        # Elsewhere: the old case is moved aside first, a moment without a case.
        old = self.target.parent / f".{self.target.name}.old-{os.getpid()}"
        if self.target.exists():
            self.target.replace(old)
        self.staging.replace(self.target)
        shutil.rmtree(old, ignore_errors=True)

    def _finalize_rows(self) -> None:
        """Drop duplicates, resolve host aliases, and rewrite the part files that change.

        Duplicates: rows whose de-duplication key was seen before go to duplicates.parquet.
        Hosts: aliases are resolved from small columns of every row plus what readers found
        in row content; every row's ``host`` becomes the canonical id (hosts.parquet keeps
        the map with the row that proved each alias). A part file is rewritten only when one
        of its rows is dropped or gets another host.
        """
        dropped = self._duplicate_rows()
        parts = [self._part_path(self.staging, i) for i in range(len(self._part_files))]
        host_map = self._host_map(parts, dropped)
        shifts = self._year_shifts(parts)
        ranges = self._time_ranges(parts, dropped, shifts)
        pq.write_table(host_map.table.to_arrow(), self.staging / HOSTS_FILE, **_COMPRESSION)
        removed: list[pl.DataFrame] = []
        drop_files = set((dropped["row_id"] // (1 << 32)).unique().to_list())
        rewrite = set(shifts) | set(ranges["file_id"].to_list())
        for index, path in enumerate(parts):
            drop_here = dropped if self._part_files[index] & drop_files else dropped.clear()
            small = pl.read_parquet(path, columns=list(EVIDENCE_COLUMNS))
            canonical = canonical_host(small, host_map)
            moved = bool((canonical.ne_missing(small["host"].cast(pl.String))).any())
            retimed = bool(self._part_files[index] & rewrite)
            if drop_here.height or moved or retimed:
                removed.append(self._rewrite_part(path, drop_here, host_map, shifts, ranges))
        table = (
            pl.concat(removed)
            if removed
            else pl.DataFrame(schema=dict(zip(DUPLICATES_SCHEMA.names, _DUP_TYPES, strict=True)))
        )
        pq.write_table(table.to_arrow().cast(DUPLICATES_SCHEMA), self.staging / DUPLICATES_FILE)
        if table.height:
            per_file = dict(table.group_by("file_id").len().iter_rows())
            for record in self.files:
                count = per_file.get(record["file_id"], 0)
                if count:
                    record["duplicates"] = count
                    record["rows"] -= count

    def _duplicate_rows(self) -> pl.DataFrame:
        """row_id of every duplicate and the row_id of the row kept in its place."""
        if not self._keys:
            return pl.DataFrame(schema={"row_id": pl.Int64, "kept_row_id": pl.Int64})
        keys = pl.concat(self._keys)
        self._keys = []
        # The earliest row is kept: the first read by one process, and the same row when
        # shards read the bundle in pieces.
        keys = keys.with_columns(pl.col("row_id").min().over("a", "b").alias("kept_row_id"))
        return keys.filter(pl.col("row_id") != pl.col("kept_row_id")).select(
            "row_id", "kept_row_id"
        )

    def _host_map(self, parts: list[Path], dropped: pl.DataFrame) -> HostMap:
        named = pl.concat(self._aliases) if self._aliases else None
        self._aliases = []
        if not parts:
            return resolve(pl.DataFrame())
        rows = pl.scan_parquet(parts).select(list(EVIDENCE_COLUMNS))
        if dropped.height:
            rows = rows.join(dropped.lazy().select("row_id"), on="row_id", how="anti")
        return resolve(evidence(rows, named).collect())

    def _year_shifts(self, parts: list[Path]) -> dict[int, int]:
        """Years to add to the year-less stamps of files whose year only came from their
        modification time, so they land nearest the rest of the bundle (file_id -> years).

        A file copied or extracted long after the incident has a misleading mtime; the
        bundle's own dated rows (Cloud Logging, journald, full dates) are better evidence.
        """
        weak = [r["file_id"] for r in self.files if r.get("year_from") == "mtime"]
        if not weak or not parts:
            return {}
        scan = pl.scan_parquet(parts).select("file_id", "ts", "ts_quality")
        dated = scan.filter(
            pl.col("ts_quality").is_in(["exact", "inferred_tz"])
            & ~pl.col("file_id").is_in(weak)
            & plausible_ts(pl.col("ts"))
        )
        anchor = dated.select(pl.col("ts").median()).collect().item()
        if anchor is None:
            return {}
        yearless = (
            scan.filter(pl.col("file_id").is_in(weak) & (pl.col("ts_quality") == "inferred_year"))
            .group_by("file_id")
            .agg(pl.col("ts").median())
            .collect()
        )
        shifts: dict[int, int] = {}
        for file_id, median in yearless.iter_rows():
            years = round((anchor - median).total_seconds() / (365.2425 * 86400))
            if years:
                shifts[int(file_id)] = years
        for record in self.files:
            years = shifts.get(record["file_id"], 0)
            if years:
                record["year_from"] = "bundle"
                for key in ("ts_min", "ts_max"):
                    if record[key] is not None:
                        moved = pl.Series([record[key]]).cast(pl.Datetime("ns", "UTC"))
                        record[key] = moved.dt.offset_by(f"{years}y").cast(pl.Int64).item()
        return shifts

    def _time_ranges(
        self, parts: list[Path], dropped: pl.DataFrame, shifts: dict[int, int]
    ) -> pl.DataFrame:
        """The files with rows whose time the case cannot place (:mod:`analyzer.case.stamps`),
        their accepted range and count; their inventory records take both."""
        if not parts:
            return pl.DataFrame(schema=stamps.RANGES_SCHEMA)
        rows = pl.scan_parquet(parts).select("row_id", "file_id", "ts", "ts_quality")
        if dropped.height:
            rows = rows.join(dropped.lazy().select("row_id"), on="row_id", how="anti")
        timed = rows.select(pl.col("file_id"), stamps.shifted_ts(shifts).alias("ts"))
        ranges = stamps.file_ranges(timed, defaults.TS_FILE_OUTLIER_DAYS)
        found = {int(r[0]): r[1:] for r in ranges.iter_rows()}
        for record in self.files:
            if record["file_id"] in found:
                record["ts_min"], record["ts_max"], record["out_of_range"] = found[
                    record["file_id"]
                ]
        return ranges

    def _rewrite_part(
        self,
        path: Path,
        dropped: pl.DataFrame,
        host_map: HostMap,
        shifts: dict[int, int],
        ranges: pl.DataFrame,
    ) -> pl.DataFrame:
        """Rewrite one part without its duplicates, with canonical hosts and shifted years;
        the rows that were dropped come back (for duplicates.parquet).

        One row group at a time: a part of Cloud Logging rows holds gigabytes of ``extra``
        once decoded, and the whole part in memory set the peak of a large ingest.
        """
        temporary = path.with_suffix(".rewrite")
        gone_parts: list[pl.DataFrame] = []
        with (
            pq.ParquetFile(path) as source,
            pq.ParquetWriter(temporary, CANONICAL_SCHEMA, **_ROW_FILE) as sink,
        ):
            for group in range(source.num_row_groups):
                table = pl.from_arrow(source.read_row_group(group))
                assert isinstance(table, pl.DataFrame)
                kept = self._rewrite_rows(table, dropped, host_map, shifts, ranges)
                if kept.height:
                    sink.write_table(
                        kept.to_arrow().cast(CANONICAL_SCHEMA), row_group_size=self._group_rows
                    )
                gone_parts.append(
                    table.join(dropped, on="row_id", how="inner").select(
                        pl.col("file_id"),
                        pl.col("line"),
                        pl.col("offset"),
                        pl.col("insert_id"),
                        pl.col("kept_row_id"),
                    )
                )
        temporary.replace(path)
        return pl.concat(gone_parts)

    @staticmethod
    def _rewrite_rows(
        table: pl.DataFrame,
        dropped: pl.DataFrame,
        host_map: HostMap,
        shifts: dict[int, int],
        ranges: pl.DataFrame,
    ) -> pl.DataFrame:
        kept = table.join(dropped, on="row_id", how="anti")
        kept = kept.with_columns(
            canonical_host(kept, host_map).cast(pl.Categorical),
            stamps.shifted_ts(shifts).alias("ts"),
        )
        return stamps.mark(kept, ranges)


_DUP_TYPES: Final = (pl.Int32, pl.Int32, pl.Int64, pl.String, pl.Int64)
#: Inventory records as the ingest keeps them in memory: stamps as integer nanoseconds.
_RECORD_SCHEMA: Final = pa.schema(
    [pa.field(f.name, pa.int64()) if f.name in ("ts_min", "ts_max") else f for f in FILES_SCHEMA]
)


def check_replaceable(target: Path) -> None:
    """Refuse a target a new case may not take the place of.

    Raises:
        CaseError: ``target`` exists and is neither a case, a shard part nor an empty
            directory.
    """
    if target.exists() and not _replaceable(target):
        # A case replaces only a case (or part, or empty directory): `-o ~/work` must not
        # delete ~/work's files at commit.
        raise CaseError(
            "exists and is not a case directory; not replacing it (choose a new or empty "
            "directory)",
            path=str(target),
        )


def _replaceable(path: Path) -> bool:
    """Whether a new case may take the place of ``path``: an earlier case or shard part, or
    an empty directory."""
    if not path.is_dir():
        return False
    if (path / META_FILE).is_file() or (path / PART_META_FILE).is_file():
        return True
    return next(path.iterdir(), None) is None


_AT_FDCWD: Final = -100
_RENAME_EXCHANGE: Final = 2


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """Linux's renameat2(2) from the C library, or ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    function.restype = ctypes.c_int
    return function


def _exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths atomically (``RENAME_EXCHANGE``); ``False``, and nothing
    changed, where the system or the file system cannot."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    done = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    return done == 0


def _link_or_copy(source: Path, target: Path, link: bool) -> None:
    if link:
        try:
            os.link(source, target)
            return
        except OSError:
            pass  # another file system, or links not allowed: copy instead
    try:
        shutil.copyfile(source, target)
    except OSError as exc:
        raise CaseError(f"cannot take over {source.name}: {exc}", path=str(source)) from None
