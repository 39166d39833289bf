"""Decompression baselines for the compressed ingest inputs: how fast can the file be inflated
at all?

``culprit ingest`` of a ``.gz`` or ``.zst`` input can be no faster than decompressing it, so
each compressed input's ingest figure is put beside the time a bare decoder takes over the
same file, writing what it decodes to ``/dev/null``:

* gzip: :mod:`zlib` (``decompressobj(wbits=31)``), and ISA-L's inflate (``isal.isal_zlib``,
  the ``igzip`` library, what culprit's own gzip decoder uses; a dependency of culprit);
* zstd: ``zstandard`` (what culprit uses).

Each baseline is a fresh ``python -c`` child timed by :func:`benchmarks.measure.run_once`
(wall time around it, interpreter start-up included: a few tens of milliseconds), ``runs``
times; it prints the number of bytes it decoded, which must equal what culprit decoded.
MiB/s = decoded bytes / median wall time.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from benchmarks.measure import BenchmarkError, Run, run_once, timings
from benchmarks.progress import say

#: A multi-member gzip inflater over the file ``argv[1]``, written to /dev/null; prints the
#: decoded byte count. ``{module}`` is ``zlib`` or ``isal.isal_zlib`` (the same API).
_INFLATE: Final = """
import sys
from {module} import decompressobj
total = 0
inflater = decompressobj(wbits=31)
with open(sys.argv[1], "rb") as source, open("/dev/null", "wb") as sink:
    while data := source.read(1 << 20):
        while data:
            out = inflater.decompress(data)
            sink.write(out)
            total += len(out)
            if inflater.eof:
                data = inflater.unused_data
                inflater = decompressobj(wbits=31)
            else:
                data = b""
print(total)
"""
#: A zstd decoder over the file ``argv[1]`` (all frames), written to /dev/null; prints the
#: decoded byte count.
_UNZSTD: Final = """
import sys
import zstandard
total = 0
with open(sys.argv[1], "rb") as source, open("/dev/null", "wb") as sink:
    reader = zstandard.ZstdDecompressor().stream_reader(source, read_across_frames=True)
    while data := reader.read(1 << 20):
        sink.write(data)
        total += len(data)
print(total)
"""


@dataclass(frozen=True)
class Baseline:
    """One bare decoder: its name, label, the package that must be importable, the code."""

    name: str
    label: str
    module: str
    code: str
    #: The distribution whose version is recorded.
    distribution: str | None


#: The baselines of each compression, in table order.
BASELINES: Final[dict[str, tuple[Baseline, ...]]] = {
    "gzip": (
        Baseline("zlib", "zlib inflate", "zlib", _INFLATE.format(module="zlib"), None),
        Baseline(
            "isal",
            "ISA-L inflate (`isal.isal_zlib`)",
            "isal",
            _INFLATE.format(module="isal.isal_zlib"),
            "isal",
        ),
    ),
    "zstd": (Baseline("zstandard", "zstd (`zstandard`)", "zstandard", _UNZSTD, "zstandard"),),
}


def available(compression: str) -> tuple[list[Baseline], list[Baseline]]:
    """The baselines of ``compression`` whose module is importable here, and the others."""
    found: list[Baseline] = []
    missing: list[Baseline] = []
    for baseline in BASELINES.get(compression, ()):
        (found if importlib.util.find_spec(baseline.module) else missing).append(baseline)
    return found, missing


def _version(baseline: Baseline) -> str | None:
    if baseline.distribution is None:
        import zlib

        return f"zlib {zlib.ZLIB_RUNTIME_VERSION}"
    try:
        return f"{baseline.distribution} {importlib.metadata.version(baseline.distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return None


def measure_baseline(baseline: Baseline, path: Path, runs: int, logs: Path) -> dict[str, Any]:
    """``baseline`` over ``path`` ``runs`` times; the result object (MiB/s over the bytes it
    decoded)."""
    command = [sys.executable, "-c", baseline.code, str(path)]
    results: list[Run] = []
    decoded: set[int] = set()
    for number in range(1, runs + 1):
        log = logs / f"inflate-{path.name}-{baseline.name}-{number}.log"
        run = run_once(command, log)
        results.append(run)
        decoded.add(int(log.read_text().split()[-1]))
        say(f"  {baseline.name} run {number}/{runs}: {run.seconds:.2f} s")
    if len(decoded) != 1:
        raise BenchmarkError(f"{baseline.name} decoded {sorted(decoded)} bytes from {path}")
    size = decoded.pop()
    timed = timings(results, size)
    say(f"  {baseline.label}: {timed['mib_per_s']:,.0f} MiB/s of decoded bytes")
    return {
        "name": baseline.name,
        "label": baseline.label,
        "version": _version(baseline),
        "command": f"python -c '<{baseline.name} decode to /dev/null>' FILE",
        "decoded_bytes": size,
        "stored_bytes": path.stat().st_size,
        **timed,
    }


def measure_all(path: Path, compression: str, runs: int, logs: Path) -> dict[str, Any]:
    """Every available baseline of ``compression`` over ``path``: ``{"results": [...],
    "missing": [names]}`` (a missing one is not importable here)."""
    found, missing = available(compression)
    for baseline in missing:
        say(f"  {baseline.name}: `{baseline.module}` is not importable, not measured")
    results = [measure_baseline(baseline, path, runs, logs) for baseline in found]
    return {"results": results, "missing": [baseline.name for baseline in missing]}


def fastest(inflate: dict[str, Any]) -> dict[str, Any] | None:
    """The fastest baseline (highest MiB/s at the median) of :func:`measure_all`'s result."""
    results = inflate.get("results") or []
    return max(results, key=lambda r: float(r["mib_per_s"]), default=None)


def describe(inflate: dict[str, Any]) -> str:
    """The baselines for a progress or RESULTS.md line: ``zlib 310 MiB/s, isal 880 MiB/s``."""
    parts = [
        f"{r['label']} {r['mib_per_s']:,.0f} MiB/s (median of "
        f"{len(r['runs'])}: {statistics.median(run['seconds'] for run in r['runs']):.2f} s)"
        for r in inflate.get("results", [])
    ]
    parts += [f"{name} not installed" for name in inflate.get("missing", [])]
    return ", ".join(parts) or "none"
