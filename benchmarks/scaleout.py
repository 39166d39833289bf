"""Scale-out benchmark: ``python -m benchmarks.scaleout [--hosts 1024] [--workers 1,2]``.

On the analyze benchmark's cached bundle (:func:`benchmarks.analyze.prepare`; the same
scenario, hosts, minutes, rate and seed options), each ``--runs`` times in a fresh child
process timed by :func:`benchmarks.measure.run_once`, after reading the bundle once (page
cache) and with ``sync`` before every run:

* **local**: ``culprit analyze BUNDLE -o OUT --quiet`` (the local engine, one ingest worker
  per core);
* **ray, W workers** for each W of ``--workers``: ``culprit analyze BUNDLE -o OUT --quiet
  --engine ray --workers W``: a local Ray instance with W CPUs started and stopped inside the
  run, one shard per CPU, so its start-up is part of the figure;
* **shard steps** (``--shards S``), one command at a time, to see where the time goes and to
  measure what one partition does on one core: ``culprit ingest BUNDLE --shard k/S --jobs 1``
  for every k, ``culprit merge`` of the ingest parts, ``culprit match CASE --shard k/S`` for
  every k, ``culprit merge`` of the match parts, and ``culprit analyze CASE`` (diagnosis and
  report of the merged case).

Every run's findings must equal the local engine's first ones byte for byte (the benchmark
fails otherwise). The report records medians, the overhead of each Ray run over the local
engine, what the merges move (bytes of the parts' small tables and matches against their
rows), and a projection for ``--project-gb`` of bundle on ``--project-nodes`` nodes of
``--project-cores`` cores from the measured per-partition throughput: the shard steps' bytes
per core-second for the parallel part, plus the merges and the diagnosis scaled linearly with
the bundle for the serial part. Results go to ``benchmarks/results/`` (kind ``scaleout``) and
the scale-out section of ``benchmarks/RESULTS.md``; ``--no-record`` writes neither.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from benchmarks.analyze import (
    DEFAULT_CACHE,
    DEFAULT_SCENARIO,
    CachedBundle,
    bundle_fields,
    prepare,
)
from benchmarks.environment import machine, provenance, run_stamp, source_digest
from benchmarks.match import warm
from benchmarks.measure import BenchmarkError, Run, culprit_command, run_once
from benchmarks.progress import say
from benchmarks.report import add_recording_options, record_with_section, recorded_command
from fixtures.options import Options

SCALEOUT: Final = "scaleout"
BEGIN: Final = "<!-- scaleout:begin -->"
END: Final = "<!-- scaleout:end -->"
INTRO: Final = """## Scale-out: the Ray engine and the shard steps

`python -m benchmarks.scaleout [--hosts 1024] [--workers 1,2] [--shards 4] [--runs 3]` (from the
repository root, with `pip install -e '.[ray]'`) times `culprit analyze` on the analyze
benchmark's cached bundle with the local engine and with `--engine ray --workers W` (a local
Ray instance started and stopped inside each run), then each step of a sharded run on its own
(`ingest --shard k/S --jobs 1`, `merge`, `match --shard k/S`, `merge`, diagnosis), and projects
a cluster run from the measured per-partition throughput. Every run's findings equal the local
engine's byte for byte, or the benchmark fails. Raw figures: `benchmarks/results/`, kind
`scaleout`; how each figure is made: `benchmarks/scaleout.py`.

