"""Hostile bundles end to end, through ``api.ingest`` and ``culprit ingest``.

tests/test_bundle.py and tests/test_bad_input.py check what :class:`analyzer.bundle.Bundle`
yields for each hostile member; here every hostile input goes the whole way into a case and
each test checks the guarantees a user relies on:

(a) the ingest finishes, or fails with one :class:`AnalyzerError` naming the file (never a
    traceback);
(b) the refused member is in files.parquet (status ``refused``) and in quarantine.parquet
    with its reason;
(c) the other files are read;
(d) nothing is written outside the case directory: every path under the test's temporary
    root, which holds the bundle, the case and the sibling ``outside`` directory the hostile
    names and links point at, keeps its mode, size, mtime and content, except the case
    directory (new) and its parent (whose listing gains the case); the ``.CASE.partial``
    staging directory is gone afterwards, and the case holds only the case's own files.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import signal
import stat
import sys
import tarfile
import time
import types
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.bundle import BundleLimits
from analyzer.case.layout import CaseMeta
from analyzer.cli import app
from analyzer.errors import ExpansionLimitError
from benchmarks.measure import run_once
from tests.helpers import EntryState, changed_paths, force_workers, read_table, tree_state

runner = CliRunner(env={"COLUMNS": "200"})

LOG = b"2024-05-01T00:00:00Z node-1 starting\n2024-05-01T00:00:05Z node-1 step 1 done\n"
LOG_MESSAGES = ["node-1 starting", "node-1 step 1 done"]
EVIL = b"2024-05-01T00:00:07Z EVIL-PAYLOAD written by the archive\n"
#: What lies outside the bundle: a log line, so it would show up in rows if it were read.
SECRET = b"2024-05-01T00:00:09Z SECRET-OUTSIDE-THE-BUNDLE root:x:0:0\n"

ESCAPES = "member path escapes the bundle"
LINK_OUT = "link points outside the bundle"
SYMLINK_OUT = "symlink points outside the bundle"
NOT_REGULAR = "not a regular file"
CASE_ENTRIES = [
    "case.json",
    "duplicates.parquet",
    "files.parquet",
    "hosts.parquet",
    "quarantine.parquet",
    "rows",
]


# -- the arena: a bundle, a case, and an outside directory ------------------------------------


@dataclass(frozen=True)
class Arena:
    """``tmp/root`` holds the bundle inputs and the case ``tmp/root/case``; ``tmp/outside``
    is what hostile names point at: ``../../outside/x`` seen from inside the case (or the
    bundle directory) and its absolute path (under /tmp)."""

    tmp: Path
    root: Path
    outside: Path
    case: Path


@pytest.fixture
def arena(tmp_path: Path) -> Arena:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    (outside / "sub").mkdir(parents=True)
    (outside / "secret.txt").write_bytes(SECRET)
    (outside / "sub" / "victim.log").write_bytes(SECRET)
    return Arena(tmp_path, root, outside, root / "case")


def assert_only_changed(
    before: dict[str, EntryState], after: dict[str, EntryState], area: Path
) -> None:
    """Guarantee (d): nothing changed but ``area`` (the case, or an analysis's output
    directory) and its parent's listing; no staging directory is left beside it."""
    assert not (area.parent / f".{area.name}.partial").exists(), "staging left behind"
    inside = f"{area}{os.sep}"
    stray = [
        path
        for path in changed_paths(before, after)
        if path not in (str(area), str(area.parent)) and not path.startswith(inside)
    ]
    assert stray == [], f"changed outside {area}: {stray}"


def assert_only_case_changed(
    before: dict[str, EntryState], after: dict[str, EntryState], case: Path
) -> None:
    """Guarantee (d) for an ingest: also, the case holds only the case's own files."""
    assert_only_changed(before, after, case)
    if case.exists():
        assert sorted(entry.name for entry in case.iterdir()) == CASE_ENTRIES
        parts = [entry.name for entry in (case / "rows").iterdir()]
        assert all(re.fullmatch(r"part-\d{6}-\d{4}\.parquet", name) for name in parts), parts


