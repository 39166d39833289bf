"""A disk that fills up during an ingest or an analysis ends in one line naming the directory
and what the ingest needs there, exit code 2, and nothing half-written left behind; an ingest
that cannot fit is refused before it writes anything (issue #24, item 7). Worker processes
write their row files into the case's staging directory: nothing else is written elsewhere.

A full disk is simulated deterministically: the Parquet writer, a worker's rows or polars'
writer raise what they raise on a full file system (``OSError`` with ``ENOSPC``; polars a
``ComputeError`` naming it) once a given number of bytes is written, and
``shutil.disk_usage`` reports little free space for the pre-check. Workers run as threads
here (an in-process pool), so the patches reach them and no process is spawned.
"""

from __future__ import annotations

import errno
import re
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.bundle import Bundle, BundleLimits
from analyzer.case import space
from analyzer.cli import app
from analyzer.cli.exits import EXIT_ERROR
from analyzer.errors import DiskSpaceError
from analyzer.ingest.pipeline import workers
from tests.helpers import check_accounting, force_workers, read_table

runner = CliRunner(env={"COLUMNS": "200"})

FULL = "Error writing bytes to file. Detail: [errno 28] No space left on device"
TABLES = ("rows", "files", "quarantine", "duplicates", "hosts")


def make_bundle(root: Path, files: int = 3, lines: int = 400) -> Path:
    """A few klog files of distinct lines (an error among them, for the analysis)."""
    bundle = root / "bundle"
    bundle.mkdir(parents=True)
    for index in range(files):
        text = "".join(
            f"I1129 18:{minute % 60:02d}:{second % 60:02d}.000000    1 main.go:{index}] "
            f"host-{index} step {second} done\n"
            for minute, second in ((n // 60, n) for n in range(lines))
        )
        text += f"E1129 19:00:00.000000    1 main.go:9] host-{index} RuntimeError: boom\n"
        (bundle / f"host-{index}.log").write_text(text)
    return bundle


def leftovers(root: Path) -> list[str]:
    """Everything an interrupted write can leave: staging directories, partial and rewrite
    files, lock files."""
    patterns = ("*.partial", "*.rewrite", "*.lock", "*.arrow", "culprit-*")
    return sorted(str(p.relative_to(root)) for pattern in patterns for p in root.rglob(pattern))


def tables(case: Path) -> dict[str, pl.DataFrame]:
    return {name: read_table(case, name) for name in TABLES}


def one_line_error(result: Any) -> str:
    assert result.exit_code == EXIT_ERROR, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("culprit: error: ")
    assert "internal error" not in result.stderr
    assert "Traceback" not in result.output
    return str(result.stderr)


class FullAfter:
    """``ParquetWriter.write_table`` that raises ENOSPC once ``budget`` bytes are written;
    ``staged`` records the staging directory's files at that moment."""

    def __init__(self, budget: int, staging: Path) -> None:
        self.budget = budget
        self.written = 0
        self.staging = staging
        self.staged: list[str] = []
        self.original = pq.ParquetWriter.write_table

    def install(self, monkeypatch: pytest.MonkeyPatch) -> FullAfter:
        def write_table(writer: pq.ParquetWriter, table: Any, *args: Any, **kwargs: Any) -> None:
            if self.written >= self.budget:
                self.staged = sorted(p.name for p in self.staging.rglob("*") if p.is_file())
                raise OSError(errno.ENOSPC, FULL)
            self.written += table.nbytes
            self.original(writer, table, *args, **kwargs)

        monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
        return self


class InProcessPool(ThreadPoolExecutor):
    """The worker pool's executor as threads of this process (the patches reach them)."""

    def __init__(self, max_workers: int, **_: object) -> None:
        super().__init__(max_workers)


@pytest.fixture
def threads_for_workers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    started = force_workers(monkeypatch)
    monkeypatch.setattr(workers, "ProcessPoolExecutor", InProcessPool)
    return started


# -- (a) the disk fills up half-way -------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, 1], ids=["first-write", "after-the-rows"])
@pytest.mark.parametrize("earlier", [False, True], ids=["new-case", "replacing-a-case"])
def test_disk_full_mid_ingest_is_one_line_exit_2_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget: int, earlier: bool
) -> None:
    bundle = make_bundle(tmp_path)
    out = tmp_path / "out"
    case = out / "case"
    before: dict[str, pl.DataFrame] = {}
    if earlier:
        api.ingest([bundle], case, jobs=1)
        before = tables(case)
        (bundle / "more.log").write_text("I1129 20:00:00.000000    1 x.go:1] later\n")
    full = FullAfter(budget, out / ".case.partial").install(monkeypatch)

    error = one_line_error(runner.invoke(app, ["ingest", str(bundle), "-o", str(case), "-q"]))

    assert f"culprit: error: {out}: no space left on device" in error
    assert re.search(r"needs about [\d.]+ (bytes|kB|MB) here", error), error
    if budget:
        assert any(name.startswith("part-") for name in full.staged), full.staged
    assert leftovers(tmp_path) == []
    if earlier:
        after = tables(case)
        assert all(after[name].equals(before[name]) for name in TABLES)
    else:
        assert not out.exists()


@pytest.mark.parametrize("kind", ["pyarrow", "polars"])
def test_disk_full_while_writing_matches_or_reports_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    bundle = make_bundle(tmp_path)
    out = tmp_path / "out"
    api.ingest([bundle], out / "case", jobs=1)
    if kind == "polars":
        # polars reports a full disk as a ComputeError (matches.parquet is written by polars).
        def polars_full(*args: object, **kwargs: object) -> None:
            raise pl.exceptions.ComputeError(
                "parquet: File out of specification: underlying IO error: No space left on "
                "device (os error 28)"
            )

        monkeypatch.setattr(pl.DataFrame, "write_parquet", polars_full)
    else:
        original = Path.write_text

        def text_full(path: Path, *args: Any, **kwargs: Any) -> int:
            if path.name.endswith(".partial"):
                original(path, "half a rep", encoding="utf-8")
                raise OSError(errno.ENOSPC, "No space left on device")
            return original(path, *args, **kwargs)

        monkeypatch.setattr(Path, "write_text", text_full)

    error = one_line_error(
        runner.invoke(app, ["analyze", str(bundle), "-o", str(out), "-q", "--jobs", "1"])
    )

    assert "no space left on device" in error.lower()
    assert leftovers(tmp_path) == []
    check_accounting(out / "case")


def test_disk_full_in_a_worker_names_the_case_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads_for_workers: list[int]
) -> None:
    bundle = make_bundle(tmp_path)
    out = tmp_path / "out"

    def rows_full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, FULL)

    monkeypatch.setattr(workers._GroupSink, "add_rows", rows_full)

    error = one_line_error(
        runner.invoke(app, ["ingest", str(bundle), "-o", str(out / "case"), "-q", "--jobs", "2"])
    )

    assert threads_for_workers == [2]
    assert f"culprit: error: {out}: no space left on device" in error
    assert "write the case elsewhere (-o)" in error
    assert leftovers(tmp_path) == []


