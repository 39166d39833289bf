"""What a merge refuses, what it leaves alone, and the CLI around shards."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.cli import app
from analyzer.errors import CaseError, UsageError
from tests.conftest import SAMPLES
from tests.engine.conftest import same_case, sharded_case
from tests.helpers import mixed_bundle


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return mixed_bundle(tmp_path)


def _parts(bundle: Path, root: Path, count: int) -> list[Path]:
    parts = [root / f"ingest-{k}" for k in range(count)]
    for k, part in enumerate(parts):
        api.ingest_shard([bundle], part, f"{k}/{count}", jobs=1)
    return parts


def test_a_missing_shard_is_named(bundle: Path, tmp_path: Path) -> None:
    parts = _parts(bundle, tmp_path, 3)
    with pytest.raises(UsageError, match="shards 1 of 3 are missing"):
        api.merge([parts[0], parts[2]], tmp_path / "case")
    assert not (tmp_path / "case").exists()


def test_a_shard_given_twice_is_refused(bundle: Path, tmp_path: Path) -> None:
    parts = _parts(bundle, tmp_path, 2)
    with pytest.raises(UsageError, match="given twice"):
        api.merge([parts[0], parts[1], parts[0]], tmp_path / "case")


def test_parts_of_different_shard_counts_are_refused(bundle: Path, tmp_path: Path) -> None:
    two = _parts(bundle, tmp_path / "two", 2)
    three = _parts(bundle, tmp_path / "three", 3)
    with pytest.raises(UsageError, match="different shard counts"):
        api.merge([two[0], three[1], three[2]], tmp_path / "case")


def test_parts_of_another_bundle_are_refused(bundle: Path, tmp_path: Path) -> None:
    parts = _parts(bundle, tmp_path / "a", 2)
    (bundle / "z-late.log").write_text("E1129 18:00:09.000000    1 x.go:2] late\n")
    later = _parts(bundle, tmp_path / "b", 2)
    with pytest.raises(UsageError, match="the bundle differs"):
        api.merge([parts[0], later[1]], tmp_path / "case")


def test_parts_read_with_other_options_are_refused(bundle: Path, tmp_path: Path) -> None:
    api.ingest_shard([bundle], tmp_path / "p0", "0/2", jobs=1)
    api.ingest_shard(
        [bundle], tmp_path / "p1", "1/2", jobs=1, options=api.ReadOptions(tz="Asia/Shanghai")
    )
    with pytest.raises(UsageError, match="options differ"):
        api.merge([tmp_path / "p0", tmp_path / "p1"], tmp_path / "case")


def test_ingest_and_match_parts_do_not_mix(bundle: Path, tmp_path: Path) -> None:
    case = sharded_case(bundle, tmp_path / "run", 2)
    api.match_shard(case, "0/2")
    with pytest.raises(UsageError, match="ingest parts with match parts"):
        api.merge([tmp_path / "run" / "ingest-0", case / "parts" / "match-0-of-2"], case)


def test_a_directory_that_is_no_part_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(CaseError, match="no part.json"):
        api.merge([tmp_path / "empty"], tmp_path / "case")


def test_a_damaged_part_json_is_named(bundle: Path, tmp_path: Path) -> None:
    parts = _parts(bundle, tmp_path, 1)
    (parts[0] / "part.json").write_text('{"format": "culprit-part/1", "kind": ')
    with pytest.raises(CaseError, match="part.json is not valid"):
        api.merge(parts, tmp_path / "case")


def test_match_parts_of_another_ingest_are_refused(bundle: Path, tmp_path: Path) -> None:
    case = sharded_case(bundle, tmp_path / "run", 2)
    stale = [tmp_path / f"match-{k}" for k in range(2)]
    for k, part in enumerate(stale):
        assert api.match_shard(case, f"{k}/2", part).case_digest
    api.merge(_parts(bundle, tmp_path / "run", 2), case)  # the case is ingested again
    with pytest.raises(CaseError, match="another ingest"):
        api.merge(stale, case)


def test_match_parts_must_cover_every_row_file_once(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for name in ("a", "b", "c"):
        shutil.copy(SAMPLES / "kubelet" / "journal-short.txt", bundle / f"{name}.log")
    case = api.ingest([bundle], tmp_path / "case", jobs=1).case
    # A second row file, so that two shards each match one.
    rows = sorted((case / "rows").glob("*.parquet"))
    shutil.copy(rows[0], case / "rows" / "part-99999.parquet")
    for k in range(2):
        api.match_shard(case, f"{k}/2")
    (case / "rows" / "part-99999.parquet").unlink()
    with pytest.raises(CaseError, match="exactly once"):
        api.merge([case / "parts" / f"match-{k}-of-2" for k in range(2)], case)


def test_merge_leaves_the_parts_as_they_were_and_can_run_again(
    bundle: Path, tmp_path: Path
) -> None:
    shutil.copy(SAMPLES / "cloud_logging" / "sink_stderr.jsonl", bundle / "g-1.json")
    shutil.copy(SAMPLES / "cloud_logging" / "sink_stderr.jsonl", bundle / "h-2.json")
    parts = _parts(bundle, tmp_path, 3)

    def listing() -> dict[str, bytes]:
        return {
            str(p.relative_to(tmp_path)): p.read_bytes()
            for part in parts
            for p in sorted(part.rglob("*"))
            if p.is_file()
        }

    before = listing()
    first = api.merge(parts, tmp_path / "case-1")
    assert first.meta.counts.duplicates > 0  # so some row file was rewritten
    assert listing() == before
    api.merge(parts, tmp_path / "case-2")
    same_case(tmp_path / "case-1", tmp_path / "case-2")


def test_row_files_are_linked_not_copied(bundle: Path, tmp_path: Path) -> None:
    parts = _parts(bundle, tmp_path, 2)
    case = api.merge(parts, tmp_path / "case").case
    inodes = {p.stat().st_ino for part in parts for p in (part / "rows").glob("*.parquet")}
    linked = [p for p in (case / "rows").glob("*.parquet") if p.stat().st_ino in inodes]
    assert linked
    assert all(p.stat().st_nlink == 2 for p in linked)


# -- CLI -----------------------------------------------------------------------------------------


def test_cli_runs_shards_and_merges(bundle: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    for k in range(2):
        result = runner.invoke(
            app, ["ingest", str(bundle), "-o", str(tmp_path / f"p{k}"), "--shard", f"{k}/2", "-q"]
        )
        assert result.exit_code == 0, result.output
        assert f"shard {k}/2 read" in result.output
    case = tmp_path / "case"
    result = runner.invoke(
        app, ["merge", str(tmp_path / "p0"), str(tmp_path / "p1"), "-o", str(case)]
    )
    assert result.exit_code == 0, result.output
    assert "2 ingest parts merged" in result.output
    for k in range(2):
        result = runner.invoke(app, ["match", str(case), "--shard", f"{k}/2"])
        assert result.exit_code == 0, result.output
    parts = [str(case / "parts" / f"match-{k}-of-2") for k in range(2)]
    result = runner.invoke(app, ["merge", *parts, "-o", str(case)])
    assert result.exit_code == 0, result.output
    assert "2 match parts merged" in result.output
    meta = json.loads((case / "case.json").read_text())
    assert meta["counts"]["files"] == 8
    result = runner.invoke(app, ["analyze", str(case), "--json"])
    assert result.exit_code == 0, result.output


def test_cli_errors_are_one_line(bundle: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        app, ["ingest", str(bundle), "-o", str(tmp_path / "p"), "--shard", "2/2", "-q"]
    )
    assert result.exit_code != 0
    assert "culprit: error: shard 2/2" in result.output
    api.ingest_shard([bundle], tmp_path / "p0", "0/2", jobs=1)
    result = runner.invoke(app, ["merge", str(tmp_path / "p0"), "-o", str(tmp_path / "case")])
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [
        "culprit: error: shards 1 of 2 are missing; a merge needs all of them"
    ]
    result = runner.invoke(app, ["match", str(tmp_path / "p0"), "-o", str(tmp_path / "m")])
    assert result.exit_code != 0
    assert "-o/--out goes with --shard" in result.output
