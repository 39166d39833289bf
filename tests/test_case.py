from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest

from analyzer import api
from analyzer.case.layout import CaseMeta
from analyzer.errors import CaseError, QueryError
from analyzer.ingest.pipeline import files, run
from analyzer.schema import CANONICAL_SCHEMA
from tests.conftest import EXAMPLE
from tests.helpers import read_table

Ingest = Callable[..., Path]


def _copy_example(tmp_path: Path) -> Path:
    bundle = tmp_path / "bundle"
    shutil.copytree(EXAMPLE, bundle)
    return bundle


def test_case_layout_and_metadata(ingest_case: Ingest) -> None:
    case = ingest_case(EXAMPLE)
    names = sorted(p.name for p in case.iterdir())
    assert names == [
        "case.json",
        "duplicates.parquet",
        "files.parquet",
        "hosts.parquet",
        "quarantine.parquet",
        "rows",
    ]
    meta = CaseMeta.model_validate_json((case / "case.json").read_text())
    files = read_table(case, "files")
    rows = read_table(case, "rows")
    assert meta.counts.rows == rows.height == files["rows"].sum()
    assert meta.counts.records == files["records"].sum()
    assert meta.counts.files == files.height == 8
    for part in (case / "rows").glob("*.parquet"):
        assert pq.read_schema(part).remove_metadata() == CANONICAL_SCHEMA
    assert meta.first_ts is not None and meta.last_ts is not None
    assert meta.first_ts.isoformat().startswith("2026-11-29T18:19:40")  # the first kubelet line
    assert all(len(sha) == 64 for sha in files["sha256"])


def test_row_files_use_dictionaries_and_statistics_where_they_serve(ingest_case: Ingest) -> None:
    """Repeated strings are dictionary-encoded, free text is not (a dictionary of messages
    only overflows), and nothing keeps statistics of free text; every column still reads
    back with its canonical type."""
    case = ingest_case(EXAMPLE)
    for part in (case / "rows").glob("*.parquet"):
        meta = pq.ParquetFile(part).metadata
        columns = {
            meta.schema.column(i).name: meta.row_group(0).column(i) for i in range(meta.num_columns)
        }
        assert "RLE_DICTIONARY" in columns["host"].encodings
        assert "RLE_DICTIONARY" not in columns["message"].encodings
        assert not columns["message"].is_stats_set
        assert columns["ts"].is_stats_set
        assert pq.read_table(part).schema.remove_metadata() == CANONICAL_SCHEMA


def test_duplicate_entries_are_dropped_and_listed(ingest_case: Ingest) -> None:
    case = ingest_case(EXAMPLE)
    duplicates = read_table(case, "duplicates")
    assert duplicates.height == 1
    (dup,) = duplicates.iter_rows(named=True)
    rows = read_table(case, "rows")
    kept = rows.filter(pl.col("row_id") == dup["kept_row_id"])
    assert kept["insert_id"].to_list() == [dup["insert_id"]]
    assert kept["line"].item() < dup["line"]
    assert rows.filter(pl.col("insert_id") == dup["insert_id"]).height == 1
    record = (
        read_table(case, "files").filter(pl.col("file_id") == dup["file_id"]).row(0, named=True)
    )
    assert record["duplicates"] == 1


def test_reingest_is_a_noop_until_the_bundle_changes(tmp_path: Path) -> None:
    bundle = _copy_example(tmp_path)
    out = tmp_path / "case"
    first = api.ingest([bundle], out)
    assert not first.reused
    again = api.ingest([bundle], out)
    assert again.reused and again.meta.created_at == first.meta.created_at
    some_file = next(bundle.rglob("*.log"))
    os.utime(some_file, (1, 1))
    touched = api.ingest([bundle], out)
    assert touched.reused, "same content, new mtime: the content hash decides"
    assert touched.meta.bundle.fingerprint != first.meta.bundle.fingerprint
    assert api.ingest([bundle], out).reused
    with some_file.open("a") as handle:
        handle.write("one more line\n")
    changed = api.ingest([bundle], out)
    assert not changed.reused
    assert changed.meta.counts.records == first.meta.counts.records + 1
    assert not api.ingest([bundle], out, force=True).reused
    assert not api.ingest([bundle], out, options=api.ReadOptions(tz="+08:00")).reused


