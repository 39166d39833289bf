"""Ingest throughput benchmark: ``python -m benchmarks.ingest [--size-mb 1024] [--runs 3]
[--inputs …]`` (RESULTS.md, "Ingest throughput").

Each input is a log of about ``--size-mb`` MiB written by the sized generators of
:mod:`fixtures.sized` (deterministic from ``--seed``), cached under ``benchmarks/.cache/`` by a
name carrying size, seed and generator version (:func:`input_path`); without ``--inputs``, the
four single-reader logs its recorded runs have always measured (:data:`DEFAULT_INPUTS`). Each
is ingested ``--runs`` times by ``culprit ingest INPUT -o CASE --force --quiet`` in a fresh
child process (:func:`benchmarks.measure.run_once`), the case deleted before every run; a
compressed input is also decoded by bare decoders (:func:`measure_inflate`).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from analyzer import api
from benchmarks import BENCHMARKS_DIR, MIB, measure, say
from benchmarks.ceilings import measure_ceilings
from benchmarks.families import INGEST, INPUT_NAMES, describe_inflate
from benchmarks.report import add_recording_options, checked, finish, parser_for, recorded_command
from fixtures.sized import SIZED_LOGS

#: What ``python -m benchmarks.ingest`` measures without ``--inputs``: the four single-reader
#: inputs its recorded default runs have always measured.
DEFAULT_INPUTS: Final = ("cloud_logging", "text", "kubelet", "modelarts")
#: Peak RSS allowed while ingesting a 2 GB Cloud Logging JSON-lines export.
RSS_BUDGET_MIB: Final = 1536


def input_path(cache: Path, name: str, size_mb: int, seed: int) -> Path:
    """Where the input is cached, named after what its bytes depend on: size, seed, generator
    version (a derived input's source's too; the bundle's: a digest of ``fixtures/``)."""
    log = SIZED_LOGS[name]
    version = f"v{log.version}"
    if log.source is not None:
        version += f"s{SIZED_LOGS[log.source].version}"
    stem = f"{name}-{size_mb}mb-seed{seed}-{version}"
    if log.follows_scenarios:
        stem += f"-fx{measure.source_digest('fixtures')[:12]}"
    return cache / log.place(stem, seed)


def prepare_inputs(cache: Path, size_mb: int, seed: int, names: Sequence[str]) -> list[Path]:
    """The inputs ``names``, generated into ``cache`` when missing (a source before its derived)."""
    cache.mkdir(parents=True, exist_ok=True)
    sources = {SIZED_LOGS[name].source for name in names} - {None}
    # In registry order, so that a source is ready before the inputs derived from it.
    for name in [name for name in SIZED_LOGS if name in names or name in sources]:
        path, log = input_path(cache, name, size_mb, seed), SIZED_LOGS[name]
        if path.exists():
            continue
        say(f"generating {path} ...")
        path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        if log.source is not None and log.derive is not None:
            log.derive(input_path(cache, log.source, size_mb, seed), path)
        else:
            log.generate(path, size_mb * MIB, seed)
        say(f"  {measure.tree_bytes(path) / MIB:,.1f} MiB in {time.perf_counter() - started:.1f} s")
    return [input_path(cache, name, size_mb, seed) for name in names]


def case_facts(case: Path) -> dict[str, Any]:
    """What the ingest made of the input: counts, readers, statuses, size on disk, and the
    bytes culprit decoded and the compressions it met (None when the inventory does not say)."""
    columns = api.query(case, "SELECT * FROM files LIMIT 0").column_names
    wanted = [
        name for name in ("reader", "status", "decoded_bytes", "compression") if name in columns
    ]
    rows = api.query(case, f"SELECT {', '.join(wanted)} FROM files").to_pylist()
    return {
        "counts": api.load_case(case).meta.counts.model_dump(),
        "readers": sorted({row["reader"] for row in rows}),
        "statuses": sorted({row["status"] for row in rows}),
        "case_mib": measure.tree_bytes(case) / MIB,
        "decoded_bytes": (
            sum(row["decoded_bytes"] or 0 for row in rows) if "decoded_bytes" in columns else None
        ),
        "compressions": (
            sorted({row["compression"] for row in rows} - {None})
            if "compression" in columns
            else None
        ),
    }


def measure_input(name: str, path: Path, runs: int, workdir: Path) -> dict[str, Any]:
    """``culprit ingest`` of the input ``runs`` times; its result (cases, logs: ``workdir``)."""
    case = workdir / f"case-{name}"
    command = [
        *measure.culprit_command(),
        "ingest",
        str(path),
        "-o",
        str(case),
        "--force",
        "--quiet",
    ]
    size = measure.tree_bytes(path)
    results: list[measure.Run] = []
    for number, run in measure.repeat(
        command, runs, workdir, name, lambda: shutil.rmtree(case, True)
    ):
        results.append(run)
        say(f"  {name} run {number}/{runs}: {measure.describe(run, size)}")
    facts = case_facts(case)
    shutil.rmtree(case, ignore_errors=True)
    counts = facts.pop("counts")
    return {
        "input": name,
        "file": path.name,
        "bytes": size,
        "input_mib": size / MIB,
        "records": counts["records"],
        "rows": counts["rows"],
        "counts": counts,
        **facts,
        **measure.timings(results, size),
        "command": shlex.join(command),
    }


# -- decompression baselines: how fast can a compressed input be decoded at all? ------------
#
# ``culprit ingest`` of a ``.gz`` or ``.zst`` input can be no faster than decompressing it, so
# each compressed input's figure is put beside a bare decoder over the same file, writing to
# ``/dev/null``: zlib and ISA-L's inflate (what culprit's gzip decoder uses) for gzip,
# ``zstandard`` for zstd. Each is a fresh ``python -c`` child timed by
# :func:`benchmarks.measure.run_once`; it prints the bytes it decoded, which must equal what
# culprit decoded. MiB/s = decoded bytes / median wall time.

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
    """``baseline`` over ``path`` ``runs`` times; its result, MiB/s over the bytes it decoded."""
    command = [sys.executable, "-c", baseline.code, str(path)]
    results: list[measure.Run] = []
    decoded: set[int] = set()
    for number in range(1, runs + 1):
        log = logs / f"inflate-{path.name}-{baseline.name}-{number}.log"
        run = measure.run_once(command, log)
        results.append(run)
        decoded.add(int(log.read_text().split()[-1]))
        say(f"  {baseline.name} run {number}/{runs}: {run.seconds:.2f} s")
    if len(decoded) != 1:
        raise measure.BenchmarkError(f"{baseline.name} decoded {sorted(decoded)} bytes from {path}")
    size = decoded.pop()
    timed = measure.timings(results, size)
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


def measure_inflate(path: Path, compression: str, runs: int, logs: Path) -> dict[str, Any]:
    """Every baseline of ``compression`` over ``path``, and those not importable here."""
    found, missing = available(compression)
    for baseline in missing:
        say(f"  {baseline.name}: `{baseline.module}` is not importable, not measured")
    results = [measure_baseline(baseline, path, runs, logs) for baseline in found]
    return {"results": results, "missing": [baseline.name for baseline in missing]}


def compressed_figures(
    result: dict[str, Any], compression: str, inflate: dict[str, Any]
) -> dict[str, Any]:
    """What a compressed input's result adds: the bytes culprit decoded and MiB/s over them
    (``mib_per_s`` stays over the stored bytes), and the bare decoders over the same file."""
    decoded = result.get("decoded_bytes")
    for baseline in inflate["results"]:
        if decoded is not None and baseline["decoded_bytes"] != decoded:
            raise measure.BenchmarkError(
                f"{baseline['name']} decoded {baseline['decoded_bytes']:,} bytes of "
                f"{result['file']}, culprit {decoded:,}"
            )
    if decoded is None and inflate["results"]:
        decoded = int(inflate["results"][0]["decoded_bytes"])
    figures: dict[str, Any] = {"compression": compression, "inflate": inflate}
    if decoded:
        figures |= {
            "decoded_bytes": decoded,
            "decoded_mib": decoded / MIB,
            "decoded_mib_per_s": decoded / MIB / result["median_s"],
        }
    say(
        f"  {result['input']}: {figures.get('decoded_mib_per_s', 0):,.1f} MiB/s of decoded "
        f"bytes, {result['mib_per_s']:,.1f} MiB/s stored; baselines: {describe_inflate(inflate)}"
    )
    return figures


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """The parsed options and the input names they select."""
    parser = parser_for("benchmarks.ingest", __doc__)
    parser.add_argument("--size-mb", type=int, default=1024, help="size of each input, MiB")
    parser.add_argument("--cache", type=Path, default=BENCHMARKS_DIR / ".cache", help="inputs")
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    known = ",".join(INPUT_NAMES)
    parser.add_argument("--inputs", default=",".join(DEFAULT_INPUTS), help=f"some of {known}")
    add_recording_options(parser)
    args = checked(parser, argv)
    names = [name.strip() for name in args.inputs.split(",") if name.strip()]
    if args.size_mb < 1 or not names or not set(names) <= set(INPUT_NAMES):
        parser.error(f"--size-mb must be positive; --inputs: {','.join(INPUT_NAMES)}")
    return args, names


@measure.entry_point
def main(argv: Sequence[str] | None = None) -> int:
    args, names = _parse_args(argv)
    command = recorded_command("benchmarks.ingest", argv)
    paths = prepare_inputs(args.cache, args.size_mb, args.seed, names)
    start = measure.Start.now()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="culprit-bench-") as workdir:
        for name, path in zip(names, paths, strict=True):
            say(f"ingesting {path.name} x{args.runs}")
            result = measure_input(name, path, args.runs, Path(workdir))
            compression = SIZED_LOGS[name].compression
            if compression is not None:
                say(f"decoding {path.name} to /dev/null x{args.runs} (baselines)")
                inflate = measure_inflate(path, compression, args.runs, Path(workdir))
                result.update(compressed_figures(result, compression, inflate))
            result.update(measure_ceilings(name, path, args.runs, Path(workdir)))
            results.append(result)
    report = {
        **measure.run_stamp(INGEST.kind, command, args.runs),
        "size_mib": args.size_mb,
        "seed": args.seed,
        "generator_versions": {name: SIZED_LOGS[name].version for name in names},
        "method": (
            "wall: perf_counter around launcher+child; peak RSS, CPU: rusage of the culprit "
            "process from os.wait4 in a small Python launcher; compressed inputs: MiB/s over "
            "the stored and over the decoded bytes, and bare decoders (python -c, output to "
            "/dev/null) timed the same way over the same file; library ceilings "
            "(python -m benchmarks.ceilings) timed the same way over the same file"
        ),
        **start.provenance(),
        "rss_budget_mib": RSS_BUDGET_MIB,
        "results": results,
    }
    finish(report, INGEST, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
