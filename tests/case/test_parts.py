"""Row files are written unit by unit: rolled at a row count, numbered in bundle order, each
knowing the files its rows came from, and read back in the order they were added."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from analyzer.case.parts import UnitWriter, part_path
from analyzer.case.writer import CaseWriter
from analyzer.schema import conform


def _rows(file_id: int, count: int, start: int = 0) -> pa.Table:
    return conform(
        pl.DataFrame(
            {
                "file_id": [file_id] * count,
                "row_id": [(file_id << 32) + start + k for k in range(count)],
                "line": list(range(start + 1, start + count + 1)),
                "offset": [0] * count,
                "source": ["test"] * count,
                "reader": ["text"] * count,
                "message": [f"file {file_id} line {start + k + 1}" for k in range(count)],
            }
        )
    )


def test_a_unit_rolls_its_parts_and_knows_their_files(tmp_path: Path) -> None:
    (tmp_path / "rows").mkdir()
    unit = UnitWriter(tmp_path, 7, part_rows=5, group_rows=2)
    for table in (_rows(1, 3), _rows(2, 3), _rows(3, 4)):
        unit.add(table)
    unit.add(_rows(4, 0))

    parts = unit.close()

    assert [p.path for p in parts] == [part_path(tmp_path, 7, 0), part_path(tmp_path, 7, 1)]
    assert [p.path.name for p in parts] == ["part-000007-0000.parquet", "part-000007-0001.parquet"]
    # A part is rolled once it holds part_rows: the table that crosses it stays whole.
    assert [sorted(p.file_ids) for p in parts] == [[1, 2], [3]]
    assert [pq.ParquetFile(p.path).metadata.num_rows for p in parts] == [6, 4]
    # Buffered rows are written once they reach group_rows, in groups of at most that many.
    groups = pq.ParquetFile(parts[0].path).metadata
    assert [groups.row_group(k).num_rows for k in range(groups.num_row_groups)] == [2, 1, 2, 1]


def test_a_unit_without_rows_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "rows").mkdir()
    unit = UnitWriter(tmp_path, 0)
    unit.add(_rows(1, 0))
    assert unit.close() == []
    assert list((tmp_path / "rows").iterdir()) == []


def test_units_keep_bundle_order_whoever_writes_them(tmp_path: Path) -> None:
    writer = CaseWriter(tmp_path / "case", part_rows=4)
    writer.add_rows(_rows(0, 2))  # a member read here: a unit opens by itself
    worker = writer.new_unit()  # a group given to a worker ends it
    writer.start_unit()  # a group read here, after it
    writer.add_rows(_rows(2, 4))
    writer.add_rows(_rows(2, 1, start=4))  # the part holds part_rows: a second one
    writer.end_unit()
    worker.add(_rows(1, 3))  # the worker finishes later
    writer.add_parts(worker.close())
    writer.new_unit()  # a group that had no rows: its number is used, no file
    writer.add_rows(_rows(3, 1))
    writer.end_unit()

    names = sorted(p.name for p in writer.rows_dir.iterdir())
    assert names == [
        "part-000000-0000.parquet",
        "part-000001-0000.parquet",
        "part-000002-0000.parquet",
        "part-000002-0001.parquet",
        "part-000004-0000.parquet",
    ]
    read = pl.read_parquet(writer.rows_dir / "*.parquet")
    assert read["file_id"].to_list() == [0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3]
    assert read["line"].to_list() == [1, 2, 1, 2, 3, 1, 2, 3, 4, 5, 1]
    writer.abort()
