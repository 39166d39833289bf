"""End-to-end analysis benchmark: ``python -m benchmarks.analyze [--hosts 1024] [--runs 3]``
(RESULTS.md, "End-to-end analysis", says what each measurement times).

On a cached bundle of the fixtures generator (:mod:`benchmarks.bundles`), read once (page
cache), with ``sync`` before every run: bundle → report (``culprit analyze BUNDLE -o OUT``),
diagnose only (``culprit analyze OUT/case -o OUT2``: the matches reused, checked) and re-match
+ diagnose (``culprit analyze OUT/case`` with the matches deleted), ``--runs`` fresh child
processes each. The first bundle → report run's verdict is checked against the bundle's
``truth.toml`` (its last attempt: the verdict is the latest attempt with a first error); every
other run's verdict must equal it.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from analyzer import api

# The matches file's name: part of the case layout (ARCHITECTURE.md), which no API names.
from analyzer.case.layout import MATCHES_FILE
from benchmarks import MIB, bundles, measure, say
from benchmarks.families import ANALYZE
from benchmarks.report import add_recording_options, checked, finish, parser_for, recorded_command
from fixtures.truth import Truth

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
    """``found`` (:func:`verdict_of`) against the truth's last attempt (the verdict is the
    latest attempt with a first error): same attempt, cited path and line; same culprit."""
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


def timed_verdicts(
    name: str,
    command: list[str],
    runs: int,
    logs: Path,
    before: Callable[[], None],
    findings: Path,
    size: int,
) -> tuple[list[measure.Run], list[dict[str, Any]]]:
    """Run ``command`` ``runs`` times, ``before()`` (outside the timed region) and ``sync``
    ahead of each; the runs and the verdict each run wrote to ``findings``."""
    results: list[measure.Run] = []
    verdicts: list[dict[str, Any]] = []
    for number, run in measure.repeat(command, runs, logs, name, before, sync=True):
        results.append(run)
        verdicts.append(verdict_of(findings))
        # Only bundle → report reads the bundle: MiB/s means nothing for the others.
        shown = measure.describe(run, size if name == BUNDLE_TO_REPORT else None)
        say(f"  {LABELS[name]} run {number}/{runs}: {shown}")
    return results, verdicts


def _result(
    name: str,
    runs: list[measure.Run],
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
    timed = measure.timings(runs, size)
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
    # No public API reads what a matches file was written with (its signatures and catalogue).
    from analyzer.signatures.matching import matches_meta

    counts = api.load_case(case).meta.counts.model_dump()
    matches = matches_meta(case / MATCHES_FILE)
    return {
        "rows": counts["rows"],
        "counts": counts,
        "case_mib": measure.tree_bytes(case) / MIB,
        "matches": matches.get("matches"),
        "signatures": matches.get("signatures"),
        "catalogue_digest": matches.get("catalogue_digest"),
    }


def measure_all(
    cached: bundles.CachedBundle, runs: int, workdir: Path
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The three measurements on ``cached`` in ``workdir``: the results (in table order),
    the case's facts and the verdict of the first bundle → report run."""
    culprit = measure.culprit_command()
    out, out2 = workdir / "out", workdir / "out2"
    case = out / api.CASE_SUBDIR
    matches = case / MATCHES_FILE
    size, hosts = int(cached.facts["bytes"]), int(cached.facts["hosts"])
    say("reading the bundle once (page cache) ...")
    measure.warm([cached.bundle])

    say(f"{LABELS[BUNDLE_TO_REPORT]} x{runs}: {SHOWN[BUNDLE_TO_REPORT]}")
    cold_runs, cold_verdicts = timed_verdicts(
        BUNDLE_TO_REPORT,
        [*culprit, "analyze", str(cached.bundle), "-o", str(out), "--quiet"],
        runs,
        workdir,
        lambda: shutil.rmtree(out, ignore_errors=True),
        out / api.FINDINGS_FILE,
        size,
    )
    first = cold_verdicts[0]
    facts = _case_facts(case)
    rows = int(facts["rows"])

    say(f"{LABELS[DIAGNOSE]} x{runs}: {SHOWN[DIAGNOSE]}")
    matches_before = _file_state(matches)
    diagnose_runs, diagnose_verdicts = timed_verdicts(
        DIAGNOSE,
        [*culprit, "analyze", str(case), "-o", str(out2), "--quiet"],
        runs,
        workdir,
        lambda: shutil.rmtree(out2, ignore_errors=True),
        out2 / api.FINDINGS_FILE,
        size,
    )
    reused = _file_state(matches) == matches_before
    if not reused:
        say("  warning: diagnose only re-matched the case (matches.parquet was rewritten)")

    say(f"{LABELS[REMATCH]} x{runs}: {SHOWN[REMATCH]}, {MATCHES_FILE} deleted before each")
    rematch_runs, rematch_verdicts = timed_verdicts(
        REMATCH,
        [*culprit, "analyze", str(case), "--quiet"],
        runs,
        workdir,
        lambda: matches.unlink(missing_ok=True),
        case / api.FINDINGS_FILE,
        size,
    )
    common = (first, size, hosts, rows)
    results = [
        _result(BUNDLE_TO_REPORT, cold_runs, cold_verdicts, *common),
        _result(REMATCH, rematch_runs, rematch_verdicts, *common, matched=matches.is_file()),
        _result(DIAGNOSE, diagnose_runs, diagnose_verdicts, *common, matches_reused=reused),
    ]
    return results, facts, first


# -- the command --------------------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, bundles.Plan]:
    """The parsed options and the bundle's plan."""
    parser = parser_for("benchmarks.analyze", __doc__)
    bundles.add_bundle_options(parser)
    parser.add_argument("--keep", action="store_true", help="keep the run's work directory")
    add_recording_options(parser)
    args = checked(parser, argv)
    return args, bundles.plans(parser, args, [(args.hosts, args.minutes)])[0]


@measure.entry_point
def main(argv: Sequence[str] | None = None) -> int:
    args, plan = _parse_args(argv)
    command = recorded_command("benchmarks.analyze", argv)
    cached = bundles.prepare(args.cache, plan)
    say(
        f"bundle {cached.root.name}: {cached.facts['bytes'] / MIB:,.1f} MiB in "
        f"{cached.facts['files']:,} files"
    )
    truth = cached.truth()
    start = measure.Start.now()
    with measure.work_directory(args.cache, "run-", keep=args.keep) as workdir:
        results, case, first = measure_all(cached, args.runs, workdir)
    check = check_truth(first, truth)
    report = {
        **measure.run_stamp(ANALYZE.kind, command, args.runs),
        **cached.fields(),
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
        **start.provenance(),
        "results": results,
    }
    said = {True: "matches", False: "differs"}
    say(
        f"verdict matches truth: {'yes' if check['matches'] else 'no'} (first error "
        f"{said[check['first_error_matches']]}, culprit {said[check['culprit_matches']]})"
    )
    finish(report, ANALYZE, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