# -- (b) refused before writing; --scratch moves the scratch ------------------------------------


def fake_disk(monkeypatch: pytest.MonkeyPatch, free: Callable[[Path], int]) -> list[Path]:
    """``shutil.disk_usage`` reporting ``free(path)`` bytes free; the paths asked about."""
    asked: list[Path] = []

    def usage(path: str | Path) -> SimpleNamespace:
        asked.append(Path(path))
        return SimpleNamespace(total=1 << 40, used=0, free=free(Path(path)))

    monkeypatch.setattr(shutil, "disk_usage", usage)
    return asked


def test_an_ingest_that_cannot_fit_is_refused_before_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = make_bundle(tmp_path)
    out = tmp_path / "out"
    fake_disk(monkeypatch, lambda path: 1000)
    written: list[str] = []
    original = pq.ParquetWriter.__init__

    def recording(self: pq.ParquetWriter, where: Any, *args: Any, **kwargs: Any) -> None:
        written.append(str(where))
        original(self, where, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "__init__", recording)
    command = ["ingest", str(bundle), "-o", str(out / "case"), "-q"]

    error = one_line_error(runner.invoke(app, command))

    assert f"culprit: error: {out}: not enough free space" in error
    assert re.search(r"needs about [\d.]+ kB here", error), error
    assert "1.0 kB is free" in error
    assert "--no-space-check" in error
    assert written == []
    assert not out.exists()
    assert leftovers(tmp_path) == []
    # The estimate is an upper bound; the owner may try anyway.
    tried = runner.invoke(app, [*command, "--no-space-check"])
    assert tried.exit_code == 0, tried.output
    assert written
    check_accounting(out / "case")


def test_workers_write_only_inside_the_staging_directory_within_the_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads_for_workers: list[int]
) -> None:
    """Workers need no room of their own: the estimate of the case is all an ingest with
    workers needs, and every row file is written in the staging directory."""
    bundle = make_bundle(tmp_path, files=4)
    serial = api.ingest([bundle], tmp_path / "serial", jobs=1).case
    out = tmp_path / "out"
    need = space.estimate(out / "case", Bundle([bundle], BundleLimits()).input_bytes, None)
    fake_disk(monkeypatch, lambda path: need.case.needed)
    written: list[Path] = []
    original = pq.ParquetWriter.__init__

    def recording(self: pq.ParquetWriter, where: Any, *args: Any, **kwargs: Any) -> None:
        written.append(Path(where))
        original(self, where, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "__init__", recording)

    result = runner.invoke(app, ["ingest", str(bundle), "-o", str(out / "case"), "--jobs", "2"])

    assert result.exit_code == 0, result.output
    assert threads_for_workers == [2]
    staging = out / ".case.partial"
    # The four small files are one group, read by a worker into one unit of rows.
    rows = [path for path in written if path.suffix == ".parquet" and path.parent.name == "rows"]
    assert rows == [staging / "rows" / "part-000000-0000.parquet"]
    assert all(staging in path.parents for path in written), written
    assert leftovers(tmp_path) == []
    check_accounting(out / "case")
    assert all(tables(out / "case")[name].equals(tables(serial)[name]) for name in TABLES)


def test_disk_full_error_of_a_library_call_is_a_disk_space_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = make_bundle(tmp_path, files=1)
    FullAfter(0, tmp_path).install(monkeypatch)
    with pytest.raises(DiskSpaceError) as raised:
        api.ingest([bundle], tmp_path / "case", jobs=1)
    assert raised.value.path == str(tmp_path)
    assert leftovers(tmp_path) == []
