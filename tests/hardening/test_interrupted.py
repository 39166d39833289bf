"""An ingest killed half-way (SIGKILL: no handler, no cleanup) leaves nothing that looks like
a complete case, an existing case survives it intact, and a rerun starts cleanly.

The bundle is big enough (64 hosts, 30 minutes, about 80,000 rows, about 5 s of ingest) that
the first row group reaches the staging directory well before the commit; the ingest runs as
``python -m analyzer ingest`` in a child process and is killed as soon as it has.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from analyzer import api
from analyzer.errors import BundleError, CaseError, UsageError
from fixtures.generate import generate
from fixtures.options import Options
from fixtures.truth import BUNDLE_DIR
from tests.helpers import changed_paths, read_table, tree_state

CULPRIT = (sys.executable, "-m", "analyzer")
TABLES = ("rows", "files", "quarantine", "duplicates", "hosts")
#: A part file larger than this holds at least one row group (an empty one is a few bytes).
SOME_ROWS = 64 << 10


def staging_of(case: Path) -> Path:
    return case.parent / f".{case.name}.partial"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("interrupted")
    generate("host-crash-heartbeat", Options(hosts=64, seed=1, minutes=30.0, rate=60.0), root)
    return root / BUNDLE_DIR


@pytest.fixture(scope="module")
def clean(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The case an uninterrupted ingest makes."""
    case = tmp_path_factory.mktemp("clean") / "case"
    api.ingest([bundle], case, jobs=1)
    return case


def assert_same_tables(case: Path, clean: Path) -> None:
    for name in TABLES:
        got, want = read_table(case, name), read_table(clean, name)
        assert got.height > 0 or name in ("quarantine", "duplicates"), name
        assert got.equals(want), name
    meta = json.loads((case / "case.json").read_text())
    want_meta = json.loads((clean / "case.json").read_text())
    assert meta["counts"] == want_meta["counts"]
    assert meta["bundle"]["content_hash"] == want_meta["bundle"]["content_hash"]


