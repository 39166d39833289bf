"""A collected bundle's record (``culprit-collect/``) is listed in the case's inventory and
never read as logs, in a folder and in an archive: a failed command's ``429 Too Many
Requests`` or ``RESOURCE_EXHAUSTED`` would otherwise become evidence."""

from __future__ import annotations

import tarfile
from pathlib import Path

import polars as pl

from analyzer import api
from tests.helpers import check_accounting, read_table

STDERR = (
    "ERROR: (gcloud.logging.read) RESOURCE_EXHAUSTED: Quota exceeded for quota metric\n"
    "HTTP 429 Too Many Requests\n"
    "E1129 18:35:15.123456    1234 coordination_service_agent.cc:332] Polled an error\n"
)


def _bundle(root: Path) -> Path:
    bundle = root / "bundle"
    (bundle / "culprit-collect" / "stderr").mkdir(parents=True)
    (bundle / "culprit-collect" / "stderr" / "logging-nodes.txt").write_text(STDERR)
    (bundle / "culprit-collect" / "plan.json").write_text('{"format": "culprit-collect/1"}\n')
    (bundle / "worker.log").write_text("I1129 18:00:00.000000    1 train.py:1] step 1\n")
    return bundle


def _check(case: Path, prefix: str) -> None:
    files = check_accounting(case)
    record = files.filter(pl.col("path").str.contains("culprit-collect/"))
    assert sorted(record["path"]) == [
        f"{prefix}culprit-collect/plan.json",
        f"{prefix}culprit-collect/stderr/logging-nodes.txt",
    ]
    assert set(record["status"]) == {"collection"}
    assert record["records"].sum() == 0 and record["rows"].sum() == 0
    rows = read_table(case, "rows")
    assert rows.height == 1 and not rows["message"].str.contains("Quota|Polled").any()


def test_the_record_is_listed_not_read_in_a_folder(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    api.ingest([bundle], tmp_path / "case")
    _check(tmp_path / "case", "")
    info = api.case_info(tmp_path / "case")
    assert info.files_needing_attention == []  # the record is not a file needing attention


def test_the_record_is_listed_not_read_in_an_archive(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    archive = tmp_path / "bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(bundle, arcname="bundle")
    api.ingest([archive], tmp_path / "case")
    _check(tmp_path / "case", "bundle/")
