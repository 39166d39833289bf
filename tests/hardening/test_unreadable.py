"""Directories and files culprit may not read become inventory entries with the reason
(issue #24, item 4). Before, a ``chmod 000`` directory was skipped without a word: no entry in
the inventory, no warning, its logs silently missing from the case.

root reads anything, so ``chmod`` proves nothing when the suite runs as root (as CI may): the
same denials are also made by raising PermissionError where culprit lists a directory
(``os.scandir``, which ``os.walk`` calls) and opens a file (the ``open`` of
``analyzer.bundle.tree``), so these tests run everywhere.
"""

from __future__ import annotations

import builtins
import errno
import gzip
import io
import os
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.bundle import tree as tree_mod
from analyzer.cli import app
from analyzer.errors import BundleError
from tests.helpers import check_accounting, read_table

runner = CliRunner(env={"COLUMNS": "200"})
LOG = b"2024-05-01T00:00:00Z node-1 starting\n2024-05-01T00:00:05Z node-1 step 1 done\n"
DIR_REASON = "directory cannot be read (permission denied): the files in it are not in the case"
FILE_REASON = "cannot be opened (permission denied)"


def make_bundle(root: Path) -> Path:
    bundle = root / "bundle"
    (bundle / "locked" / "deeper").mkdir(parents=True)
    (bundle / "locked" / "hidden.log").write_bytes(LOG)
    (bundle / "locked" / "deeper" / "more.log").write_bytes(LOG)
    (bundle / "open").mkdir()
    (bundle / "open" / "ok.log").write_bytes(LOG)
    (bundle / "secret.log").write_bytes(LOG)
    (bundle / "z-last.log").write_bytes(LOG)
    return bundle


def _denied(path: object) -> PermissionError:
    return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))


@pytest.fixture
def deny(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Make the given paths unreadable as ``chmod 000`` does for a user who is not root."""
    denied: set[str] = set()
    scandir = os.scandir
    real_open = builtins.open

    def guarded_scandir(path: Any = ".") -> Any:
        if str(path) in denied:
            raise _denied(path)
        return scandir(path)

    def guarded_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) in denied:
            raise _denied(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", guarded_scandir)
    monkeypatch.setattr(tree_mod, "open", guarded_open, raising=False)

    def add(*paths: Path) -> None:
        denied.update(str(p) for p in paths)

    return add


def inventory(case: Path) -> dict[str, tuple[str, str | None]]:
    files = read_table(case, "files")
    return {r["path"]: (r["status"], r["detail"]) for r in files.iter_rows(named=True)}


def file_issues(case: Path) -> dict[str, str]:
    quarantine = read_table(case, "quarantine").filter(pl.col("kind") == "file")
    return dict(zip(quarantine["path"], quarantine["reason"], strict=True))


def check_denied(case: Path, stdout: str) -> None:
    """The denied directory and file are entries with their reason, in the inventory, the
    quarantine and the warning; the rest is read."""
    check_accounting(case)
    listed = inventory(case)
    assert listed["locked"] == ("unreadable", DIR_REASON)
    assert listed["secret.log"] == ("unreadable", FILE_REASON)
    assert {p for p in listed if p.startswith("locked/")} == set()
    for path in ("open/ok.log", "z-last.log"):
        assert listed[path][0] == "read", path
    issues = file_issues(case)
    assert issues["locked"] == DIR_REASON
    assert issues["secret.log"] == FILE_REASON
    assert api.load_case(case).meta.counts.files_refused == 2
    assert "2 refused" in stdout
    assert f"locked: unreadable: {DIR_REASON}" in stdout
    assert f"secret.log: unreadable: {FILE_REASON}" in stdout


def test_an_unreadable_directory_and_file_are_listed_with_the_reason(
    tmp_path: Path, deny: Callable[..., None]
) -> None:
    bundle = make_bundle(tmp_path)
    deny(bundle / "locked", bundle / "secret.log")
    case = tmp_path / "case"
    result = runner.invoke(app, ["ingest", str(bundle), "-o", str(case), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    check_denied(case, result.stdout)
    # The next ingest hashes the bundle to see whether it changed: the denied file is left out
    # of that hash as it is left out of the case's, so the case is up to date.
    assert api.ingest([bundle], case).reused


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 directory anyway")
def test_chmod_000_directory_and_file(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    locked, secret = bundle / "locked", bundle / "secret.log"
    locked.chmod(0)
    secret.chmod(0)
    try:
        case = tmp_path / "case"
        result = runner.invoke(app, ["ingest", str(bundle), "-o", str(case), "--quiet"])
        assert result.exit_code == 0, result.output
        check_denied(case, result.stdout)
    finally:
        locked.chmod(0o755)
        secret.chmod(0o644)


def test_an_unreadable_archive_is_an_entry_not_a_traceback(
    tmp_path: Path, deny: Callable[..., None]
) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("inner.log")
        info.size = len(LOG)
        tar.addfile(info, io.BytesIO(LOG))
    (bundle / "logs.tar.gz").write_bytes(gzip.compress(buffer.getvalue()))
    (bundle / "plain.log").write_bytes(LOG)
    deny(bundle / "logs.tar.gz")
    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    listed = inventory(case)
    assert listed["logs.tar.gz"] == (
        "damaged",
        "archive cannot be read on: cannot be opened (permission denied)",
    )
    assert listed["plain.log"][0] == "read"


def test_an_unreadable_input_directory_is_a_clear_error(
    tmp_path: Path, deny: Callable[..., None]
) -> None:
    bundle = make_bundle(tmp_path)
    deny(bundle)
    with pytest.raises(BundleError) as raised:
        api.ingest([bundle], tmp_path / "case")
    assert raised.value.path == str(bundle)
    assert "directory cannot be read (permission denied)" in raised.value.message
    result = runner.invoke(app, ["ingest", str(bundle), "-o", str(tmp_path / "case")])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert f"{bundle}: directory cannot be read (permission denied)" in result.output


def test_a_file_that_vanishes_after_the_listing_is_an_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = make_bundle(tmp_path)
    walk = os.walk

    def listing_a_vanished_file(top: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        # The directory listed a file that is gone by the time it is looked at (a rotation
        # removed it in between).
        for dirpath, dirnames, filenames in walk(top, *args, **kwargs):
            if Path(dirpath) == bundle:
                filenames = [*filenames, "rotated.log.1"]
            yield dirpath, dirnames, filenames

    monkeypatch.setattr(os, "walk", listing_a_vanished_file)
    case = tmp_path / "case"
    api.ingest([bundle], case)
    check_accounting(case)
    status, detail = inventory(case)["rotated.log.1"]
    assert status == "unreadable"
    assert detail == "gone before it could be read (no such file or directory)"
    assert file_issues(case)["rotated.log.1"] == detail
