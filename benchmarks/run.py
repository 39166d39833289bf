"""Every performance figure in one command: ``python -m benchmarks run [--quick] [--no-record]
[--only ingest,match,analyze] [--rebuild-table]``.

Runs the existing benchmarks, each in a child process (``python -m benchmarks.<module>``, so
each measures in a fresh interpreter and records its own results file and RESULTS.md section
exactly as when run by hand), with the parameters the targets need (:func:`plan`), every
figure the median of :data:`RUNS` runs with its min and max:

1. ``benchmarks.ingest``: 1,024 MiB each of ``cloud_logging`` (JSON-lines),
   ``cloud_logging_array`` (the same entries as a gcloud array), ``cloud_logging_gz``,
   ``text``, ``kubelet``, ``kubelet_zst`` and ``modelarts``; the compressed inputs with their
   bare-decoder baselines (:mod:`benchmarks.inflate`).
2. ``benchmarks.match`` over the 10 M-row case: backends against grep, ripgrep (the
   catalogue's own regexes) and the Python loop.
3. ``benchmarks.analyze`` at 64, 1,024 and 4,096 hosts: bundle → report, re-match + diagnose,
   diagnose only. The 4,096-host incident runs :data:`E2E_4096_MINUTES` minutes, so that its
   case reaches the target's 20 M rows (about 2,520 rows per host and hour at rate 60: the
   60-minute incident has only ~10.3 M); its bundle is ~21 GB, generated once into
   ``benchmarks/.cache/analyze/``.

Each child is given ``--report-json`` to hand its report back; a recorded child's results file
is found by its kind, recording time and command. Then a results file of kind ``run`` is
recorded (``benchmarks/results/<date>-<host>[-N].json``, :func:`benchmarks.report.results_path`)
with the steps (command, exit status, wall time, results file), the ``results_files`` they
produced and the ``targets`` judged on them, and the targets section at the top of
``benchmarks/RESULTS.md`` is rebuilt from all results files (:mod:`benchmarks.targets`, a pure
function of them). A step that fails is recorded as such and the run goes on with the next; the
exit status is then 1.

``--quick`` checks the machinery in under two minutes on a 2-core machine (with its inputs
cached; the first one also builds the 1 M-row case, about 100 s once): 32 MiB of the four
inputs the targets judge (:data:`QUICK_INPUTS`), a 1 M-row case with the polars backend and a
10,000-line Python-loop sample, 64 hosts × 10 min; still :data:`RUNS` runs of everything.
What does not fit is left out (:data:`QUICK_LEFT_OUT`: the other three inputs, the 1,024- and
4,096-host steps), and it says so. Its children
record nothing (their figures are far below the targets' sizes and would replace the full-size
rows of the other sections); their reports are kept in the quick ``run`` file (``"quick":
true``), printed, and never judged. ``--no-record`` records nothing at all;
``--rebuild-table`` only rebuilds the targets section from the results files.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from benchmarks import REPO_DIR, report
from benchmarks.environment import machine, provenance, run_stamp, source_digest
from benchmarks.progress import say
from benchmarks.targets import RUN, evaluate, load_results, place_section, section, table

#: Runs of every measurement: each figure is the median of these, with min and max.
RUNS: Final = 3
GROUPS: Final = ("ingest", "match", "analyze")
INGEST_INPUTS: Final = (
    "cloud_logging",
    "cloud_logging_array",
    "cloud_logging_gz",
    "text",
    "kubelet",
    "kubelet_zst",
    "modelarts",
)
FULL_SIZE_MB: Final = 1024
QUICK_SIZE_MB: Final = 32
#: The 4,096-host incident's length: 4,096 hosts × 2 h × ~2,520 rows per host and hour
#: (``benchmarks/.cache/match/calibration-*.json``) ≈ 20.6 M rows, past the target's 20 M.
E2E_4096_MINUTES: Final = 120
#: --quick's Python-loop sample: 100,000 lines take ~13 s a run, 10,000 about 1.5 s.
QUICK_SAMPLE: Final = 10_000
#: The inputs --quick ingests: those the targets judge (3 runs of all seven at 32 MiB take
#: about 100 s on a loaded 2-core machine, more than its whole budget).
QUICK_INPUTS: Final = ("cloud_logging", "cloud_logging_gz", "text", "kubelet")
#: What --quick leaves out, and why (said in its output and kept in its run file): the step
#: (or the ``--only`` group it belongs to) and the reason.
QUICK_LEFT_OUT: Final = (
    (
        "ingest",
        "ingest of cloud_logging_array, kubelet_zst and modelarts",
        "3 runs of them take about 50 s more (figures without a target)",
    ),
    (
        "analyze",
        "analyze at 1,024 hosts",
        "3 runs of bundle → report at 1,024 hosts take about 9 minutes",
    ),
    (
        "analyze",
        "analyze at 4,096 hosts",
        "its bundle is ~21 GB and 3 runs of bundle → report take far longer than 2 minutes",
    ),
)


@dataclass(frozen=True)
class Step:
    """One benchmark invocation: its name, the ``--only`` group it belongs to, the module
    run as ``python -m`` and its arguments."""

    name: str
    group: str
    module: str
    args: tuple[str, ...]

    def shown(self) -> str:
        """The command as recorded (from the repository root)."""
        return shlex.join(["python", "-m", self.module, *self.args])


def plan(*, quick: bool) -> list[Step]:
    """The steps of a full or a quick run, in order."""
    runs = ("--runs", str(RUNS))
    inputs = ("--inputs", ",".join(INGEST_INPUTS))
    if quick:
        small = ("--inputs", ",".join(QUICK_INPUTS))
        return [
            Step(
                "ingest",
                "ingest",
                "benchmarks.ingest",
                ("--size-mb", str(QUICK_SIZE_MB), *runs, *small),
            ),
            Step(
                "match",
                "match",
                "benchmarks.match",
                ("--rows", "1M", "--backends", "polars", "--sample", str(QUICK_SAMPLE), *runs),
            ),
            Step(
                "analyze-64",
                "analyze",
                "benchmarks.analyze",
                ("--hosts", "64", "--minutes", "10", *runs),
            ),
        ]
    return [
        Step(
            "ingest",
            "ingest",
            "benchmarks.ingest",
            ("--size-mb", str(FULL_SIZE_MB), *runs, *inputs),
        ),
        Step("match", "match", "benchmarks.match", ("--rows", "10M", *runs)),
        Step("analyze-64", "analyze", "benchmarks.analyze", ("--hosts", "64", *runs)),
        Step("analyze-1024", "analyze", "benchmarks.analyze", ("--hosts", "1024", *runs)),
        Step(
            "analyze-4096",
            "analyze",
            "benchmarks.analyze",
            ("--hosts", "4096", "--minutes", str(E2E_4096_MINUTES), *runs),
        ),
    ]


def find_results_file(made: dict[str, Any], directory: Path) -> str | None:
    """The name of the results file in ``directory`` that recorded the report ``made`` (same
    kind, recording time and command), or None."""
    wanted = (made.get("kind"), made.get("recorded_at"), made.get("command"))
    for path in sorted(directory.glob("*.json"), reverse=True):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if (
            isinstance(data, dict)
            and (
                data.get("kind"),
                data.get("recorded_at"),
                data.get("command"),
            )
            == wanted
        ):
            return path.name
    return None


def run_step(step: Step, workdir: Path, *, record: bool) -> tuple[dict[str, Any], Any]:
    """Run ``step`` in a child process (its output goes to this terminal); what the ``run``
    file says of it, and the report it handed back (None when it failed)."""
    handed = workdir / f"{step.name}.json"
    command = [sys.executable, "-m", step.module, *step.args, "--report-json", str(handed)]
    if not record:
        command.append("--no-record")
    say(f"== {step.name}: {step.shown()}" + ("" if record else " --no-record"))
    started = time.perf_counter()
    code = subprocess.run(command, cwd=REPO_DIR, check=False).returncode
    wall = time.perf_counter() - started
    made = json.loads(handed.read_text()) if code == 0 and handed.is_file() else None
    results_file = find_results_file(made, report.RESULTS_DIR) if made and record else None
    status = "ok" if made is not None else "failed"
    say(
        f"== {step.name}: {status} in {wall:,.0f} s"
        + (f" ({results_file})" if results_file else "")
    )
    return {
        "name": step.name,
        "command": step.shown() + ("" if record else " --no-record"),
        "exit_code": code,
        "status": status,
        "wall_s": wall,
        "results_file": results_file,
    }, made


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks run", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small inputs, a 1M-row case and 64 hosts x 10 min (checks, never judged)",
    )
    parser.add_argument(
        "--no-record", action="store_true", help="write no results file and leave RESULTS.md"
    )
    parser.add_argument(
        "--only",
        default=",".join(GROUPS),
        help=f"comma-separated steps of {','.join(GROUPS)} (default: all)",
    )
    parser.add_argument(
        "--rebuild-table",
        action="store_true",
        help="only rebuild the targets table of RESULTS.md from the results files",
    )
    args = parser.parse_args(argv)
    args.groups = [name.strip() for name in args.only.split(",") if name.strip()]
    if not args.groups or not set(args.groups) <= set(GROUPS):
        parser.error(f"--only: a comma-separated subset of {','.join(GROUPS)}")
    return args


def _shown(path: Path) -> str:
    """``path`` relative to the repository root when it is inside it."""
    return str(path.relative_to(REPO_DIR)) if path.is_relative_to(REPO_DIR) else str(path)


def rebuild_table(*, write: bool) -> str:
    """The targets section from every results file; written into RESULTS.md when ``write``."""
    text = section(load_results(report.RESULTS_DIR))
    if write:
        current = report.RESULTS_MD.read_text() if report.RESULTS_MD.is_file() else ""
        report.RESULTS_MD.write_text(place_section(current or "# Benchmark results\n", text))
    return text


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    if args.rebuild_table:
        text = rebuild_table(write=not args.no_record)
        print(text, end="")
        if not args.no_record:
            say(f"rebuilt the targets section of {_shown(report.RESULTS_MD)}")
        return 0
    command = shlex.join(
        ["python", "-m", "benchmarks", "run", *(sys.argv[2:] if argv is None else argv)]
    )
    steps = [step for step in plan(quick=args.quick) if step.group in args.groups]
    left_out = [
        {"name": name, "why": why}
        for group, name, why in QUICK_LEFT_OUT
        if args.quick and group in args.groups
    ]
    for item in left_out:
        say(f"--quick leaves out {item['name']}: {item['why']}")
    record = not args.quick and not args.no_record
    digest, host = source_digest(), machine()
    started = time.perf_counter()
    done: list[dict[str, Any]] = []
    reports: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="culprit-run-") as workdir:
        for step in steps:
            entry, made = run_step(step, Path(workdir), record=record)
            done.append(entry)
            if made is not None:
                reports[entry["results_file"] or step.name] = made
    wall = time.perf_counter() - started
    changed, origin = provenance(host, digest)
    rows = evaluate(reports, list(reports), quick=args.quick)
    made_run: dict[str, Any] = {
        **run_stamp(RUN, command, RUNS),
        "quick": args.quick,
        "only": args.groups,
        "wall_s": wall,
        "steps": done,
        "left_out": left_out,
        "results_files": [s["results_file"] for s in done if s["results_file"]],
        "method": (
            "each step is python -m benchmarks.<module> in a child process (its own results "
            "file and RESULTS.md section when recorded); figures: median (min-max) of "
            f"{RUNS} runs; targets: benchmarks/targets.py over the results files"
            + ("; quick: children not recorded, their reports kept here" if args.quick else "")
        ),
        **origin,
        "targets": [row.as_dict() for row in rows],
    }
    if args.quick:
        made_run["reports"] = reports
    say("this run's figures" + (" (quick: never judged)" if args.quick else "") + ":")
    print(table(rows), end="")
    if args.quick:
        say("quick run: its figures are far below the targets' sizes and are never judged")
    say(
        f"run finished in {wall:,.0f} s"
        + (" (over --quick's 2 minutes)" if args.quick and wall > 120 else "")
    )
    if changed:
        say("warning:" + report.change_note(made_run).removeprefix(" Warning:"))
    if not args.no_record:
        out = report.results_path(made_run["date"], host["hostname"])
        report.write_report(out, made_run)
        rebuild_table(write=True)
        say(f"wrote {_shown(out)} and the targets section of {_shown(report.RESULTS_MD)}")
    return 0 if all(step["status"] == "ok" for step in done) else 1
