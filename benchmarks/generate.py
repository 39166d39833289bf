"""Generation speed benchmark: ``python -m benchmarks.generate [--hosts 64,1024,4096]``.

Times the fixtures incident generator, which makes the large benchmark inputs: for each host
count of ``--hosts``, ``python -m fixtures generate SCENARIO -o OUT --hosts N --seed S
--minutes M --rate R --force`` runs ``--runs`` times in a child process, timed by
:func:`benchmarks.measure.run_once` (wall time around the child, including interpreter
start-up and imports; peak RSS and CPU of the generator process from its kernel ``rusage``).
What it wrote is the sum of the sizes of the files of ``OUT/bundle/`` (``OUT/truth.toml``, a
few hundred bytes, is left out); MiB/s = that / median wall time.

``OUT`` is a temporary directory under ``--workdir`` (``benchmarks/.cache/`` by default, on
the repository's disk: ``/tmp`` may be memory); each bundle is deleted once measured, before
the next host count, unless ``--keep DIR`` asks for the bundles to stay in ``DIR`` (the last
run's, in ``DIR/<scenario>-<hosts>h-<minutes>m-r<rate>-seed<seed>``). Before every run the
previous bundle is deleted and ``sync`` writes back what is still dirty, outside the timed
region; the run itself writes into the page cache and is not synced, so on a machine with
enough memory the figure is the generator's speed, not the disk's.

Results are printed and recorded by :mod:`benchmarks.report` as a results file of kind
``generate`` in ``benchmarks/results/``, and the generate section of ``benchmarks/RESULTS.md``
is rebuilt from all recorded generation runs. ``--no-record`` skips both.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import BENCHMARKS_DIR, MIB
from benchmarks.environment import machine, provenance, run_stamp, source_digest
from benchmarks.measure import BenchmarkError, Run, describe, run_once, timings, tree_files
from benchmarks.progress import say
from benchmarks.report import GENERATE, conclude, generate_table
from fixtures.errors import FixtureError
from fixtures.options import Options
from fixtures.scenarios import find
from fixtures.truth import BUNDLE_DIR, TRUTH_FILE

DEFAULT_HOSTS = "64,1024,4096"
DEFAULT_SCENARIO = "host-crash-heartbeat"


def generate_command(scenario: str, out: Path, options: Options) -> list[str]:
    """The ``python -m fixtures generate`` command writing ``scenario`` with ``options`` (hosts,
    seed, minutes, rate) into ``out``."""
    return [
        sys.executable,
        "-m",
        "fixtures",
        "generate",
        scenario,
        "-o",
        str(out),
        "--hosts",
        str(options.hosts),
        "--seed",
        str(options.seed),
        "--minutes",
        f"{options.minutes:g}",
        "--rate",
        f"{options.rate:g}",
        "--force",
    ]


def bundle_name(scenario: str, options: Options) -> str:
    """The directory a bundle is written to (under ``--keep`` or the work directory)."""
    return f"{scenario}-{options.hosts}h-{options.minutes:g}m-r{options.rate:g}-seed{options.seed}"


def _clear(out: Path) -> None:
    """Delete the generated bundle at ``out``; refuse to delete anything else."""
    if not out.exists():
        return
    if out.is_dir() and (not any(out.iterdir()) or (out / TRUTH_FILE).is_file()):
        shutil.rmtree(out)
        return
    raise BenchmarkError(f"{out} exists and does not hold a generated bundle; not replacing it")


def measure_generation(
    scenario: str, options: Options, runs: int, out: Path, logs: Path
) -> dict[str, Any]:
    """Generate ``scenario`` with ``options`` into ``out`` ``runs`` times; the result object of
    a results file. The last run's bundle is left in ``out``; run logs go to ``logs``."""
    command = generate_command(scenario, out, options)
    results: list[Run] = []
    sizes: list[int] = []
    files: list[Path] = []
    for number in range(1, runs + 1):
        _clear(out)
        os.sync()
        run = run_once(command, logs / f"generate-{options.hosts}-{number}.log")
        files = tree_files(out / BUNDLE_DIR)
        size = sum(path.stat().st_size for path in files)
        results.append(run)
        sizes.append(size)
        say(
            f"  {options.hosts:,} hosts run {number}/{runs}: {size / MIB:,.1f} MiB in "
            f"{len(files):,} files, {describe(run, size)}"
        )
    if len(set(sizes)) > 1:
        say(f"  warning: the runs wrote different sizes: {', '.join(f'{s:,}' for s in sizes)}")
    return {
        "scenario": scenario,
        "hosts": options.hosts,
        "minutes": options.minutes,
        "rate": options.rate,
        "seed": options.seed,
        "files": len(files),
        "bytes": sizes[-1],
        "written_mib": sizes[-1] / MIB,
        "bytes_per_run": sizes,
        **timings(results, sizes[-1]),
        "command": shlex.join(command),
    }


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[Options]]:
    """The parsed options and the generator options of each host count."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.generate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--hosts", default=DEFAULT_HOSTS, help="comma-separated host counts (default: %(default)s)"
    )
    parser.add_argument(
        "--scenario", default=DEFAULT_SCENARIO, help="fixtures scenario (default: %(default)s)"
    )
    parser.add_argument("--minutes", type=float, default=60.0, help="length of the incident")
    parser.add_argument(
        "--rate", type=float, default=60.0, help="background lines per host per minute"
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument("--runs", type=int, default=1, help="generator runs per host count")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=BENCHMARKS_DIR / ".cache",
        help="where the temporary bundles go (default: benchmarks/.cache)",
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="keep the bundles in DIR instead of deleting"
    )
    parser.add_argument(
        "--no-record", action="store_true", help="do not write results JSON or RESULTS.md"
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be positive")
    try:
        find(args.scenario)
        counts = [int(text) for text in args.hosts.split(",") if text.strip()]
        if not counts:
            parser.error("--hosts names no host count")
        options = [
            Options(hosts=hosts, seed=args.seed, minutes=args.minutes, rate=args.rate)
            for hosts in counts
        ]
    except ValueError:
        parser.error(f"--hosts {args.hosts!r} is not a comma-separated list of numbers")
    except FixtureError as error:
        parser.error(str(error))
    return args, options


def main(argv: Sequence[str] | None = None) -> int:
    args, requests = _parse_args(argv)
    command = shlex.join(
        ["python", "-m", "benchmarks.generate", *(sys.argv[1:] if argv is None else argv)]
    )

    digest = source_digest("fixtures")
    host = machine("fixtures")
    results: list[dict[str, Any]] = []
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="culprit-generate-", dir=args.workdir) as workdir:
        for options in requests:
            out = (args.keep or Path(workdir)) / bundle_name(args.scenario, options)
            say(f"generating {args.scenario}, {options.hosts:,} hosts x{args.runs} into {out}")
            try:
                results.append(
                    measure_generation(args.scenario, options, args.runs, out, Path(workdir))
                )
            except BenchmarkError as exc:
                say(f"error: {exc}")
                return 1
            finally:
                if args.keep is None:
                    shutil.rmtree(out, ignore_errors=True)
    changed, origin = provenance(host, digest, "fixtures")
    report = {
        **run_stamp(GENERATE, command, args.runs),
        "scenario": args.scenario,
        "minutes": args.minutes,
        "rate": args.rate,
        "seed": args.seed,
        "hosts": [options.hosts for options in requests],
        "method": (
            "wall: perf_counter around launcher+child; peak RSS, CPU: rusage of the generator "
            "process from os.wait4 in a small Python launcher; bytes: sum of the sizes of the "
            "files of OUT/bundle; sync before each run, none after it"
        ),
        **origin,
        "results": results,
    }
    print(generate_table(results), end="")
    conclude(report, changed=changed, keep=not args.no_record, package="fixtures")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
