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
from analyzer.case.parts import (
    COMPRESSION,
    PART_ROWS,
    ROW_FILE,
    ROW_GROUP_ROWS,
    Part,
    UnitWriter,
    part_path,
)
from analyzer.errors import CaseError
from analyzer.hosts import (
    EVIDENCE_COLUMNS,
    HOST_COLUMNS,
    HostMap,
    canonical_host,
    evidence,
    resolve,
)
from analyzer.schema import CANONICAL_SCHEMA, plausible_ts

_ISSUE_BATCH: Final = 65_536


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
        #: Row files written so far, in bundle order.
        self._parts: list[Part] = []
        self._units = 0
        #: The unit rows added here go to (a group read here, or a run of members).
        self._unit: UnitWriter | None = None
        self._keys: list[pl.DataFrame] = []
        self._aliases: list[pl.DataFrame] = []
        self._issues: list[dict[str, Any]] = []
        self._issue_writer: pq.ParquetWriter | None = None
        self.files: list[dict[str, Any]] = []

    # -- rows ---------------------------------------------------------------------------------

    @property
    def rows_dir(self) -> Path:
        """Where row files go (workers write theirs there too)."""
        return self.staging / ROWS_DIR

    def new_unit(self) -> UnitWriter:
        """A writer for the next unit of rows (:mod:`analyzer.case.parts`), in bundle order:
        for a worker to fill (its parts come back through :meth:`add_parts`). The unit open
        here, if any, ends first."""
        return UnitWriter(self.staging, self._next_unit(), self._part_rows, self._group_rows)

    def _next_unit(self) -> int:
        self.end_unit()
        self._units += 1
        return self._units - 1

    def start_unit(self) -> None:
        """Start a unit that rows added here go to, until :meth:`end_unit`."""
        self._unit = self.new_unit()

    def end_unit(self) -> None:
        """Finish the unit open here, if any."""
        if self._unit is not None:
            self._parts.extend(self._unit.close())
            self._unit = None

    def add_parts(self, parts: Iterable[Part]) -> None:
        """Take the row files a worker wrote for a unit from :meth:`new_unit`."""
        self._parts.extend(parts)

    def add_rows(self, table: pa.Table, dedup_keys: pl.DataFrame | None = None) -> None:
        """Append canonical rows (to a unit of their own when none is open);
        ``dedup_keys`` (row_id, a, b) marks de-duplicable rows."""
        if table.num_rows:
            if self._unit is None:
                self.start_unit()
            assert self._unit is not None
            self._unit.add(table)
        self.add_dedup_keys(dedup_keys)

    def add_dedup_keys(self, dedup_keys: pl.DataFrame | None) -> None:
        """De-duplication keys (row_id, a, b) of rows already written."""
        if dedup_keys is not None and dedup_keys.height:
            self._keys.append(dedup_keys)

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
                self.staging / QUARANTINE_FILE, QUARANTINE_SCHEMA, **COMPRESSION
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
        self.end_unit()
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
        self.end_unit()
        for source in sorted((part / ROWS_DIR).glob("*.parquet")):
            target = part_path(self.staging, self._next_unit(), 0)
            _link_or_copy(source, target, link)
            ids = pl.read_parquet(target, columns=["file_id"])["file_id"].unique()
            self._parts.append(Part(target, frozenset(ids.to_list())))
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
                self.staging / QUARANTINE_FILE, QUARANTINE_SCHEMA, **COMPRESSION
            )
        self._issue_writer.write_table(table.cast(QUARANTINE_SCHEMA))

    # -- commit -------------------------------------------------------------------------------

    def commit(self, build_meta: Callable[[list[dict[str, Any]]], CaseMeta]) -> CaseMeta:
        """De-duplicate, write inventory and metadata, and move the case into place.

        ``build_meta`` receives the final inventory records (after de-duplication).
        """
        self.end_unit()
        self._finalize_rows()
        self._write_issues_and_files()
        meta = build_meta(self.files)
        (self.staging / META_FILE).write_text(meta.model_dump_json(indent=2) + "\n")
        self._swap_into_place()
        return meta

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
        pq.write_table(files, self.staging / FILES_FILE, **COMPRESSION)

    def abort(self) -> None:
        """Throw away everything written so far."""
        if self._unit is not None:
            self._unit.abandon()
        if self._issue_writer is not None:
            with contextlib.suppress(Exception):
                self._issue_writer.close()
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
        parts = [part.path for part in self._parts]
        host_map = self._host_map(parts, dropped)
        shifts = self._year_shifts(parts)
        ranges = self._time_ranges(parts, dropped, shifts)
        pq.write_table(host_map.table.to_arrow(), self.staging / HOSTS_FILE, **COMPRESSION)
        removed: list[pl.DataFrame] = []
        drop_files = set((dropped["row_id"] // (1 << 32)).unique().to_list())
        rewrite = set(shifts) | set(ranges["file_id"].to_list())
        moved = _parts_with_moved_hosts(parts, host_map)
        for index, path in enumerate(parts):
            drop_here = dropped if self._parts[index].file_ids & drop_files else dropped.clear()
            retimed = bool(self._parts[index].file_ids & rewrite)
            if drop_here.height or str(path) in moved or retimed:
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
        # Only rows whose first key part repeats can be duplicates: found by sorting that one
        # column, then the window below runs on those few. (A window over every key cost
        # 17 s of a 4,096-host ingest's commit: 20 M Cloud Logging entries, 7 s of CPU alone;
        # this, about 1 s.)
        first = keys.get_column("a").sort()
        repeated = first.filter(first == first.shift(1)).unique()
        keys = keys.filter(pl.col("a").is_in(repeated.implode()))
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
            pq.ParquetWriter(temporary, CANONICAL_SCHEMA, **ROW_FILE) as sink,
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


def _parts_with_moved_hosts(parts: list[Path], host_map: HostMap) -> set[str]:
    """The part files holding a row whose host the map changes. Judged on the distinct
    combinations of the columns that decide a row's host (a handful per host), not on every
    row: reading and resolving each part's rows cost more than rewriting the ones that move."""
    if not parts:
        return set()
    combinations = (
        pl.scan_parquet(parts, include_file_paths="part")
        .select("part", *HOST_COLUMNS)
        .unique()
        .collect()
    )
    canonical = canonical_host(combinations, host_map)
    changed = canonical.ne_missing(combinations["host"].cast(pl.String))
    return set(combinations.filter(changed)["part"].to_list())


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
