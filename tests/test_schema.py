from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from analyzer.schema import CANONICAL_SCHEMA, COLUMNS, conform, normalize_host, normalize_severity


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("I", "INFO"),
        ("W", "WARNING"),
        ("E", "ERROR"),
        ("F", "CRITICAL"),
        ("warn", "WARNING"),
        (" Error ", "ERROR"),
        ("FATAL", "CRITICAL"),
        ("EXCEPTION", "ERROR"),
        ("TRACE", "DEBUG"),
        ("EVENT", "INFO"),
        ("3", "ERROR"),
        ("6", "INFO"),
        ("0", "EMERGENCY"),
        ("500", "ERROR"),
        ("NOTICE", "NOTICE"),
        ("bogus", None),
        (None, None),
    ],
)
def test_severity_normalization(raw: str | None, expected: str | None) -> None:
    assert normalize_severity(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("GKE-Node-1", "gke-node-1"),
        ("gke-node-1.c.my-proj.internal", "gke-node-1"),
        ("node.internal.", "node"),
        ("  10.0.0.7 ", "10.0.0.7"),
        ("", None),
        (None, None),
    ],
)
def test_host_normalization(raw: str | None, expected: str | None) -> None:
    assert normalize_host(raw) == expected


def test_conform_fills_and_types() -> None:
    frame = pl.DataFrame(
        {
            "row_id": [1, 2],
            "file_id": [0, 0],
            "line": [1, 2],
            "offset": [0, 10],
            "source": ["text", "text"],
            "reader": ["text.plain", "text.absl"],
            "ts": [dt.datetime(2026, 1, 1, tzinfo=dt.UTC), None],
            "message": ["a", None],
            "not_a_column": [1, 2],
        }
    )
    table = conform(frame)
    assert table.schema == CANONICAL_SCHEMA
    assert table.column_names == list(COLUMNS)
    assert table.column("ts_quality").to_pylist() == ["exact", "missing"]
    assert table.column("severity").to_pylist() == ["DEFAULT", "DEFAULT"]
    assert table.column("message").to_pylist() == ["a", ""]
    assert table.column("host").to_pylist() == [None, None]