@contextlib.contextmanager
def contained(arena: Arena, *extra: Path, content: bool = True) -> Iterator[None]:
    """Snapshot the arena (and ``extra`` paths) around the block; check guarantee (d)."""
    before = tree_state(arena.tmp, *extra, content=content)
    yield
    assert_only_case_changed(before, tree_state(arena.tmp, *extra, content=content), arena.case)


# -- reading the case ---------------------------------------------------------------------------


def assert_refused(case: Path, expected: dict[str, str]) -> None:
    """Guarantee (b): exactly these members are refused, each with its reason in the
    inventory and one quarantine entry of the same file."""
    files = read_table(case, "files")
    refused = files.filter(pl.col("status") == "refused")
    assert dict(zip(refused["path"], refused["detail"], strict=True)) == expected
    entries = read_table(case, "quarantine").filter(pl.col("kind") == "file")
    got = {
        (row["file_id"], row["path"], row["reason"])
        for row in entries.iter_rows(named=True)
        if row["path"] in expected
    }
    assert got == {
        (row["file_id"], row["path"], row["detail"]) for row in refused.iter_rows(named=True)
    }


def read_messages(case: Path) -> dict[str, list[str]]:
    """Guarantee (c): the messages of every file that gave rows, by the path rows cite."""
    table = api.query(
        case,
        "SELECT f.path, r.message FROM rows r JOIN files f USING (file_id) ORDER BY f.path, r.line",
    )
    out: dict[str, list[str]] = {}
    for row in table.to_pylist():
        out.setdefault(row["path"], []).append(row["message"])
    return out


def assert_nothing_from_outside(case: Path) -> None:
    """No row and no quarantined line carries what lies outside the bundle."""
    leaked = api.query(
        case,
        "SELECT count(*) AS n FROM rows WHERE message LIKE '%SECRET-OUTSIDE%' "
        "OR message LIKE '%root:x:0:0%' OR extra LIKE '%SECRET-OUTSIDE%'",
    )
    assert leaked.column("n").to_pylist() == [0]
    raw = read_table(case, "quarantine")["raw"].drop_nulls().to_list()
    assert not any(b"SECRET-OUTSIDE" in line for line in raw)


# -- building hostile archives ------------------------------------------------------------------


def tar_member(name: str, data: bytes = b"", **attrs: Any) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1_700_000_000
    for key, value in attrs.items():
        setattr(info, key, value)
    return info, data


def write_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    """A GNU tar with names as given (``..``, absolute, surrogate-escaped bytes)."""
    with tarfile.open(
        path, "w", format=tarfile.GNU_FORMAT, encoding="utf-8", errors="surrogateescape"
    ) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return path


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


# -- escaping names -----------------------------------------------------------------------------


def test_zip_slip_member_is_refused_and_nothing_lands_outside(arena: Arena) -> None:
    bundle = write_zip(
        arena.root / "slip.zip",
        {
            "../../outside/evil.txt": EVIL,
            "logs/../../../outside/sub/evil.txt": EVIL,
            "node-1.log": LOG,
        },
    )
    with contained(arena):
        result = api.ingest([bundle], arena.case)
    assert_refused(
        arena.case,
        {"../../outside/evil.txt": ESCAPES, "logs/../../../outside/sub/evil.txt": ESCAPES},
    )
    assert read_messages(arena.case) == {"node-1.log": LOG_MESSAGES}
    assert result.meta.counts.files_refused == 2
    assert not (arena.outside / "evil.txt").exists()


