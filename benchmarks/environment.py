"""What a benchmark run is measured on: the machine, the package versions and the checkout."""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.metadata
import os
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any, Final

from benchmarks import REPO_DIR


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


def source_digest(package: str = "analyzer") -> str:
    """SHA-256 over the sources of ``package`` (a top-level directory of the repository): the
    code under test, fingerprinted to notice edits during a run."""
    digest = hashlib.sha256()
    for path in sorted((REPO_DIR / package).rglob("*.py")):
        digest.update(str(path.relative_to(REPO_DIR)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


#: Sources of ``fixtures/`` that do not change what the generator writes (freezing the replay
#: suite): left out of :func:`generator_digest` so editing them does not void cached bundles.
_NOT_GENERATOR: Final = ("fixtures/replay_suite.py",)


def generator_digest() -> str:
    """The first 12 hex digits of the SHA-256 over the fixtures generator's sources: names the
    cached bundles and cases built from its output."""
    digest = hashlib.sha256()
    for path in sorted((REPO_DIR / "fixtures").rglob("*.py")):
        name = str(path.relative_to(REPO_DIR))
        if name not in _NOT_GENERATOR:
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def modified_vs_commit(package: str) -> bool:
    """Whether tracked files of ``package`` differ from the checked-out commit."""
    return bool(git("status", "--porcelain", "--untracked-files=no", "--", package))


def machine(package: str = "analyzer") -> dict[str, Any]:
    """The ``machine`` object of a results file; ``<package>_modified_vs_commit`` tells whether
    the code under test (``analyzer/`` for ingest, ``fixtures/`` for generation) had
    uncommitted changes."""
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
        f"{package}_modified_vs_commit": modified_vs_commit(package),
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


def provenance(
    host: dict[str, Any], digest: str, package: str = "analyzer"
) -> tuple[bool, dict[str, Any]]:
    """Whether ``package``'s sources or the checked-out commit changed since ``digest`` and
    ``host`` were taken when the run began (edits or a checkout would make the results
    misattributed), and the results-file fields that record the machine and all that."""
    after, head = source_digest(package), git("rev-parse", "HEAD")
    changed = after != digest or head != host["git_commit"]
    return changed, {
        "machine": host,
        f"{package}_sha256": digest,
        f"{package}_changed_during_run": changed,
        f"{package}_sha256_after": after,
        "git_commit_after": head,
    }
