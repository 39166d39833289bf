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
quick checks.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from benchmarks import BENCHMARKS_DIR, MIB
from benchmarks.environment import machine, provenance, run_stamp, source_digest
from benchmarks.inputs import DEFAULT_INPUTS, GENERATORS, INPUT_NAMES
from benchmarks.measure import BenchmarkError, measure, tree_bytes
from benchmarks.progress import say
from benchmarks.report import INGEST, conclude, table

#: Peak RSS allowed while ingesting a 2 GB Cloud Logging JSON-lines export.
RSS_BUDGET_MIB: Final = 1536


@dataclass(frozen=True)
class Input:
    """A benchmark input (a file or a directory), generated into the cache."""

    name: str
    path: Path


def prepare_inputs(cache: Path, size_mb: int, seed: int, names: Sequence[str]) -> list[Input]:
    """The benchmark inputs ``names``, generated into ``cache`` when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    inputs: list[Input] = []
    for name in names:
        generator = GENERATORS[name]
        stem = f"{name}-{size_mb}mb-seed{seed}-v{generator.version}"
        inputs.append(Input(name, cache / generator.cache_path(stem, seed)))
    for item in inputs:
        if item.path.exists():
            continue
        say(f"generating {item.path} ...")
        item.path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        GENERATORS[item.name].generate(item.path, size_mb * MIB, seed)
        elapsed = time.perf_counter() - started
        size = tree_bytes(item.path) / MIB
        say(f"  {size:,.1f} MiB in {elapsed:.1f} s")
    return inputs


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
    parser.add_argument(
        "--no-record", action="store_true", help="do not write results JSON or RESULTS.md"
    )
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.inputs.split(",") if name.strip()]
    if args.size_mb < 1 or args.runs < 1 or not names or not set(names) <= set(INPUT_NAMES):
        parser.error(f"--size-mb and --runs must be positive; --inputs: {','.join(INPUT_NAMES)}")
    return args, names


def main(argv: Sequence[str] | None = None) -> int:
    args, names = _parse_args(argv)
    command = shlex.join(
        ["python", "-m", "benchmarks.ingest", *(sys.argv[1:] if argv is None else argv)]
    )

    inputs = prepare_inputs(args.cache, args.size_mb, args.seed, names)
    digest = source_digest()
    host = machine()
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="culprit-bench-") as workdir:
        for item in inputs:
            say(f"ingesting {item.path.name} x{args.runs}")
            try:
                results.append(measure(item.name, item.path, args.runs, Path(workdir)))
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
            "process from os.wait4 in a small Python launcher"
        ),
        **origin,
        "rss_budget_mib": RSS_BUDGET_MIB,
        "results": results,
    }
    print(table(results), end="")
    conclude(report, changed=changed, keep=not args.no_record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
