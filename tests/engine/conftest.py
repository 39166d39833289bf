"""Helpers of the engine tests: a bundle with every kind of member, sharded ingests, and the
comparison of two cases."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from analyzer import api

#: What a case holds besides case.json (which carries the time of the run).
TABLES = ("files", "quarantine", "hosts", "duplicates")


def sharded_case(bundle: Path, root: Path, count: int) -> Path:
    """Ingest ``bundle`` as ``count`` shards under ``root`` and merge them into root/case."""
    parts = [root / f"ingest-{k}" for k in range(count)]
    for k, part in enumerate(parts):
        api.ingest_shard([bundle], part, f"{k}/{count}", jobs=1)
    api.merge(parts, root / "case")
    return root / "case"


def same_case(expected: Path, got: Path) -> None:
    """The two cases hold the same rows (in row_id order) and the same tables."""
    rows_a = pl.read_parquet(expected / "rows" / "*.parquet").sort("row_id")
    rows_b = pl.read_parquet(got / "rows" / "*.parquet").sort("row_id")
    assert rows_a.height > 0
    assert rows_a.equals(rows_b)
    for name in TABLES:
        a = pl.read_parquet(expected / f"{name}.parquet")
        b = pl.read_parquet(got / f"{name}.parquet")
        assert a.equals(b), name
