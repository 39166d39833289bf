"""End-to-end analysis benchmark: ``python -m benchmarks.analyze [--hosts 1024] [--runs 3]``.

Times ``culprit analyze`` from a bundle to its report on an incident written by the fixtures
generator (``--scenario``, ``--hosts``, ``--minutes``, ``--rate``, ``--seed``):

1. The bundle is generated once (``python -m fixtures generate SCENARIO -o DIR …`` in a child
   process, :func:`benchmarks.generate.generate_command`) and cached under
   ``benchmarks/.cache/analyze/<name>`` (``--cache``): ``<name>/bundle/`` is the bundle,
   ``<name>/truth.toml`` the generator's truth beside it (never ingested) and
   ``<name>/facts.json`` what was made. The name carries what the bytes depend on, as for the
   matching benchmark's cases (:meth:`benchmarks.matchcase.Plan.name`): scenario, hosts,
   minutes, rate, seed, a digest of the ``fixtures/`` sources and the culprit version. It is
   built in ``<name>.partial`` and renamed when complete.
2. Three measurements, each ``--runs`` times in a fresh child process timed by
   :func:`benchmarks.measure.run_once` (wall time around the child, including interpreter
   start-up and imports; peak RSS and CPU from the kernel's ``rusage`` of the ``culprit``
   process), after reading the bundle once (page cache) and with ``sync`` before every run,
   outside the timed region:

   * **bundle → report**: ``culprit analyze BUNDLE -o OUT --quiet``, ``OUT`` deleted before
     each run: ingest into ``OUT/case``, match, diagnose, ``OUT/report.md`` and
     ``OUT/findings.json``;
   * **diagnose only**: ``culprit analyze OUT/case -o OUT2 --quiet`` on the case the last
     bundle → report run left, ``OUT2`` deleted before each run: the matches are reused, so
     diagnose and report only (checked: ``matches.parquet`` is left untouched);
   * **re-match + diagnose**: ``culprit analyze OUT/case --quiet`` with
     ``OUT/case/matches.parquet`` deleted before each run: match, diagnose and report (into
     the case directory).

3. The verdict of the first bundle → report run (its first error's citation and its culprit)
   is checked against the bundle's ``truth.toml`` (the truth's last attempt, as the verdict
   is the latest attempt with a first error): printed, and recorded as "verdict matches
   truth". Every other run's verdict is compared with that one.

Results are printed (the table on stdout) and recorded by :mod:`benchmarks.report` as a
results file of kind ``analyze`` in ``benchmarks/results/``, and the analyze section of
``benchmarks/RESULTS.md`` is rebuilt from all recorded analysis runs
(:func:`benchmarks.report.record_analyze`). ``--no-record`` skips both; ``--keep`` keeps the
run's work directory (``OUT`` with the case and reports, ``OUT2``, the run logs);
``--report-json FILE`` also writes the report to ``FILE`` (recorded or not), for ``python -m
benchmarks run``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from benchmarks import BENCHMARKS_DIR, MIB
from benchmarks.environment import (
    generator_digest,
    machine,
    provenance,
    run_stamp,
    source_digest,
)
from benchmarks.generate import generate_command
from benchmarks.match import warm
from benchmarks.matchcase import MIN_FREE_BYTES, Plan, culprit_version
from benchmarks.measure import (
    BenchmarkError,
    Run,
    culprit_command,
    describe,
    run_once,
    timings,
    tree_bytes,
    tree_files,
)
from benchmarks.progress import say
from benchmarks.report import (
    ANALYZE,
    add_recording_options,
    analyze_table,
    conclude,
    record_analyze,
    recorded_command,
    write_report,
)
from fixtures.errors import FixtureError
from fixtures.options import Options
from fixtures.scenarios import find
from fixtures.truth import BUNDLE_DIR, Truth, read_truth

DEFAULT_SCENARIO: Final = "host-crash-heartbeat"
DEFAULT_CACHE: Final = BENCHMARKS_DIR / ".cache" / "analyze"
FACTS_FILE: Final = "facts.json"
#: Bundle bytes one host writes in an hour at rate 60 (~2.5 MB, benchmarks/RESULTS.md
#: "Generation speed"), with some slack: to refuse a build that would fill the disk.
BUNDLE_BYTES_PER_HOST_HOUR: Final = 2_800_000
#: The measurements: name, label (the table's), the command as recorded.
BUNDLE_TO_REPORT: Final = "bundle-to-report"
REMATCH: Final = "rematch-diagnose"
DIAGNOSE: Final = "diagnose-only"
LABELS: Final = {
    BUNDLE_TO_REPORT: "bundle → report",
    REMATCH: "re-match + diagnose",
    DIAGNOSE: "diagnose only",
}
SHOWN: Final = {
    BUNDLE_TO_REPORT: "culprit analyze BUNDLE -o OUT --quiet",
    REMATCH: "culprit analyze OUT/case --quiet",
    DIAGNOSE: "culprit analyze OUT/case -o OUT2 --quiet",
}


@dataclass(frozen=True)
class CachedBundle:
    """A generated bundle in the cache: ``root/bundle``, ``root/truth.toml``, the facts."""

    root: Path
    facts: dict[str, Any]

    @property
    def bundle(self) -> Path:
        return self.root / BUNDLE_DIR

    def truth(self) -> Truth:
        return read_truth(self.root)


def _check_space(directory: Path, options: Options) -> None:
    """Refuse to generate when the bundle (and the case made of it) would leave less than
    :data:`~benchmarks.matchcase.MIN_FREE_BYTES` free."""
    hours, scale = options.minutes / 60, max(options.rate / 60, 1.0)
    need = int(BUNDLE_BYTES_PER_HOST_HOUR * options.hosts * hours * scale)
    free = shutil.disk_usage(directory).free
    if free - need < MIN_FREE_BYTES:
        raise BenchmarkError(
            f"a {options.hosts:,}-host bundle of {options.minutes:g} min needs about "
            f"{need / (1 << 30):.1f} GiB in {directory}: only {free / (1 << 30):.1f} GiB free, "
            f"and {MIN_FREE_BYTES >> 30} GiB must stay free"
        )


def prepare(cache: Path, scenario: str, options: Options) -> CachedBundle:
    """The bundle of ``scenario`` with ``options``, generated into the cache when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    digest, version = generator_digest(), culprit_version()
    plan = Plan(scenario, options.hosts, options.minutes, options.rate, options.seed)
    root = cache / plan.name(digest, version)
    if (root / FACTS_FILE).is_file():
        return CachedBundle(root, json.loads((root / FACTS_FILE).read_text()))
    _check_space(cache, options)
    say(f"generating {root.name} ...")
    work = root.with_name(root.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="generate-", dir=cache) as logs:
        try:
            run = run_once(generate_command(scenario, work, options), Path(logs) / "gen.log")
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    files = tree_files(work / BUNDLE_DIR)
    size = sum(path.stat().st_size for path in files)
    facts = {
        "scenario": scenario,
        "hosts": options.hosts,
        "minutes": options.minutes,
        "rate": options.rate,
        "seed": options.seed,
        "fixtures_sha256": digest,
        "culprit_version": version,
        "bytes": size,
        "files": len(files),
        "generate_s": run.seconds,
        "generate_peak_rss_mib": run.peak_rss_mib,
    }
    (work / FACTS_FILE).write_text(json.dumps(facts, indent=2) + "\n")
    work.rename(root)
    say(f"  {size / MIB:,.1f} MiB in {len(files):,} files, {run.seconds:.1f} s")
    return CachedBundle(root, facts)


