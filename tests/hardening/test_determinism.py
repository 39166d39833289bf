"""The same bundle gives byte-identical output: every file of the case (row parts, files,
quarantine, duplicates, hosts, matches) and the reports, across runs and across ``--jobs 1``
and ``--jobs 2`` (with the worker pool forced on however small the bundle).

The only difference allowed is ``created_at`` in ``case.json``, the time of the ingest; it
is compared with that one field removed. Nothing else needs excluding: the Parquet footers
hold no time or host name (pyarrow writes ``created_by`` with its version only), each group of
files is written to part files of its own by whichever process reads it, with row groups cut
at the same rows (the writer counts rows, bytes and record batches), and dictionaries are
built in row order.

The bundle is generated (64 hosts over 30 minutes: about 80,000 rows in more than one row
group) with a copy of the example bundle (Cloud Logging entries, one of them duplicated)
and a mixed folder (archive, truncated gzip, invalid UTF-8, a binary file) beside it, so
every table of the case has rows.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from analyzer import api
from fixtures.generate import generate
from fixtures.options import Options
from fixtures.truth import BUNDLE_DIR
from tests.conftest import EXAMPLE
from tests.helpers import force_workers, mixed_bundle, read_table

#: Every file an analysis writes (part files are checked separately: at least one).
EXPECTED = {
    "case/case.json",
    "case/duplicates.parquet",
    "case/files.parquet",
    "case/hosts.parquet",
    "case/matches.parquet",
    "case/quarantine.parquet",
    "case/template_hosts.parquet",
    "case/template_rows.parquet",
    "case/templates.parquet",
    "findings.json",
    "report.md",
    "timeline.svg",
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three analyses of one bundle: twice with jobs=1, once with two workers."""
    root = tmp_path_factory.mktemp("determinism")
    generate("host-crash-heartbeat", Options(hosts=64, seed=1, minutes=30.0, rate=60.0), root)
    bundle = root / BUNDLE_DIR
    shutil.copytree(EXAMPLE, bundle / "example")
    (root / "src").mkdir()
    mixed_bundle(root / "src").rename(bundle / "mixed")
    runs: dict[str, Path] = {}
    with pytest.MonkeyPatch.context() as patch:
        pools = force_workers(patch)
        for name, jobs in (("first", 1), ("second", 1), ("workers", 2)):
            result = api.analyze([bundle], root / name, api.AnalyzeSettings(jobs=jobs))
            assert result.ingested and result.matched
            runs[name] = root / name
    assert pools == [2]
    return runs


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _without_created_at(data: bytes) -> dict[str, object]:
    meta: dict[str, object] = json.loads(data)
    assert meta.pop("created_at")
    return meta


def test_every_table_is_there_and_not_trivial(outputs: dict[str, Path]) -> None:
    out = outputs["first"]
    names = set(_files(out))
    parts = {name for name in names if name.startswith("case/rows/")}
    assert names - parts == EXPECTED
    assert parts and all(re.fullmatch(r"case/rows/part-\d{6}-\d{4}\.parquet", p) for p in parts)
    assert max(pq.ParquetFile(out / name).num_row_groups for name in parts) > 1
    case = out / "case"
    for table in ("rows", "files", "quarantine", "duplicates", "hosts", "matches"):
        assert read_table(case, table).height > 0, table
    assert json.loads((out / "findings.json").read_text())["attempts"]


@pytest.mark.parametrize("other", ["second", "workers"])
def test_the_output_is_byte_identical(outputs: dict[str, Path], other: str) -> None:
    want, got = _files(outputs["first"]), _files(outputs[other])
    assert sorted(got) == sorted(want)
    differ = [name for name in want if name != "case/case.json" and got[name] != want[name]]
    assert differ == []
    assert got["case/case.json"] != want["case/case.json"], "created_at should differ"
    assert _without_created_at(got["case/case.json"]) == _without_created_at(want["case/case.json"])
