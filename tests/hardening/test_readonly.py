"""culprit never modifies its input: ``analyze`` (one process or with workers) and ``handoff``
leave every file and directory of the bundle exactly as they were. Nor does it replace a
directory it did not make: ``-o`` naming a folder that is not a case is refused.

The bundle is made read-only first (``chmod -R a-w``), as evidence usually is. That stops a
write only for an unprivileged user: these tests may run as root, for whom the permission
bits stop nothing, so what proves the guarantee is the comparison of every entry's sha256,
size, mtime (ns) and mode before and after, not a PermissionError.
"""

from __future__ import annotations

import gzip
import io
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from analyzer import api
from analyzer.errors import CaseError
from fixtures.generate import generate
from fixtures.truth import BUNDLE_DIR
from tests.conftest import small
from tests.helpers import EntryState, changed_paths, force_workers, mixed_bundle, tree_state

LOG = b"2024-05-01T00:00:00Z node-1 starting\n2024-05-01T00:00:05Z node-1 step 1 done\n"


def _set_writable(root: Path, writable: bool) -> None:
    """``chmod -R a-w`` (or ``u+w`` back) without following links."""
    paths = [root, *root.rglob("*")] if root.is_dir() else [root]
    for path in paths:
        if path.is_symlink():
            continue
        mode = stat.S_IMODE(path.lstat().st_mode)
        mode = mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | 0o022)
        path.chmod(mode)


@dataclass(frozen=True)
class Evidence:
    """The read-only evidence folder and the two inputs inside it."""

    root: Path
    bundle: Path
    single: Path


@pytest.fixture
def frozen(tmp_path: Path) -> Iterator[Evidence]:
    """Read-only evidence: a generated scenario with plain, .gz, .tar.gz and .zip files added
    around it, and a single .log.gz beside it; permissions are given back afterwards so the
    temporary directory can be removed."""
    root = tmp_path / "evidence"
    generate("host-crash-heartbeat", small(8, 1), root / "gen")
    bundle = root / "gen" / BUNDLE_DIR
    extra = mixed_bundle(root)  # a plain log, a tar, a truncated .gz, latin-1, a binary file
    extra = extra.rename(bundle / "extra")
    (extra / "good.log.gz").write_bytes(gzip.compress(LOG * 50))
    with zipfile.ZipFile(extra / "logs.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("zipped/node-1.log", LOG)
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        info = tarfile.TarInfo("inner/node-1.log")
        info.size = len(LOG)
        tar.addfile(info, io.BytesIO(LOG))
    (extra / "more.tar.gz").write_bytes(data.getvalue())
    (extra / "alias.log").symlink_to("a-node.log")
    single = root / "single" / "node-2.log.gz"
    single.parent.mkdir()
    single.write_bytes(gzip.compress(LOG))
    _set_writable(root, False)
    yield Evidence(root, bundle, single)
    _set_writable(root, True)


def _state(evidence: Evidence) -> dict[str, EntryState]:
    """Every entry of the evidence folder: the inputs, and what lies beside them."""
    state = tree_state(evidence.root)
    assert len(state) > 40, "not much of a bundle"
    return state


def _assert_unchanged(before: dict[str, EntryState], evidence: Evidence) -> None:
    after = tree_state(evidence.root)
    assert changed_paths(before, after) == []
    assert after == before


def test_the_evidence_is_read_only(frozen: Evidence) -> None:
    entries = [frozen.root, *frozen.root.rglob("*")]
    assert len(entries) > 40
    for path in entries:
        assert path.is_symlink() or not stat.S_IMODE(path.lstat().st_mode) & 0o222, path


@pytest.mark.parametrize("jobs", [1, 2])
def test_analyze_leaves_the_input_untouched(
    frozen: Evidence, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    pools = force_workers(monkeypatch)
    before = _state(frozen)
    result = api.analyze([frozen.bundle], tmp_path / "out", api.AnalyzeSettings(jobs=jobs))
    assert result.ingested and result.findings.attempts
    assert api.analyze(
        [frozen.single], tmp_path / "out-single", api.AnalyzeSettings(jobs=jobs)
    ).ingested
    # A second analysis reuses the case (and may rewrite case.json, never the input).
    assert not api.analyze(
        [frozen.bundle], tmp_path / "out", api.AnalyzeSettings(jobs=jobs)
    ).ingested
    assert pools == ([] if jobs == 1 else [2])  # the single file alone needs no pool
    _assert_unchanged(before, frozen)


def test_handoff_leaves_the_input_untouched(frozen: Evidence, tmp_path: Path) -> None:
    before = _state(frozen)
    result = api.handoff([frozen.bundle], tmp_path / "x.tar.zst")
    assert result.path.is_file() and result.reproduces
    _assert_unchanged(before, frozen)


def test_a_directory_that_is_not_a_case_is_never_replaced(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "node-1.log").write_bytes(LOG)
    mine = tmp_path / "mine"
    (mine / "notes").mkdir(parents=True)
    (mine / "notes" / "thesis.txt").write_text("years of work\n")
    (tmp_path / "out" / "case").mkdir(parents=True)
    (tmp_path / "out" / "case" / "keep.txt").write_text("mine too\n")
    (tmp_path / "a-file").write_text("not a directory\n")
    before = tree_state(tmp_path)
    for target in (mine, tmp_path / "a-file"):
        with pytest.raises(CaseError, match="exists and is not a case directory") as raised:
            api.ingest([bundle], target)
        assert raised.value.path == str(target)
    with pytest.raises(CaseError, match="is not a case directory") as raised:
        api.analyze([bundle], tmp_path / "out")
    assert raised.value.path == str(tmp_path / "out" / "case")
    assert changed_paths(before, tree_state(tmp_path)) == []
    # An empty directory, and a case, are replaced.
    (tmp_path / "empty").mkdir()
    assert api.ingest([bundle], tmp_path / "empty").meta.counts.rows == 2
    assert api.ingest([bundle], tmp_path / "empty", force=True).meta.counts.rows == 2
