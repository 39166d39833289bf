"""Files that change under culprit (issue #24).

- A log rotated with copytruncate while it is read shrinks under the reader: the rows are what
  was there, and the file is marked incomplete with a warning naming it. (Before: 6 M lines ->
  1.89 M rows, reported complete.) Likewise a file that grows, is rewritten or is replaced.
- A bundle edited without changing any file's size, its modification time set back, is not
  "up to date": the content decides. (Before: size and mtime agreed, so the old case was kept.)

The changes are made deterministically: a wrapper around the file the reader opens truncates
it after the first bytes are read, or the file is changed between the listing (when its size,
mtime and inode are taken) and the read.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.bundle import Bundle, Member
from analyzer.bundle import tree as tree_mod
from analyzer.bundle import walk as walk_mod
from analyzer.cli import app
from tests.helpers import check_accounting, force_workers, read_table

runner = CliRunner(env={"COLUMNS": "200"})


def log_text(lines: int, host: str = "node-1") -> bytes:
    return b"".join(
        b"2024-05-01T00:%02d:%02dZ %s step %d\n" % (i // 60 % 60, i % 60, host.encode(), i)
        for i in range(lines)
    )


def record_of(case: Path, path: str) -> dict[str, Any]:
    files = read_table(case, "files").filter(pl.col("path") == path)
    assert files.height == 1, files
    row: dict[str, Any] = files.row(0, named=True)
    return row


def file_issues(case: Path, path: str) -> list[str]:
    quarantine = read_table(case, "quarantine")
    picked = quarantine.filter((pl.col("path") == path) & (pl.col("kind") == "file"))
    return [str(reason) for reason in picked["reason"]]


class _Rotated(io.RawIOBase):
    """A file handle whose file is cut to ``keep`` bytes (copytruncate) once ``after`` bytes
    have been read from it: the reads that follow find the end of the file."""

    def __init__(self, path: Path, after: int, keep: int) -> None:
        super().__init__()
        self._handle = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._path = path
        self._after = after
        self._keep = keep
        self._read = 0
        self._rotated = False

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1, /) -> bytes:
        data = self._handle.read(-1 if size is None else size)
        self._read += len(data)
        if not self._rotated and self._read >= self._after:
            os.truncate(self._path, self._keep)
            self._rotated = True
        return data

    def close(self) -> None:
        self._handle.close()
        super().close()


@pytest.fixture
def rotate_while_reading(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, int, int], None]:
    """Cut the named file to ``keep`` bytes once ``after`` of its bytes were read."""
    plans: dict[str, tuple[int, int]] = {}
    original = tree_mod.file_opener

    def opener(path: Path) -> Callable[[], Any]:
        if path.name in plans:
            after, keep = plans[path.name]
            return lambda: _Rotated(path, after, keep)
        return original(path)

    monkeypatch.setattr(walk_mod, "file_opener", opener)

    def plan(name: str, after: int, keep: int) -> None:
        plans[name] = (after, keep)

    return plan


# -- item 3: a file that shrinks while it is read -------------------------------------------


@pytest.mark.parametrize("lines", [40_000, 5_000], ids=["streamed", "batched"])
def test_a_file_truncated_while_it_is_read_is_marked_incomplete(
    tmp_path: Path, rotate_while_reading: Callable[[str, int, int], None], lines: int
) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    text = log_text(lines)
    (bundle / "train.log").write_bytes(text)
    (bundle / "other.log").write_bytes(log_text(10, "node-2"))
    # Cut to its first 1,000 bytes as soon as the reader has read from it (its magic bytes,
    # then the head it sniffs): the reads after that find the end of the file.
    rotate_while_reading("train.log", 1, 1000)

    case = tmp_path / "case"
    result = runner.invoke(app, ["ingest", str(bundle), "-o", str(case), "--quiet"])
    assert result.exit_code == 0, result.output
    check_accounting(case)
    record = record_of(case, "train.log")
    read = read_table(case, "rows").filter(pl.col("file_id") == record["file_id"]).height
    assert 0 < read < lines  # what was there when it was read
    assert record["status"] == "partial"
    (issue,) = [r for r in file_issues(case, "train.log") if "shrank" in r]
    assert f"{len(text):,} bytes when listed" in issue
    assert record["detail"] == issue
    assert record_of(case, "other.log")["status"] == "read"
    # The warning names the file and says what happened to it.
    assert "1 partly read" in result.stdout
    assert f"train.log: partial: {issue}" in result.stdout
    meta = api.load_case(case).meta
    assert meta.counts.files_partial == 1


def _shrink(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 3)


def _grow(path: Path) -> None:
    with path.open("ab") as handle:
        handle.write(log_text(5, "node-late"))


def _rewrite(path: Path) -> None:
    # Same size, new content, and a modification time that differs for certain (two writes
    # within one clock tick can share an mtime).
    listed = path.stat()
    path.write_bytes(path.read_bytes().replace(b"step", b"STEP"))
    os.utime(path, ns=(listed.st_atime_ns, listed.st_mtime_ns + 1_000_000_000))


def _replace(path: Path) -> None:
    fresh = path.with_name(path.name + ".new")
    fresh.write_bytes(log_text(50, "node-new"))
    fresh.replace(path)


CHANGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "shrinks": (_shrink, "the file shrank while it was read"),
    "grows": (_grow, "the file changed size while it was read"),
    "rewritten": (_rewrite, "the file was modified while it was read"),
    "replaced": (_replace, "the file was replaced while it was read"),
}


@pytest.fixture
def change_after_listing(
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[str, Callable[[Path], None]], None]:
    """Apply a change to the named file right after the walk lists it (its size, mtime and
    inode taken), before it is read: what a rotation in between does."""
    plans: dict[str, Callable[[Path], None]] = {}
    members = Bundle.members

    def listed_then_changed(self: Bundle) -> Iterator[Member]:
        for member in members(self):
            yield member
            if member.disk_path is not None and member.disk_path.name in plans:
                plans.pop(member.disk_path.name)(member.disk_path)

    monkeypatch.setattr(Bundle, "members", listed_then_changed)
    return plans.__setitem__


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_file_changed_between_listing_and_reading_is_marked_incomplete(
    tmp_path: Path,
    change_after_listing: Callable[[str, Callable[[Path], None]], None],
    change: str,
) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "a.log").write_bytes(log_text(300))
    (bundle / "b.log").write_bytes(log_text(20, "node-2"))
    apply, says = CHANGES[change]
    change_after_listing("a.log", apply)
    case = tmp_path / "case"
    api.ingest([bundle], case, jobs=1)
    check_accounting(case)
    record = record_of(case, "a.log")
    assert record["status"] == "partial"
    assert any(says in reason for reason in file_issues(case, "a.log")), file_issues(case, "a.log")
    assert record_of(case, "b.log")["status"] == "read"


def test_a_file_that_shrank_is_caught_in_a_worker_too(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    change_after_listing: Callable[[str, Callable[[Path], None]], None],
) -> None:
    started = force_workers(monkeypatch)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for name in ("a.log", "b.log", "c.log"):
        (bundle / name).write_bytes(log_text(300, name))
    change_after_listing("b.log", _shrink)
    case = tmp_path / "case"
    api.ingest([bundle], case, jobs=2)
    assert started == [2]
    check_accounting(case)
    assert [record_of(case, n)["status"] for n in ("a.log", "b.log", "c.log")] == [
        "read",
        "partial",
        "read",
    ]
    assert "shrank" in str(record_of(case, "b.log")["detail"])


def test_an_unchanged_file_is_not_flagged(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "a.log").write_bytes(log_text(300))
    case = tmp_path / "case"
    api.ingest([bundle], case)
    assert record_of(case, "a.log")["status"] == "read"
    assert file_issues(case, "a.log") == []


# -- a same-size edit with its mtime restored ---------------------------------------------------


def test_a_same_size_edit_with_the_mtime_restored_is_not_up_to_date(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    log = bundle / "train.log"
    log.write_bytes(log_text(100))
    case = tmp_path / "case"
    assert not api.ingest([bundle], case).reused
    listed = log.stat()
    log.write_bytes(log.read_bytes().replace(b"step 42\n", b"oops 42\n"))
    os.utime(log, ns=(listed.st_atime_ns, listed.st_mtime_ns))
    assert (log.stat().st_size, log.stat().st_mtime_ns) == (listed.st_size, listed.st_mtime_ns)

    again = api.ingest([bundle], case)
    assert not again.reused
    messages = read_table(case, "rows")["message"].to_list()
    assert "node-1 oops 42" in messages and "node-1 step 42" not in messages
    # Unchanged since: up to date, with no work.
    assert api.ingest([bundle], case).reused
