"""Scale-out benchmark: ``python -m benchmarks.scaleout [--hosts 1024] [--workers 1,2]
[--shards 4] [--runs 3]`` (RESULTS.md, "Scale-out").

On the analyze benchmark's cached bundle, each ``--runs`` times in a fresh child process:
the local engine (``culprit analyze BUNDLE -o OUT --quiet``), the Ray engine on a local
instance of W CPUs for each W of ``--workers`` (its start-up inside the figure), and every
step of a sharded run one command at a time (``ingest --shard k/S --jobs 1``, ``merge``,
``match --shard k/S``, ``merge``, ``analyze CASE``), to see where the time goes and what one
partition does on one core. Every run's findings must equal the local engine's byte for byte.
:func:`projection` then projects a cluster run from the measured per-partition throughput.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from analyzer import api
from benchmarks import bundles, measure, say
from benchmarks.families import SCALEOUT
from benchmarks.report import add_recording_options, checked, finish, parser_for, recorded_command

_median = statistics.median


def _spread(runs: Sequence[measure.Run]) -> dict[str, Any]:
    seconds = [run.seconds for run in runs]
    return {
        "seconds": seconds,
        "median_s": _median(seconds),
        "min_s": min(seconds),
        "max_s": max(seconds),
        "peak_rss_mib": max(run.peak_rss_mib for run in runs),
        "cpu_s_median": _median([run.user_s + run.system_s for run in runs]),
    }


def _same_findings(expected: bytes, path: Path, what: str) -> None:
    if path.read_bytes() != expected:
        raise measure.BenchmarkError(f"{what}: findings differ from the local engine's")


def _timed(
    command: list[str], runs: int, logs: Path, name: str, before: Callable[[], None]
) -> list[measure.Run]:
    done = []
    for number, run in measure.repeat(command, runs, logs, name, before, sync=True):
        say(f"  {name} run {number}/{runs}: {run.seconds:.1f} s, peak {run.peak_rss_mib:,.0f} MiB")
        done.append(run)
    return done


def _shard_bytes(bundle: Path, shards: int) -> list[int]:
    """Bytes of the plain files each shard reads (no public API says which files a shard
    owns)."""
    from analyzer.bundle import Bundle
    from analyzer.engine.shards import Shard, owned_files

    whole = Bundle([bundle])
    sizes = dict(whole.plain_file_sizes())
    return [sum(sizes[p] for p in owned_files(whole, Shard(k, shards))) for k in range(shards)]


def _tree_bytes(paths: Sequence[Path]) -> int:
    return sum(measure.tree_bytes(path) for path in paths)


def shard_steps(
    cached: bundles.CachedBundle, shards: int, runs: int, workdir: Path, expected: bytes
) -> dict[str, Any]:
    """Every step of a sharded run, one command at a time, ``runs`` times."""
    culprit = measure.culprit_command()
    parts, case, out = workdir / "parts", workdir / "sharded" / "case", workdir / "sharded-out"
    ingest = [parts / f"ingest-{k}" for k in range(shards)]
    match = [parts / f"match-{k}" for k in range(shards)]
    each = [(k, f"{k}/{shards}") for k in range(shards)]
    one_core = [*culprit, "ingest", str(cached.bundle), "--jobs", "1", "-q"]
    # Each step's commands: one per shard, or one.
    steps = {
        "ingest_shard": [[*one_core, "-o", str(ingest[k]), "--shard", shard] for k, shard in each],
        "merge_ingest": [[*culprit, "merge", *map(str, ingest), "-o", str(case)]],
        "match_shard": [
            [*culprit, "match", str(case), "--shard", shard, "-o", str(match[k])]
            for k, shard in each
        ],
        "merge_match": [[*culprit, "merge", *map(str, match), "-o", str(case)]],
        "diagnose": [[*culprit, "analyze", str(case), "-o", str(out), "-q"]],
    }
    seconds: dict[str, list[list[float]]] = {
        name: [[] for _ in cmds] for name, cmds in steps.items()
    }
    for number in range(1, runs + 1):
        for directory in (workdir / "sharded", parts, out):
            shutil.rmtree(directory, ignore_errors=True)
        os.sync()
        for name, commands in steps.items():
            for k, command in enumerate(commands):
                log = workdir / f"{name}-{k}-{number}.log"
                seconds[name][k].append(measure.run_once(command, log).seconds)
        _same_findings(expected, out / api.FINDINGS_FILE, "shard steps")
        last = {name: ", ".join(f"{s[-1]:.1f}" for s in runs_) for name, runs_ in seconds.items()}
        say(
            f"  shard steps run {number}/{runs}: ingest shards {last['ingest_shard']} s; merge "
            f"{last['merge_ingest']} s; match shards {last['match_shard']} s; merge "
            f"{last['merge_match']} s; diagnose {last['diagnose']} s"
        )
    medians = {name: [_median(s) for s in values] for name, values in seconds.items()}
    rows_bytes = _tree_bytes([p / "rows" for p in ingest])
    return {
        "shards": shards,
        "shard_bytes": _shard_bytes(cached.bundle, shards),
        "ingest_shard_s": medians["ingest_shard"],
        "match_shard_s": medians["match_shard"],
        **{f"{name}_s": medians[name][0] for name in ("merge_ingest", "merge_match", "diagnose")},
        "ingest_parts_rows_bytes": rows_bytes,
        "ingest_parts_small_bytes": _tree_bytes(ingest) - rows_bytes,
        "match_parts_bytes": _tree_bytes(match),
    }


def projection(
    bundle_bytes: int, steps: dict[str, Any], gb: float, nodes: int, cores: int
) -> dict[str, Any]:
    """A cluster run from the measured steps: the parallel part at the measured bytes per
    core-second, the serial part scaled linearly with the bundle."""
    core_seconds = sum(steps["ingest_shard_s"]) + sum(steps["match_shard_s"])
    per_core = bundle_bytes / core_seconds  # bytes per core-second, ingest + match
    target = gb * 1e9
    parallel = target / (per_core * nodes * cores)
    scale = target / bundle_bytes
    serial = (steps["merge_ingest_s"] + steps["merge_match_s"] + steps["diagnose_s"]) * scale
    return {
        "gb": gb,
        "nodes": nodes,
        "cores_per_node": cores,
        "per_core_mb_s": per_core / 1e6,
        "parallel_s": parallel,
        "serial_s": serial,
        "total_s": parallel + serial,
        "scale": scale,
    }


def measure_all(
    cached: bundles.CachedBundle, args: argparse.Namespace, workdir: Path
) -> dict[str, Any]:
    """The local engine, the Ray engine with each worker count, and the shard steps."""
    culprit = measure.culprit_command()
    bundle = str(cached.bundle)
    say("reading the bundle once (page cache) ...")
    measure.warm([cached.bundle])
    out = workdir / "out"
    analyze = [*culprit, "analyze", bundle, "-o", str(out), "--quiet"]

    def clear() -> None:
        shutil.rmtree(out, ignore_errors=True)

    say(f"local engine x{args.runs}")
    local = _timed(analyze, args.runs, workdir, "local", clear)
    expected = (out / api.FINDINGS_FILE).read_bytes()
    results: dict[str, Any] = {"local": _spread(local)}
    for workers in args.workers:
        say(f"ray engine, {workers} worker(s) x{args.runs}")
        command = [*analyze, "--engine", "ray", "--workers", str(workers)]
        runs = _timed(command, args.runs, workdir, f"ray-{workers}", clear)
        _same_findings(expected, out / api.FINDINGS_FILE, f"ray with {workers} workers")
        spread = _spread(runs)
        spread["overhead_vs_local"] = spread["median_s"] / results["local"]["median_s"]
        results[f"ray-{workers}"] = spread
    say(f"shard steps ({args.shards} shards) x{args.runs}")
    steps = shard_steps(cached, args.shards, args.runs, workdir, expected)
    return {"engines": results, "steps": steps}


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, bundles.Plan]:
    parser = parser_for("benchmarks.scaleout", __doc__)
    bundles.add_bundle_options(parser)
    workers = lambda text: [int(w) for w in text.split(",")]  # noqa: E731
    parser.add_argument("--workers", type=workers, default=[1, 2], help="CPUs of each Ray run")
    parser.add_argument("--shards", type=int, default=4, help="shards of the step-by-step run")
    parser.add_argument("--project-gb", type=float, default=100.0, help="projected bundle, GB")
    parser.add_argument("--project-nodes", type=int, default=16, help="projected nodes")
    parser.add_argument("--project-cores", type=int, default=8, help="cores per projected node")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    add_recording_options(parser)
    args = checked(parser, argv)
    if args.shards < 1 or min(args.workers) < 1:
        parser.error("--shards and --workers must be positive")
    return args, bundles.plans(parser, args, [(args.hosts, args.minutes)])[0]


@measure.entry_point
def main(argv: Sequence[str] | None = None) -> int:
    args, plan = _parse_args(argv)
    if importlib.util.find_spec("ray") is None:
        say("error: Ray is not installed: pip install -e '.[ray]'")
        return 1
    command = recorded_command("benchmarks.scaleout", argv)
    start = measure.Start.now()
    cached = bundles.prepare(args.cache, plan)
    with measure.work_directory(args.cache, "scaleout-", keep=args.keep) as workdir:
        measured = measure_all(cached, args, workdir)
    report = {
        **measure.run_stamp(SCALEOUT.kind, command, args.runs),
        **cached.fields(),
        **measured,
        "projection": projection(
            int(cached.facts["bytes"]),
            measured["steps"],
            args.project_gb,
            args.project_nodes,
            args.project_cores,
        ),
        "method": (
            "wall: perf_counter around launcher+child; peak RSS: the larger of the child's "
            "rusage and the sampled RSS sum of its process tree (Ray's raylet, GCS and workers "
            "included); bundle read once before the first run, sync before each; OUT deleted "
            "before each run; findings compared byte for byte with the local engine's"
        ),
        **start.provenance(),
    }
    finish(report, SCALEOUT, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
