"""How every benchmark measures: a child process timed (:func:`run_once`), and what the run
was measured on (:class:`Start`: the machine, the package versions and the checkout).

Wall time is taken by this process around the child (interpreter start-up and imports
included). Peak RSS and CPU come from a tiny launcher that starts the command and collects it
with ``os.wait4``: the kernel's ``rusage`` of exactly that child, unpolluted by earlier runs
(``RUSAGE_CHILDREN`` keeps a high-water mark over all of them) or by this process's memory (a
child's peak RSS is seeded with its parent's at fork and survives ``exec``). culprit reads
files in worker processes, so the launcher also samples the summed RSS of the child's process
tree every 0.1 s; the peak reported is the larger of the two.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from benchmarks import MIB, REPO_DIR, say


@dataclass(frozen=True)
class Run:
    """One run: wall time, and the kernel's rusage of the child process."""

    seconds: float
    peak_rss_mib: float
    user_s: float
    system_s: float
    load_before: float  # 1-minute load average before and after the run (noise indicator)
    load_after: float


class BenchmarkError(RuntimeError):
    """A measured command failed, or what it made is not what was expected."""


def culprit_command() -> list[str]:
    """The ``culprit`` console script of this interpreter's environment (or ``-m analyzer``)."""
    script = Path(sys.executable).with_name("culprit")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "analyzer"]


#: Runs ``argv[2:]`` as a child, waits for it with ``os.wait4`` and writes the kernel's rusage
#: of that child to the file ``argv[1]``. The launcher is a small fresh process, so the child's
#: peak RSS starts from the launcher's (~10 MiB), not from this benchmark process's: on Linux a
#: process's high-water mark survives ``exec`` and a child forked from a big parent inherits it.
#: The kernel's figure is the high-water mark of the largest single process of the tree; culprit
#: reads files in worker processes, so the launcher also samples the sum of VmRSS over the child
#: and all its descendants every 0.1 s (``tree_kib``); the larger of the two is reported.
_LAUNCHER: Final = """
import json, os, subprocess, sys, threading, time
child = subprocess.Popen(sys.argv[2:])
peak = [0]
running = [True]
def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
def tree(root):
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as stat:
                    parents[int(name)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = {root}, [root]
    while frontier:
        frontier = [p for p, parent in parents.items() if parent in frontier and p not in found]
        found.update(frontier)
    return found
def sample():
    while running[0]:
        peak[0] = max(peak[0], sum(rss_kib(pid) for pid in tree(child.pid)))
        time.sleep(0.1)
sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
_, status, usage = os.wait4(child.pid, 0)
running[0] = False
child.returncode = code = os.waitstatus_to_exitcode(status)
with open(sys.argv[1], "w") as out:
    json.dump(
        {"maxrss": usage.ru_maxrss, "tree_kib": peak[0], "user": usage.ru_utime,
         "system": usage.ru_stime},
        out,
    )
sys.exit(code if code >= 0 else 128 - code)
"""


def run_once(command: list[str], log: Path) -> Run:
    """Run ``command`` via the launcher; wall time and the kernel's rusage of the child."""
    report = log.with_suffix(".rusage.json")
    launcher = [sys.executable, "-S", "-c", _LAUNCHER, str(report)]
    load_before = os.getloadavg()[0]
    with log.open("wb") as sink:
        started = time.perf_counter()
        child = subprocess.Popen([*launcher, *command], stdout=sink, stderr=subprocess.STDOUT)
        try:
            code = child.wait()
        except BaseException:
            child.kill()
            child.wait()
            raise
        seconds = time.perf_counter() - started
    if code != 0:
        tail = log.read_text(errors="replace")[-2000:]
        raise BenchmarkError(f"{shlex.join(command)} exited with {code}:\n{tail}")
    usage = json.loads(report.read_text())
    rss_bytes = max(
        usage["maxrss"] * (1 if sys.platform == "darwin" else 1024), usage.get("tree_kib", 0) * 1024
    )
    return Run(
        seconds, rss_bytes / MIB, usage["user"], usage["system"], load_before, os.getloadavg()[0]
    )


def tree_files(path: Path) -> list[Path]:
    """``path``, or the files under it (no symbolic links, as ``culprit ingest`` counts them)."""
    if path.is_file():
        return [path]
    return [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()]


def tree_bytes(path: Path) -> int:
    """The size of a file, or the sum of the sizes of the files under a directory."""
    return sum(p.stat().st_size for p in tree_files(path))


def describe(run: Run, size: int | None) -> str:
    """One run for the progress messages: wall time (and MiB/s over ``size`` bytes), peak RSS,
    CPU and load."""
    rate = "" if size is None else f" ({size / MIB / run.seconds:.1f} MiB/s)"
    return (
        f"{run.seconds:.1f} s{rate}, peak RSS {run.peak_rss_mib:,.0f} MiB, CPU "
        f"{run.user_s + run.system_s:.1f} s, load {run.load_before:.1f} -> {run.load_after:.1f}"
    )


def timings(runs: list[Run], size: int) -> dict[str, Any]:
    """A result's timing fields: median, min, max, MiB/s at the median, peak RSS, the runs."""
    seconds = [run.seconds for run in runs]
    median = statistics.median(seconds)
    return {
        "median_s": median,
        "min_s": min(seconds),
        "max_s": max(seconds),
        "mib_per_s": size / MIB / median,
        "peak_rss_mib": max(run.peak_rss_mib for run in runs),
        "runs": [run.__dict__ for run in runs],
    }