def test_failed_ingest_leaves_the_old_case_and_no_debris(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = _copy_example(tmp_path)
    out = tmp_path / "case"
    api.ingest([bundle], out)
    before = (out / "case.json").read_text()
    real_write = files._write
    calls = {"n": 0}

    def exploding_write(*args: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        real_write(*args)

    monkeypatch.setattr(files, "_write", exploding_write)
    with pytest.raises(KeyboardInterrupt):
        api.ingest([bundle], out, force=True)
    assert (out / "case.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "case"]


def test_interrupted_first_ingest_leaves_no_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(self: run.IngestRun) -> None:
        raise RuntimeError("killed")

    monkeypatch.setattr(run.IngestRun, "run", boom)
    with pytest.raises(RuntimeError):
        api.ingest([EXAMPLE], tmp_path / "case")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(CaseError, match="no such case directory"):
        api.case_info(tmp_path / "case")


def test_stale_staging_directory_is_replaced(tmp_path: Path) -> None:
    stale = tmp_path / ".case.partial"
    (stale / "rows").mkdir(parents=True)
    (stale / "rows" / "part-000000-0000.parquet").write_bytes(b"junk")
    api.ingest([EXAMPLE], tmp_path / "case")
    assert not stale.exists()
    assert api.case_info(tmp_path / "case").meta.counts.rows > 0


def test_same_bundle_gives_identical_parquet(tmp_path: Path) -> None:
    a = api.ingest([EXAMPLE], tmp_path / "a").case
    b = api.ingest([EXAMPLE], tmp_path / "b").case
    for name in (
        "files.parquet",
        "quarantine.parquet",
        "duplicates.parquet",
        "rows/part-000000-0000.parquet",
    ):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    meta_a = json.loads((a / "case.json").read_text())
    meta_b = json.loads((b / "case.json").read_text())
    meta_a.pop("created_at")
    meta_b.pop("created_at")
    assert meta_a == meta_b


def test_open_case_errors(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match="no such case directory"):
        api.load_case(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CaseError, match="no case.json"):
        api.load_case(tmp_path / "empty")
    case = api.ingest([EXAMPLE], tmp_path / "case").case
    (case / "case.json").write_text("{not json")
    with pytest.raises(CaseError, match="case.json is not valid"):
        api.load_case(case)
    meta = api.ingest([EXAMPLE], tmp_path / "case2").meta
    (tmp_path / "case2" / "case.json").write_text(
        meta.model_copy(update={"format": "culprit-case/99"}).model_dump_json()
    )
    with pytest.raises(CaseError, match="not supported"):
        api.load_case(tmp_path / "case2")
    (tmp_path / "case2" / "case.json").write_text(meta.model_dump_json())
    (tmp_path / "case2" / "files.parquet").unlink()
    with pytest.raises(CaseError, match="files.parquet is missing"):
        api.load_case(tmp_path / "case2")


def test_query_and_info(ingest_case: Ingest) -> None:
    case = ingest_case(EXAMPLE)
    table = api.query(
        case,
        "SELECT host::VARCHAR AS host, count(*) AS n FROM rows WHERE host IS NOT NULL GROUP BY 1 ORDER BY 1",
    )
    assert table.num_rows == 4
    assert (
        sum(table.column("n").to_pylist()) == read_table(case, "rows")["host"].is_not_null().sum()
    )
    info = api.case_info(case)
    assert info.hosts == 4
    # The example holds container logs, node logs and events (kubelet), a Diagon daemon log
    # and a kubectl dump.
    assert {r["source"] for r in info.by_source} == {"cloud_logging", "diagon", "kubelet", "text"}
    assert info.unbalanced_files == []
    with pytest.raises(QueryError, match="nope"):
        api.query(case, "SELECT * FROM nope")


def test_year_from_the_rest_of_the_bundle(tmp_path: Path) -> None:
    """A klog file with no year anywhere, copied years later (mtime 2030): its year-less
    stamps are moved to the year of the bundle's dated rows (the example's 2026)."""
    bundle = _copy_example(tmp_path)
    klog = bundle / "nodes" / "kubelet.log"
    klog.write_text(
        'I1129 18:21:05.000001    2218 kubelet.go:2425] "no year here"\n  a continuation line\n'
    )
    os.utime(klog, (1906000000, 1906000000))  # 2030-05-26
    case = api.ingest([bundle], tmp_path / "case").case
    rows = read_table(case, "rows")
    files = read_table(case, "files")
    file_id = files.filter(pl.col("path") == "nodes/kubelet.log")["file_id"].item()
    moved = rows.filter(pl.col("file_id") == file_id)
    assert moved["ts"].dt.year().to_list() == [2026]
    assert moved["ts_quality"].cast(pl.String).to_list() == ["inferred_year"]
    assert files.filter(pl.col("file_id") == file_id)["year_from"].item() == "bundle"
    assert files.filter(pl.col("file_id") == file_id)["ts_min"].dt.year().item() == 2026
    # With --year the option wins and nothing is moved.
    pinned = api.ingest([bundle], tmp_path / "pinned", options=api.ReadOptions(year=2031)).case
    pinned_rows = read_table(pinned, "rows")
    pinned_files = read_table(pinned, "files")
    file_id = pinned_files.filter(pl.col("path") == "nodes/kubelet.log")["file_id"].item()
    assert pinned_rows.filter(pl.col("file_id") == file_id)["ts"].dt.year().to_list() == [2031]
