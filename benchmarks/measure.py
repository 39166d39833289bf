"""Timing a child process: ``culprit ingest`` on one input, or any command (:func:`run_once`).

Each input is ingested ``runs`` times by ``culprit ingest FILE -o CASE --force --quiet`` in a
child process. Wall time is measured by this process around the child (``perf_counter``, so it
includes interpreter start-up and imports). Peak RSS and user/system CPU come from a tiny
Python launcher that starts ``culprit`` and collects it with ``os.wait4``: the kernel's
``rusage`` of exactly that child, as ``/usr/bin/time -v`` reports it, unpolluted by earlier
runs (``RUSAGE_CHILDREN`` keeps a high-water mark over all of them) or by this process's own
memory (on Linux a child's peak RSS is seeded with its parent's at fork and survives ``exec``,
which is why the launcher, a fresh ~10 MiB process, sits in between). That high-water mark is
the largest single process's; culprit reads files in worker processes, so the launcher also
samples the summed RSS of the child and its descendants every 0.1 s, and the peak RSS
reported is the larger of the two. The case directory is deleted before every run, outside
the timed region. The input is read from the page cache (it was just generated or read by
the previous run); the numbers are warm-cache numbers. An input is a file or a directory (a
bundle); a directory's size is the sum of its files' sizes.

:func:`run_once` times any command the same way (``python -m benchmarks.generate`` times the
fixtures generator with it), and :func:`timings` summarizes the runs of one measurement.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl

from benchmarks import MIB
from benchmarks.progress import say


@dataclass(frozen=True)
class Run:
    """One ingest: wall time, and the kernel's rusage of the ``culprit`` process."""

    seconds: float
    peak_rss_mib: float
    user_s: float
    system_s: float
    load_before: float  # 1-minute load average before and after the run (noise indicator)
    load_after: float


class BenchmarkError(RuntimeError):
    """The ingest under test failed."""


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
    """The files of ``path``: itself when it is a file, else every file under it (symbolic
    links left out, as ``culprit ingest`` counts a directory's size)."""
    if path.is_file():
        return [path]
    return [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()]


def tree_bytes(path: Path) -> int:
    """The size of a file, or the sum of the sizes of the files under a directory."""
    return sum(p.stat().st_size for p in tree_files(path))


def describe(run: Run, size: int) -> str:
    """One run for the progress messages: wall time, MiB/s over ``size`` bytes, peak RSS, CPU
    and load."""
    return (
        f"{run.seconds:.1f} s ({size / MIB / run.seconds:.1f} MiB/s), "
        f"peak RSS {run.peak_rss_mib:,.0f} MiB, CPU {run.user_s + run.system_s:.1f} s, "
        f"load {run.load_before:.1f} -> {run.load_after:.1f}"
    )


def timings(runs: list[Run], size: int) -> dict[str, Any]:
    """The timing fields of a result: median, min and max wall time, MiB/s over ``size`` bytes
    at the median, the highest peak RSS, and every run."""
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


def _case_facts(case: Path) -> dict[str, Any]:
    """What the ingest made of the input: counts, readers and statuses, size on disk, and the
    bytes culprit decoded and the compressions it met (from the inventory, ``None`` when it
    does not say)."""
    meta = json.loads((case / "case.json").read_text())
    files = pl.read_parquet(case / "files.parquet")
    size = tree_bytes(case)
    decoded = int(files["decoded_bytes"].sum()) if "decoded_bytes" in files.columns else None
    compressions = (
        sorted(set(files["compression"].drop_nulls().to_list()))
        if "compression" in files.columns
        else None
    )
    return {
        "counts": meta["counts"],
        "readers": sorted(set(files["reader"].to_list())),
        "statuses": sorted(set(files["status"].to_list())),
        "case_mib": size / MIB,
        "decoded_bytes": decoded,
        "compressions": compressions,
    }


def measure(name: str, path: Path, runs: int, workdir: Path) -> dict[str, Any]:
    """Ingest the input ``name`` at ``path`` (a file or a directory) ``runs`` times; the result
    object of a results file. Cases and run logs go to ``workdir``."""
    case = workdir / f"case-{name}"
    command = [
        *culprit_command(),
        "ingest",
        str(path),
        "-o",
        str(case),
        "--force",
        "--quiet",
    ]
    size = tree_bytes(path)
    results: list[Run] = []
    for number in range(1, runs + 1):
        shutil.rmtree(case, ignore_errors=True)
        run = run_once(command, workdir / f"{name}-{number}.log")
        results.append(run)
        say(f"  {name} run {number}/{runs}: {describe(run, size)}")
    facts = _case_facts(case)
    shutil.rmtree(case, ignore_errors=True)
    return {
        "input": name,
        "file": path.name,
        "bytes": size,
        "input_mib": size / MIB,
        "records": facts["counts"]["records"],
        "rows": facts["counts"]["rows"],
        "counts": facts["counts"],
        "readers": facts["readers"],
        "statuses": facts["statuses"],
        "case_mib": facts["case_mib"],
        "decoded_bytes": facts["decoded_bytes"],
        "compressions": facts["compressions"],
        **timings(results, size),
        "command": shlex.join(command),
    }