def bundle_fields(scenario: str, options: Options, cached: CachedBundle) -> dict[str, Any]:
    """What a results file records about the bundle it measured."""
    return {
        "scenario": scenario,
        "hosts": options.hosts,
        "minutes": options.minutes,
        "rate": options.rate,
        "seed": options.seed,
        "bundle": {**cached.facts, "name": cached.root.name},
    }


# -- the verdict against the truth --------------------------------------------------------------


def verdict_of(findings: Path) -> dict[str, Any]:
    """What ``findings.json`` concludes: the verdict's attempt, failure mode, first error
    (citation, signature, host) and culprit, and the attempt count."""
    data = json.loads(findings.read_text(encoding="utf-8"))
    verdict = data["verdict"]
    first = verdict.get("first_error")
    return {
        "attempt": verdict["attempt"],
        "failure_mode": verdict["failure_mode"],
        "first_error": None
        if first is None
        else {
            "path": first["citation"]["path"],
            "line": first["citation"]["line"],
            "signature": first["signature"],
            "host": first.get("host"),
        },
        "culprit": {"kind": verdict["culprit"]["kind"], "host": verdict["culprit"].get("host")},
        "attempts": len(data["attempts"]),
    }


def check_truth(found: dict[str, Any], truth: Truth) -> dict[str, Any]:
    """``found`` (:func:`verdict_of`) against the truth's last attempt: the verdict is the
    latest attempt with a first error, which a correct analysis puts on the last attempt.

    The first error matches when the attempt, the cited path and the line are the truth's;
    the culprit when its kind (``undetermined`` for the truth's ``none``) and host are."""
    attempt = truth.attempts[-1]
    kind = "undetermined" if attempt.culprit.kind == "none" else attempt.culprit.kind
    first = found["first_error"]
    first_matches = (
        first is not None
        and found["attempt"] == attempt.index
        and (first["path"], first["line"]) == (attempt.first_error.path, attempt.first_error.line)
    )
    culprit_matches = found["culprit"] == {"kind": kind, "host": attempt.culprit.host}
    return {
        "found": found,
        "expected": {
            "attempt": attempt.index,
            "attempts": len(truth.attempts),
            "failure_mode": attempt.failure_mode,
            "first_error": attempt.first_error.model_dump(),
            "culprit": {"kind": kind, "host": attempt.culprit.host},
        },
        "first_error_matches": first_matches,
        "culprit_matches": culprit_matches,
        "failure_mode_matches": found["failure_mode"] == attempt.failure_mode,
        "matches": first_matches and culprit_matches,
    }


