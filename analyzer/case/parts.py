"""Row files of a case: ``rows/part-<unit>-<k>.parquet``.

An ingest writes its rows in *units*: the rows of one group of plain files (read by a worker
process or by the ingesting process alike), or of a run of members the ingesting process reads
itself (archive members). Units are numbered in bundle order, and each writes its own part
files, rolled every :data:`PART_ROWS` rows, so the files of a case are the same whichever
process wrote them and however many there were; sorted by name they hold the rows in bundle
order. A worker writes its unit's files straight into the case's staging directory: its rows
never travel through the ingesting process.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from analyzer.case.layout import ROWS_DIR
from analyzer.schema import CANONICAL_SCHEMA

ROW_GROUP_ROWS: Final = 131_072
#: A row group is also closed at this many bytes of buffered Arrow data: Cloud Logging rows
#: are kilobytes each, and 128k of them would hold hundreds of MB in memory.
ROW_GROUP_BYTES: Final = 48 << 20
#: ...and at this many buffered record batches: each costs about 25 kB of Arrow structures
#: beyond its data, and a bundle of 100,000 one-line files (a batch each) held 3 GB before its
#: first row group.
ROW_GROUP_BATCHES: Final = 1024
PART_ROWS: Final = 1_000_000
COMPRESSION: Final = {"compression": "zstd", "compression_level": 1}
#: Free text has no use for column statistics (nothing prunes on it).
_FREE_TEXT: Final = ("message", "extra")
#: How row files are written. Dictionary pages only for the repeated strings: on free text
#: (messages, extra) Parquet builds a dictionary until it overflows and falls back, which
#: cost 40 % of the writing time and left larger files (text rows: 324 -> 191 ms CPU and
#: 11 -> 7 MiB per 500,000 rows). Columns read back alike: the Arrow schema is stored.
ROW_FILE: Final = {
    **COMPRESSION,
    "use_dictionary": [f.name for f in CANONICAL_SCHEMA if pa.types.is_dictionary(f.type)],
    "write_statistics": [name for name in CANONICAL_SCHEMA.names if name not in _FREE_TEXT],
}


def part_path(case_dir: Path, unit: int, index: int) -> Path:
    """Where part ``index`` of ``unit`` goes inside a case (or its staging) directory."""
    return case_dir / ROWS_DIR / f"part-{unit:06d}-{index:04d}.parquet"


@dataclass(frozen=True)
class Part:
    """One row file written, and the files (``file_id``) its rows came from."""

    path: Path
    file_ids: frozenset[int]


@dataclass
class UnitWriter:
    """Writes the rows of one unit into its part files.

    Args:
        case_dir: the case's (staging) directory.
        unit: the unit's number, in bundle order.
        part_rows: rows per part file.
        group_rows: rows per Parquet row group.
    """

    case_dir: Path
    unit: int
    part_rows: int = PART_ROWS
    group_rows: int = ROW_GROUP_ROWS
    parts: list[Part] = field(default_factory=list, init=False)
    _writer: pq.ParquetWriter | None = field(default=None, init=False, repr=False)
    _path: Path | None = field(default=None, init=False, repr=False)
    _file_ids: set[int] = field(default_factory=set, init=False, repr=False)
    _in_part: int = field(default=0, init=False, repr=False)
    _buffer: list[pa.Table] = field(default_factory=list, init=False, repr=False)
    _buffered: int = field(default=0, init=False, repr=False)
    _buffered_bytes: int = field(default=0, init=False, repr=False)
    _buffered_batches: int = field(default=0, init=False, repr=False)

    def add(self, table: pa.Table) -> None:
        """Append canonical rows (no-op for none)."""
        if table.num_rows == 0:
            return
        if self._writer is None or self._in_part >= self.part_rows:
            self._roll()
        self._buffer.append(table)
        self._buffered += table.num_rows
        self._buffered_bytes += table.nbytes
        self._buffered_batches += table.column(0).num_chunks
        self._in_part += table.num_rows
        self._file_ids.update(pc.unique(table.column("file_id")).to_pylist())
        if (
            self._buffered >= self.group_rows
            or self._buffered_bytes >= ROW_GROUP_BYTES
            or self._buffered_batches >= ROW_GROUP_BATCHES
        ):
            self._flush()

    def close(self) -> list[Part]:
        """Write what is buffered, close the part being written; every part of the unit."""
        self._flush()
        self._close_writer()
        return self.parts

    def abandon(self) -> None:
        """Close the part being written without finishing it (the ingest is thrown away)."""
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
        self._writer = None
        self._buffer = []

    def _flush(self) -> None:
        if not self._buffer or self._writer is None:
            return
        merged = pa.concat_tables(self._buffer).combine_chunks()
        self._writer.write_table(merged, row_group_size=self.group_rows)
        self._buffer, self._buffered, self._buffered_bytes, self._buffered_batches = [], 0, 0, 0

    def _roll(self) -> None:
        self._flush()
        self._close_writer()
        self._path = part_path(self.case_dir, self.unit, len(self.parts))
        self._writer = pq.ParquetWriter(self._path, CANONICAL_SCHEMA, **ROW_FILE)
        self._in_part = 0

    def _close_writer(self) -> None:
        if self._writer is None or self._path is None:
            return
        self._writer.close()
        self.parts.append(Part(self._path, frozenset(self._file_ids)))
        self._writer, self._path, self._file_ids = None, None, set()