def kill_half_way(bundle: Path, case: Path, *options: str) -> None:
    """Run ``culprit ingest`` and SIGKILL it once rows have reached its staging directory."""
    parts = staging_of(case) / "rows"
    command = [*CULPRIT, "ingest", str(bundle), "-o", str(case), "--jobs", "1", "-q", *options]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        give_up = time.monotonic() + 120
        while not any(p.stat().st_size > SOME_ROWS for p in _listing(parts)):
            if child.poll() is not None:
                pytest.fail(
                    f"the ingest ended (exit {child.returncode}) before any rows were "
                    "written: the bundle is too small to interrupt"
                )
            assert time.monotonic() < give_up, "no rows reached the staging directory"
            time.sleep(0.002)
        child.send_signal(signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()
    assert child.returncode == -signal.SIGKILL, "the ingest finished before it was killed"
    assert staging_of(case).is_dir(), "killed without a chance to clean up: staging remains"


def _listing(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except FileNotFoundError:
        return []


def _debris(case: Path) -> list[str]:
    """Hidden siblings of the case: staging or a previous case being swapped out."""
    return sorted(p.name for p in case.parent.iterdir() if p.name.startswith(f".{case.name}."))


def test_a_killed_first_ingest_leaves_no_case_and_a_rerun_is_clean(
    bundle: Path, clean: Path, tmp_path: Path
) -> None:
    case = tmp_path / "case"
    kill_half_way(bundle, case)
    assert not (case / "case.json").exists()
    assert not case.exists()
    with pytest.raises(CaseError, match="no such case directory"):
        api.load_case(case)
    with pytest.raises(CaseError, match="no such case directory"):
        api.query(case, "SELECT count(*) FROM rows")
    with pytest.raises(CaseError, match="no such case directory"):
        api.case_info(case)
    with pytest.raises(CaseError, match="no such case directory"):
        api.match(case)
    # `analyze CASE` takes a path that is not a case for a bundle: it needs -o, and with one
    # the missing path is named.
    with pytest.raises(UsageError, match="a bundle needs -o DIR"):
        api.analyze([case])
    with pytest.raises(BundleError, match="no such file or directory") as raised:
        api.analyze([case], tmp_path / "out")
    assert raised.value.path == str(case)
    # The staging directory itself never looks like a case either.
    with pytest.raises(CaseError, match="no case.json"):
        api.load_case(staging_of(case))

    result = api.ingest([bundle], case, jobs=1)
    assert not result.reused
    assert _debris(case) == []
    assert_same_tables(case, clean)


def test_a_killed_reingest_keeps_the_old_case_intact(
    bundle: Path, clean: Path, tmp_path: Path
) -> None:
    case = tmp_path / "case"
    shutil.copytree(clean, case)
    before = tree_state(case)
    kill_half_way(bundle, case, "--force")
    assert changed_paths(before, tree_state(case)) == []
    assert api.load_case(case).meta.counts.rows == api.load_case(clean).meta.counts.rows
    assert_same_tables(case, clean)
    # Only the killed run's staging is left, for the next ingest to remove (the first test
    # shows that it does), and its lock file, which the kernel released with the process.
    assert _debris(case) == [f".{case.name}.lock", f".{case.name}.partial"]


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_killed_parallel_ingest_leaves_no_worker_behind(bundle: Path, tmp_path: Path) -> None:
    """Spawned workers (and multiprocessing's resource tracker) die with a SIGKILLed ingest
    instead of waiting on their pipes forever."""
    case = tmp_path / "case"
    rows = staging_of(case) / "rows"
    command = [*CULPRIT, "ingest", str(bundle), "-o", str(case), "--jobs", "2", "-q"]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        give_up = time.monotonic() + 120
        while not _listing(rows) or len(_children(child.pid)) < 2:
            assert child.poll() is None, "the ingest ended before its workers were seen"
            assert time.monotonic() < give_up, "no worker started"
            time.sleep(0.01)
        workers = _children(child.pid)
        child.send_signal(signal.SIGKILL)
        child.wait()
        give_up = time.monotonic() + 5
        while any(_running(pid) for pid in workers) and time.monotonic() < give_up:
            time.sleep(0.1)
        assert [pid for pid in workers if _running(pid)] == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for pid in workers:  # this test's own orphans, by id
            if _running(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_case_is_complete_at_every_step_of_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replacing an existing case must never leave a moment without one (a kill there would
    lose the old case and leave the new one in a hidden directory). Every rename is slowed
    down while a watcher checks that the case directory holds a complete case."""
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "node-1.log").write_bytes(b"2024-05-01T00:00:00Z node-1 starting\n")
    case = tmp_path / "case"
    api.ingest([bundle], case)
    created = json.loads((case / "case.json").read_text())["created_at"]

    gaps: dict[str, str] = {}  # the first failure of each kind the watcher saw
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            try:
                json.loads((case / "case.json").read_text())
            except (OSError, ValueError) as exc:
                gaps.setdefault(type(exc).__name__, str(exc))

    def slowed(real: Callable[..., Any]) -> Callable[..., Any]:
        def rename(*args: Any, **kwargs: Any) -> Any:
            done = real(*args, **kwargs)
            time.sleep(0.05)
            return done

        return rename

    monkeypatch.setattr(os, "replace", slowed(os.replace))
    monkeypatch.setattr(os, "rename", slowed(os.rename))
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        api.ingest([bundle], case, force=True)
    finally:
        stop.set()
        watcher.join()
    assert gaps == {}
    assert json.loads((case / "case.json").read_text())["created_at"] != created
    assert _debris(case) == []
    assert read_table(case, "rows")["message"].to_list() == ["node-1 starting"]
    assert pl.read_parquet(case / "files.parquet").height == 1


def test_an_up_to_date_rerun_removes_what_a_killed_ingest_left(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "node-1.log").write_bytes(b"2024-05-01T00:00:00Z node-1 starting\n")
    case = tmp_path / "case"
    api.ingest([bundle], case)
    stale = staging_of(case)
    (stale / "rows").mkdir(parents=True)
    (stale / "rows" / "part-000000-0000.parquet").write_bytes(b"left by a killed run")
    again = api.ingest([bundle], case)
    assert again.reused
    assert not stale.exists()
    assert api.load_case(case).meta == again.meta