# -- the measurements ---------------------------------------------------------------------------


def _file_state(path: Path) -> tuple[int, int, int] | None:
    """Inode, size and modification time of ``path`` (None when missing)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def measure(
    name: str,
    command: list[str],
    runs: int,
    logs: Path,
    before: Callable[[], None],
    findings: Path,
    size: int,
) -> tuple[list[Run], list[dict[str, Any]]]:
    """Run ``command`` ``runs`` times, ``before()`` (outside the timed region) and ``sync``
    ahead of each; the runs and the verdict each run wrote to ``findings``."""
    results: list[Run] = []
    verdicts: list[dict[str, Any]] = []
    for number in range(1, runs + 1):
        before()
        os.sync()
        run = run_once(command, logs / f"{name}-{number}.log")
        results.append(run)
        verdicts.append(verdict_of(findings))
        say(
            f"  {LABELS[name]} run {number}/{runs}: "
            + (
                describe(run, size)
                if name == BUNDLE_TO_REPORT
                else f"{run.seconds:.1f} s, peak RSS {run.peak_rss_mib:,.0f} MiB, CPU "
                f"{run.user_s + run.system_s:.1f} s, load {run.load_before:.1f} -> "
                f"{run.load_after:.1f}"
            )
        )
    return results, verdicts


def _result(
    name: str,
    runs: list[Run],
    verdicts: list[dict[str, Any]],
    first: dict[str, Any],
    size: int,
    hosts: int,
    rows: int,
    **extra: Any,
) -> dict[str, Any]:
    """The result object of one measurement."""
    agree = all(verdict == first for verdict in verdicts)
    if not agree:
        say(f"  warning: the verdicts of {LABELS[name]} differ from the first run's")
    timed = timings(runs, size)
    if name != BUNDLE_TO_REPORT:  # the bundle is not what these runs read
        del timed["mib_per_s"]
    return {
        "name": name,
        "label": LABELS[name],
        "command": SHOWN[name],
        "hosts": hosts,
        "rows": rows,
        "bytes": size,
        "bundle_mib": size / MIB,
        "verdicts_agree": agree,
        **extra,
        **timed,
    }


def _case_facts(case: Path) -> dict[str, Any]:
    """Counts and size of the ingested case, and the number of matches."""
    from analyzer.case.layout import MATCHES_FILE
    from analyzer.signatures.matching import matches_meta

    counts = json.loads((case / "case.json").read_text())["counts"]
    matches = matches_meta(case / MATCHES_FILE)
    return {
        "rows": counts["rows"],
        "counts": counts,
        "case_mib": tree_bytes(case) / MIB,
        "matches": matches.get("matches"),
        "signatures": matches.get("signatures"),
        "catalogue_digest": matches.get("catalogue_digest"),
    }


def measure_all(
    cached: CachedBundle, runs: int, workdir: Path
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The three measurements on ``cached`` in ``workdir``: the results (in table order),
    the case's facts and the verdict of the first bundle → report run."""
    from analyzer.api import CASE_SUBDIR, FINDINGS_FILE
    from analyzer.case.layout import MATCHES_FILE

    culprit = culprit_command()
    out, out2 = workdir / "out", workdir / "out2"
    case = out / CASE_SUBDIR
    size, hosts = int(cached.facts["bytes"]), int(cached.facts["hosts"])
    say("reading the bundle once (page cache) ...")
    warm([cached.bundle])

    say(f"{LABELS[BUNDLE_TO_REPORT]} x{runs}: {SHOWN[BUNDLE_TO_REPORT]}")
    cold_runs, cold_verdicts = measure(
        BUNDLE_TO_REPORT,
        [*culprit, "analyze", str(cached.bundle), "-o", str(out), "--quiet"],
        runs,
        workdir,
        lambda: shutil.rmtree(out, ignore_errors=True),
        out / FINDINGS_FILE,
        size,
    )
    first = cold_verdicts[0]
    facts = _case_facts(case)
    rows = int(facts["rows"])

    say(f"{LABELS[DIAGNOSE]} x{runs}: {SHOWN[DIAGNOSE]}")
    matches_before = _file_state(case / MATCHES_FILE)
    diagnose_runs, diagnose_verdicts = measure(
        DIAGNOSE,
        [*culprit, "analyze", str(case), "-o", str(out2), "--quiet"],
        runs,
        workdir,
        lambda: shutil.rmtree(out2, ignore_errors=True),
        out2 / FINDINGS_FILE,
        size,
    )
    reused = _file_state(case / MATCHES_FILE) == matches_before
    if not reused:
        say("  warning: diagnose only re-matched the case (matches.parquet was rewritten)")

    say(f"{LABELS[REMATCH]} x{runs}: {SHOWN[REMATCH]}, {MATCHES_FILE} deleted before each")
    rematch_runs, rematch_verdicts = measure(
        REMATCH,
        [*culprit, "analyze", str(case), "--quiet"],
        runs,
        workdir,
        lambda: (case / MATCHES_FILE).unlink(missing_ok=True),
        case / FINDINGS_FILE,
        size,
    )
    rematched = (case / MATCHES_FILE).is_file()
    results = [
        _result(BUNDLE_TO_REPORT, cold_runs, cold_verdicts, first, size, hosts, rows),
        _result(
            REMATCH, rematch_runs, rematch_verdicts, first, size, hosts, rows, matched=rematched
        ),
        _result(
            DIAGNOSE,
            diagnose_runs,
            diagnose_verdicts,
            first,
            size,
            hosts,
            rows,
            matches_reused=reused,
        ),
    ]
    return results, facts, first


