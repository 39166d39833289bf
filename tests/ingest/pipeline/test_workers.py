"""Reading files in worker processes gives the same case as reading them in one process."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from analyzer import api
from analyzer.bundle import BundleLimits
from analyzer.errors import ExpansionLimitError
from analyzer.ingest.pipeline import run
from fixtures.generate import generate
from fixtures.truth import BUNDLE_DIR
from tests.conftest import small
from tests.helpers import mixed_bundle

#: What a case holds besides case.json (which carries times and paths of the run).
_TABLES = ("files.parquet", "quarantine.parquet", "hosts.parquet", "duplicates.parquet")


@pytest.fixture
def always_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start workers however small the bundle (the decision is made in this process)."""
    monkeypatch.setattr(run, "MIN_PARALLEL_BYTES", 0)


def _same_case(serial: Path, parallel: Path) -> None:
    rows_a = pl.read_parquet(serial / "rows" / "*.parquet")
    rows_b = pl.read_parquet(parallel / "rows" / "*.parquet")
    assert rows_a.height > 0
    assert rows_a.equals(rows_b)
    for name in _TABLES:
        a, b = serial / name, parallel / name
        assert a.exists() == b.exists(), name
        if a.exists():
            assert pl.read_parquet(a).equals(pl.read_parquet(b)), name
    assert sorted(p.name for p in parallel.iterdir()) == sorted(p.name for p in serial.iterdir())
    # Row files too: each group of files is a unit of its own, whoever reads it.
    parts = sorted(p.name for p in (serial / "rows").iterdir())
    assert sorted(p.name for p in (parallel / "rows").iterdir()) == parts


@pytest.mark.usefixtures("always_parallel")
def test_generated_bundle_is_the_same_with_two_workers(tmp_path: Path) -> None:
    generate("host-crash-heartbeat", small(16, 3), tmp_path / "gen")
    bundle = tmp_path / "gen" / BUNDLE_DIR
    serial = api.ingest([bundle], tmp_path / "serial", jobs=1)
    parallel = api.ingest([bundle], tmp_path / "parallel", jobs=2)
    assert serial.meta.counts == parallel.meta.counts
    _same_case(serial.case, parallel.case)


@pytest.mark.usefixtures("always_parallel")
def test_archives_damage_and_quarantine_keep_bundle_order(tmp_path: Path) -> None:
    bundle = mixed_bundle(tmp_path)
    serial = api.ingest([bundle], tmp_path / "serial", jobs=1)
    parallel = api.ingest([bundle], tmp_path / "parallel", jobs=2)
    assert serial.meta.counts == parallel.meta.counts
    assert parallel.meta.counts.quarantined + parallel.meta.counts.repaired > 0
    _same_case(serial.case, parallel.case)


@pytest.mark.usefixtures("always_parallel")
def test_bundle_cap_stops_a_parallel_ingest(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    # Only decompressed bytes count against the cap.
    for index in range(4):
        (bundle / f"{index}.log.gz").write_bytes(
            gzip.compress(b"I1129 18:00:00.000000    1 main.go:1] line\n" * 20_000)
        )
    limits = BundleLimits(max_total_bytes=1 << 20)
    for jobs in (1, 2):
        with pytest.raises(ExpansionLimitError) as raised:
            api.ingest([bundle], tmp_path / f"case{jobs}", limits=limits, jobs=jobs)
        assert raised.value.scope == "bundle"
        assert not (tmp_path / f"case{jobs}").exists()