"""


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _spread(runs: Sequence[Run]) -> dict[str, Any]:
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
        raise BenchmarkError(f"{what}: findings differ from the local engine's")


def _timed(
    command: list[str], runs: int, logs: Path, name: str, before: Callable[[], None]
) -> list[Run]:
    done = []
    for number in range(1, runs + 1):
        before()
        os.sync()
        run = run_once(command, logs / f"{name}-{number}.log")
        say(f"  {name} run {number}/{runs}: {run.seconds:.1f} s, peak {run.peak_rss_mib:,.0f} MiB")
        done.append(run)
    return done


def _shard_bytes(bundle: Path, shards: int) -> list[int]:
    """Bytes of the plain files each shard reads."""
    from analyzer.bundle import Bundle
    from analyzer.engine.shards import Shard, owned_files

    whole = Bundle([bundle])
    sizes = dict(whole.plain_file_sizes())
    return [sum(sizes[p] for p in owned_files(whole, Shard(k, shards))) for k in range(shards)]


def _tree_bytes(paths: Sequence[Path]) -> int:
    return sum(p.stat().st_size for root in paths for p in root.rglob("*") if p.is_file())


def shard_steps(
    cached: CachedBundle, shards: int, runs: int, workdir: Path, expected: bytes
) -> dict[str, Any]:
    """Every step of a sharded run, one command at a time, ``runs`` times."""
    from analyzer.api import FINDINGS_FILE

    culprit = culprit_command()
    parts = workdir / "parts"
    case = workdir / "sharded" / "case"
    out = workdir / "sharded-out"
    ingest = [parts / f"ingest-{k}" for k in range(shards)]
    match = [parts / f"match-{k}" for k in range(shards)]
    steps: dict[str, list[float]] = {}
    shard_ingest: list[list[float]] = [[] for _ in range(shards)]
    shard_match: list[list[float]] = [[] for _ in range(shards)]
    for number in range(1, runs + 1):
        shutil.rmtree(workdir / "sharded", ignore_errors=True)
        shutil.rmtree(parts, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        os.sync()
        for k in range(shards):
            command = [*culprit, "ingest", str(cached.bundle), "-o", str(ingest[k])]
            run = run_once(
                [*command, "--shard", f"{k}/{shards}", "--jobs", "1", "-q"],
                workdir / f"ingest-{k}-{number}.log",
            )
            shard_ingest[k].append(run.seconds)
        run = run_once(
            [*culprit, "merge", *map(str, ingest), "-o", str(case)],
            workdir / f"merge-ingest-{number}.log",
        )
        steps.setdefault("merge_ingest", []).append(run.seconds)
        for k in range(shards):
            command = [
                *culprit,
                "match",
                str(case),
                "--shard",
                f"{k}/{shards}",
                "-o",
                str(match[k]),
            ]
            run = run_once(command, workdir / f"match-{k}-{number}.log")
            shard_match[k].append(run.seconds)
        run = run_once(
            [*culprit, "merge", *map(str, match), "-o", str(case)],
            workdir / f"merge-match-{number}.log",
        )
        steps.setdefault("merge_match", []).append(run.seconds)
        run = run_once(
            [*culprit, "analyze", str(case), "-o", str(out), "-q"],
            workdir / f"diagnose-{number}.log",
        )
        steps.setdefault("diagnose", []).append(run.seconds)
        _same_findings(expected, out / FINDINGS_FILE, "shard steps")
        say(
            f"  shard steps run {number}/{runs}: ingest shards "
            + ", ".join(f"{s[-1]:.1f}" for s in shard_ingest)
            + f" s; merge {steps['merge_ingest'][-1]:.1f} s; match shards "
            + ", ".join(f"{s[-1]:.1f}" for s in shard_match)
            + f" s; merge {steps['merge_match'][-1]:.1f} s; diagnose {steps['diagnose'][-1]:.1f} s"
        )
    rows_bytes = _tree_bytes([p / "rows" for p in ingest])
    small = _tree_bytes(ingest) - rows_bytes
    return {
        "shards": shards,
        "shard_bytes": _shard_bytes(cached.bundle, shards),
        "ingest_shard_s": [_median(s) for s in shard_ingest],
        "match_shard_s": [_median(s) for s in shard_match],
        **{f"{name}_s": _median(values) for name, values in steps.items()},
        "ingest_parts_rows_bytes": rows_bytes,
        "ingest_parts_small_bytes": small,
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


def measure_all(cached: CachedBundle, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from analyzer.api import FINDINGS_FILE

    culprit = culprit_command()
    bundle = str(cached.bundle)
    say("reading the bundle once (page cache) ...")
    warm([cached.bundle])
    out = workdir / "out"

    def clear() -> None:
        shutil.rmtree(out, ignore_errors=True)

    say(f"local engine x{args.runs}")
    local = _timed(
        [*culprit, "analyze", bundle, "-o", str(out), "--quiet"], args.runs, workdir, "local", clear
    )
    expected = (out / FINDINGS_FILE).read_bytes()
    results: dict[str, Any] = {"local": _spread(local)}
    for workers in args.workers:
        say(f"ray engine, {workers} worker(s) x{args.runs}")
        command = [
            *culprit,
            "analyze",
            bundle,
            "-o",
            str(out),
            "--quiet",
            "--engine",
            "ray",
            "--workers",
            str(workers),
        ]
        runs = _timed(command, args.runs, workdir, f"ray-{workers}", clear)
        _same_findings(expected, out / FINDINGS_FILE, f"ray with {workers} workers")
        spread = _spread(runs)
        spread["overhead_vs_local"] = spread["median_s"] / results["local"]["median_s"]
        results[f"ray-{workers}"] = spread
    say(f"shard steps ({args.shards} shards) x{args.runs}")
    steps = shard_steps(cached, args.shards, args.runs, workdir, expected)
    return {"engines": results, "steps": steps}


def section(report: dict[str, Any], name: str) -> str:
    """The RESULTS.md section of one scale-out report."""
    engines, steps, plan = report["engines"], report["steps"], report["projection"]
    bundle, machine_ = report["bundle"], report["machine"]
    local = engines["local"]["median_s"]
    lines = [
        BEGIN,
        f"Run `{name}` ({report['date']}, commit `{(machine_.get('git_commit') or '')[:12]}`), "
        f"command `{report['command']}`: {report['hosts']:,} hosts × {report['minutes']:g} min, "
        f"{bundle['bytes'] / 1e9:.2f} GB in {bundle['files']:,} files; "
        f"{machine_.get('cores', '?')} cores. Medians of {report['runs']} runs "
        "(min–max); every run's findings equal the local engine's byte for byte.",
        "",
        "| run | wall s | vs local | peak RSS MiB (process tree) |",
        "|---|---:|---:|---:|",
    ]
    for key, figures in engines.items():
        label = (
            "local engine (`--jobs` = cores)"
            if key == "local"
            else (f"`--engine ray --workers {key.split('-')[1]}`")
        )
        ratio = figures["median_s"] / local
        lines.append(
            f"| {label} | {figures['median_s']:.1f} ({figures['min_s']:.1f}–"
            f"{figures['max_s']:.1f}) | {ratio:.2f}× | {figures['peak_rss_mib']:,.0f} |"
        )
    count = steps["shards"]
    shard_mb = [b / 1e6 for b in steps["shard_bytes"]]
    lines += [
        "",
        f"Shard steps, one command at a time ({count} shards, one core each):",
        "",
        "| step | seconds |",
        "|---|---:|",
        "| `ingest --shard k/{n} --jobs 1`, per shard | {v} |".format(
            n=count, v=", ".join(f"{s:.1f}" for s in steps["ingest_shard_s"])
        ),
        f"| `merge` of the ingest parts | {steps['merge_ingest_s']:.1f} |",
        "| `match --shard k/{n}`, per shard | {v} |".format(
            n=count, v=", ".join(f"{s:.1f}" for s in steps["match_shard_s"])
        ),
        f"| `merge` of the match parts | {steps['merge_match_s']:.1f} |",
        f"| `analyze CASE` (diagnosis and report) | {steps['diagnose_s']:.1f} |",
        "",
        "Bytes each shard read: " + ", ".join(f"{mb:,.0f} MB" for mb in shard_mb) + ". "
        f"The ingest parts hold {steps['ingest_parts_rows_bytes'] / 1e6:,.0f} MB of rows and "
        f"{steps['ingest_parts_small_bytes'] / 1e6:,.1f} MB of small tables (inventory, "
        "quarantine, de-duplication keys, host aliases); the match parts "
        f"{steps['match_parts_bytes'] / 1e6:,.2f} MB.",
        "",
        f"**Projection** (arithmetic on the figures above, not a measurement): "
        f"{plan['gb']:g} GB on {plan['nodes']} nodes × {plan['cores_per_node']} cores. "
        f"Ingest + match ran at {plan['per_core_mb_s']:.1f} MB per core-second here, so "
        f"the shards take {plan['parallel_s']:,.0f} s if they scale linearly and the shared "
        f"file system keeps up; the merges and the diagnosis, scaled linearly with the bundle "
        f"(×{plan['scale']:,.0f}), add {plan['serial_s']:,.0f} s in the driver: about "
        f"{plan['total_s'] / 60:,.0f} min in all.",
        END,
    ]
    return "\n".join(lines) + "\n"


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, Options]:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.scaleout", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--hosts", type=int, default=1024, help="hosts of the incident")
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, help="fixtures scenario")
    parser.add_argument("--minutes", type=float, default=60.0, help="length of the incident")
    parser.add_argument("--rate", type=float, default=60.0, help="background lines/host/min")
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement")
    parser.add_argument(
        "--workers",
        type=lambda text: [int(w) for w in text.split(",")],
        default=[1, 2],
        help="CPUs of the local Ray instance, comma-separated (default: 1,2)",
    )
    parser.add_argument("--shards", type=int, default=4, help="shards of the step-by-step run")
    parser.add_argument("--project-gb", type=float, default=100.0, help="projected bundle, GB")
    parser.add_argument("--project-nodes", type=int, default=16, help="projected nodes")
    parser.add_argument("--project-cores", type=int, default=8, help="cores per projected node")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="bundle cache")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    add_recording_options(parser)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.shards < 1 or min(args.workers) < 1:
        parser.error("--runs, --shards and --workers must be positive")
    options = Options(hosts=args.hosts, seed=args.seed, minutes=args.minutes, rate=args.rate)
    return args, options


def main(argv: Sequence[str] | None = None) -> int:
    args, options = _parse_args(argv)
    try:
        import ray  # noqa: F401
    except ImportError:
        say("error: Ray is not installed: pip install -e '.[ray]'")
        return 1
    command = recorded_command("benchmarks.scaleout", argv)
    digest, host = source_digest(), machine()
    try:
        cached = prepare(args.cache, args.scenario, options)
        workdir = Path(tempfile.mkdtemp(prefix="scaleout-", dir=args.cache))
        try:
            measured = measure_all(cached, args, workdir)
        finally:
            if args.keep:
                say(f"kept {workdir}")
            else:
                shutil.rmtree(workdir, ignore_errors=True)
    except BenchmarkError as exc:
        say(f"error: {exc}")
        return 1
    changed, origin = provenance(host, digest)
    report = {
        **run_stamp(SCALEOUT, command, args.runs),
        **bundle_fields(args.scenario, options, cached),
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
        **origin,
    }
    if changed:
        say("warning: the analyzer sources or the commit changed during the run")
    record_with_section(
        report, section, (BEGIN, END, INTRO), record=not args.no_record, copy=args.report_json
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
