"""Ingest throughput benchmark: ``python -m benchmarks.ingest [--size-mb 1024] [--runs 3]``.

Four synthetic inputs of about ``--size-mb`` MiB each (``--inputs`` picks some, or adds
``bundle``) are generated once (deterministically from ``--seed``) and cached under
``benchmarks/.cache/``, each under a name carrying its size, seed and generator version.
:mod:`benchmarks.inputs` lists them; each has a module of its own describing what it writes:

* ``cloud_logging``: a Log Router sink JSON-lines object of ``k8s_container`` stderr entries
  from 1,024 TPU hosts (:mod:`benchmarks.inputs.cloud_logging`).
* ``text``: one TPU container's stderr of the same kinds of lines
  (:mod:`benchmarks.inputs.text`).
* ``kubelet``: ``journalctl -o short-precise`` text of one GKE TPU node
  (:mod:`benchmarks.inputs.kubelet`).
* ``modelarts``: one ModelArts worker log of an 8-NPU node
  (:mod:`benchmarks.inputs.modelarts`).
* ``cloud_logging_array``, ``cloud_logging_gz``, ``kubelet_zst`` (only with ``--inputs``):
  made from the cached ``cloud_logging`` / ``kubelet`` file (:mod:`benchmarks.inputs.derived`):
  the same entries as one ``gcloud logging read --format=json`` array, and the files gzip- and
  zstd-compressed. A compressed input's result gives MiB/s over the stored bytes
  (``mib_per_s``, as for every input) and over the bytes culprit decoded
  (``decoded_mib_per_s``), and the decompression baselines of :mod:`benchmarks.inflate` timed
  over the same file (``inflate``).
* ``bundle`` (only with ``--inputs``): a directory, a whole incident bundle of GCS sink
  shards, node journals and gcloud exports written by the fixtures generator, read by several
  readers at once (:mod:`benchmarks.inputs.bundle`). It is not among the defaults: its bytes
  follow ``fixtures/``, not a version of this benchmark, and the recorded default runs have
  always been the four inputs above.

Each input is then ingested ``--runs`` times by ``culprit ingest INPUT -o CASE --force
--quiet`` in a child process, timed by :mod:`benchmarks.measure` (wall time, peak RSS and CPU
of the ``culprit`` process, warm page cache).

Results are printed and recorded by :mod:`benchmarks.report`: written to
``benchmarks/results/<YYYY-MM-DD>-<hostname>.json``, and the ingest section of
``benchmarks/RESULTS.md`` is rebuilt from all recorded runs. ``--no-record`` skips both, for
quick checks. ``--report-json FILE`` also writes the report to ``FILE`` (recorded or not), for
``python -m benchmarks run``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from benchmarks import BENCHMARKS_DIR, MIB
from benchmarks.environment import machine, provenance, run_stamp, source_digest
from benchmarks.inflate import describe as describe_inflate
from benchmarks.inflate import measure_all as measure_inflate
from benchmarks.inputs import DEFAULT_INPUTS, GENERATORS, INPUT_NAMES
from benchmarks.measure import BenchmarkError, measure, tree_bytes
from benchmarks.progress import say
from benchmarks.report import (
    INGEST,
    add_recording_options,
    conclude,
    recorded_command,
    table,
    write_report,
)

#: Peak RSS allowed while ingesting a 2 GB Cloud Logging JSON-lines export.
RSS_BUDGET_MIB: Final = 1536


@dataclass(frozen=True)
class Input:
    """A benchmark input (a file or a directory), generated into the cache."""

    name: str
    path: Path


def input_path(cache: Path, name: str, size_mb: int, seed: int) -> Path:
    """Where the input ``name`` of ``size_mb`` MiB from ``seed`` is cached: its stem carries
    name, size, seed and generator version (and a derived input's source version)."""
    generator = GENERATORS[name]
    version = f"v{generator.version}"
    if generator.source is not None:
        version += f"s{GENERATORS[generator.source].version}"
    return cache / generator.cache_path(f"{name}-{size_mb}mb-seed{seed}-{version}", seed)


def prepare_inputs(cache: Path, size_mb: int, seed: int, names: Sequence[str]) -> list[Input]:
    """The benchmark inputs ``names``, generated into ``cache`` when missing (a derived input
    from its source's cached file, generated first when missing too)."""
    cache.mkdir(parents=True, exist_ok=True)
    sources = {GENERATORS[name].source for name in names} - {None}
    # In GENERATORS order, so that a source is ready before the inputs derived from it.
    needed = [name for name in GENERATORS if name in names or name in sources]
    for name in needed:
        path = input_path(cache, name, size_mb, seed)
        if path.exists():
            continue
        generator = GENERATORS[name]
        say(f"generating {path} ...")
        path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        if generator.source is not None and generator.derive is not None:
            generator.derive(input_path(cache, generator.source, size_mb, seed), path)
        else:
            generator.generate(path, size_mb * MIB, seed)
        elapsed = time.perf_counter() - started
        size = tree_bytes(path) / MIB
        say(f"  {size:,.1f} MiB in {elapsed:.1f} s")
    return [Input(name, input_path(cache, name, size_mb, seed)) for name in names]


def compressed_figures(
    result: dict[str, Any], compression: str, inflate: dict[str, Any]
) -> dict[str, Any]:
    """The fields a compressed input's result adds: its compression, the bytes culprit decoded
    and MiB/s over them (``mib_per_s`` stays over the stored bytes, as for every input), and
    the decompression baselines (:mod:`benchmarks.inflate`) over the same file."""
    decoded = result.get("decoded_bytes")
    for baseline in inflate["results"]:
        if decoded is not None and baseline["decoded_bytes"] != decoded:
            raise BenchmarkError(
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
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.ingest", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--size-mb", type=int, default=1024, help="size of each input, MiB")
    parser.add_argument("--runs", type=int, default=3, help="ingest runs per input")
    parser.add_argument(
        "--cache", type=Path, default=BENCHMARKS_DIR / ".cache", help="input cache dir"
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument(
        "--inputs",
        default=",".join(DEFAULT_INPUTS),
        help=f"comma-separated subset of {','.join(INPUT_NAMES)} (default: %(default)s)",
    )
    add_recording_options(parser)
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.inputs.split(",") if name.strip()]
    if args.size_mb < 1 or args.runs < 1 or not names or not set(names) <= set(INPUT_NAMES):
        parser.error(f"--size-mb and --runs must be positive; --inputs: {','.join(INPUT_NAMES)}")
    return args, names


def main(argv: Sequence[str] | None = None) -> int:
    args, names = _parse_args(argv)
    command = recorded_command("benchmarks.ingest", argv)

    inputs = prepare_inputs(args.cache, args.size_mb, args.seed, names)
    digest = source_digest()
    host = machine()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="culprit-bench-") as workdir:
        for item in inputs:
            say(f"ingesting {item.path.name} x{args.runs}")
            try:
                result = measure(item.name, item.path, args.runs, Path(workdir))
                compression = GENERATORS[item.name].compression
                if compression is not None:
                    say(f"decoding {item.path.name} to /dev/null x{args.runs} (baselines)")
                    inflate = measure_inflate(item.path, compression, args.runs, Path(workdir))
                    result.update(compressed_figures(result, compression, inflate))
                results.append(result)
            except BenchmarkError as exc:
                say(f"error: {exc}")
                return 1
    changed, origin = provenance(host, digest)
    report = {
        **run_stamp(INGEST, command, args.runs),
        "size_mib": args.size_mb,
        "seed": args.seed,
        "generator_versions": {name: GENERATORS[name].version for name in names},
        "method": (
            "wall: perf_counter around launcher+child; peak RSS, CPU: rusage of the culprit "
            "process from os.wait4 in a small Python launcher; compressed inputs: MiB/s over "
            "the stored and over the decoded bytes, and bare decoders (python -c, output to "
            "/dev/null) timed the same way over the same file"
        ),
        **origin,
        "rss_budget_mib": RSS_BUDGET_MIB,
        "results": results,
    }
    print(table(results), end="")
    conclude(report, changed=changed, keep=not args.no_record)
    if args.report_json is not None:
        write_report(args.report_json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