def test_tar_dotdot_member_through_the_cli(arena: Arena) -> None:
    bundle = write_tar(
        arena.root / "bundle.tar",
        [tar_member("../evil", EVIL), tar_member("node-1.log", LOG)],
    )
    with contained(arena):
        result = runner.invoke(app, ["ingest", str(bundle), "-o", str(arena.case), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert result.stderr == ""
    summary, warning, named = result.stdout.strip().splitlines()
    assert summary.startswith(f"{arena.case}: 3 files, 2 records -> 2 rows")
    assert warning.startswith("warning: 1 refused, 0 partly read")
    assert named == f"  ../evil: refused: {ESCAPES}"  # the warning names the file
    assert_refused(arena.case, {"../evil": ESCAPES})
    assert read_messages(arena.case) == {"node-1.log": LOG_MESSAGES}
    assert not (arena.root / "evil").exists()


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_absolute_member_paths_are_refused(arena: Arena, kind: str) -> None:
    absolute = f"{arena.outside}/abs-evil.txt"
    tmp_name = "/tmp/culprit-hardening-abs-evil.txt"
    members = {absolute: EVIL, tmp_name: EVIL, "node-1.log": LOG}
    if kind == "tar":
        bundle = write_tar(
            arena.root / "bundle.tar", [tar_member(n, d) for n, d in members.items()]
        )
    else:
        bundle = write_zip(arena.root / "bundle.zip", members)
    with contained(arena, Path(tmp_name)):
        api.ingest([bundle], arena.case)
    assert_refused(arena.case, {absolute: ESCAPES, tmp_name: ESCAPES})
    assert read_messages(arena.case) == {"node-1.log": LOG_MESSAGES}
    assert not Path(absolute).exists()
    assert not Path(tmp_name).exists()


# -- links --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    ["../../etc/passwd", "/etc/passwd", "../../outside/secret.txt", "{outside}/secret.txt"],
)
def test_tar_symlink_pointing_outside_is_refused(arena: Arena, target: str) -> None:
    linkname = target.format(outside=arena.outside)
    bundle = write_tar(
        arena.root / "bundle.tar",
        [
            tar_member("logs/escape.log", type=tarfile.SYMTYPE, linkname=linkname),
            tar_member("node-1.log", LOG),
            tar_member("logs/inside.log", type=tarfile.SYMTYPE, linkname="../node-1.log"),
        ],
    )
    with contained(arena, Path("/etc/passwd")):
        api.ingest([bundle], arena.case)
    assert_refused(arena.case, {"logs/escape.log": LINK_OUT})
    files = read_table(arena.case, "files")
    inside = files.filter(pl.col("path") == "logs/inside.log").row(0, named=True)
    assert (inside["status"], inside["detail"]) == ("link", "link to ../node-1.log (read there)")
    assert read_messages(arena.case) == {"node-1.log": LOG_MESSAGES}
    assert_nothing_from_outside(arena.case)


def test_tar_symlink_then_a_member_written_through_it(arena: Arena) -> None:
    """The classic two-step: a symlink to a directory outside, then a member under the link's
    name. Nothing is extracted, so the second member is only the archive's own data."""
    bundle = write_tar(
        arena.root / "bundle.tar",
        [
            tar_member("escape", type=tarfile.SYMTYPE, linkname="../../outside"),
            tar_member("escape/evil.txt", EVIL),
            tar_member("node-1.log", LOG),
        ],
    )
    with contained(arena):
        api.ingest([bundle], arena.case)
    assert_refused(arena.case, {"escape": LINK_OUT})
    messages = read_messages(arena.case)
    assert messages["node-1.log"] == LOG_MESSAGES
    assert messages["escape/evil.txt"] == ["EVIL-PAYLOAD written by the archive"]
    assert not (arena.outside / "evil.txt").exists()


@pytest.mark.parametrize("target", ["../../outside/secret.txt", "{outside}/secret.txt", "../x"])
def test_tar_hardlink_pointing_outside_is_refused(arena: Arena, target: str) -> None:
    linkname = target.format(outside=arena.outside)
    bundle = write_tar(
        arena.root / "bundle.tar",
        [
            tar_member("node-1.log", LOG),
            tar_member("hard-out.log", type=tarfile.LNKTYPE, linkname=linkname),
            tar_member("hard-in.log", type=tarfile.LNKTYPE, linkname="node-1.log"),
        ],
    )
    with contained(arena):
        api.ingest([bundle], arena.case)
    assert_refused(arena.case, {"hard-out.log": LINK_OUT})
    files = read_table(arena.case, "files")
    inside = files.filter(pl.col("path") == "hard-in.log").row(0, named=True)
    assert inside["status"] == "link"
    assert read_messages(arena.case) == {"node-1.log": LOG_MESSAGES}
    assert_nothing_from_outside(arena.case)


def test_directory_symlinks_pointing_outside_are_refused(arena: Arena) -> None:
    bundle = arena.root / "bundle"
    (bundle / "node").mkdir(parents=True)
    (bundle / "node" / "node-1.log").write_bytes(LOG)
    (bundle / "abs-dir").symlink_to(arena.outside)  # a directory, by absolute path
    (bundle / "node" / "rel-dir").symlink_to("../../../outside/sub")  # ...by relative path
    (bundle / "secret.log").symlink_to(arena.outside / "secret.txt")  # a file
    (bundle / "node" / "alias.log").symlink_to("node-1.log")  # inside: listed, read once
    with contained(arena):
        api.ingest([bundle], arena.case)
    assert_refused(
        arena.case,
        {"abs-dir": SYMLINK_OUT, "node/rel-dir": SYMLINK_OUT, "secret.log": SYMLINK_OUT},
    )
    files = read_table(arena.case, "files")
    assert files.filter(pl.col("path") == "node/alias.log")["status"].to_list() == ["link"]
    # The walk did not descend through the links.
    assert not any(path.startswith(("abs-dir/", "node/rel-dir/")) for path in files["path"])
    assert read_messages(arena.case) == {"node/node-1.log": LOG_MESSAGES}
    assert_nothing_from_outside(arena.case)


# -- special files ------------------------------------------------------------------------------


def test_device_and_fifo_members_of_a_tar_are_refused(arena: Arena) -> None:
    bundle = write_tar(
        arena.root / "bundle.tar",
        [
            tar_member("dev/null", type=tarfile.CHRTYPE, devmajor=1, devminor=3),
            tar_member("dev/sda", type=tarfile.BLKTYPE, devmajor=8, devminor=0),
            tar_member("dev/pipe", type=tarfile.FIFOTYPE),
            tar_member("node-1.log", LOG),
        ],
    )
    with contained(arena):
        api.ingest([bundle], arena.case)
    assert_refused(
        arena.case, {"dev/null": NOT_REGULAR, "dev/sda": NOT_REGULAR, "dev/pipe": NOT_REGULAR}
    )
    assert read_messages(arena.case) == {"node-1.log": LOG_MESSAGES}


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: a FIFO opened for reading blocks until a writer comes."""

    def expire(signum: int, frame: types.FrameType | None) -> None:
        raise TimeoutError(f"still running after {seconds} s (was the FIFO opened?)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_fifo_in_a_directory_bundle_is_refused_without_blocking(arena: Arena) -> None:
    bundle = arena.root / "bundle"
    bundle.mkdir()
    (bundle / "node-1.log").write_bytes(LOG)
    os.mkfifo(bundle / "a-pipe.log")
    with contained(arena), deadline(60):
        api.ingest([bundle], arena.case)
    assert stat.S_ISFIFO((bundle / "a-pipe.log").lstat().st_mode)
    assert_refused(arena.case, {"a-pipe.log": NOT_REGULAR})
    assert read_messages(arena.case) == {"node-1.log": LOG_MESSAGES}


# -- decompression bombs ------------------------------------------------------------------------

#: 2,000 lines of a kilobyte: about 2 MB that deflate shrinks a few hundred times.
BOMB_LINE = b"2024-05-01T00:00:00Z node-9 " + b"x" * 1000 + b"\n"
BOMB_LINES = 2000


def bomb_bundle(root: Path) -> tuple[Path, list[float]]:
    """A directory with a gzip bomb, a zip with a bomb member, and plain logs; and the two
    bombs' expansion ratios."""
    bundle = root / "bundle"
    bundle.mkdir()
    raw = BOMB_LINE * BOMB_LINES
    packed = gzip.compress(raw, compresslevel=9)
    (bundle / "bomb.log.gz").write_bytes(packed)
    write_zip(bundle / "archive.zip", {"bomb.log": raw, "inner.log": LOG})
    (bundle / "node-1.log").write_bytes(LOG)
    with zipfile.ZipFile(bundle / "archive.zip") as archive:
        info = archive.getinfo("bomb.log")
    return bundle, [len(raw) / len(packed), info.file_size / info.compress_size]


def test_bombs_pass_the_default_and_a_lower_ratio_refuses_them(arena: Arena) -> None:
    bundle, ratios = bomb_bundle(arena.root)
    assert min(ratios) > 100, "not much of a bomb"
    floor = 64 << 10
    strict = min(ratios) / 2
    cases = {
        # The defaults (200x, but never less than 64 MiB) accept two megabytes.
        "default": None,
        # Twice the bombs' ratio with a small floor: still accepted, so the ratio decides.
        "loose": BundleLimits(
            max_ratio=2 * max(ratios), floor_bytes=floor, max_total_bytes=1 << 30
        ),
        # Half of the smaller ratio: both bombs are refused.
        "strict": BundleLimits(max_ratio=strict, floor_bytes=floor, max_total_bytes=1 << 30),
    }
    for name, limits in cases.items():
        case = arena.root / name
        before = tree_state(arena.tmp)
        api.ingest([bundle], case, limits=limits)
        assert_only_case_changed(before, tree_state(arena.tmp), case)
        messages = read_messages(case)
        assert messages["node-1.log"] == LOG_MESSAGES
        assert messages["archive.zip/inner.log"] == LOG_MESSAGES
        files = read_table(case, "files")
        status = dict(zip(files["path"], files["status"], strict=True))
        if name != "strict":
            assert len(messages["bomb.log.gz"]) == BOMB_LINES
            assert len(messages["archive.zip/bomb.log"]) == BOMB_LINES
            assert read_table(case, "quarantine").filter(pl.col("kind") == "file").height == 0
            continue
        # The zip member is refused from its declared size, before a byte is inflated.
        assert status["archive.zip/bomb.log"] == "refused"
        assert "archive.zip/bomb.log" not in messages
        # The gzip stream is cut where it crossed the cap: the file is only partly read. (The
        # lines decoded before the cap, in the reader's unfinished block, are dropped too,
        # unlike a truncated stream's; here that is all of them.)
        assert status["bomb.log.gz"] == "partial"
        assert len(messages.get("bomb.log.gz", [])) < BOMB_LINES
        reasons = dict(
            read_table(case, "quarantine")
            .filter(pl.col("kind") == "file")
            .select("path", "reason")
            .iter_rows()
        )
        shown = re.escape(f"{strict:g}x")
        assert re.fullmatch(
            rf"declared size 2,058,000 bytes is more than {shown} its compressed size [\d,]+; "
            r"refusing a likely zip bomb \(raise --max-expansion to allow it\)",
            reasons["archive.zip/bomb.log"],
        ), reasons
        assert re.fullmatch(
            rf"decompressed size exceeds {shown} the compressed size \([\d,]+ bytes from "
            r"[\d,]+\); refusing a likely decompression bomb \(raise --max-expansion to allow "
            r"it\)",
            reasons["bomb.log.gz"],
        ), reasons


def test_the_total_cap_stops_the_run_with_a_clear_error(arena: Arena) -> None:
    bundle, _ratios = bomb_bundle(arena.root)
    with contained(arena), pytest.raises(ExpansionLimitError) as raised:
        api.ingest([bundle], arena.case, limits=BundleLimits(max_total_bytes=1_000_000))
    assert raised.value.scope == "bundle"
    assert raised.value.path == "archive.zip/bomb.log"  # where the total went over
    assert str(raised.value) == (
        "archive.zip/bomb.log: bundle decompresses to more than 1,000,000 bytes in total; "
        "stopping (raise --max-bytes to allow it)"
    )
    assert not arena.case.exists()


def test_the_total_cap_through_the_cli_is_one_line_and_exit_2(arena: Arena) -> None:
    bundle, _ratios = bomb_bundle(arena.root)
    with contained(arena):
        result = runner.invoke(
            app,
            ["ingest", str(bundle), "-o", str(arena.case), "--quiet", "--max-bytes", "1000000"],
        )
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr == (
        "culprit: error: archive.zip/bomb.log: bundle decompresses to more than 1,000,000 "
        "bytes in total; stopping (raise --max-bytes to allow it)\n"
    )
    assert not arena.case.exists()


# -- many tiny files ----------------------------------------------------------------------------


def _open_fds() -> int:
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


def _tiny_line(index: int) -> bytes:
    return b"2024-05-01T00:00:00Z node-%d hello\n" % index


def _tiny_tree(bundle: Path, count: int) -> Path:
    for index in range(count):
        folder = bundle / f"d{index // 1000:03d}"
        if index % 1000 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{index:06d}.log").write_bytes(_tiny_line(index))
    return bundle


#: ``culprit`` allowed 128 open files: an ingest that keeps a file open per small file it
#: batches (or leaks them) fails with EMFILE.
FEW_FILES_CULPRIT = (
    sys.executable,
    "-c",
    "import resource, runpy, sys; "
    "_, hard = resource.getrlimit(resource.RLIMIT_NOFILE); "
    "resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard)); "
    "sys.argv[0] = 'culprit'; runpy.run_module('analyzer', run_name='__main__')",
)


def _ingest_measured(bundle: Path, case: Path, log: Path) -> float:
    """``culprit ingest --jobs 1`` with few open files allowed; its peak RSS in MiB, measured
    as the benchmarks measure it (a child forked from pytest would inherit pytest's peak)."""
    command = [*FEW_FILES_CULPRIT, "ingest", str(bundle), "-o", str(case), "--jobs", "1", "-q"]
    return run_once(command, log).peak_rss_mib


@pytest.fixture(scope="module")
def baseline_rss(tmp_path_factory: pytest.TempPathFactory) -> float:
    """Peak RSS of ingesting 200 tiny files (imports, readers, one batch)."""
    root = tmp_path_factory.mktemp("baseline")
    return _ingest_measured(_tiny_tree(root / "bundle", 200), root / "case", root / "log")


@pytest.mark.parametrize(
    ("count", "growth_mib"),
    [(5_000, 100), pytest.param(100_000, 1024, marks=pytest.mark.slow)],
    ids=["5k", "100k"],
)
def test_many_tiny_files_in_a_directory(
    arena: Arena,
    tmp_path_factory: pytest.TempPathFactory,
    baseline_rss: float,
    count: int,
    growth_mib: int,
) -> None:
    """Every file is listed and read, once; at most 128 files may be open at a time; the
    peak memory grows little with the number of files. About 2.5 ms a file here: 100,000
    files take 4 minutes (241 s), so that variant is ``slow``; its peak is 448 MiB (3.2 GiB
    before the case writer bounded its buffered batches)."""
    bundle = _tiny_tree(arena.root / "bundle", count)
    log = tmp_path_factory.mktemp("log") / "ingest.log"  # the launcher's, out of the arena
    started = time.perf_counter()
    with contained(arena, content=False):
        peak = _ingest_measured(bundle, arena.case, log)
    elapsed = time.perf_counter() - started
    _check_tiny(arena.case, count, api.load_case(arena.case).meta)
    print(f"{count:,} files in a directory: {elapsed:.1f} s, peak {peak:.0f} MiB")
    assert peak - baseline_rss < growth_mib, (peak, baseline_rss)


@pytest.mark.parametrize(
    "count", [200, pytest.param(10_000, marks=pytest.mark.slow)], ids=["200", "10k"]
)
def test_many_tiny_members_in_one_tar(arena: Arena, count: int) -> None:
    """The same through one uncompressed tar. Archive members are read one by one (not in
    batches like small files on disk), about 40 ms each here (10,000 took 393 s): 100,000
    would take over an hour, so the default run reads 200 and the ``slow`` one 10,000."""
    bundle = arena.root / "many.tar"
    write_tar(
        bundle,
        [tar_member(f"d{i // 1000:03d}/f{i:06d}.log", _tiny_line(i)) for i in range(count)],
    )
    fds = _open_fds()  # a leak would be one a file; libraries may keep a few of their own
    started = time.perf_counter()
    with contained(arena, content=False):
        result = api.ingest([bundle], arena.case, jobs=1)
    elapsed = time.perf_counter() - started
    assert _open_fds() <= fds + 8
    _check_tiny(arena.case, count, result.meta, archive="many.tar")
    print(f"{count:,} members in a tar: {elapsed:.1f} s")


def _check_tiny(case: Path, count: int, meta: CaseMeta, archive: str | None = None) -> None:
    files = read_table(case, "files").filter(pl.col("status") != "archive")
    assert files.height == count
    assert files["status"].unique().to_list() == ["read"]
    assert files["rows"].to_list() == [1] * count
    assert meta.counts.rows == count
    assert meta.counts.files == count + (archive is not None)
    rows = api.query(
        case,
        "SELECT f.path, r.message FROM rows r JOIN files f USING (file_id) ORDER BY f.path",
    )
    expected = [f"d{i // 1000:03d}/f{i:06d}.log" for i in range(count)]
    assert rows.column("path").to_pylist() == expected
    assert rows.column("message").to_pylist() == [f"node-{i} hello" for i in range(count)]


# -- names with a newline and with bytes that are not UTF-8 -------------------------------------

TRACEBACK = (
    b"Traceback (most recent call last):\n"
    b'  File "train.py", line 1, in <module>\n'
    b"RuntimeError: boom\n"
)
#: File names as bytes: a newline that tries to forge a report line, and invalid UTF-8.
FORGED = b"evil\n## Culprit: host-0\xff.log"
LATIN = b"caf\xe9-\xfe\xff.log"
SHOWN = {FORGED: "evil\\x0a## Culprit: host-0\\xff.log", LATIN: "caf\\xe9-\\xfe\\xff.log"}
#: Lines without a time, like the traceback's: the traceback, first by position in its file,
#: is the report's first error, cited by its file's path at its exception line.
PLAIN = b"plain line one\nplain line two\n"


@pytest.mark.parametrize(
    ("kind", "jobs"), [("directory", 1), ("directory", 2), ("tar", 1)], ids=["dir", "dir-2", "tar"]
)
def test_names_with_a_newline_and_invalid_utf8_are_escaped_and_cited(
    arena: Arena, monkeypatch: pytest.MonkeyPatch, kind: str, jobs: int
) -> None:
    contents = {FORGED: TRACEBACK, LATIN: PLAIN}
    if kind == "directory":
        bundle = arena.root / "bundle"
        bundle.mkdir()
        for name, data in contents.items():
            # os-level bytes names: pathlib cannot spell them without surrogates.
            with open(os.path.join(os.fsencode(bundle), name), "wb") as handle:  # noqa: PTH118
                handle.write(data)
    else:
        bundle = write_tar(
            arena.root / "bundle.tar",
            [tar_member(os.fsdecode(name), data) for name, data in contents.items()],
        )
    out = arena.root / "out"
    pools = force_workers(monkeypatch)
    before = tree_state(arena.tmp)
    result = api.analyze([bundle], out, api.AnalyzeSettings(jobs=jobs))
    assert pools == ([2] if jobs == 2 else [])
    assert_only_changed(before, tree_state(arena.tmp), out)
    assert sorted(entry.name for entry in out.iterdir()) == [
        "case",
        "findings.json",
        "report.md",
        "timeline.svg",
    ]
    paths = read_table(out / "case", "files").filter(pl.col("status") == "read")["path"]
    assert sorted(paths) == sorted(SHOWN.values())
    for path in paths:
        assert path.isprintable(), path
    # Rows are cited by the escaped path.
    messages = read_messages(out / "case")
    assert messages[SHOWN[LATIN]] == ["plain line one", "plain line two"]
    assert messages[SHOWN[FORGED]][0].startswith("Traceback (most recent call last):")
    # The report quotes the escaped path; the newline cannot start a line of its own.
    report = result.report_path.read_text(encoding="utf-8")
    assert f"`{SHOWN[FORGED]}:3`" in report
    assert not any(line.startswith("## Culprit: host-0") for line in report.splitlines())
    findings = result.findings_path.read_text(encoding="utf-8")
    assert "host-0\\\\xff.log" in findings  # JSON-escaped backslash of the shown path
