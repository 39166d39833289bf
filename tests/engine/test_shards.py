"""Shard specs, the deal of files to shards, and 4 shards + merge = one local run."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from analyzer import api
from analyzer.bundle import Bundle
from analyzer.engine.shards import Shard, deal, ownership
from analyzer.errors import UsageError
from fixtures.generate import generate
from fixtures.truth import BUNDLE_DIR
from tests.conftest import SAMPLES, small
from tests.engine.conftest import same_case, sharded_case
from tests.helpers import mixed_bundle

# -- the shard spec ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "index", "count"), [("0/1", 0, 1), ("3/4", 3, 4), (" 2/16 ", 2, 16)]
)
def test_shard_spec_parses(spec: str, index: int, count: int) -> None:
    shard = Shard.parse(spec)
    assert (shard.index, shard.count) == (index, count)
    assert str(shard) == f"{index}/{count}"


@pytest.mark.parametrize("spec", ["4/4", "1/0", "-1/4", "1", "a/b", "1/4/2", ""])
def test_bad_shard_spec_is_a_usage_error(spec: str) -> None:
    with pytest.raises(UsageError, match="k/N|0 <= k < N"):
        Shard.parse(spec)


# -- the deal ------------------------------------------------------------------------------------


def test_deal_gives_the_largest_files_to_different_shards() -> None:
    sizes = [("a", 10), ("b", 100), ("c", 90), ("d", 5), ("e", 80), ("f", 1)]
    owner = deal(sizes, 3)
    assert owner == {"b": 0, "c": 1, "e": 2, "a": 2, "d": 1, "f": 2}
    loads = [sum(size for name, size in sizes if owner[name] == k) for k in range(3)]
    assert max(loads) - min(loads) <= 10


def test_deal_does_not_depend_on_listing_order() -> None:
    sizes = [(f"f{i}", (i * 37) % 11) for i in range(40)]
    assert deal(sizes, 4) == deal(list(reversed(sizes)), 4)


def test_every_member_belongs_to_exactly_one_shard(tmp_path: Path) -> None:
    bundle = Bundle([mixed_bundle(tmp_path)])
    members = list(bundle.members())
    owners = [ownership(bundle, Shard(k, 3)) for k in range(3)]
    for file_id, member in enumerate(members[:-1]):  # the last is the archive's "damaged" note
        assert sum(owns(member, file_id) for owns in owners) == 1, member.path


# -- 4 shards + merge ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scenario", ["host-crash-heartbeat", "hccl-timeout-modelarts", "restart-loop"]
)
def test_four_shards_and_merge_give_the_same_findings(tmp_path: Path, scenario: str) -> None:
    generate(scenario, small(8, 2), tmp_path / "gen")
    bundle = tmp_path / "gen" / BUNDLE_DIR
    local = api.analyze([bundle], tmp_path / "local", api.AnalyzeSettings(jobs=1))
    case = sharded_case(bundle, tmp_path / "sharded", 4)
    for k in range(4):
        api.match_shard(case, f"{k}/4")
    api.merge([case / "parts" / f"match-{k}-of-4" for k in range(4)], case)
    sharded = api.analyze([case], tmp_path / "sharded-report")
    assert not sharded.matched  # the merged matches are taken as the case's own
    assert sharded.findings_path.read_bytes() == local.findings_path.read_bytes()
    same_case(local.case, case)
    merged = pl.read_parquet(case / "matches.parquet")
    assert merged.equals(pl.read_parquet(local.case / "matches.parquet"))
    assert merged.height > 0


def test_shards_of_a_bundle_with_archives_duplicates_and_bad_files(tmp_path: Path) -> None:
    """Members inside an archive, Cloud Logging entries exported twice into two files that
    land in different shards, a truncated gzip, invalid UTF-8 and a binary file: the merged
    case is row for row the one-process case (the earliest copy of a duplicate is kept)."""
    bundle = mixed_bundle(tmp_path)
    shutil.copy(SAMPLES / "cloud_logging" / "sink_stderr.jsonl", bundle / "g-export-1.json")
    shutil.copy(SAMPLES / "cloud_logging" / "sink_stderr.jsonl", bundle / "h-export-2.json")
    broken = (SAMPLES / "cloud_logging" / "kubelet_node.jsonl").read_bytes()
    (bundle / "i-cut.json").write_bytes(broken + b'{"insertId": "cut-off", "textPay\n')
    local = api.ingest([bundle], tmp_path / "local", jobs=1)
    assert local.meta.counts.duplicates > 0 and local.meta.counts.quarantined > 0
    assert local.meta.counts.files_refused > 0 and local.meta.counts.files_partial > 0
    for count in (2, 3, 5):
        case = sharded_case(bundle, tmp_path / f"sharded-{count}", count)
        same_case(local.case, case)
        merged = api.load_case(case).meta
        assert merged.counts == local.meta.counts
        assert merged.bundle == local.meta.bundle
        assert merged.first_ts == local.meta.first_ts


def test_more_shards_than_files_leaves_some_parts_empty(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    shutil.copy(SAMPLES / "kubelet" / "journal-short.txt", bundle / "node.log")
    local = api.ingest([bundle], tmp_path / "local", jobs=1)
    case = sharded_case(bundle, tmp_path / "sharded", 3)
    same_case(local.case, case)


def test_a_shard_decodes_only_its_own_files(tmp_path: Path) -> None:
    generate("host-crash-heartbeat", small(8, 2), tmp_path / "gen")
    bundle = tmp_path / "gen" / BUNDLE_DIR
    parts = [api.ingest_shard([bundle], tmp_path / f"part-{k}", f"{k}/2", jobs=1) for k in range(2)]
    assert [p.shard for p in parts] == ["0/2", "1/2"]
    files = [pl.read_parquet(tmp_path / f"part-{k}" / "files.parquet") for k in range(2)]
    ids = [set(f["file_id"].to_list()) for f in files]
    assert ids[0] and ids[1] and not ids[0] & ids[1]
    assert len(ids[0] | ids[1]) == api.ingest([bundle], tmp_path / "all", jobs=1).meta.counts.files