def warm(paths: Sequence[Path]) -> None:
    """Read every file under ``paths`` once, so the timed runs read from the page cache."""
    for root in paths:
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if path.is_file():
                with path.open("rb") as source:
                    while source.read(16 * MIB):
                        pass


def repeat(
    command: list[str],
    runs: int,
    logs: Path,
    name: str,
    before: Callable[[], None] = lambda: None,
    *,
    sync: bool = False,
) -> Iterator[tuple[int, Run]]:
    """Run ``command`` ``runs`` times, ``before()`` and (``sync``) writing back dirty pages
    ahead of each, untimed; yields each run's number and figures as it ends."""
    for number in range(1, runs + 1):
        before()
        if sync:
            os.sync()
        yield number, run_once(command, logs / f"{name}-{number}.log")


@contextlib.contextmanager
def work_directory(parent: Path, prefix: str, *, keep: bool) -> Iterator[Path]:
    """A fresh directory under ``parent`` for a run's work, deleted unless ``keep``."""
    parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield path
    finally:
        if keep:
            say(f"kept {path}")
        else:
            shutil.rmtree(path, ignore_errors=True)


class Main(Protocol):
    """A benchmark's entry point: its command-line arguments (this process's when None)."""

    def __call__(self, argv: Sequence[str] | None = None) -> int: ...


def entry_point(main: Main) -> Main:
    """A benchmark's ``main``, ending on a failed measurement with one line and status 1."""

    @functools.wraps(main)
    def run(argv: Sequence[str] | None = None) -> int:
        try:
            return main(argv)
        except BenchmarkError as exc:
            say(f"error: {exc}")
            return 1

    return run


# -- what a run is measured on: the machine, the package versions and the checkout ---------


def _first_value(path: str, key: str) -> str | None:
    """The value of the first ``key: value`` line of ``path`` (a ``/proc`` file) with ``key``."""
    try:
        for line in Path(path).read_text().splitlines():
            name, _, value = line.partition(":")
            if name.strip() == key:
                return value.strip()
    except OSError:
        pass
    return None


def git(*args: str) -> str | None:
    """The output of ``git args…`` in the repository, or ``None`` when git fails."""
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO_DIR), *args], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def source_digest(package: str = "analyzer", leave_out: tuple[str, ...] = ()) -> str:
    """SHA-256 over the sources of ``package`` (a top-level directory of the repository) but
    those under ``leave_out``: the code under test, fingerprinted to notice edits during a run."""
    digest = hashlib.sha256()
    for path in sorted((REPO_DIR / package).rglob("*.py")):
        name = str(path.relative_to(REPO_DIR))
        if not name.startswith(leave_out):
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


#: Sources of ``fixtures/`` that do not change what the scenario generator writes (freezing the
#: replay suite, the sized logs): left out of :func:`generator_digest`, so that editing them
#: does not void the cached bundles and cases.
NOT_GENERATOR: Final = ("fixtures/replay_suite.py", "fixtures/sized/")


def generator_digest() -> str:
    """The first 12 hex digits of the digest of the scenario generator's sources: names the
    cached bundles and cases built from its output."""
    return source_digest("fixtures", NOT_GENERATOR)[:12]


def machine(package: str = "analyzer") -> dict[str, Any]:
    """The ``machine`` object of a results file, with whether the code under test (``package``)
    had uncommitted changes."""
    memory_kib = _first_value("/proc/meminfo", "MemTotal")
    versions: dict[str, str | None] = {}
    for distribution in ("culprit", "polars", "pyarrow", "duckdb", "numpy"):
        try:
            versions[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            versions[distribution] = None
    return {
        "hostname": socket.gethostname(),
        "cpu": _first_value("/proc/cpuinfo", "model name") or platform.processor(),
        "cores": os.cpu_count(),
        # KiB to GiB.
        "ram_gib": round(int(memory_kib.split()[0]) / (1 << 20), 1) if memory_kib else None,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": versions,
        "git_commit": git("rev-parse", "HEAD"),
        f"{package}_modified_vs_commit": bool(
            git("status", "--porcelain", "--untracked-files=no", "--", package)
        ),
    }


def run_stamp(kind: str, command: str, runs: int) -> dict[str, Any]:
    """The fields that open every results file: kind, date, time recorded, command, runs."""
    now = dt.datetime.now(dt.UTC).astimezone()
    return {
        "kind": kind,
        "date": now.date().isoformat(),
        "recorded_at": now.isoformat(timespec="seconds"),
        "command": command,
        "runs": runs,
    }


@dataclass(frozen=True)
class Start:
    """What a run began on: the machine (with the checked-out commit) and the digest of the
    code under test, ``package``'s sources."""

    package: str
    digest: str
    host: dict[str, Any]

    @classmethod
    def now(cls, package: str = "analyzer") -> Start:
        return cls(package, source_digest(package), machine(package))

    def provenance(self) -> dict[str, Any]:
        """The results-file fields of the machine and the digest, and whether the sources or the
        commit changed since the run began (which would misattribute the results)."""
        after, head = source_digest(self.package), git("rev-parse", "HEAD")
        return {
            "machine": self.host,
            f"{self.package}_sha256": self.digest,
            f"{self.package}_changed_during_run": after != self.digest
            or head != self.host["git_commit"],
            f"{self.package}_sha256_after": after,
            "git_commit_after": head,
        }