# -- the command --------------------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, Options]:
    """The parsed options and the generator's options."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.analyze", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--hosts", type=int, default=1024, help="hosts of the incident")
    parser.add_argument(
        "--scenario", default=DEFAULT_SCENARIO, help="fixtures scenario (default: %(default)s)"
    )
    parser.add_argument(
        "--minutes", type=float, default=60.0, help="length of the incident (default: 60)"
    )
    parser.add_argument(
        "--rate", type=float, default=60.0, help="background lines per host per minute"
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement")
    parser.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help="where bundles are cached and runs work (default: benchmarks/.cache/analyze)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the run's work directory (cases, reports, logs)"
    )
    add_recording_options(parser)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be positive")
    try:
        find(args.scenario)
        options = Options(hosts=args.hosts, seed=args.seed, minutes=args.minutes, rate=args.rate)
    except FixtureError as error:
        parser.error(str(error))
    return args, options


def main(argv: Sequence[str] | None = None) -> int:
    args, options = _parse_args(argv)
    command = recorded_command("benchmarks.analyze", argv)
    try:
        cached = prepare(args.cache, args.scenario, options)
    except BenchmarkError as exc:
        say(f"error: {exc}")
        return 1
    say(
        f"bundle {cached.root.name}: {cached.facts['bytes'] / MIB:,.1f} MiB in "
        f"{cached.facts['files']:,} files"
    )
    truth = cached.truth()
    digest = source_digest()
    host = machine()
    workdir = Path(tempfile.mkdtemp(prefix="run-", dir=args.cache))
    try:
        results, case, first = measure_all(cached, args.runs, workdir)
    except BenchmarkError as exc:
        say(f"error: {exc}")
        return 1
    finally:
        if args.keep:
            say(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    check = check_truth(first, truth)
    changed, origin = provenance(host, digest)
    report = {
        **run_stamp(ANALYZE, command, args.runs),
        **bundle_fields(args.scenario, options, cached),
        "case": case,
        "verdict": check,
        "verdict_matches_truth": check["matches"],
        "method": (
            "wall: perf_counter around launcher+child; peak RSS, CPU: rusage of the culprit "
            "process from os.wait4 in a small Python launcher; the bundle read once before the "
            "first run (page cache), sync before each run; bundle-to-report: OUT deleted "
            "before each run; diagnose-only: on the case of the last bundle-to-report run, "
            "OUT2 deleted before each run, matches reused; rematch-diagnose: the same case, "
            "matches.parquet deleted before each run; verdict of the first bundle-to-report "
            "run checked against truth.toml's last attempt"
        ),
        **origin,
        "results": results,
    }
    print(analyze_table(results), end="")
    cited = first["first_error"]
    say(
        "verdict: first error "
        + (f"{cited['path']}:{cited['line']} ({cited['signature']})" if cited else "none")
        + f", culprit {first['culprit']['kind']} {first['culprit']['host'] or '-'}; truth: "
        f"{check['expected']['first_error']['path']}:{check['expected']['first_error']['line']}"
        f", culprit {check['expected']['culprit']['kind']} "
        f"{check['expected']['culprit']['host'] or '-'}"
    )
    say(f"verdict matches truth: {'yes' if check['matches'] else 'no'}")
    # conclude() warns about changed sources; the analyze kind is recorded by its own function.
    conclude(report, changed=changed, keep=False)
    if not args.no_record:
        from benchmarks import report as recorded

        out = record_analyze(report)
        say(f"wrote {_shown(out)} and {_shown(recorded.RESULTS_MD)}")
    if args.report_json is not None:
        write_report(args.report_json, report)
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to the repository root when it is inside it."""
    from benchmarks import REPO_DIR

    return str(path.relative_to(REPO_DIR)) if path.is_relative_to(REPO_DIR) else str(path)


if __name__ == "__main__":
    raise SystemExit(main())
