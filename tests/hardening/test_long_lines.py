"""A single 200 MB line is cut (text) or quarantined (JSON) with a reason, and the ingest
never holds it whole: its peak memory grows by less than one copy of the line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import pytest

from analyzer import api
from benchmarks.measure import run_once

LINE_BYTES = 200 << 20
MIB = 1 << 20
_CULPRIT = (sys.executable, "-m", "analyzer")


def _peak_rss_mib(bundle: Path, case: Path) -> float:
    """Peak RSS of ``culprit ingest`` of ``bundle``, measured as the benchmarks measure it:
    through a tiny launcher process. (Linux keeps the peak of the parent's memory in a child
    forked straight from this test process, so measuring that child would count pytest.)"""
    command = [*_CULPRIT, "ingest", str(bundle), "-o", str(case), "--jobs", "1", "-q"]
    return run_once(command, case.with_name(case.name + ".log")).peak_rss_mib


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> float:
    root = tmp_path_factory.mktemp("small")
    (root / "b").mkdir()
    (root / "b" / "small.log").write_bytes(b"E1129 18:35:16.000000    1 a.cc:2] x\nlast\n")
    return _peak_rss_mib(root / "b", root / "case")


def test_a_200_mb_text_line_is_cut_with_a_reason(tmp_path: Path, baseline: float) -> None:
    bundle = tmp_path / "b"
    bundle.mkdir()
    head = b"E1129 18:35:16.000000    1 a.cc:2] "
    (bundle / "big.log").write_bytes(b"first\n" + head + b"x" * LINE_BYTES + b"\nlast\n")
    peak = _peak_rss_mib(bundle, tmp_path / "case")
    assert peak - baseline < LINE_BYTES / MIB, f"peak {peak:.0f} MiB, baseline {baseline:.0f}"
    rows = pl.read_parquet(tmp_path / "case" / "rows" / "*.parquet").sort("line")
    assert rows["line"].to_list() == [1, 2, 3]
    assert len(rows["message"][1]) <= api.ReadOptions().max_line_bytes
    issue = pl.read_parquet(tmp_path / "case" / "quarantine.parquet").row(0, named=True)
    assert issue["kind"] == "kept" and issue["line"] == 2
    assert f"{len(head) + LINE_BYTES:,} bytes" in issue["reason"]


def test_a_200_mb_json_line_is_quarantined_with_a_reason(tmp_path: Path, baseline: float) -> None:
    def entry(number: int, text: str = "hi") -> str:
        return json.dumps(
            {
                "insertId": str(number),
                "timestamp": f"2026-11-29T18:00:0{number}Z",
                "textPayload": text,
            }
        )

    bundle = tmp_path / "b"
    bundle.mkdir()
    (bundle / "s.jsonl").write_text(
        entry(1) + "\n" + entry(2, "y" * LINE_BYTES) + "\n" + entry(3) + "\n"
    )
    peak = _peak_rss_mib(bundle, tmp_path / "case")
    assert peak - baseline < LINE_BYTES / MIB, f"peak {peak:.0f} MiB, baseline {baseline:.0f}"
    assert pl.read_parquet(tmp_path / "case" / "rows" / "*.parquet")["line"].to_list() == [1, 3]
    issue = pl.read_parquet(tmp_path / "case" / "quarantine.parquet").row(0, named=True)
    assert issue["kind"] == "dropped" and issue["line"] == 2
    assert "longer than --max-line-bytes" in issue["reason"]
    assert len(issue["raw"]) < LINE_BYTES // 100  # a sample of the line, not the line
