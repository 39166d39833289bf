"""``--engine ray`` in local mode gives the findings of the local engine.

Ray is an optional extra (``pip install 'culprit[ray]'``; CI installs it). Without it these
tests skip, and only these.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.bundle import BundleLimits
from analyzer.cli import app
from analyzer.errors import ExpansionLimitError
from fixtures.generate import generate
from fixtures.truth import BUNDLE_DIR
from tests.conftest import small
from tests.engine.conftest import same_case

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'culprit[ray]')")


def _bundle(root: Path, scenario: str) -> Path:
    generate(scenario, small(8, 4), root / "gen")
    return root / "gen" / BUNDLE_DIR


def test_cli_starts_and_stops_its_own_local_ray(tmp_path: Path) -> None:
    """Run first in this file: no Ray instance is up yet."""
    assert not ray.is_initialized()
    bundle = _bundle(tmp_path, "host-crash-heartbeat")
    local = api.analyze([bundle], tmp_path / "local", api.AnalyzeSettings(jobs=1))
    result = CliRunner().invoke(
        app,
        ["analyze", str(bundle), "-o", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2"],
    )
    assert result.exit_code == 0, result.output
    assert not ray.is_initialized()
    assert (tmp_path / "ray" / "findings.json").read_bytes() == local.findings_path.read_bytes()
    assert not list(tmp_path.glob("ray/.*parts*")), "the scratch parts are removed"


def test_a_matched_case_starts_no_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing to ingest or match: the diagnosis runs without a Ray start-up."""
    bundle = _bundle(tmp_path, "oom-killed")
    done = api.analyze([bundle], tmp_path / "out", api.AnalyzeSettings(jobs=1))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("Ray was started")

    monkeypatch.setattr(ray, "init", refuse)
    again = api.analyze([done.case], tmp_path / "again", api.AnalyzeSettings(engine="ray"))
    assert not again.matched
    assert again.findings_path.read_bytes() == done.findings_path.read_bytes()


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """One local Ray instance with 2 CPUs for the rest of the file (start-up takes seconds)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize(
    ("scenario", "as_url"),
    [("preemption", False), ("hccl-timeout-modelarts", False), ("oom-killed", True)],
)
def test_ray_engine_gives_the_same_findings(
    local_ray: Any, tmp_path: Path, scenario: str, as_url: bool
) -> None:
    """Two scenarios from local paths, one by URL (each task fetches its own files)."""
    bundle = _bundle(tmp_path, scenario)
    local = api.analyze([bundle], tmp_path / "local", api.AnalyzeSettings(jobs=1))
    given = bundle.as_uri() if as_url else str(bundle)
    remote = api.analyze([given], tmp_path / "ray", api.AnalyzeSettings(engine="ray", shards=3))
    assert remote.ingested and remote.matched
    assert remote.findings_path.read_bytes() == local.findings_path.read_bytes()
    same_case(local.case, remote.case)


def test_a_task_error_is_raised_as_itself(local_ray: Any, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "a.log").write_text("I1129 18:00:00.000000    1 main.go:1] hello\n")
    line = b"I1129 18:00:00.000000    1 main.go:1] hello\n"
    (bundle / "big.log.gz").write_bytes(gzip.compress(line * 30_000))
    with pytest.raises(ExpansionLimitError, match=r"big\.log\.gz: bundle decompresses to more"):
        api.ingest(
            [bundle],
            tmp_path / "case",
            limits=BundleLimits(max_total_bytes=256 << 10),
            engine="ray",
            shards=2,
        )
    assert not (tmp_path / "case").exists()


class _Recorded:
    """A progress that records what it is told."""

    def __init__(self) -> None:
        self.starts: list[int | None] = []
        self.files: list[str] = []
        self.done: list[int] = []

    def start(self, total: int | None) -> None:
        self.starts.append(total)

    def file(self, path: str) -> None:
        self.files.append(path)

    def advance(self, stored_bytes: int) -> None:
        self.done.append((self.done[-1] if self.done else 0) + stored_bytes)


def test_ray_ingest_progress_advances_shard_by_shard(local_ray: Any, tmp_path: Path) -> None:
    """The bar advances once per finished shard, by that shard's bytes, up to every byte the
    local engine reports for the same bundle."""
    bundle = _bundle(tmp_path, "oom-killed")
    local, remote = _Recorded(), _Recorded()
    api.ingest([bundle], tmp_path / "local", progress=local)
    api.ingest([bundle], tmp_path / "ray", engine="ray", shards=3, progress=remote)
    assert remote.starts == [None]
    assert remote.files == [f"shard {n}/3 done" for n in (1, 2, 3)]
    assert len(remote.done) == 3 and remote.done == sorted(remote.done)
    assert remote.done[0] > 0
    assert remote.done[-1] == local.done[-1] > 0
