"""Two culprit processes writing one case: the second refuses clearly (or waits with
``--wait``) and the first's case comes out intact; a lock left by a killed process blocks no
one (issue #24, item 7).

The first ingest runs in a thread of the test and is held half-way (its staging directory
already holds rows) by a progress callback, so "at the same time" is deterministic; the lock
is ``flock(2)``, which two open files of one process contend for like two processes do.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from analyzer import api
from analyzer.case.lock import case_lock, lock_path
from analyzer.cli import app
from analyzer.cli.exits import EXIT_ERROR
from analyzer.errors import CaseLockedError
from tests.hardening.test_disk_full import leftovers, make_bundle, tables
from tests.helpers import check_accounting

runner = CliRunner(env={"COLUMNS": "200"})


class HeldProgress:
    """Progress that stops the ingest at its first report until released."""

    def __init__(self) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()

    def start(self, total: int | None) -> None:
        return None

    def file(self, path: str) -> None:
        return None

    def advance(self, stored_bytes: int) -> None:
        self.reached.set()
        if not self.release.wait(60):
            raise TimeoutError("never released")


@dataclass
class Held:
    """An ingest running in a thread, held half-way."""

    progress: HeldProgress
    thread: threading.Thread
    outcome: dict[str, object] = field(default_factory=dict)

    def finish(self) -> None:
        self.progress.release.set()
        self.thread.join(60)
        assert not self.thread.is_alive()


Hold = Callable[[Path, Path], Held]


@pytest.fixture
def hold() -> Iterator[Hold]:
    """Start an ingest of ``bundle`` into ``case`` in a thread and return once it is
    half-way; it is released at the end of the test whatever happens."""
    started: list[Held] = []

    def start(bundle: Path, case: Path) -> Held:
        progress = HeldProgress()
        held = Held(progress, threading.Thread(target=lambda: None))

        def run() -> None:
            try:
                held.outcome["result"] = api.ingest([bundle], case, jobs=1, progress=progress)
            except BaseException as exc:
                held.outcome["error"] = exc

        held.thread = threading.Thread(target=run, daemon=True)
        held.thread.start()
        started.append(held)
        assert progress.reached.wait(60), held.outcome
        assert (case.parent / f".{case.name}.partial").is_dir()
        return held

    yield start
    for held in started:
        held.progress.release.set()
        held.thread.join(60)


def test_a_second_ingest_into_the_same_case_refuses_and_the_first_is_intact(
    tmp_path: Path, hold: Hold
) -> None:
    bundle = make_bundle(tmp_path)
    expected = tables(api.ingest([bundle], tmp_path / "alone", jobs=1).case)
    case = tmp_path / "out" / "case"
    held = hold(bundle, case)

    second = runner.invoke(app, ["ingest", str(bundle), "-o", str(case), "-q", "--force"])

    assert second.exit_code == EXIT_ERROR, second.output
    assert second.stderr.count("\n") == 1
    assert second.stderr.startswith(f"culprit: error: {case}: another culprit process (")
    assert f"pid {os.getpid()}" in second.stderr
    assert "is writing this case" in second.stderr
    assert "--wait SECONDS" in second.stderr
    held.finish()
    assert "error" not in held.outcome, held.outcome
    check_accounting(case)
    got = tables(case)
    assert all(got[name].equals(expected[name]) for name in expected)
    assert leftovers(tmp_path) == []


def test_analyze_takes_the_same_lock(tmp_path: Path, hold: Hold) -> None:
    bundle = make_bundle(tmp_path)
    out = tmp_path / "out"
    held = hold(bundle, out / "case")

    second = runner.invoke(app, ["analyze", str(bundle), "-o", str(out), "-q", "--jobs", "1"])

    assert second.exit_code == EXIT_ERROR, second.output
    assert f"{out / 'case'}: another culprit process" in second.stderr
    assert not (out / "report.md").exists()
    held.finish()
    assert "error" not in held.outcome, held.outcome
    check_accounting(out / "case")


def test_wait_waits_for_the_first_then_goes_on(tmp_path: Path, hold: Hold) -> None:
    bundle = make_bundle(tmp_path)
    case = tmp_path / "out" / "case"
    held = hold(bundle, case)

    with pytest.raises(CaseLockedError, match=r"waited 0\.3 s"):
        api.ingest([bundle], case, jobs=1, wait_s=0.3)
    threading.Timer(0.5, held.progress.release.set).start()
    started = time.monotonic()
    second = api.ingest([bundle], case, jobs=1, wait_s=30)

    assert time.monotonic() - started >= 0.4
    held.finish()
    assert "error" not in held.outcome, held.outcome
    # The first wrote the case; the second found it up to date.
    assert second.reused
    check_accounting(case)
    assert leftovers(tmp_path) == []


_HOLD_LOCK = """
import sys, time
from pathlib import Path
from analyzer.case.lock import case_lock
with case_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(120)
"""


def test_a_lock_left_by_a_killed_process_blocks_no_one(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    case = tmp_path / "out" / "case"
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(case)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "locked"
        with pytest.raises(CaseLockedError, match=f"pid {child.pid}"):
            api.ingest([bundle], case, jobs=1)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        if child.stdout is not None:
            child.stdout.close()
    # The killed holder's file is still there, naming a process that no longer exists.
    assert json.loads(lock_path(case).read_text())["pid"] == child.pid
    with pytest.raises(ProcessLookupError):
        os.kill(child.pid, 0)

    started = time.monotonic()
    result = api.ingest([bundle], case, jobs=1)

    assert time.monotonic() - started < 30
    assert not result.reused
    check_accounting(case)
    assert leftovers(tmp_path) == []


def test_the_lock_is_released_and_removed_when_the_holder_fails(tmp_path: Path) -> None:
    case = tmp_path / "new" / "case"
    seen: list[bool] = []

    def fail() -> None:
        with case_lock(case):
            seen.append(lock_path(case).is_file())
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fail()
    assert seen == [True]
    # The directory the lock made for it is gone with it: nothing is left of a failed run.
    assert not (tmp_path / "new").exists()
    with case_lock(case):
        pass
    assert (tmp_path / "new").is_dir()
    assert leftovers(tmp_path) == []
