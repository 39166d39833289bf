"""What a benchmark run is measured on: the machine, the package versions and the checkout."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any

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


def source_digest() -> str:
    """SHA-256 over the analyzer package sources (to notice edits during a run)."""
    digest = hashlib.sha256()
    for path in sorted((REPO_DIR / "analyzer").rglob("*.py")):
        digest.update(str(path.relative_to(REPO_DIR)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def machine() -> dict[str, Any]:
    """The ``machine`` object of a results file."""
    memory_kib = _first_value("/proc/meminfo", "MemTotal")
    versions: dict[str, str | None] = {}
    for package in ("culprit", "polars", "pyarrow", "duckdb", "numpy"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "analyzer")
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
        "analyzer_modified_vs_commit": bool(dirty),
    }
