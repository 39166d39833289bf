"""The scale-out benchmark's arithmetic and its RESULTS.md section. Nothing is timed."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.families import SCALEOUT
from benchmarks.report import markers
from benchmarks.scaleout import projection
from tests.benchmarks.test_report import MACHINE

STEPS: dict[str, Any] = {
    "shards": 4,
    "shard_bytes": [300e6, 300e6, 200e6, 200e6],
    "ingest_shard_s": [30.0, 30.0, 20.0, 20.0],
    "match_shard_s": [2.5, 2.5, 2.5, 2.5],
    "merge_ingest_s": 8.0,
    "merge_match_s": 1.0,
    "diagnose_s": 3.0,
    "ingest_parts_rows_bytes": 600e6,
    "ingest_parts_small_bytes": 12e6,
    "match_parts_bytes": 2e6,
}


def test_projection_splits_parallel_and_serial_work() -> None:
    # 1 GB over 110 core-seconds of shards: 9.09 MB per core-second.
    plan = projection(1_000_000_000, STEPS, gb=100.0, nodes=16, cores=8)
    assert plan["per_core_mb_s"] == pytest.approx(1000 / 110)
    assert plan["parallel_s"] == pytest.approx(100e9 / (1e9 / 110 * 128))
    assert plan["serial_s"] == pytest.approx(12.0 * 100)
    assert plan["total_s"] == pytest.approx(plan["parallel_s"] + plan["serial_s"])


def test_section_shows_every_run_and_the_projection() -> None:
    engines = {
        "local": {"median_s": 60.0, "min_s": 59.0, "max_s": 62.0, "peak_rss_mib": 900.0},
        "ray-1": {"median_s": 120.0, "min_s": 118.0, "max_s": 121.0, "peak_rss_mib": 1500.0},
        "ray-2": {"median_s": 75.0, "min_s": 74.0, "max_s": 80.0, "peak_rss_mib": 2500.0},
    }
    report = {
        "date": "2026-11-30",
        "command": "python -m benchmarks.scaleout",
        "runs": 3,
        "hosts": 1024,
        "minutes": 60.0,
        "machine": MACHINE,
        "bundle": {"bytes": 2_600_000_000, "files": 1046},
        "engines": engines,
        "steps": STEPS,
        "projection": projection(2_600_000_000, STEPS, gb=100.0, nodes=16, cores=8),
    }
    text = SCALEOUT.render(report, "benchmarks/results/x.json")
    begin, end = markers("scaleout")
    assert text.startswith(begin) and text.rstrip().endswith(end)
    assert "| `--engine ray --workers 1` | 120.0 (118.0–121.0) | 2.00× | 1,500 |" in text
    assert "| `--engine ray --workers 2` | 75.0 (74.0–80.0) | 1.25× | 2,500 |" in text
    assert "| `ingest --shard k/4 --jobs 1`, per shard | 30.0, 30.0, 20.0, 20.0 |" in text
    assert "100 GB on 16 nodes × 8 cores" in text
    assert "commit `0123456789ab`" in text
