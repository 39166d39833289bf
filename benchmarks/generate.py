"""Generation speed benchmark: ``python -m benchmarks.generate [--hosts 64,1024,4096]``
(RESULTS.md, "Generation speed").

Times the fixtures incident generator, which makes the large inputs: for each host count,
``python -m fixtures generate SCENARIO -o OUT …`` in a fresh child process, ``--runs`` times
(:func:`benchmarks.measure.run_once`). MiB written counts the files of ``OUT/bundle/``. OUT
is under ``--workdir`` (the repository's disk: ``/tmp`` may be memory) and deleted once
measured unless ``--keep DIR``; before each run the previous bundle is deleted and ``sync``
writes back dirty pages, the run itself is not synced: the figure is the generator's speed.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import BENCHMARKS_DIR, MIB, bundles, measure, say
from benchmarks.families import GENERATE
from benchmarks.report import add_recording_options, checked, finish, parser_for, recorded_command
from fixtures.truth import BUNDLE_DIR, TRUTH_FILE


def _clear(out: Path) -> None:
    """Delete the generated bundle at ``out``; refuse to delete anything else."""
    bundle = out.is_dir() and (not any(out.iterdir()) or (out / TRUTH_FILE).is_file())
    if out.exists() and not bundle:
        raise measure.BenchmarkError(f"{out} holds no generated bundle; not replacing it")
    shutil.rmtree(out, ignore_errors=True)


def measure_generation(plan: bundles.Plan, runs: int, out: Path, logs: Path) -> dict[str, Any]:
    """Generate ``plan`` into ``out`` ``runs`` times; the result object of a results file. The
    last run's bundle is left in ``out``; run logs go to ``logs``."""
    command = bundles.generate_command(plan, out)
    results: list[measure.Run] = []
    sizes: list[int] = []
    files: list[Path] = []
    name = f"generate-{plan.hosts}"
    for number, run in measure.repeat(command, runs, logs, name, lambda: _clear(out), sync=True):
        files = measure.tree_files(out / BUNDLE_DIR)
        size = sum(path.stat().st_size for path in files)
        results.append(run)
        sizes.append(size)
        say(
            f"  {plan.hosts:,} hosts run {number}/{runs}: {size / MIB:,.1f} MiB in "
            f"{len(files):,} files, {measure.describe(run, size)}"
        )
    if len(set(sizes)) > 1:
        say(f"  warning: the runs wrote different sizes: {', '.join(f'{s:,}' for s in sizes)}")
    return {
        **plan.fields(),
        "files": len(files),
        "bytes": sizes[-1],
        "written_mib": sizes[-1] / MIB,
        "bytes_per_run": sizes,
        **measure.timings(results, sizes[-1]),
        "command": shlex.join(command),
    }


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[bundles.Plan]]:
    """The parsed options and the plan of each host count."""
    parser = parser_for("benchmarks.generate", __doc__)
    parser.add_argument("--hosts", default="64,1024,4096", help="comma-separated host counts")
    bundles.add_bundle_options(parser, hosts=False, cache=False)
    workdir = BENCHMARKS_DIR / ".cache"
    parser.add_argument("--workdir", type=Path, default=workdir, help="for the temporary bundles")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the bundles in DIR")
    add_recording_options(parser, runs=1)
    args = checked(parser, argv)
    try:
        counts = [int(text) for text in args.hosts.split(",") if text.strip()]
    except ValueError:
        parser.error(f"--hosts {args.hosts!r} is not a comma-separated list of numbers")
    if not counts:
        parser.error("--hosts names no host count")
    return args, bundles.plans(parser, args, [(hosts, args.minutes) for hosts in counts])


@measure.entry_point
def main(argv: Sequence[str] | None = None) -> int:
    args, requests = _parse_args(argv)
    command = recorded_command("benchmarks.generate", argv)
    start = measure.Start.now("fixtures")
    results: list[dict[str, Any]] = []
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    args.workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="culprit-generate-", dir=args.workdir) as workdir:
        for plan in requests:
            out = (args.keep or Path(workdir)) / plan.stem
            say(f"generating {plan.scenario}, {plan.hosts:,} hosts x{args.runs} into {out}")
            try:
                results.append(measure_generation(plan, args.runs, out, Path(workdir)))
            finally:
                if args.keep is None:
                    shutil.rmtree(out, ignore_errors=True)
    report = {
        **measure.run_stamp(GENERATE.kind, command, args.runs),
        **{key: value for key, value in requests[0].fields().items() if key != "hosts"},
        "hosts": [plan.hosts for plan in requests],
        "method": (
            "wall: perf_counter around launcher+child; peak RSS, CPU: rusage of the generator "
            "process from os.wait4 in a small Python launcher; bytes: sum of the sizes of the "
            "files of OUT/bundle; sync before each run, none after it"
        ),
        **start.provenance(),
        "results": results,
    }
    finish(report, GENERATE, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
