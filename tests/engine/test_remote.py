"""Bundles named by URL, read through pyarrow's file systems (``file://`` here; ``gs://`` and
``s3://`` take the same path through ``pyarrow.fs``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer import api
from analyzer.bundle import BundleLimits
from analyzer.engine import remote
from analyzer.engine.shards import Shard, owned_files
from analyzer.errors import BundleError
from fixtures.generate import generate
from fixtures.truth import BUNDLE_DIR
from tests.conftest import small
from tests.engine.conftest import same_case, sharded_case
from tests.helpers import mixed_bundle


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("remote")
    generate("host-crash-heartbeat", small(8, 5), root / "gen")
    return root / "gen" / BUNDLE_DIR


def test_a_url_bundle_gives_the_findings_of_its_local_copy(scenario: Path, tmp_path: Path) -> None:
    local = api.analyze([scenario], tmp_path / "local", api.AnalyzeSettings(jobs=1))
    by_url = api.analyze([scenario.as_uri()], tmp_path / "url", api.AnalyzeSettings(jobs=1))
    assert by_url.findings_path.read_bytes() == local.findings_path.read_bytes()
    same_case(local.case, by_url.case)
    meta = api.load_case(by_url.case).meta
    assert [i.path for i in meta.bundle.inputs] == [scenario.as_uri()]
    assert meta.bundle.content_hash == api.load_case(local.case).meta.bundle.content_hash


def test_a_url_bundle_is_reused_when_unchanged(scenario: Path, tmp_path: Path) -> None:
    first = api.ingest([scenario.as_uri()], tmp_path / "case", jobs=1)
    again = api.ingest([scenario.as_uri()], tmp_path / "case", jobs=1)
    assert not first.reused and again.reused


def test_url_shards_download_only_their_own_plain_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = mixed_bundle(tmp_path)
    fetched: list[str] = []
    real = remote._download

    def spy(item: remote.RemoteInput, file: remote.RemoteFile, target: Path) -> None:
        fetched.append(file.relative)
        real(item, file, target)

    monkeypatch.setattr(remote, "_download", spy)
    local = api.ingest([bundle], tmp_path / "local", jobs=1)
    parts = []
    for k in range(3):
        fetched.clear()
        parts.append(tmp_path / f"part-{k}")
        api.ingest_shard([bundle.as_uri()], parts[-1], f"{k}/3", jobs=1)
        with remote.localize([str(bundle)], BundleLimits()) as prepared:
            mine = set(owned_files(prepared.bundle, Shard(k, 3)))
        assert set(fetched) == mine | {"b-more.tar"}, k
    api.merge(parts, tmp_path / "case")
    same_case(local.case, tmp_path / "case")


def test_several_inputs_mixing_urls_and_paths(tmp_path: Path) -> None:
    bundle = mixed_bundle(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "late.log").write_text("E1129 18:00:09.000000    1 x.go:2] late\n")
    local = api.ingest([bundle, other], tmp_path / "local", jobs=1)
    mixed = api.ingest([bundle.as_uri(), other], tmp_path / "mixed", jobs=1)
    same_case(local.case, mixed.case)
    shards = sharded_case(bundle, tmp_path / "sharded", 2)
    same_case(api.ingest([bundle], tmp_path / "plain", jobs=1).case, shards)


def test_a_missing_url_is_a_bundle_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="no such file or directory"):
        api.ingest([(tmp_path / "nowhere").as_uri()], tmp_path / "case")


def test_an_unknown_scheme_is_a_bundle_error(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="cannot list it"):
        api.ingest(["nosuchscheme://bucket/bundle"], tmp_path / "case")
